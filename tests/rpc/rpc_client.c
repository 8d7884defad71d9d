/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test client. rpc_client ADDRFILE KEYFILE MODE [N]
 *   shapes      every call shape: sizes, statuses, unknown id, timeout, async, queued, deferred
 *   bulk        pulls and pushes of 0..16 MiB and sub-ranges, cache on and off, refusals
 *   expire      a descriptor used after its deadline is refused
 *   concurrent  N calls in flight at once
 *   churn       N cycles of open, lookup, call, close
 *   limits [IGNORE [HUGE]]  request limits: advertised, refused locally, refused by the server
 *   resp_limit  the server never sends a response larger than we can receive
 *   lazy [ADDR2 KEY2]  echo and 1 MiB arguments/results (both bulk paths) to
 *               the server; with a second server (ADDR2: through the
 *               provider), calls to it, then to the first again
 *   stats       prints the server's counters as NAME=VALUE lines
 *   stop        asks the server to stop
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc_test.h"

static orpc_t *rpc_g;
static orpc_peer_t *srv_g;
static uint64_t id_echo, id_status, id_sleep, id_pull, id_push, id_late, id_bad, id_queued,
    id_defer, id_stats, id_stop;

static void read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    CHECK(fgets(buf, (int)len, f) != NULL, "empty %s", path);
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

static void connect_to(const char *addr_file, const char *key_file, orpc_t **rpc_p,
                       orpc_peer_t **peer_p)
{
    char addr[ORPC_ADDR_STRLEN], key[300];
    read_line(addr_file, addr, sizeof(addr));
    snprintf(key, sizeof(key), "@%s", key_file);
    CHECK_RC(orpc_open(NULL, rpc_p), ORPC_OK, "orpc_open");
    CHECK_RC(orpc_lookup(*rpc_p, addr, key, peer_p), ORPC_OK, "orpc_lookup");
}

static void ids(void)
{
    id_echo = orpc_id(T_ECHO);
    id_status = orpc_id(T_STATUS);
    id_sleep = orpc_id(T_SLEEP);
    id_pull = orpc_id(T_PULL);
    id_push = orpc_id(T_PUSH);
    id_late = orpc_id(T_PULL_LATE);
    id_bad = orpc_id(T_BULK_BAD);
    id_queued = orpc_id(T_QUEUED);
    id_defer = orpc_id(T_DEFER);
    id_stats = orpc_id(T_STATS);
    id_stop = orpc_id(T_STOP);
}

static void echo_size(size_t n)
{
    char *in = malloc(n + 1), *out = malloc(n + 1);
    t_fill(in, 0, n, (uint32_t)n);
    memset(out, 0, n + 1);
    size_t got = 12345;
    int rc = orpc_call(rpc_g, srv_g, id_echo, in, n, out, n, &got, 30000);
    CHECK_RC(rc, 0, "echo");
    CHECK(got == n, "echo of %zu bytes answered %zu", n, got);
    CHECK(memcmp(in, out, n) == 0, "echo of %zu bytes: payload differs", n);
    free(in);
    free(out);
}

static void mode_shapes(void)
{
    static const size_t sizes[] = {0, 1, 8, 100, 1024, 1025, 4096, 60000, 65536};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        echo_size(sizes[i]);
    /* Larger than SHMEM_RPC_MAX_REQ: refused before it leaves. */
    static char big[65537];
    size_t got;
    CHECK_RC(orpc_call(rpc_g, srv_g, id_echo, big, sizeof(big), NULL, 0, &got, 1000),
             ORPC_ERANGE, "oversized call");
    /* Statuses travel unchanged, both ours and the handler's. */
    static const int64_t sts[] = {0, 1, 42, ORPC_EPERM, -1000};
    for (size_t i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
        char a[8];
        orpc_enc_t e;
        orpc_enc_init(&e, a, sizeof(a));
        orpc_enc_i64(&e, sts[i]);
        CHECK_RC(orpc_call(rpc_g, srv_g, id_status, a, e.pos, NULL, 0, &got, 5000), (int)sts[i],
                 "status");
        CHECK(got == 0, "status call answered %zu bytes", got);
    }
    /* Unknown handler. */
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id("no.such.handler"), "x", 1, NULL, 0, &got, 5000),
             ORPC_ENOENT, "unknown id");
    /* A cut response: out_len tells the full length. */
    char small[4];
    CHECK_RC(orpc_call(rpc_g, srv_g, id_echo, "0123456789", 10, small, sizeof(small), &got,
                       5000), 0, "echo into a small buffer");
    CHECK(got == 10 && memcmp(small, "0123", 4) == 0, "cut response: got %zu", got);
    /* Timeout, then the late response is dropped and the next call works. */
    char a[4];
    orpc_enc_t e;
    orpc_enc_init(&e, a, sizeof(a));
    orpc_enc_u32(&e, 400);
    CHECK_RC(orpc_call(rpc_g, srv_g, id_sleep, a, e.pos, NULL, 0, &got, 100), ORPC_ETIMEDOUT,
             "slow call");
    echo_size(16);
    /* Asynchronous: 32 in flight, completed out of order with test and wait. */
    enum { NA = 32 };
    orpc_req_t *req[NA];
    uint64_t vals[NA], outs[NA];
    for (int i = 0; i < NA; i++) {
        vals[i] = 0x1000u + (uint64_t)i;
        CHECK_RC(orpc_icall(rpc_g, srv_g, id_echo, &vals[i], 8, &outs[i], 8, 5000, &req[i]), 0,
                 "icall");
    }
    int done[NA] = {0}, left = NA;
    while (left > 0) {
        for (int i = NA - 1; i >= 0; i--) {
            if (done[i])
                continue;
            int rc = (i % 2) ? orpc_test(req[i], &got) : orpc_wait(req[i], &got);
            if (rc == ORPC_EAGAIN)
                continue;
            CHECK_RC(rc, 0, "async echo");
            CHECK(outs[i] == vals[i], "async echo %d: %llx", i, (unsigned long long)outs[i]);
            done[i] = 1;
            left--;
        }
    }
    /* Queued handler (run by the application thread) and a deferred answer. */
    char q[16];
    CHECK_RC(orpc_call(rpc_g, srv_g, id_queued, "queued", 6, q, sizeof(q), &got, 5000), 7,
             "queued handler");
    CHECK(got == 6 && memcmp(q, "queued", 6) == 0, "queued echo");
    CHECK_RC(orpc_call(rpc_g, srv_g, id_defer, NULL, 0, q, sizeof(q), &got, 5000), 3,
             "deferred respond");
    CHECK(got == 4 && memcmp(q, "late", 4) == 0, "deferred payload");
    printf("shapes: ok\n");
}

