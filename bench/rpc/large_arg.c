/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large arguments and results: the same bytes through the library's
 * two-phase path (the argument is simply passed to orpc_call; the server
 * pulls it before the handler runs / the handler returns it and the server
 * pushes it) and through an explicit bulk descriptor (the client exposes its
 * buffer, sends the descriptor, the handler pulls or pushes it itself).
 * One call at a time; the two ways alternate for ROUNDS rounds; medians and
 * the median of the per-round ratios.
 *   large_arg [-p PROV] [-n CALLS] [-r ROUNDS] [-s BYTES]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ofishmem_rpc.h"
#include "rpc_bench.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile sig_atomic_t stop_g;
static void on_term(int s)
{
    (void)s;
    stop_g = 1;
}
static char *scratch_g;
static size_t size_g;

/* Two-phase argument: the handler just sees it. */
static void h_arg(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_respond(c, n == size_g && ((const char *)in)[n - 1] == 1 ? 0 : ORPC_EPROTO, NULL, 0);
}

/* Two-phase result: the handler returns size_g bytes. */
static void h_res(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    (void)in;
    (void)n;
    orpc_respond(c, 0, scratch_g, size_g);
}

/* Explicit descriptor: the handler pulls (arg NULL) or pushes it. */
static void h_desc(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    orpc_bulk_desc_t d;
    int rc = n < ORPC_BULK_DESC_SIZE ? ORPC_EPROTO : orpc_bulk_decode(c, in, &d);
    if (rc == ORPC_OK)
        rc = arg ? orpc_bulk_put(c, &d, 0, scratch_g, size_g)
                 : orpc_bulk_get(c, &d, 0, scratch_g, size_g);
    orpc_respond(c, rc, NULL, 0);
}

static int server_main(const char *prov, const char *af, const char *kf)
{
    signal(SIGTERM, on_term);
    scratch_g = malloc(size_g);
    memset(scratch_g, 1, size_g);
    orpc_t *rpc = rpcb_open_server(prov, kf);
    if (rpc == NULL)
        return 1;
    orpc_register(rpc, "bench.arg", h_arg, NULL, 0, NULL);
    orpc_register(rpc, "bench.res", h_res, NULL, 0, NULL);
    orpc_register(rpc, "bench.pull", h_desc, NULL, 0, NULL);
    orpc_register(rpc, "bench.push", h_desc, (void *)1, 0, NULL);
    if (rpcb_publish_addr(rpc, af) != 0)
        return 1;
    while (!stop_g)
        orpc_progress(rpc, 1);
    orpc_close(rpc);
    free(scratch_g);
    return 0;
}

enum { ARG2 = 0, ARGD, RES2, RESD, NWAYS };
static const char *way_name[NWAYS] = {"argument, two-phase", "argument, descriptor",
                                      "result, two-phase", "result, descriptor"};

/* MB/s of n calls one way. */
static double measure(orpc_t *rpc, orpc_peer_t *srv, int way, char *buf, long n)
{
    static const char *names[NWAYS] = {"bench.arg", "bench.pull", "bench.res", "bench.push"};
    uint64_t id = orpc_id(names[way]);
    unsigned char desc[ORPC_BULK_DESC_SIZE];
    size_t got;
    double t0 = 0;
    for (long i = -5; i < n; i++) {
        if (i == 0)
            t0 = now_s();
        int rc;
        if (way == ARG2) {
            rc = orpc_call(rpc, srv, id, buf, size_g, NULL, 0, &got, 30000);
        } else if (way == RES2) {
            rc = orpc_call(rpc, srv, id, NULL, 0, buf, size_g, &got, 30000);
            if (rc == 0 && got != size_g)
                rc = ORPC_EPROTO;
        } else {
            orpc_bulk_t *b;
            rc = orpc_bulk_expose(rpc, buf, size_g, way == ARGD ? ORPC_BULK_READ : ORPC_BULK_WRITE,
                                  -1, &b);
            if (rc == 0 && (rc = orpc_bulk_encode(b, srv, desc)) == 0)
                rc = orpc_call(rpc, srv, id, desc, sizeof(desc), NULL, 0, &got, 30000);
            orpc_bulk_release(b);
        }
        if (rc != 0) {
            fprintf(stderr, "large_arg: %s failed: %s\n", way_name[way], orpc_strerror(rc));
            exit(1);
        }
    }
    return (double)n * size_g / (now_s() - t0) / 1e6;
}

int main(int argc, char **argv)
{
    const char *prov = "shm";
    long calls = 200;
    int rounds = 5;
    size_g = 1u << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            size_g = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: %s [-p PROV] [-n CALLS] [-r ROUNDS] [-s BYTES]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > 64 || size_g == 0) {
        fprintf(stderr, "large_arg: -r wants 1..64 and -s a size above 0\n");
        return 2;
    }
    rpcb_server_t srv;
    if (rpcb_server_start(&srv, "large", server_main, prov, 4000) != 0)
        return 1;
    orpc_t *rpc;
    orpc_peer_t *p;
    if (orpc_open(NULL, &rpc) != 0 || orpc_lookup(rpc, srv.addr, srv.key, &p) != 0) {
        fprintf(stderr, "large_arg: cannot reach the server\n");
        return 1;
    }
    char *buf = malloc(size_g);
    memset(buf, 1, size_g);
    double v[NWAYS][64], ratio[2][64];
    for (int k = 0; k < rounds; k++) {
        for (int w = 0; w < NWAYS; w++)
            v[w][k] = measure(rpc, p, w, buf, calls);
        ratio[0][k] = v[ARG2][k] / v[ARGD][k];
        ratio[1][k] = v[RES2][k] / v[RESD][k];
    }
    printf("# large_arg: provider %s, %zu bytes, one call at a time, %ld calls per point, "
           "median of %d alternating rounds (MB/s)\n", prov, size_g, calls, rounds);
    for (int w = 0; w < NWAYS; w++)
        printf("%-24s %10.0f\n", way_name[w], bench_median(v[w], rounds));
    printf("%-24s %10.2f\n", "two-phase/descriptor arg", bench_median(ratio[0], rounds));
    printf("%-24s %10.2f\n", "two-phase/descriptor res", bench_median(ratio[1], rounds));
    orpc_peer_release(p);
    orpc_close(rpc);
    rpcb_server_stop(&srv);
    free(buf);
    return 0;
}
