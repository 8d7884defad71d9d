/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the RPC test server and clients: handler names, argument layouts, patterns. */
#ifndef RPC_TEST_H
#define RPC_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ofishmem_rpc.h"

#define T_ECHO "test.echo"
#define T_STATUS "test.status"   /* args: i64 status; responds with it, no payload */
#define T_SLEEP "test.sleep"     /* args: u32 ms; sleeps in the handler, then echoes */
#define T_PULL "test.pull"       /* args: desc, u64 off, u64 len, u32 seed: pulls and checks */
#define T_PUSH "test.push"       /* args: desc, u64 off, u64 len, u32 seed: pushes the pattern */
#define T_PULL_LATE "test.pull_late" /* args: desc, u32 wait_ms: waits, then tries to pull */
#define T_BULK_BAD "test.bulk_bad"   /* args: desc: tries out-of-range/unauthorised transfers */
#define T_QUEUED "test.queued"   /* queued handler: echoes */
#define T_DEFER "test.defer"     /* responds on a later progress call */
#define T_FILL "test.fill"       /* args: u32 n; responds with n pattern bytes (seed n) */
#define T_CHECK "test.check"     /* args: n pattern bytes (seed n); responds i64 first bad or -1 */
#define T_NOTE "test.note"       /* one-way: args u64 v; adds v to a sum (its orpc_respond sends nothing) */
#define T_NOTES "test.notes"     /* responds with u64 count, u64 sum of the notes so far */
#define T_STATS "test.stats"     /* responds with the server's orpc_stats_t */
#define T_STOP "test.stop"
/* args: desc: starts pulling (PULL_DIE) or pushing (PUSH_DIE) the whole
 * descriptor, in 4 transfers, then the server SIGKILLs itself with them in
 * flight (rpc_faults.c) */
#define T_PULL_DIE "test.pull_die"
#define T_HOLD "test.hold" /* the server keeps the call and never answers it */
#define T_PUSH_DIE "test.push_die"
/* args: desc: pulls (BULK_LOOP) or pushes (PUSH_LOOP) the whole descriptor
 * again and again until a transfer fails (the client is killed meanwhile:
 * run_faults.sh client_*), then answers that status. Logs to stderr
 * "bulk <kind> loop running" after the first transfer and the failure with
 * its CLOCK_REALTIME ms. */
#define T_PULL_LOOP "test.pull_loop"
#define T_PUSH_LOOP "test.push_loop"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define CHECK_RC(rc, want, what)                                               \
    do {                                                                       \
        int rc_ = (int)(rc), want_ = (int)(want);                              \
        CHECK(rc_ == want_, "%s returned %d (%s), expected %d (%s)", what, rc_, \
              orpc_strerror(rc_), want_, orpc_strerror(want_));                \
    } while (0)

/*
 * Milliseconds the calling thread has waited, runnable, for a CPU since it
 * started (the kernel's schedstat run_delay; 0 where it keeps none). A test
 * that bounds how late the library notices something adds this wait over
 * the interval: on a loaded machine a process that is not run cannot notice
 * anything, whatever the library does (rpc.shm.server_call once saw a 3 s
 * timeout end 3.1 s late at load 66 on 2 cores).
 */
static inline double t_run_wait_ms(void)
{
    unsigned long long run = 0, wait = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f != NULL) {
        if (fscanf(f, "%llu %llu", &run, &wait) != 2)
            wait = 0;
        fclose(f);
    }
    return (double)wait / 1e6;
}

/* A test server's serve loop runs until its stop handler or SIGTERM. */
static volatile int t_stop_g __attribute__((unused));

static inline void t_h_stop(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    orpc_respond(c, 0, NULL, 0);
    t_stop_g = 1;
}

static inline void t_on_term(int sig)
{
    (void)sig;
    t_stop_g = 1;
}

/* Writes rpc's address into af whole (a temp file, then a rename), so a
 * reader never sees half an address; ends the program when it cannot. */
static inline void t_publish_addr(orpc_t *rpc, const char *af)
{
    char addr[ORPC_ADDR_STRLEN], tmp[512];
    CHECK_RC(orpc_addr(rpc, addr, sizeof(addr)), ORPC_OK, "orpc_addr");
    snprintf(tmp, sizeof(tmp), "%s.tmp", af);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "cannot write %s", tmp);
    fprintf(f, "%s\n", addr);
    CHECK(fclose(f) == 0 && rename(tmp, af) == 0, "cannot publish the address in %s", af);
}

/* Byte i of the pattern for seed s (position dependent, so sub-ranges are checked). */
static inline uint8_t t_pat(uint32_t seed, uint64_t i)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed << 17);
    return (uint8_t)(x >> 29);
}

static inline void t_fill(void *buf, uint64_t base, uint64_t len, uint32_t seed)
{
    uint8_t *p = (uint8_t *)buf;
    for (uint64_t i = 0; i < len; i++)
        p[i] = t_pat(seed, base + i);
}

/* Index of the first wrong byte, or -1. */
static inline long long t_check(const void *buf, uint64_t base, uint64_t len, uint32_t seed)
{
    const uint8_t *p = (const uint8_t *)buf;
    for (uint64_t i = 0; i < len; i++)
        if (p[i] != t_pat(seed, base + i))
            return (long long)i;
    return -1;
}

#endif