static int bulk_call(uint64_t id, orpc_bulk_t *b, uint64_t off, uint64_t len, uint32_t seed,
                     int64_t *where)
{
    unsigned char a[ORPC_BULK_DESC_SIZE + 20];
    orpc_enc_t e;
    orpc_enc_init(&e, a, sizeof(a));
    int rc = orpc_bulk_encode(b, srv_g, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE));
    CHECK_RC(rc, 0, "bulk encode");
    orpc_enc_u64(&e, off);
    orpc_enc_u64(&e, len);
    orpc_enc_u32(&e, seed);
    size_t got;
    int64_t w = -1;
    rc = orpc_call(rpc_g, srv_g, id, a, e.pos, &w, sizeof(w), &got, 30000);
    if (where)
        *where = w;
    return rc;
}

static void mode_bulk(void)
{
    static const size_t sizes[] = {0, 1, 7, 4096, 65536, 65537, 1u << 20, 3u << 20, 16u << 20};
    size_t maxs = 16u << 20;
    char *buf = malloc(maxs);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        uint32_t seed = (uint32_t)(i + 11);
        orpc_bulk_t *b;
        int64_t where;
        /* Pull: the client's data must arrive whole. */
        t_fill(buf, 0, n, seed);
        CHECK_RC(orpc_bulk_expose(rpc_g, buf, n, ORPC_BULK_READ, -1, &b), 0, "expose");
        int rc = bulk_call(id_pull, b, 0, n, seed, &where);
        CHECK(rc == 0, "pull of %zu bytes: %d (%s), first bad byte %lld", n, rc,
              orpc_strerror(rc), (long long)where);
        /* Sub-ranges: head, middle, tail. */
        if (n >= 16) {
            uint64_t subs[3][2] = {{0, n / 3}, {n / 3, n / 3}, {n - n / 5, n / 5}};
            for (int s = 0; s < 3; s++) {
                rc = bulk_call(id_pull, b, subs[s][0], subs[s][1], seed, &where);
                CHECK(rc == 0, "pull of [%llu,+%llu) of %zu: %d (%s)",
                      (unsigned long long)subs[s][0], (unsigned long long)subs[s][1], n, rc,
                      orpc_strerror(rc));
            }
        }
        CHECK_RC(orpc_bulk_release(b), 0, "release");
        /* Push: the server's pattern must land exactly where asked. */
        memset(buf, 0xee, n);
        CHECK_RC(orpc_bulk_expose(rpc_g, buf, n, ORPC_BULK_WRITE, -1, &b), 0, "expose");
        rc = bulk_call(id_push, b, 0, n, seed + 100, NULL);
        CHECK(rc == 0, "push of %zu bytes: %d (%s)", n, rc, orpc_strerror(rc));
        long long bad = t_check(buf, 0, n, seed + 100);
        CHECK(bad < 0, "push of %zu bytes: byte %lld wrong", n, bad);
        if (n >= 16) {
            memset(buf, 0xee, n);
            uint64_t o = n / 4, l = n / 2;
            rc = bulk_call(id_push, b, o, l, seed + 200, NULL);
            CHECK(rc == 0, "push of a sub-range of %zu: %d", n, rc);
            CHECK(t_check(buf + o, o, l, seed + 200) < 0, "push sub-range of %zu wrong", n);
            for (size_t k = 0; k < o; k++)
                CHECK((unsigned char)buf[k] == 0xee, "push of [%llu,+%llu) wrote byte %zu",
                      (unsigned long long)o, (unsigned long long)l, k);
            for (size_t k = o + l; k < n; k++)
                CHECK((unsigned char)buf[k] == 0xee, "push sub-range wrote past its end (%zu)",
                      k);
        }
        CHECK_RC(orpc_bulk_release(b), 0, "release");
    }
    /* Re-exposing the same buffer hits the cache. */
    orpc_stats_t st0, st1;
    orpc_stats(rpc_g, &st0);
    for (int i = 0; i < 10; i++) {
        orpc_bulk_t *b;
        CHECK_RC(orpc_bulk_expose(rpc_g, buf, 1u << 20, ORPC_BULK_READ, -1, &b), 0, "expose");
        t_fill(buf, 0, 4096, 99);
        CHECK_RC(bulk_call(id_pull, b, 0, 4096, 99, NULL), 0, "cached pull");
        orpc_bulk_release(b);
    }
    orpc_stats(rpc_g, &st1);
    printf("bulk: cache hits %llu misses %llu over 10 exposures\n",
           (unsigned long long)(st1.mr_cache_hits - st0.mr_cache_hits),
           (unsigned long long)(st1.mr_cache_misses - st0.mr_cache_misses));
    CHECK(st1.mr_cache_hits - st0.mr_cache_hits >= 9 || st1.mr_live == 0,
          "registration cache missed");
    CHECK_RC(orpc_mr_cache_evict(rpc_g, buf, maxs), 0, "evict");
    orpc_stats(rpc_g, &st1);
    CHECK(st1.mr_live == 0, "%llu registrations left after evict",
          (unsigned long long)st1.mr_live);
    /* The server's refusals: range, wrap, rights, altered descriptor. */
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose(rpc_g, buf, 4096, ORPC_BULK_READ, -1, &b), 0, "expose");
    unsigned char d[ORPC_BULK_DESC_SIZE];
    orpc_bulk_encode(b, srv_g, d);
    int32_t rcs[8];
    size_t got;
    CHECK_RC(orpc_call(rpc_g, srv_g, id_bad, d, sizeof(d), rcs, sizeof(rcs), &got, 10000), 0,
             "bulk_bad");
    CHECK_RC(rcs[0], ORPC_ERANGE, "get longer than the descriptor");
    CHECK_RC(rcs[1], ORPC_ERANGE, "get past the end");
    CHECK_RC(rcs[2], ORPC_ERANGE, "get with a wrapping offset");
    CHECK_RC(rcs[3], ORPC_EPERM, "put into a read-only descriptor");
    CHECK_RC(rcs[4], ORPC_OK, "allowed get");
    CHECK_RC(rcs[5], ORPC_EAUTH, "altered descriptor");
    orpc_bulk_release(b);
    free(buf);
    /* run_rpc.sh checks this: none when a same-host server copies the bytes. */
    orpc_stats(rpc_g, &st1);
    printf("bulk: client registrations %llu (same-host connections %llu)\n",
           (unsigned long long)st1.mr_cache_misses, (unsigned long long)st1.samehost_live);
    printf("bulk: ok\n");
}

