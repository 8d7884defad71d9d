#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  size_t S=1<<20; int nseg=16; size_t gap=argc>1?atol(argv[1]):4096;
  char *src=aligned_alloc(4096,S+16*gap+4096), *dst=aligned_alloc(4096,S);
  memset(src,1,S+16*gap); memset(dst,0,S);
  int pfd[2]; pipe(pfd);
  pid_t c=fork(); if(c==0){ /* target: keeps src alive */ char b; read(pfd[0],&b,1); _exit(0);}
  int R=400; double *a=malloc(R*sizeof(double)),*b=malloc(R*sizeof(double));
  for(int r=0;r<R;r++){
    struct iovec l={dst,S}, rm={src,S};
    double t0=now(); process_vm_readv(c,&l,1,&rm,1,0); a[r]=now()-t0;
    struct iovec li[16], ri[16]; size_t sl=S/nseg;
    for(int k=0;k<nseg;k++){li[k]=(struct iovec){dst+k*sl,sl}; ri[k]=(struct iovec){src+k*(sl+gap),sl};}
    t0=now(); process_vm_readv(c,li,nseg,ri,nseg,0); b[r]=now()-t0;
  }
  qsort(a,R,sizeof(double),cmp); qsort(b,R,sizeof(double),cmp);
  printf("gap %zu: 1 iov min %.1f med %.1f us | 16 iov min %.1f med %.1f us | ratio(min) %.2f ratio(med) %.2f\n",gap,a[0],a[R/2],b[0],b[R/2],a[0]/b[0],a[R/2]/b[R/2]);
  write(pfd[1],"x",1); wait(NULL); return 0;}
