/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the time of a same-host RPC goes. One process, one thread drives a
 * server instance and a client instance, so each stage of a call is timed
 * alone, without scheduling or the other core:
 *   icall     client: header, copy into the request ring (or the provider's send)
 *   serve     server: one orpc_progress that finds the request: poll, decode,
 *             auth, handler lookup, copy of the arguments, handler, response
 *             header, copy into the response ring
 *   wait      client: orpc_wait that finds the response: poll, decode, copy out
 *   idle poll orpc_progress that finds nothing (the cost of each spin)
 * then, with two threads, the raw ring round trip (one 72-byte message each
 * way, as small a call as there is): what crossing between cores costs.
 *   call_cost [-n CALLS] [-r ROUNDS] [-p PROV] [--bulk BYTES [--cache]]
 * -p PROV (without --bulk): the calls go through that libfabric provider
 * instead of the same-host queues (SHMEM_RPC_SAME_HOST=0), e.g.
 * "tcp;ofi_rxm" over loopback, where the kernel has a message in the
 * peer's socket when the send returns, so the stages are the provider's
 * per-call cost (system calls included) without the wire's wait. Not shm:
 * it does not move a message between two endpoints of one thread's domain.
 * --bulk: each call pulls BYTES from the client instead (a data service's
 * call): the client exposes a buffer (a new registration each time unless
 * --cache), encodes its descriptor, calls; the handler pulls it
 * (orpc_bulk_get: process_vm_readv over the queues) and answers; the client
 * releases it. Stages: expose+encode, icall, serve, wait, release. -p is the
 * server's provider (shm, tcp;ofi_rxm): the calls go through the queues
 * either way, but an exposure registers with that provider where it must.
 * Each round runs in a child process; the table shows, in ns, the median
 * over rounds of each round's per-call mean (everything, the provider's
 * every-16th poll amortized) and per-call median (without preemptions and
 * that poll); --bulk: of per-call medians. (shm cannot be timed this way: it
 * does not move a message between two endpoints of one thread's domain;
 * rpc_rate --transport compares the two transports end to end.)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "ofishmem_rpc.h"
#include "rpc/sq_ring.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void h_echo(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_respond(c, 0, in, n);
}

enum { S_ICALL, S_SERVE, S_WAIT, S_IDLE_SRV, S_IDLE_CLI, S_TOTAL, NSTAGE };
static const char *stage_name[NSTAGE] = {"icall (client)", "serve (server progress)",
                                         "wait (client)", "idle poll, server",
                                         "idle poll, client", "whole call, one thread"};

/* --bulk */
static size_t bulk_g;
static int cache_g;
static const char *prov_g = "shm";
static char *scratch_g;
enum { B_EXPOSE, B_ICALL, B_SERVE, B_WAIT, B_RELEASE, B_TOTAL, NBSTAGE };
static const char *bstage_name[NBSTAGE] = {"expose + encode (client)", "icall (client)",
                                           "serve: pull (server)", "wait (client)",
                                           "release (client)", "whole call, one thread"};

static void h_pull(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_bulk_desc_t d;
    int rc = n < ORPC_BULK_DESC_SIZE ? ORPC_EPROTO : orpc_bulk_decode(c, in, &d);
    if (rc == ORPC_OK)
        rc = orpc_bulk_get(c, &d, 0, scratch_g, d.len);
    orpc_respond(c, rc, NULL, 0);
}

/* What one clock read costs: the least of 9 batches (one may be preempted). */
static double clock_tick(void)
{
    double tick = 1e9;
    for (int k = 0; k < 9; k++) {
        uint64_t a = now_ns();
        for (int i = 0; i < 200; i++)
            now_ns();
        double x = (double)(now_ns() - a) / 201.0;
        tick = x < tick ? x : tick;
    }
    return tick;
}

/* A listening server on prov with handler h as name, and a client of it in
 * the same process (mr_cache: the client's option, -1 its default). */
static int open_pair(const char *prov, const char *name, orpc_handler_t h, int mr_cache,
                     orpc_t **srv, orpc_t **cli, orpc_peer_t **p, uint64_t *id)
{
    orpc_opts_t o, co;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    char kf[64], addr[ORPC_ADDR_STRLEN], key[80];
    snprintf(kf, sizeof(kf), "/tmp/call_cost.%d.key", (int)getpid());
    o.auth_key_file = kf;
    if (orpc_open(&o, srv) != ORPC_OK || orpc_addr(*srv, addr, sizeof(addr)) != ORPC_OK)
        return 1;
    orpc_register(*srv, name, h, NULL, 0, id);
    snprintf(key, sizeof(key), "@%s", kf);
    orpc_opts_init(&co);
    co.mr_cache = mr_cache;
    if (orpc_open(&co, cli) != ORPC_OK || orpc_lookup(*cli, addr, key, p) != ORPC_OK)
        return 1;
    return 0;
}