static void mode_expire(void)
{
    char buf[256];
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose(rpc_g, buf, sizeof(buf), ORPC_BULK_READ, 200, &b), 0, "expose");
    unsigned char a[ORPC_BULK_DESC_SIZE + 4];
    orpc_enc_t e;
    orpc_enc_init(&e, a, sizeof(a));
    orpc_bulk_encode(b, srv_g, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE));
    orpc_enc_u32(&e, 400); /* the server waits past the 200 ms deadline */
    size_t got;
    CHECK_RC(orpc_call(rpc_g, srv_g, id_late, a, e.pos, NULL, 0, &got, 5000), ORPC_EEXPIRED,
             "pull after the deadline");
    orpc_bulk_release(b);
    /* A call carrying a descriptor times out: release waits out 2 x ttl. */
    CHECK_RC(orpc_bulk_expose(rpc_g, buf, sizeof(buf), ORPC_BULK_READ, 300, &b), 0, "expose");
    orpc_enc_init(&e, a, sizeof(a));
    orpc_bulk_encode(b, srv_g, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE));
    orpc_enc_u32(&e, 500);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_RC(orpc_call(rpc_g, srv_g, id_late, a, e.pos, NULL, 0, &got, 100), ORPC_ETIMEDOUT,
             "call that times out");
    orpc_bulk_release(b);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    CHECK(ms >= 500, "release after a failed call returned after %.0f ms (< 2 x ttl)", ms);
    /* Encoding an expired exposure is refused on the client already. */
    CHECK_RC(orpc_bulk_expose(rpc_g, buf, sizeof(buf), ORPC_BULK_READ, 1, &b), 0, "expose");
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    CHECK_RC(orpc_bulk_encode(b, srv_g, a), ORPC_EEXPIRED, "encode after the deadline");
    orpc_bulk_release(b);
    printf("expire: ok (release waited %.0f ms)\n", ms);
}

