/* trickle ADDR KEY MODE ARG: rate PERIOD_MS SECS -> calls every PERIOD_MS round robin for SECS;
 * idle N -> N times: sleep 1 s, time one call (us); prints the median. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ofishmem_rpc.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  char addr[ORPC_ADDR_STRLEN],key[300]; FILE*f=fopen(argv[1],"r"); fgets(addr,sizeof addr,f); fclose(f);
  addr[strcspn(addr,"\n")]=0; snprintf(key,sizeof key,"@%s",argv[2]);
  orpc_t*r; orpc_peer_t*p; if(orpc_open(NULL,&r)||orpc_lookup(r,addr,key,&p)) return 1;
  uint8_t in[12]={0},out[20]; size_t ol; uint64_t id=orpc_id("ctx.who");
  if(!strcmp(argv[3],"rate")){ double per=atof(argv[4])/1000, secs=atof(argv[5]); double t0=now(); long n=0;
    while(now()-t0<secs){ if(orpc_call(r,p,id,in,12,out,20,&ol,5000)) return 2; n++; struct timespec ts={0,(long)(per*1e9)}; nanosleep(&ts,NULL);} printf("%ld calls\n",n);
  } else { int N=atoi(argv[4]); double *v=malloc(N*sizeof(double)); for(int k=0;k<4;k++) orpc_call(r,p,id,in,12,out,20,&ol,5000);
    for(int i=0;i<N;i++){ sleep(1); double t=now(); if(orpc_call(r,p,id,in,12,out,20,&ol,5000)) return 2; v[i]=(now()-t)*1e6;}
    qsort(v,N,sizeof(double),cmp); printf("call after 1 s idle: min %.0f median %.0f max %.0f us (%d calls)\n",v[0],v[N/2],v[N-1],N);}
  orpc_peer_release(p); orpc_close(r); return 0;}