/* One --bulk round: mean ns per stage and the client's registrations, to fd. */
static int child_bulk(int ncalls, int fd)
{
    setenv("SHMEM_RPC_SAME_HOST", "1", 1);
    orpc_t *srv, *cli;
    orpc_peer_t *p;
    uint64_t id;
    if (open_pair(prov_g, "bench.pull", h_pull, cache_g, &srv, &cli, &p, &id) != 0)
        return 1;
    scratch_g = malloc(bulk_g);
    char *buf = malloc(bulk_g);
    memset(buf, 7, bulk_g);
    memset(scratch_g, 0, bulk_g);
    unsigned char desc[ORPC_BULK_DESC_SIZE];
    /* Per-call times, medians taken: on a loaded machine a mean is
     * whatever the scheduler's preemptions add to it. */
    double *t[NBSTAGE];
    for (int s = 0; s < NBSTAGE; s++)
        if ((t[s] = malloc((size_t)ncalls * sizeof(double))) == NULL)
            return 1;
    size_t got;
    for (int i = -1000; i < ncalls; i++) {
        orpc_req_t *q;
        orpc_bulk_t *b;
        uint64_t t0 = now_ns();
        if (orpc_bulk_expose(cli, buf, bulk_g, ORPC_BULK_READ, -1, &b) != ORPC_OK ||
            orpc_bulk_encode(b, p, desc) != ORPC_OK)
            return 1;
        uint64_t t1 = now_ns();
        int irc = orpc_icall(cli, p, id, desc, sizeof(desc), NULL, 0, 10000, &q);
        if (irc != ORPC_OK) {
            fprintf(stderr, "call_cost: icall %d: %s\n", i, orpc_strerror(irc));
            return 1;
        }
        uint64_t t2 = now_ns();
        while (orpc_progress(srv, 0) == 0)
            ;
        uint64_t t3 = now_ns();
        int rc = orpc_wait(q, &got);
        if (rc != ORPC_OK) {
            fprintf(stderr, "call_cost: call %d: %s\n", i, orpc_strerror(rc));
            return 1;
        }
        uint64_t t4 = now_ns();
        orpc_bulk_release(b);
        uint64_t t5 = now_ns();
        orpc_progress(srv, 0);
        orpc_progress(cli, 0);
        if (i < 0)
            continue;
        t[B_EXPOSE][i] = (double)(t1 - t0);
        t[B_ICALL][i] = (double)(t2 - t1);
        t[B_SERVE][i] = (double)(t3 - t2);
        t[B_WAIT][i] = (double)(t4 - t3);
        t[B_RELEASE][i] = (double)(t5 - t4);
        t[B_TOTAL][i] = (double)(t5 - t0);
    }
    if (memcmp(scratch_g, buf, bulk_g) != 0) {
        fprintf(stderr, "call_cost: the pulled bytes are wrong\n");
        return 1;
    }
    orpc_stats_t st;
    orpc_stats(cli, &st);
    double tick = clock_tick();
    double sum[NBSTAGE];
    for (int s = 0; s < NBSTAGE; s++) {
        sum[s] = bench_median(t[s], ncalls) - tick;
        free(t[s]);
    }
    double extra[2] = {(double)st.samehost_live, (double)st.mr_cache_misses};
    if (write(fd, sum, sizeof(sum)) != sizeof(sum) || write(fd, extra, sizeof(extra)) != sizeof(extra))
        return 1;
    orpc_peer_release(p);
    orpc_close(cli);
    orpc_close(srv);
    free(buf);
    free(scratch_g);
    return 0;
}

static int round_bulk(int ncalls, double *out, double *extra)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        _exit(child_bulk(ncalls, fds[1]));
    }
    close(fds[1]);
    int ok = read(fds[0], out, NBSTAGE * sizeof(double)) == (ssize_t)(NBSTAGE * sizeof(double)) &&
             read(fds[0], extra, 2 * sizeof(double)) == (ssize_t)(2 * sizeof(double));
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int main_bulk(int ncalls, int rounds)
{
    double v[NBSTAGE][BENCH_MAX_REPS], regs = 0;
    for (int k = 0; k < rounds; k++) {
        double r[NBSTAGE], extra[2];
        if (round_bulk(ncalls, r, extra) != 0) {
            fprintf(stderr, "call_cost: a round failed\n");
            return 1;
        }
        if (extra[0] <= 0) {
            fprintf(stderr, "call_cost: the same-host queues were not used\n");
            return 1;
        }
        regs = extra[1];
        for (int s = 0; s < NBSTAGE; s++)
            v[s][k] = r[s];
    }
    printf("# call_cost --bulk: pull of %zu bytes per call, server provider %s, %s, one "
           "thread drives server and client, %d calls per round, median of %d rounds of per-call "
           "medians (ns); "
           "client registrations in the last round: %.0f\n",
           bulk_g, prov_g, cache_g ? "registration cache" : "no registration cache", ncalls,
           rounds, regs);
    printf("%-28s %10s\n", "stage", "ns");
    for (int s = 0; s < NBSTAGE; s++)
        printf("%-28s %10.0f\n", bstage_name[s], bench_median(v[s], rounds));
    return 0;
}