static void mode_concurrent(int n)
{
    orpc_req_t **req = calloc((size_t)n, sizeof(*req));
    uint64_t *in = calloc((size_t)n, 8), *out = calloc((size_t)n, 8);
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < n; i++) {
            in[i] = ((uint64_t)getpid() << 20) ^ (uint64_t)(round * n + i);
            CHECK_RC(orpc_icall(rpc_g, srv_g, id_echo, &in[i], 8, &out[i], 8, 20000, &req[i]),
                     0, "icall");
        }
        for (int i = 0; i < n; i++) {
            size_t got;
            CHECK_RC(orpc_wait(req[i], &got), 0, "concurrent echo");
            CHECK(out[i] == in[i], "concurrent echo %d of round %d", i, round);
        }
    }
    free(req);
    free(in);
    free(out);
    printf("concurrent: ok\n");
}

static void mode_churn(const char *af, const char *kf, int n)
{
    for (int i = 0; i < n; i++) {
        orpc_t *r;
        orpc_peer_t *p;
        connect_to(af, kf, &r, &p);
        uint64_t v = (uint64_t)i, o = 0;
        size_t got;
        CHECK_RC(orpc_call(r, p, id_echo, &v, 8, &o, 8, &got, 20000), 0, "churn echo");
        CHECK(o == v, "churn echo %d", i);
        orpc_peer_release(p);
        orpc_close(r);
    }
    printf("churn: ok\n");
}

/* Dies mid-call: the server pulls from (or answers) a process that is gone. */
static void mode_die(void)
{
    size_t n = 16u << 20;
    char *buf = malloc(n);
    memset(buf, 1, n);
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose(rpc_g, buf, n, ORPC_BULK_READ, -1, &b), 0, "expose");
    unsigned char a[ORPC_BULK_DESC_SIZE + 4];
    orpc_enc_t e;
    orpc_enc_init(&e, a, sizeof(a));
    orpc_bulk_encode(b, srv_g, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE));
    orpc_enc_u32(&e, 300);
    orpc_req_t *q1, *q2;
    CHECK_RC(orpc_icall(rpc_g, srv_g, id_late, a, e.pos, NULL, 0, 5000, &q1), 0, "icall");
    char s[4];
    orpc_enc_init(&e, s, sizeof(s));
    orpc_enc_u32(&e, 200);
    CHECK_RC(orpc_icall(rpc_g, srv_g, id_sleep, s, e.pos, NULL, 0, 5000, &q2), 0, "icall");
    orpc_progress(rpc_g, 50);
    printf("die: exiting with calls in flight\n");
    fflush(stdout);
    raise(SIGKILL);
}

/*
 * The server dies while serving our call (the driver kills it once we say
 * "calling"): the call must fail within its deadline, ORPC_EPEER or
 * ORPC_ETIMEDOUT. With `fast` (same-host queues) it must be ORPC_EPEER
 * within 3 s: the connection says the server is gone.
 */
