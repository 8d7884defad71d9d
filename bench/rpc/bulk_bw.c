/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bulk bandwidth through RPCs: 1 MiB pulls and pushes by a server, the
 * client exposing its buffer each time (a) with a new registration per
 * transfer, (b) through the registration cache, (c) from the symmetric heap
 * (no registration at all). A window of calls is in flight; the server keeps
 * their transfers going at once and answers each when its data is in.
 *   bulk_bw [-p PROV] [-n ITERS] [-w WINDOW] [-s BYTES] [-m reg|cache|heap] [-b]
 *           [-d pull|push]
 * -d measures one direction only (the other prints 0); -m measures one kind of client memory only; -b busy-polls on both sides
 * (client orpc_test, server orpc_progress(0)) instead of idling politely,
 * the setting to compare with Mercury's perf programs run with -b.
 * The client is a singleton SHMEM PE (no launcher needed) so that (c) works;
 * compare with `raw_fi get_bw/put_bw -m 1M:1M --bufs WINDOW`, which moves the
 * same bytes over the same working set (run_rpc_bench.sh does).
 */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ofishmem_rpc.h"
#include "rpc_bench.h"

#define WMAX RPCB_WMAX

/* ---------------------------------------------------------------- server */

static volatile sig_atomic_t stop_g;
static void on_term(int s)
{
    (void)s;
    stop_g = 1;
}
static char *scratch_g;
static size_t size_g;
static int window_g = 8;
static int busy_g;
static orpc_call_t *pending_g[256];
static int npending_g, slot_g;

static void h_xfer(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    int push = arg != NULL;
    orpc_bulk_desc_t d;
    int rc = n < ORPC_BULK_DESC_SIZE ? ORPC_EPROTO : orpc_bulk_decode(c, in, &d);
    /* As many server buffers as calls in flight, like the client's. */
    char *buf = scratch_g + (size_t)(slot_g++ % window_g) * size_g;
    if (rc == ORPC_OK)
        rc = push ? orpc_bulk_iput(c, &d, 0, buf, d.len < size_g ? d.len : size_g)
                  : orpc_bulk_iget(c, &d, 0, buf, d.len < size_g ? d.len : size_g);
    if (rc != ORPC_OK || npending_g == 256) {
        orpc_respond(c, rc, NULL, 0);
        return;
    }
    pending_g[npending_g++] = c; /* answered once its transfer is done */
}

static int server_main(const char *prov, const char *af, const char *kf)
{
    signal(SIGTERM, on_term);
    scratch_g = malloc(WMAX * size_g);
    memset(scratch_g, 0x5a, WMAX * size_g);
    orpc_t *rpc = rpcb_open_server(prov, kf);
    if (rpc == NULL)
        return 1;
    orpc_register(rpc, "bench.pull", h_xfer, NULL, 0, NULL);
    orpc_register(rpc, "bench.push", h_xfer, (void *)1, 0, NULL);
    if (rpcb_publish_addr(rpc, af) != 0)
        return 1;
    while (!stop_g) {
        /* Waits (politely) only when no transfer is pending. */
        orpc_progress(rpc, npending_g || busy_g ? 0 : 1);
        rpcb_answer_done(pending_g, &npending_g);
    }
    orpc_close(rpc);
    return 0;
}

/* ---------------------------------------------------------------- client */

typedef enum { M_REG = 0, M_CACHE, M_HEAP } mode_t_;
static const char *mode_name[] = {"register each", "registration cache", "symmetric heap"};

/* One call's set-up: the whole buffer of a slot as one descriptor. */
typedef struct {
    orpc_t *rpc;
    orpc_peer_t *srv;
    uint64_t id;
    unsigned acc;
    char **bufs;
} bw_call_t;

static int bw_start(void *arg, int i, orpc_bulk_t **bulk, orpc_req_t **req)
{
    static unsigned char args[RPCB_WMAX][ORPC_BULK_DESC_SIZE];
    bw_call_t *c = arg;
    if (orpc_bulk_expose(c->rpc, c->bufs[i], size_g, c->acc, -1, bulk) != 0 ||
        orpc_bulk_encode(*bulk, c->srv, args[i]) != 0)
        return -1;
    return orpc_icall(c->rpc, c->srv, c->id, args[i], ORPC_BULK_DESC_SIZE, NULL, 0, 30000, req);
}