/* One round in a child: mean, then median ns per stage (2 x NSTAGE), written
 * to fd. same_host 0: through provider prov (SHMEM_RPC_SAME_HOST=0). */
static int child(int same_host, const char *prov, int ncalls, int fd)
{
    setenv("SHMEM_RPC_SAME_HOST", same_host ? "1" : "0", 1);
    orpc_t *srv, *cli;
    orpc_peer_t *p;
    uint64_t id;
    if (open_pair(prov, "bench.echo", h_echo, -1, &srv, &cli, &p, &id) != 0)
        return 1;
    orpc_stats_t st;
    char in[8] = "abcdefg", out[8];
    double sum[2 * NSTAGE] = {0};
    /* Per-call times: the mean (what a stage costs in all, the provider's
     * every-16th poll amortized) and the median (without preemptions and
     * that poll: on a loaded machine the stable figure). */
    double *t[NSTAGE];
    for (int s = 0; s < NSTAGE; s++)
        if ((t[s] = malloc((size_t)ncalls * sizeof(double))) == NULL)
            return 1;
    size_t got;
    /* A provider's connection is set up by both ends' progress, and a send
     * waits for it: calls of a short deadline until one goes out. */
    for (int tries = 0; !same_host; tries++) {
        orpc_req_t *q;
        int irc = orpc_icall(cli, p, id, in, sizeof(in), out, sizeof(out), 5, &q);
        if (irc == ORPC_OK) {
            orpc_cancel(q);
            break;
        }
        if (irc != ORPC_ETIMEDOUT || tries == 2000) {
            fprintf(stderr, "call_cost: no connection to the server: %s\n", orpc_strerror(irc));
            return 1;
        }
        for (int k = 0; k < 100; k++)
            orpc_progress(srv, 0), orpc_progress(cli, 0);
    }
    for (int i = -1000; i < ncalls; i++) {
        orpc_req_t *q;
        uint64_t t0 = now_ns();
        int irc = orpc_icall(cli, p, id, in, sizeof(in), out, sizeof(out), 10000, &q);
        if (irc != ORPC_OK) {
            fprintf(stderr, "call_cost: icall %d: %s\n", i, orpc_strerror(irc));
            return 1;
        }
        uint64_t t1 = now_ns();
        while (orpc_progress(srv, 0) == 0)
            ;
        uint64_t t2 = now_ns();
        int rc = orpc_wait(q, &got);
        if (rc != ORPC_OK) {
            fprintf(stderr, "call_cost: call %d: %s\n", i, orpc_strerror(rc));
            return 1;
        }
        uint64_t t3 = now_ns();
        orpc_progress(srv, 0); /* idle now: the response's send completion, if any */
        orpc_progress(cli, 0);
        uint64_t t4 = now_ns();
        orpc_progress(srv, 0);
        uint64_t t5 = now_ns();
        orpc_progress(cli, 0);
        uint64_t t6 = now_ns();
        if (i < 0)
            continue;
        t[S_ICALL][i] = (double)(t1 - t0);
        t[S_SERVE][i] = (double)(t2 - t1);
        t[S_WAIT][i] = (double)(t3 - t2);
        t[S_IDLE_SRV][i] = (double)(t5 - t4);
        t[S_IDLE_CLI][i] = (double)(t6 - t5);
        t[S_TOTAL][i] = (double)(t3 - t0);
    }
    orpc_stats(cli, &st);
    double tick = clock_tick(); /* taken off every stage */
    for (int s = 0; s < NSTAGE; s++) {
        double m = 0;
        for (int i = 0; i < ncalls; i++)
            m += t[s][i];
        sum[s] = m / ncalls - tick;
        sum[NSTAGE + s] = bench_median(t[s], ncalls) - tick;
        free(t[s]);
    }
    double used = (double)st.samehost_live;
    if (write(fd, sum, sizeof(sum)) != sizeof(sum) || write(fd, &used, sizeof(used)) != sizeof(used))
        return 1;
    orpc_peer_release(p);
    orpc_close(cli);
    orpc_close(srv);
    return 0;
}