static void mode_srvdie(int fast)
{
    const int timeout_ms = 4000;
    char s[4];
    orpc_enc_t e;
    orpc_enc_init(&e, s, sizeof(s));
    orpc_enc_u32(&e, 5000);
    struct timespec t0, t1;
    orpc_req_t *q;
    CHECK_RC(orpc_icall(rpc_g, srv_g, id_sleep, s, e.pos, NULL, 0, timeout_ms, &q), 0, "icall");
    printf("calling\n");
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = orpc_wait(q, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    CHECK(rc == ORPC_EPEER || rc == ORPC_ETIMEDOUT, "call to a killed server returned %d (%s)",
          rc, orpc_strerror(rc));
    CHECK(ms <= timeout_ms + 1000, "call to a killed server took %ld ms (deadline %d ms)", ms,
          timeout_ms);
    if (fast)
        CHECK(rc == ORPC_EPEER && ms < 3000,
              "same-host call to a killed server: %s after %ld ms, expected peer unreachable "
              "within 3 s", orpc_strerror(rc), ms);
    printf("srvdie: %s after %ld ms\n", orpc_strerror(rc), ms);
}

/*
 * Request limits (the server runs with SHMEM_RPC_MAX_REQ=4k; this process
 * with a larger one of its own, as a misconfigured client would). The
 * server's address advertises its limit and calls above it fail here, at
 * once; a client that ignores it (an address without the option) is answered
 * ORPC_ERANGE by the server, even for a message larger than the server's
 * receive buffer plus its overflow area (huge_len, where the provider cuts
 * it), and the server goes on serving.
 */
static void mode_limits(const char *af, const char *kf, size_t ignore_len, size_t huge_len)
{
    char addr[ORPC_ADDR_STRLEN], key[300];
    read_line(af, addr, sizeof(addr));
    snprintf(key, sizeof(key), "@%s", kf);
    char *opt = strstr(addr, "/max_req=");
    CHECK(opt && strncmp(opt, "/max_req=4096", 13) == 0 && (opt[13] == '\0' || opt[13] == '/'),
          "address %s does not advertise max_req=4096", addr);
    echo_size(4096);
    size_t cap = ignore_len > huge_len ? ignore_len : huge_len;
    char *big = malloc(cap + 4097);
    t_fill(big, 0, cap + 4097, 7);
    size_t got = 0;
    /* Above the server's eager limit the server pulls the arguments. */
    char *back = malloc(4097);
    CHECK_RC(orpc_call(rpc_g, srv_g, id_echo, big, 4097, back, 4097, &got, 30000), ORPC_OK,
             "call of 4097 bytes to a server advertising max_req=4096 (pulled)");
    CHECK(got == 4097 && memcmp(back, big, 4097) == 0, "echo of 4097 pulled bytes differs");
    free(back);

    *opt = '\0'; /* an address of a server that advertises nothing */
    orpc_t *r2;
    orpc_peer_t *p2;
    CHECK_RC(orpc_open(NULL, &r2), ORPC_OK, "orpc_open");
    CHECK_RC(orpc_lookup(r2, addr, key, &p2), ORPC_OK, "orpc_lookup without max_req");
    CHECK_RC(orpc_call(r2, p2, id_echo, big, ignore_len, NULL, 0, &got, 30000), ORPC_ERANGE,
             "request above the server's limit, sent anyway");
    if (huge_len)
        CHECK_RC(orpc_call(r2, p2, id_echo, big, huge_len, NULL, 0, &got, 30000), ORPC_ERANGE,
                 "request larger than the server's receive buffer and overflow area");
    uint64_t v = 42, o = 0;
    CHECK_RC(orpc_call(r2, p2, id_echo, &v, 8, &o, 8, &got, 30000), ORPC_OK,
             "echo after the oversized requests");
    CHECK(o == v && got == 8, "echo after the oversized requests: wrong answer");
    orpc_peer_release(p2);
    orpc_close(r2);
    /* A malformed limit in an address is refused at lookup. */
    snprintf(opt, sizeof(addr) - (size_t)(opt - addr), "/max_req=12x");
    CHECK_RC(orpc_open(NULL, &r2), ORPC_OK, "orpc_open");
    CHECK_RC(orpc_lookup(r2, addr, key, &p2), ORPC_EADDR, "lookup of a malformed max_req");
    orpc_close(r2);
    free(big);
    printf("limits: ok\n");
}

/* Run with SHMEM_RPC_MAX_REQ=4k SHMEM_RPC_MAX_RESP=4k: the server must not
 * send a response this process could not receive. */
static void mode_resp_limit(void)
{
    static char out[8192];
    size_t got = 0;
    uint32_t n = 4096;
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_FILL), &n, 4, out, sizeof(out), &got, 30000), 0,
             "response of 4096 bytes");
    CHECK(got == n && t_check(out, 0, n, n) < 0, "response of 4096 bytes: wrong payload");
    /* Above this client's eager limit the server pushes into out... */
    n = 4097;
    memset(out, 0, sizeof(out));
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_FILL), &n, 4, out, sizeof(out), &got, 30000), 0,
             "response of 4097 bytes (pushed)");
    CHECK(got == n && t_check(out, 0, n, n) < 0, "pushed response of 4097 bytes: wrong payload");
    /* ...unless out is within the eager limit too: then it cannot be sent. */
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_FILL), &n, 4, out, 4096, &got, 30000),
             ORPC_ERANGE, "response larger than this client can receive");
    echo_size(8);
    printf("resp_limit: ok\n");
}

/*
 * Arguments and results of any size, 0 B .. max: above the eager limits the
 * library pulls the arguments and pushes the result; handler and caller see
 * one buffer. The server runs with SHMEM_RPC_MAX_ARG=80M, SHMEM_RPC_ARG_MEM=72M.
 */