/* MB/s of iters calls, window in flight. */
static double measure(orpc_t *rpc, orpc_peer_t *srv, int push, char **bufs, int window,
                      long iters)
{
    bw_call_t c = {rpc, srv, orpc_id(push ? "bench.push" : "bench.pull"),
                   push ? ORPC_BULK_WRITE : ORPC_BULK_READ, bufs};
    return (double)iters * size_g / rpcb_run_window("bulk_bw", window, iters, busy_g, bw_start, &c) /
           1e6;
}

int main(int argc, char **argv)
{
    const char *prov = "shm";
    long iters = 400;
    int window = 8;
    size_g = 1u << 20;
    int only = -1, dirs = 3; /* bit 0: pull, bit 1: push */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            size_g = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-b"))
            busy_g = 1;
        else if (!strcmp(argv[i], "-d") && i + 1 < argc && !strcmp(argv[i + 1], "pull"))
            dirs = 1, i++;
        else if (!strcmp(argv[i], "-d") && i + 1 < argc && !strcmp(argv[i + 1], "push"))
            dirs = 2, i++;
        else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            i++;
            only = !strcmp(argv[i], "reg") ? M_REG : !strcmp(argv[i], "cache") ? M_CACHE
                 : !strcmp(argv[i], "heap") ? M_HEAP : -2;
            if (only == -2) {
                fprintf(stderr, "bulk_bw: -m wants reg, cache or heap, got '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: %s [-p PROV] [-n ITERS] [-w WINDOW] [-s BYTES] "
                            "[-m reg|cache|heap] [-b] [-d pull|push]\n", argv[0]);
            return 2;
        }
    }
    if (window < 1 || window > WMAX) {
        fprintf(stderr, "bulk_bw: -w wants 1..%d, got %d\n", WMAX, window);
        return 2;
    }
    window_g = window;
    rpcb_server_t srv;
    if (rpcb_server_start(&srv, "bw", server_main, prov, 4000) != 0)
        return 1;

    shmem_init(); /* a singleton PE: its heap is registered in the domain RPC uses */
    char *heap = shmem_malloc((size_t)WMAX * size_g), *priv = malloc((size_t)WMAX * size_g);
    memset(heap, 1, (size_t)WMAX * size_g);
    memset(priv, 1, (size_t)WMAX * size_g);
    char *hb[WMAX], *pb[WMAX];
    for (int i = 0; i < WMAX; i++) {
        hb[i] = heap + (size_t)i * size_g;
        pb[i] = priv + (size_t)i * size_g;
    }
    printf("# bulk_bw: provider %s, %zu-byte transfers, window %d, %ld per point (MB/s)%s\n",
           prov, size_g, window, iters, busy_g ? ", busy polling" : "");
    printf("%-20s %12s %12s\n", "client memory", "pull (get)", "push (put)");
    for (int m = M_REG; m <= M_HEAP; m++) {
        if (only >= 0 && m != only)
            continue;
        orpc_opts_t o;
        orpc_opts_init(&o);
        o.mr_cache = m == M_CACHE;
        orpc_t *rpc;
        orpc_peer_t *p;
        if (orpc_open(&o, &rpc) != 0 || orpc_lookup(rpc, srv.addr, srv.key, &p) != 0) {
            fprintf(stderr, "bulk_bw: cannot reach the server\n");
            return 1;
        }
        char **bufs = m == M_HEAP ? hb : pb;
        double g = dirs & 1 ? measure(rpc, p, 0, bufs, window, iters) : 0;
        double pu = dirs & 2 ? measure(rpc, p, 1, bufs, window, iters) : 0;
        orpc_stats_t st;
        orpc_stats(rpc, &st);
        printf("%-20s %12.0f %12.0f   (registrations made %llu)\n", mode_name[m], g, pu,
               (unsigned long long)st.mr_cache_misses);
        fflush(stdout);
        orpc_peer_release(p);
        orpc_close(rpc);
    }
    rpcb_server_stop(&srv);
    shmem_free(heap);
    free(priv);
    shmem_finalize();
    return 0;
}
