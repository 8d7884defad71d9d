/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter-gather bulk bandwidth (issue 18): a server pulls (or pushes) 1 MiB
 * per call from a client buffer described as
 *   one:  one contiguous 1 MiB segment (orpc_bulk_expose), or
 *   sg:   NSEG separate segments of 1 MiB / NSEG each (orpc_bulk_expose_sg;
 *         default 16 x 64 KiB, 4 KiB apart so no two are adjacent),
 * into one local 1 MiB buffer per call in flight. A window of calls is in
 * flight (the server keeps their transfers going and answers each when its
 * data is in); the registration cache is on (the steady state of a service).
 * The two shapes alternate ROUNDS times; printed: the median MB/s of each
 * and the median of the per-round ratios sg/one.
 *   sg_bw [-p PROV] [-n ITERS] [-w WINDOW] [-r ROUNDS] [-g NSEG] [-d pull|push] [-b] [-a]
 * -a: the segments adjacent (slices of one buffer: the library joins them).
 * -b: the client busy-polls its calls (orpc_test) instead of waiting politely
 * (on tcp;ofi_rxm a push lands only while the client drives progress).
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

#define WMAX RPCB_WMAX
#define SIZE (1u << 20)

/* ---------------------------------------------------------------- server */

static volatile sig_atomic_t stop_g;
static void on_term(int s)
{
    (void)s;
    stop_g = 1;
}
static char *scratch_g;
static orpc_call_t *pending_g[256];
static int npending_g, slot_g;

static void h_xfer(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    int push = arg != NULL;
    orpc_bulk_desc_t d;
    int rc = orpc_bulk_decode_n(c, in, n, &d);
    char *buf = scratch_g + (size_t)(slot_g++ % WMAX) * SIZE;
    size_t len = d.len < SIZE ? d.len : SIZE;
    if (rc == ORPC_OK)
        rc = push ? orpc_bulk_iput(c, &d, 0, buf, len) : orpc_bulk_iget(c, &d, 0, buf, len);
    if (rc != ORPC_OK || npending_g == 256) {
        orpc_respond(c, rc, NULL, 0);
        return;
    }
    pending_g[npending_g++] = c;
}

static int server_main(const char *prov, const char *af, const char *kf)
{
    signal(SIGTERM, on_term);
    scratch_g = aligned_alloc(4096, (size_t)WMAX * SIZE);
    memset(scratch_g, 0x5a, (size_t)WMAX * SIZE);
    orpc_t *rpc = rpcb_open_server(prov, kf);
    if (rpc == NULL)
        return 1;
    orpc_register(rpc, "sgbench.pull", h_xfer, NULL, 0, NULL);
    orpc_register(rpc, "sgbench.push", h_xfer, (void *)1, 0, NULL);
    if (rpcb_publish_addr(rpc, af) != 0)
        return 1;
    while (!stop_g) {
        orpc_progress(rpc, npending_g ? 0 : 1);
        rpcb_answer_done(pending_g, &npending_g);
    }
    orpc_close(rpc);
    return 0;
}

/* ---------------------------------------------------------------- client */

static int nseg_g = 16, busy_g;
static size_t gap_g = 4096; /* between segments (-a: 0, adjacent) */

/* One call's set-up: the buffers as nseg_g segments (sg) or as one. */
typedef struct {
    orpc_t *rpc;
    orpc_peer_t *srv;
    uint64_t id;
    unsigned acc;
    int sg;
    char **bufs;
} sg_call_t;

static int sg_start(void *arg, int i, orpc_bulk_t **bulk, orpc_req_t **req)
{
    static unsigned char args[RPCB_WMAX][ORPC_BULK_WIRE_MAX];
    sg_call_t *c = arg;
    size_t seglen = SIZE / (size_t)nseg_g;
    int rc;
    if (c->sg) {
        orpc_seg_t s[ORPC_BULK_SEG_MAX];
        for (int k = 0; k < nseg_g; k++)
            s[k] = (orpc_seg_t){c->bufs[i] + (size_t)k * (seglen + gap_g), seglen};
        rc = orpc_bulk_expose_sg(c->rpc, s, (size_t)nseg_g, c->acc, -1, bulk);
    } else {
        rc = orpc_bulk_expose(c->rpc, c->bufs[i], SIZE, c->acc, -1, bulk);
    }
    if (rc != 0)
        return rc;
    size_t sz = orpc_bulk_encoded_size(*bulk);
    if (orpc_bulk_encode(*bulk, c->srv, args[i]) != 0)
        return -1;
    return orpc_icall(c->rpc, c->srv, c->id, args[i], sz, NULL, 0, 30000, req);
}