static void mode_large(size_t max)
{
    static const size_t sizes[] = {0, 1, 1024, 65535, 65536, 65537, 200000, 1u << 20,
                                   (16u << 20) + 3, 64u << 20};
    char *in = malloc(max + 1), *out = malloc(max + 1);
    CHECK(in && out, "no memory for %zu bytes", max);
    size_t got;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max; i++) {
        size_t n = sizes[i];
        /* Argument of n bytes, checked by the handler. */
        t_fill(in, 0, n, (uint32_t)n);
        int64_t bad = 7;
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_CHECK), in, n, &bad, sizeof(bad), &got, 60000),
                 0, "check of a large argument");
        CHECK(got == 8 && bad == -1, "argument of %zu bytes: handler saw byte %lld wrong", n,
              (long long)bad);
        /* Result of n bytes. */
        uint32_t n32 = (uint32_t)n;
        memset(out, 0, n + 1);
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_FILL), &n32, 4, out, max, &got, 60000), 0,
                 "fill (large result)");
        CHECK(got == n && t_check(out, 0, n, n32) < 0 && out[n] == 0,
              "result of %zu bytes: got %zu, first bad byte %lld", n, got, t_check(out, 0, n, n32));
        /* Both at once. */
        memset(out, 0, n + 1);
        CHECK_RC(orpc_call(rpc_g, srv_g, id_echo, in, n, out, n, &got, 60000), 0, "echo");
        CHECK(got == n && memcmp(in, out, n) == 0, "echo of %zu bytes differs", n);
        printf("large: %zu bytes ok\n", n);
    }
    /* A result larger than the caller's buffer is cut to it; the length says so. */
    uint32_t n32 = 2u << 20;
    memset(out, 0, (1u << 20) + 1);
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_FILL), &n32, 4, out, 1u << 20, &got, 60000), 0,
             "result larger than the buffer");
    CHECK(got == n32 && t_check(out, 0, 1u << 20, n32) < 0 && out[1u << 20] == 0,
          "cut result: got %zu, or bytes past the buffer written", got);
    /* Bad sizes: above the server's SHMEM_RPC_MAX_ARG both ways, and above its
     * SHMEM_RPC_ARG_MEM (bytes of pulled arguments held at once). */
    if (max >= (80u << 20) + 1) {
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_CHECK), in, (80u << 20) + 1, NULL, 0, &got,
                           60000), ORPC_ERANGE, "argument above the server's SHMEM_RPC_MAX_ARG");
        n32 = (80u << 20) + 1;
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_FILL), &n32, 4, out, max, &got, 60000),
                 ORPC_ERANGE, "result above the server's SHMEM_RPC_MAX_ARG");
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_CHECK), in, 76u << 20, NULL, 0, &got, 60000),
                 ORPC_EBUSY, "argument above the server's SHMEM_RPC_ARG_MEM");
    }
    /* The deadline rule: a call that times out keeps its exposures until
     * twice its timeout (the server may still use them), then drops them. */
    orpc_req_t *q;
    uint32_t ms = 1500;
    memcpy(in, &ms, 4);
    CHECK_RC(orpc_icall(rpc_g, srv_g, id_sleep, in, 1u << 20, out, 1u << 20, 400, &q), 0,
             "icall of a slow handler");
    CHECK_RC(orpc_wait(q, &got), ORPC_ETIMEDOUT, "slow handler with a large argument");
    CHECK_RC(orpc_mr_cache_evict(rpc_g, in, 1u << 20), ORPC_EAGAIN,
             "argument registration dropped before its client deadline");
    CHECK_RC(orpc_mr_cache_evict(rpc_g, out, 1u << 20), ORPC_EAGAIN,
             "result registration dropped before its client deadline");
    orpc_progress(rpc_g, 1200);
    CHECK_RC(orpc_mr_cache_evict(rpc_g, in, 1u << 20), ORPC_OK,
             "argument registration kept past its client deadline");
    CHECK_RC(orpc_mr_cache_evict(rpc_g, out, 1u << 20), ORPC_OK,
             "result registration kept past its client deadline");
    /* The server, having slept, finds the result buffer's deadline gone. */
    struct timespec ts = {1, 500000000L};
    nanosleep(&ts, NULL);
    echo_size(100000);
    free(in);
    free(out);
    printf("large: ok\n");
}

/* A client with the wrong key: a large argument is never pulled. */
static void mode_large_noauth(void)
{
    char *in = calloc(1, 1u << 20);
    size_t got;
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_CHECK), in, 1u << 20, NULL, 0, &got, 800),
             ORPC_ETIMEDOUT, "large argument with the wrong key");
    free(in);
    printf("large_noauth: ok\n");
}

/* This process with SHMEM_RPC_MAX_ARG=1M: a larger call is refused here. */
static void mode_large_local(void)
{
    char *in = calloc(1, (1u << 20) + 1);
    size_t got;
    CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_CHECK), in, (1u << 20) + 1, NULL, 0, &got, 5000),
             ORPC_ERANGE, "argument above this process's SHMEM_RPC_MAX_ARG");
    free(in);
    printf("large_local: ok\n");
}

/* One-way calls: handlers run, nothing answers; the arguments are free at return. */
static void mode_oneway(void)
{
    uint64_t id = orpc_id(T_NOTE), sum = 0;
    for (uint64_t i = 1; i <= 200; i++) {
        CHECK_RC(orpc_send(rpc_g, srv_g, id, &i, 8), 0, "orpc_send");
        sum += i;
    }
    char *big = calloc(1, 1u << 20);
    CHECK_RC(orpc_send(rpc_g, srv_g, id, big, 1u << 20), ORPC_ERANGE,
             "one-way call above the eager limit");
    free(big);
    uint64_t out[2] = {0, 0};
    size_t got;
    for (int tries = 0; tries < 500 && out[0] < 200; tries++) {
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(T_NOTES), NULL, 0, out, sizeof(out), &got, 5000),
                 0, "notes");
        if (out[0] < 200) {
            struct timespec ts = {0, 10000000L};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(out[0] == 200 && out[1] == sum, "server saw %llu notes summing to %llu, sent 200 / %llu",
          (unsigned long long)out[0], (unsigned long long)out[1], (unsigned long long)sum);
    orpc_stats_t st;
    orpc_stats(rpc_g, &st);
    CHECK(st.late_responses == 0, "%llu answers came for one-way calls",
          (unsigned long long)st.late_responses);
    printf("oneway: ok\n");
}

/* Cancel: the handle goes at once; the late answer is dropped; the deadline
 * rule keeps a cancelled call's own exposures until twice its timeout. */
