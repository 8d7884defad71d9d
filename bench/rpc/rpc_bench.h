// SPDX-License-Identifier: BSD-3-Clause
/*
 * What every RPC benchmark's forked server and its clients share: the
 * server's address handed over in a file (written whole, then renamed, so a
 * reader never sees half of it), and the windowed bulk-call loop of the
 * bandwidth benchmarks. Header-only: each benchmark is one program.
 */
#ifndef OFISHMEM_BENCH_RPC_BENCH_H
#define OFISHMEM_BENCH_RPC_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "ofishmem_rpc.h"

/* Server side: publish rpc's address in af. 0 or -1. */
static inline int rpcb_publish_addr(orpc_t *rpc, const char *af)
{
    char addr[ORPC_ADDR_STRLEN], tmp[700];
    if (orpc_addr(rpc, addr, sizeof(addr)) != ORPC_OK)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.tmp", af);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    int ok = fprintf(f, "%s\n", addr) > 0;
    ok &= fclose(f) == 0;
    return ok && rename(tmp, af) == 0 ? 0 : -1;
}

/* Client side: the address in af, waiting up to wait_ms for it. 0 or -1. */
static inline int rpcb_read_addr(const char *af, char *addr, size_t len, int wait_ms)
{
    for (int i = 0; i < wait_ms / 10 && access(af, R_OK) != 0; i++)
        usleep(10000);
    FILE *f = fopen(af, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(addr, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    addr[strcspn(addr, "\n")] = '\0';
    return 0;
}

#define RPCB_WMAX 16

/* Starts the call of one window slot: exposes *bulk, sends its descriptor in
 * *req. 0, or non-zero when the call could not be started. */
typedef int (*rpcb_start_fn)(void *arg, int slot, orpc_bulk_t **bulk, orpc_req_t **req);

/*
 * Runs warm + iters calls with up to window (<= RPCB_WMAX) in flight, slot i
 * reusing its buffer once its call completed (its bulk then released). Waits
 * for the oldest call (idling politely) and polls the others; busy: polls
 * them all. Returns the seconds the last iters calls took; a failed call
 * ends the program with a message naming name.
 */
static inline double rpcb_run_window(const char *name, int window, long iters, int busy,
                                     rpcb_start_fn start, void *arg)
{
    orpc_req_t *req[RPCB_WMAX] = {0};
    orpc_bulk_t *bulk[RPCB_WMAX];
    long issued = 0, done = 0, warm = 20;
    double t0 = 0;
    int oldest = 0;
    size_t got;
    while (done < iters + warm) {
        for (int i = 0; i < window; i++) {
            if (req[i]) {
                int rc = i == oldest && !busy ? orpc_wait(req[i], &got) : orpc_test(req[i], &got);
                if (rc == ORPC_EAGAIN)
                    continue;
                if (i == oldest)
                    oldest = (oldest + 1) % window;
                if (rc != 0) {
                    fprintf(stderr, "%s: call failed: %s\n", name, orpc_strerror(rc));
                    exit(1);
                }
                orpc_bulk_release(bulk[i]);
                req[i] = NULL;
                if (++done == warm)
                    t0 = bench_now_us();
            }
            if (issued < iters + warm) {
                if (start(arg, i, &bulk[i], &req[i]) != 0) {
                    fprintf(stderr, "%s: could not start a call\n", name);
                    exit(1);
                }
                issued++;
            }
        }
    }
    return (bench_now_us() - t0) / 1e6;
}

#endif
