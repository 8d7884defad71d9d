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
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
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

/* A benchmark's server process: its temp dir, address and key files. */
typedef struct {
    char dir[64], af[96], kf[96];
    char key[100];                 /* "@" kf: the key argument of orpc_lookup */
    char addr[ORPC_ADDR_STRLEN];   /* filled when wait_ms >= 0 */
    pid_t pid;
} rpcb_server_t;

/* The server process's body: serves on prov, publishes its address in af,
 * its key in kf; returns its exit status. */
typedef int (*rpcb_server_fn)(const char *prov, const char *af, const char *kf);

/*
 * Makes /tmp/orpc-NAME.XXXXXX, forks fn(prov, af, kf) and, when wait_ms >= 0,
 * waits that long for its address (into s->addr). 0 or -1.
 */
static inline int rpcb_server_start(rpcb_server_t *s, const char *name, rpcb_server_fn fn,
                                    const char *prov, int wait_ms)
{
    snprintf(s->dir, sizeof(s->dir), "/tmp/orpc-%s.XXXXXX", name);
    if (mkdtemp(s->dir) == NULL)
        return -1;
    snprintf(s->af, sizeof(s->af), "%s/addr", s->dir);
    snprintf(s->kf, sizeof(s->kf), "%s/key", s->dir);
    snprintf(s->key, sizeof(s->key), "@%s", s->kf);
    s->addr[0] = '\0';
    fflush(NULL);
    s->pid = fork();
    if (s->pid < 0)
        return -1;
    if (s->pid == 0)
        _exit(fn(prov, s->af, s->kf));
    return wait_ms < 0 ? 0 : rpcb_read_addr(s->af, s->addr, sizeof(s->addr), wait_ms);
}

/* Ends the server (SIGTERM), reaps it, removes its files. */
static inline void rpcb_server_stop(rpcb_server_t *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    unlink(s->af);
    unlink(s->kf);
    rmdir(s->dir);
}

/* A listening server instance on prov whose key goes to kf; NULL on failure. */
static inline orpc_t *rpcb_open_server(const char *prov, const char *kf)
{
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    o.auth_key_file = kf;
    orpc_t *rpc;
    return orpc_open(&o, &rpc) == ORPC_OK ? rpc : NULL;
}

/* Answers each of the n pending calls whose bulk transfers have ended (with
 * their status) and drops it from the list. */
static inline void rpcb_answer_done(orpc_call_t **pending, int *n)
{
    for (int i = 0; i < *n;) {
        int rc = orpc_bulk_test(pending[i]);
        if (rc == ORPC_EAGAIN) {
            i++;
            continue;
        }
        orpc_respond(pending[i], rc, NULL, 0);
        pending[i] = pending[--*n];
    }
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