static int round_of(int same_host, const char *prov, int ncalls, double *out, double *used)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        _exit(child(same_host, prov, ncalls, fds[1]));
    }
    close(fds[1]);
    int ok = read(fds[0], out, 2 * NSTAGE * sizeof(double)) ==
                 (ssize_t)(2 * NSTAGE * sizeof(double)) &&
             read(fds[0], used, sizeof(*used)) == (ssize_t)sizeof(*used);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* ---------------------------------------------- raw ring round trip */

#define RING_CAP (256u << 10)
typedef struct {
    sq_ring_ctl_t ctl;
    _Alignas(64) uint8_t data[RING_CAP];
} ring_t;
static ring_t *ring_ab, *ring_ba;
static volatile int pong_stop;

static void *ponger(void *arg)
{
    (void)arg;
    sq_end_t rx, tx;
    sq_end_init(&rx, ring_ab->data, RING_CAP, &ring_ab->ctl);
    sq_end_init(&tx, ring_ba->data, RING_CAP, &ring_ba->ctl);
    while (!pong_stop) {
        const void *m;
        size_t len;
        if (sq_peek(&rx, &m, &len) != 1)
            continue;
        while (sq_push2(&tx, m, len, NULL, 0) == 1)
            ;
        sq_release(&rx, len);
    }
    return NULL;
}

static double ring_rtt(int n)
{
    ring_ab = aligned_alloc(64, sizeof(ring_t));
    ring_ba = aligned_alloc(64, sizeof(ring_t));
    memset(ring_ab, 0, sizeof(ring_t));
    memset(ring_ba, 0, sizeof(ring_t));
    pong_stop = 0;
    pthread_t t;
    pthread_create(&t, NULL, ponger, NULL);
    sq_end_t tx, rx;
    sq_end_init(&tx, ring_ab->data, RING_CAP, &ring_ab->ctl);
    sq_end_init(&rx, ring_ba->data, RING_CAP, &ring_ba->ctl);
    char msg[72] = {0};
    uint64_t t0 = 0;
    for (int i = -1000; i < n; i++) {
        if (i == 0)
            t0 = now_ns();
        while (sq_push2(&tx, msg, sizeof(msg), NULL, 0) == 1)
            ;
        const void *m;
        size_t len;
        while (sq_peek(&rx, &m, &len) != 1)
            ;
        sq_release(&rx, len);
    }
    double rtt = (double)(now_ns() - t0) / n;
    pong_stop = 1;
    pthread_join(t, NULL);
    free(ring_ab);
    free(ring_ba);
    return rtt;
}

int main(int argc, char **argv)
{
    int ncalls = 20000, rounds = 5, ring = 1, prov_set = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            ncalls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-ring"))
            ring = 0;
        else if (!strcmp(argv[i], "--bulk") && i + 1 < argc)
            bulk_g = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov_g = argv[++i], prov_set = 1;
        else if (!strcmp(argv[i], "--cache"))
            cache_g = 1;
        else {
            fprintf(stderr, "usage: %s [-n CALLS] [-r ROUNDS] [--no-ring] [-p PROV] "
                            "[--bulk BYTES [--cache]]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > BENCH_MAX_REPS || ncalls < 1)
        return 2;
    if (bulk_g)
        return main_bulk(ncalls, rounds);
    /* -p PROV: the calls through that provider, not the queues. */
    int same_host = !prov_set || strcmp(prov_g, "shm") == 0;
    if (!same_host)
        ring = 0;
    double v[2 * NSTAGE][BENCH_MAX_REPS], rtt[BENCH_MAX_REPS];
    for (int k = 0; k < rounds; k++) {
        double r[2 * NSTAGE], used;
        if (round_of(same_host, prov_g, ncalls, r, &used) != 0) {
            fprintf(stderr, "call_cost: a round failed\n");
            return 1;
        }
        if (same_host && used <= 0) {
            fprintf(stderr, "call_cost: the same-host queues were not used\n");
            return 1;
        }
        if (!same_host && used > 0) {
            fprintf(stderr, "call_cost: the same-host queues were used, not %s\n", prov_g);
            return 1;
        }
        for (int s = 0; s < 2 * NSTAGE; s++)
            v[s][k] = r[s];
        rtt[k] = ring ? ring_rtt(100000) : 0;
    }
    printf("# call_cost: 8-byte echo through %s, one thread drives server and client, "
           "%d calls per round, median of %d rounds of the per-call mean and median (ns)\n",
           same_host ? "the same-host queues" : prov_g, ncalls, rounds);
    printf("%-28s %10s %10s\n", "stage", "mean", "median");
    for (int s = 0; s < NSTAGE; s++)
        printf("%-28s %10.0f %10.0f\n", stage_name[s], bench_median(v[s], rounds),
               bench_median(v[NSTAGE + s], rounds));
    if (ring)
        printf("%-28s %10.0f\n", "ring round trip, 2 threads", bench_median(rtt, rounds));
    return 0;
}
