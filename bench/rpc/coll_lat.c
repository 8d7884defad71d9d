/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective calls (issue 18 item 3): latency of one call that reaches
 * every member of a service and gathers 8 bytes from each, against the
 * ways a client does it without them, by number of members (server
 * processes of one context each, joined into one address):
 *   tree      orpc_call_all, fanout 4 (the default)
 *   flat      orpc_call_all, fanout members-1 (the root calls all the others)
 *   serial    N orpc_call, one member after the other (round robin)
 *   parallel  N orpc_icall, then N orpc_wait
 * Methods alternate within each round; each cell is the median over the
 * rounds of the mean time per operation (us).
 *   coll_lat [-p PROV] [-m MAX_MEMBERS] [-r ROUNDS] [-i ITERS]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ofishmem_rpc.h"
#include "rpc_bench.h"

#define MAXM 16

static volatile sig_atomic_t stop_g;
static void on_term(int s)
{
    (void)s;
    stop_g = 1;
}

static void h_who(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    uint64_t v = (uint64_t)getpid();
    orpc_respond(c, 0, &v, sizeof(v));
}

/* A member: one context, driven by this process (key: SHMEM_RPC_AUTH_KEY). */
static int server_main(const char *prov, const char *af, const char *kf)
{
    (void)kf;
    signal(SIGTERM, on_term);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    orpc_t *r;
    if (orpc_open(&o, &r) != ORPC_OK)
        return 1;
    orpc_register(r, "bench.who", h_who, NULL, 0, NULL);
    if (rpcb_publish_addr(r, af) != 0)
        return 1;
    while (!stop_g)
        orpc_progress(r, 100);
    orpc_close(r);
    return 0;
}

enum { M_TREE, M_FLAT, M_SERIAL, M_PAR, NMETH };
static const char *const meth_name[NMETH] = {"tree", "flat", "serial", "parallel"};

static uint8_t out_g[MAXM * 64];

static void one(orpc_t *r, orpc_peer_t *p, int m, int meth, uint64_t id)
{
    size_t ol;
    int rc = ORPC_OK;
    if (meth == M_TREE || meth == M_FLAT) {
        orpc_coll_opts_t o;
        orpc_coll_opts_init(&o);
        if (meth == M_FLAT)
            o.fanout = m > 1 ? m - 1 : 1;
        rc = orpc_call_all(r, p, id, NULL, 0, out_g, sizeof(out_g), &ol, 10000, &o);
        if (rc == ORPC_OK && ol != (size_t)m * (12 + 8))
            rc = ORPC_EPROTO;
    } else if (meth == M_SERIAL) {
        for (int i = 0; i < m && rc == ORPC_OK; i++)
            rc = orpc_call(r, p, id, NULL, 0, out_g + 8 * i, 8, &ol, 10000);
    } else {
        orpc_req_t *q[MAXM];
        for (int i = 0; i < m && rc == ORPC_OK; i++)
            rc = orpc_icall(r, p, id, NULL, 0, out_g + 8 * i, 8, 10000, &q[i]);
        for (int i = 0; i < m && rc == ORPC_OK; i++)
            rc = orpc_wait(q[i], &ol);
    }
    if (rc != ORPC_OK) {
        fprintf(stderr, "coll_lat: %s over %d members failed: %s\n", meth_name[meth], m,
                orpc_strerror(rc));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *prov = "shm";
    int maxm = 8, rounds = 5;
    long iters = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-p") == 0)
            prov = argv[i + 1];
        else if (strcmp(argv[i], "-m") == 0)
            maxm = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-r") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-i") == 0)
            iters = atol(argv[i + 1]);
    }
    if (maxm < 1 || maxm > MAXM || rounds < 1 || rounds > 64 || iters < 1) {
        fprintf(stderr, "coll_lat: -m 1..%d, -r 1..64, -i >= 1\n", MAXM);
        return 2;
    }
    setenv("SHMEM_RPC_AUTH_KEY", "0badc0ffee0ddf00d0badc0ffee0ddf0", 1);
    rpcb_server_t srv[MAXM];
    const char *addrs[MAXM];
    for (int i = 0; i < maxm; i++) {
        if (rpcb_server_start(&srv[i], "coll", server_main, prov, 20000) != 0) {
            fprintf(stderr, "coll_lat: server %d did not start\n", i);
            for (int k = 0; k < i; k++)
                rpcb_server_stop(&srv[k]);
            return 1;
        }
        addrs[i] = srv[i].addr;
    }
    orpc_t *r;
    if (orpc_open(NULL, &r) != ORPC_OK)
        return 1;
    uint64_t id = orpc_id("bench.who");
    printf("# collective call latency vs members on %s: us per call reaching every member "
           "(8 bytes each), median of %d rounds x %ld calls, methods alternating\n",
           prov, rounds, iters);
    printf("%-8s %10s %10s %10s %10s %12s %12s\n", "members", "tree", "flat", "serial",
           "parallel", "serial/tree", "par/tree");
    int ms[8], nm = 0;
    for (int m = 1; m < maxm; m *= 2)
        ms[nm++] = m;
    ms[nm++] = maxm;
    for (int mi = 0; mi < nm; mi++) {
        int m = ms[mi];
        char joined[ORPC_ADDR_STRLEN];
        orpc_peer_t *p;
        if (orpc_addr_join(addrs, m, joined, sizeof(joined)) != ORPC_OK ||
            orpc_lookup(r, joined, NULL, &p) != ORPC_OK) {
            fprintf(stderr, "coll_lat: cannot join/look up %d members\n", m);
            return 1;
        }
        double t[NMETH][64];
        for (int k = 0; k < NMETH; k++)
            for (int w = 0; w < 20; w++)
                one(r, p, m, k, id);
        for (int rd = 0; rd < rounds; rd++)
            for (int k0 = 0; k0 < NMETH; k0++) {
                int k = (k0 + rd) % NMETH; /* alternate which goes first */
                double t0 = bench_now_us();
                for (long it = 0; it < iters; it++)
                    one(r, p, m, k, id);
                t[k][rd] = (bench_now_us() - t0) / (double)iters;
            }
        double med[NMETH];
        for (int k = 0; k < NMETH; k++)
            med[k] = bench_median(t[k], rounds);
        printf("%-8d %10.1f %10.1f %10.1f %10.1f %12.2f %12.2f\n", m, med[M_TREE], med[M_FLAT],
               med[M_SERIAL], med[M_PAR], med[M_SERIAL] / med[M_TREE], med[M_PAR] / med[M_TREE]);
        fflush(stdout);
        orpc_peer_release(p);
    }
    orpc_close(r);
    for (int i = 0; i < maxm; i++)
        rpcb_server_stop(&srv[i]);
    return 0;
}