static void mode_cancel(void)
{
    uint32_t ms = 600;
    orpc_req_t *q;
    size_t got;
    CHECK_RC(orpc_icall(rpc_g, srv_g, id_sleep, &ms, 4, NULL, 0, 5000, &q), 0, "icall");
    CHECK_RC(orpc_cancel(q), 0, "orpc_cancel");
    echo_size(16); /* the next call is not disturbed */
    /* A cancelled large call: its argument stays registered until 2 x timeout. */
    char *in = calloc(1, 1u << 20);
    memcpy(in, &ms, 4);
    CHECK_RC(orpc_icall(rpc_g, srv_g, id_sleep, in, 1u << 20, NULL, 0, 300, &q), 0, "icall large");
    CHECK_RC(orpc_cancel(q), 0, "orpc_cancel of a large call");
    CHECK_RC(orpc_mr_cache_evict(rpc_g, in, 1u << 20), ORPC_EAGAIN,
             "cancelled call's registration dropped before its client deadline");
    orpc_progress(rpc_g, 900);
    CHECK_RC(orpc_mr_cache_evict(rpc_g, in, 1u << 20), ORPC_OK,
             "cancelled call's registration kept past its client deadline");
    free(in);
    struct timespec ts = {0, 700000000L};
    nanosleep(&ts, NULL);
    orpc_progress(rpc_g, 100);
    echo_size(16);
    orpc_stats_t st;
    orpc_stats(rpc_g, &st);
    CHECK(st.late_responses >= 1, "late answers of cancelled calls not dropped/counted");
    CHECK_RC(orpc_cancel(NULL), ORPC_EINVAL, "orpc_cancel(NULL)");
    (void)got;
    printf("cancel: ok\n");
}

/*
 * A client that computes: it exposes a buffer, sends the call and then
 * computes without calling the library. With the instance's progress thread
 * the server's pull (which on tcp;ofi_rxm needs this process's progress) and
 * the answer complete meanwhile: the first orpc_test after the computation
 * finds the call done. Also a large argument (two-phase) the same way.
 */
static void mode_compute(const char *af, const char *kf, int thread)
{
    char addr[ORPC_ADDR_STRLEN], key[300];
    read_line(af, addr, sizeof(addr));
    snprintf(key, sizeof(key), "@%s", kf);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.progress_thread = thread;
    orpc_t *r;
    orpc_peer_t *p;
    CHECK_RC(orpc_open(&o, &r), 0, "orpc_open with a progress thread");
    CHECK_RC(orpc_lookup(r, addr, key, &p), 0, "orpc_lookup");
    size_t len = 8u << 20;
    char *buf = malloc(len);
    t_fill(buf, 0, len, 99);
    for (int round = 0; round < 2; round++) {
        orpc_bulk_t *b = NULL;
        unsigned char a[ORPC_BULK_DESC_SIZE + 20];
        int64_t w = -1;
        orpc_req_t *q;
        if (round == 0) {
            orpc_enc_t e;
            orpc_enc_init(&e, a, sizeof(a));
            CHECK_RC(orpc_bulk_expose(r, buf, len, ORPC_BULK_READ, -1, &b), 0, "expose");
            CHECK_RC(orpc_bulk_encode(b, p, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE)), 0,
                     "encode");
            orpc_enc_u64(&e, 0);
            orpc_enc_u64(&e, len);
            orpc_enc_u32(&e, 99);
            CHECK_RC(orpc_icall(r, p, id_pull, a, e.pos, &w, sizeof(w), 30000, &q), 0, "icall");
        } else {
            t_fill(buf, 0, len, (uint32_t)len);
            CHECK_RC(orpc_icall(r, p, orpc_id(T_CHECK), buf, len, &w, sizeof(w), 30000, &q), 0,
                     "icall of a large argument");
        }
        /* Compute for 1.5 s without touching the library. */
        volatile uint64_t x = 1;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            for (int i = 0; i < 100000; i++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
            clock_gettime(CLOCK_MONOTONIC, &t1);
        } while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
        size_t got;
        int rc = orpc_test(q, &got);
        CHECK(rc != ORPC_EAGAIN, "round %d: the call did not complete while this client computed "
              "(progress thread %d)", round, thread);
        if (rc == ORPC_EAGAIN)
            rc = orpc_wait(q, &got);
        CHECK_RC(rc, 0, "call while computing");
        CHECK(w == -1, "round %d: server saw byte %lld wrong", round, (long long)w);
        if (b)
            orpc_bulk_release(b);
    }
    free(buf);
    orpc_peer_release(p);
    orpc_close(r);
    printf("compute: ok\n");
}

/* Echo, a 1 MiB argument (pulled by the server) and a 1 MiB result (pushed)
 * to srv. */