/* MB/s of iters calls, window in flight; sg: the buffers as nseg_g segments. */
static double measure(orpc_t *rpc, orpc_peer_t *srv, int push, int sg, char **bufs, int window,
                      long iters)
{
    sg_call_t c = {rpc, srv, orpc_id(push ? "sgbench.push" : "sgbench.pull"),
                   push ? ORPC_BULK_WRITE : ORPC_BULK_READ, sg, bufs};
    return (double)iters * SIZE / rpcb_run_window("sg_bw", window, iters, busy_g, sg_start, &c) /
           1e6;
}

int main(int argc, char **argv)
{
    const char *prov = "shm";
    long iters = 200;
    int window = 8, rounds = 5, dirs = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-g") && i + 1 < argc)
            nseg_g = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-b"))
            busy_g = 1;
        else if (!strcmp(argv[i], "-a"))
            gap_g = 0;
        else if (!strcmp(argv[i], "-d") && i + 1 < argc && !strcmp(argv[i + 1], "pull"))
            dirs = 1, i++;
        else if (!strcmp(argv[i], "-d") && i + 1 < argc && !strcmp(argv[i + 1], "push"))
            dirs = 2, i++;
        else {
            fprintf(stderr, "usage: %s [-p PROV] [-n ITERS] [-w WINDOW] [-r ROUNDS] [-g NSEG] "
                            "[-d pull|push] [-b] [-a]\n", argv[0]);
            return 2;
        }
    }
    if (window < 1 || window > WMAX || rounds < 1 || rounds > 64 || nseg_g < 1 ||
        nseg_g > ORPC_BULK_SEG_MAX || SIZE % (unsigned)nseg_g) {
        fprintf(stderr, "sg_bw: -w 1..%d, -r 1..64, -g 1..%d dividing %u\n", WMAX,
                ORPC_BULK_SEG_MAX, SIZE);
        return 2;
    }
    rpcb_server_t srv;
    if (rpcb_server_start(&srv, "sgbw", server_main, prov, 4000) != 0)
        return 1;
    /* Per call in flight: room for 1 MiB plus a gap after every segment. */
    size_t per = SIZE + (size_t)nseg_g * 4096;
    /* Page-aligned, as bulk buffers usually are: from malloc each 64 KiB
     * segment would cross 17 pages and the one 1 MiB buffer 257, so the
     * kernel would pin and copy 6 % more pages for the list than for the
     * one segment (same-host queues, quiet: 0.86-0.89 instead of 0.91-0.93). */
    char *mem = aligned_alloc(4096, (size_t)WMAX * per), *bufs[WMAX];
    memset(mem, 1, (size_t)WMAX * per);
    for (int i = 0; i < WMAX; i++)
        bufs[i] = mem + (size_t)i * per;
    orpc_t *rpc;
    orpc_peer_t *p;
    if (orpc_open(NULL, &rpc) != 0 || orpc_lookup(rpc, srv.addr, srv.key, &p) != 0) {
        fprintf(stderr, "sg_bw: cannot reach the server\n");
        return 1;
    }
    printf("# sg_bw: provider %s, 1 MiB a call as 1 segment vs %d x %zu B, window %d, "
           "%ld calls a point, %d alternating rounds (MB/s, medians)%s%s\n",
           prov, nseg_g, (size_t)SIZE / (size_t)nseg_g, window, iters, rounds,
           busy_g ? ", client busy-polling" : "", gap_g ? "" : ", segments adjacent");
    printf("%-6s %12s %12s %12s\n", "dir", "1 segment", "sg", "sg/1 seg");
    for (int push = 0; push < 2; push++) {
        if (!(dirs & (1 << push)))
            continue;
        double one[64], sg[64], ratio[64];
        for (int r = 0; r < rounds; r++) {
            /* Alternate which goes first, so neither always runs on a warmer machine. */
            if (r % 2 == 0) {
                one[r] = measure(rpc, p, push, 0, bufs, window, iters);
                sg[r] = measure(rpc, p, push, 1, bufs, window, iters);
            } else {
                sg[r] = measure(rpc, p, push, 1, bufs, window, iters);
                one[r] = measure(rpc, p, push, 0, bufs, window, iters);
            }
            ratio[r] = sg[r] / one[r];
        }
        double mr = bench_median(ratio, rounds);
        printf("%-6s %12.0f %12.0f %12.2f\n", push ? "push" : "pull", bench_median(one, rounds),
               bench_median(sg, rounds), mr);
        fflush(stdout);
    }
    orpc_peer_release(p);
    orpc_close(rpc);
    rpcb_server_stop(&srv);
    free(mem);
    return 0;
}