static void lazy_calls(orpc_peer_t *srv, const char *what)
{
    size_t n = 1u << 20, got;
    char *in = malloc(n), *out = malloc(n);
    CHECK(in && out, "no memory");
    t_fill(in, 0, n, (uint32_t)n);
    int rc = orpc_call(rpc_g, srv, id_echo, in, 100, out, n, &got, 30000);
    CHECK(rc == 0, "echo (%s): %s", what, orpc_strerror(rc));
    CHECK(got == 100 && memcmp(in, out, 100) == 0, "echo (%s) differs", what);
    int64_t bad = 7;
    rc = orpc_call(rpc_g, srv, orpc_id(T_CHECK), in, n, &bad, sizeof(bad), &got, 30000);
    CHECK(rc == 0, "1 MiB argument (%s): %s", what, orpc_strerror(rc));
    CHECK(got == 8 && bad == -1, "1 MiB argument (%s): handler saw byte %lld wrong", what,
          (long long)bad);
    uint32_t n32 = (uint32_t)n;
    rc = orpc_call(rpc_g, srv, orpc_id(T_FILL), &n32, 4, out, n, &got, 30000);
    CHECK(rc == 0, "1 MiB result (%s): %s", what, orpc_strerror(rc));
    CHECK(got == n && t_check(out, 0, n, n32) < 0, "1 MiB result (%s): first bad byte %lld",
          what, t_check(out, 0, n, n32));
    free(in);
    free(out);
    printf("lazy: %s calls done\n", what);
    fflush(stdout);
}

/* A client of a same-host server, then (ADDR2) of one through the provider. */
static void mode_lazy(const char *af2, const char *kf2)
{
    lazy_calls(srv_g, "first server");
    if (af2 == NULL)
        return;
    orpc_peer_t *srv2;
    char addr[ORPC_ADDR_STRLEN], key[300];
    read_line(af2, addr, sizeof(addr));
    snprintf(key, sizeof(key), "@%s", kf2);
    CHECK_RC(orpc_lookup(rpc_g, addr, key, &srv2), ORPC_OK, "orpc_lookup of the second server");
    lazy_calls(srv2, "second server");
    lazy_calls(srv_g, "first server again"); /* it knows us as before */
    orpc_peer_release(srv2);
}

static void mode_stats(void)
{
    struct {
        orpc_stats_t st;
        uint64_t heap_used, heap_free;
    } out;
    size_t got;
    CHECK_RC(orpc_call(rpc_g, srv_g, id_stats, NULL, 0, &out, sizeof(out), &got, 10000), 0,
             "stats");
    CHECK(got == sizeof(out), "stats of %zu bytes, expected %zu", got, sizeof(out));
    printf("heap_used=%llu\nheap_free=%llu\n", (unsigned long long)out.heap_used,
           (unsigned long long)out.heap_free);
    orpc_stats_t st = out.st;
#define P(f) printf(#f "=%llu\n", (unsigned long long)st.f)
    P(requests); P(responses); P(rejected_auth); P(malformed); P(oversized); P(truncated);
    P(no_handler); P(busy); P(copied); P(reposts); P(bulk_refused); P(bulk_errors);
    P(bulk_bytes);
    P(peers_live); P(peers_reclaimed); P(calls_live); P(samehost_live);
#undef P
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s ADDRFILE KEYFILE MODE [N]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[3];
    int n = argc > 4 ? atoi(argv[4]) : 8;
    ids();
    if (strcmp(mode, "compute") == 0) {
        mode_compute(argv[1], argv[2], n);
        return 0;
    }
    if (strcmp(mode, "churn") == 0) {
        mode_churn(argv[1], argv[2], n);
        return 0;
    }
    connect_to(argv[1], argv[2], &rpc_g, &srv_g);
    if (strcmp(mode, "shapes") == 0)
        mode_shapes();
    else if (strcmp(mode, "bulk") == 0)
        mode_bulk();
    else if (strcmp(mode, "expire") == 0)
        mode_expire();
    else if (strcmp(mode, "concurrent") == 0)
        mode_concurrent(n);
    else if (strcmp(mode, "die") == 0)
        mode_die();
    else if (strcmp(mode, "srvdie") == 0)
        mode_srvdie(n == 1);
    else if (strcmp(mode, "stats") == 0)
        mode_stats();
    else if (strcmp(mode, "lazy") == 0)
        mode_lazy(argc > 5 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL);
    else if (strcmp(mode, "limits") == 0)
        mode_limits(argv[1], argv[2], argc > 4 ? strtoull(argv[4], NULL, 0) : 100000,
                    argc > 5 ? strtoull(argv[5], NULL, 0) : 0);
    else if (strcmp(mode, "large") == 0)
        mode_large(argc > 4 ? strtoull(argv[4], NULL, 0) : (80u << 20) + 1);
    else if (strcmp(mode, "oneway") == 0)
        mode_oneway();
    else if (strcmp(mode, "cancel") == 0)
        mode_cancel();
    else if (strcmp(mode, "large_noauth") == 0)
        mode_large_noauth();
    else if (strcmp(mode, "large_local") == 0)
        mode_large_local();
    else if (strcmp(mode, "resp_limit") == 0)
        mode_resp_limit();
    else if (strcmp(mode, "stop") == 0) {
        size_t got;
        orpc_call(rpc_g, srv_g, id_stop, NULL, 0, NULL, 0, &got, 5000);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    orpc_peer_release(srv_g);
    orpc_close(rpc_g);
    return 0;
}
