/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective calls (issue #18 item 3): orpc_call_all over the members of a
 * service (every context of every server a joined address names).
 *   rpc_coll server ADDRFILE PROV NCTX        (key: SHMEM_RPC_AUTH_KEY)
 *   rpc_coll join OUT ADDRFILE...             (orpc_addr_join)
 *   rpc_coll client ADDRFILE basic N | fail N | pids | stalled N M TIMEOUT_MS |
 *                   recover N | auth N | stop
 * Handlers answer with the member number they were given, so the client
 * checks that every member ran once, in a tree of every shape it asks for.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc_test.h"

#define K_WHO "coll.who"   /* gather: u32 member, u32 members, u32 ctx, u32 pid, then the args */
#define K_SUM "coll.sum"   /* sum of int64 {member + 1, 1, -member} */
#define K_MIN "coll.min"   /* min of int64 {100 - member, member} */
#define K_MAX "coll.max"   /* max of the same */
#define K_MASK "coll.mask" /* user combine: OR of u64 1 << member */
#define K_FAIL "coll.fail" /* args u32 m: member m answers ORPC_EPERM; others status member % 3 */
#define K_REJ "coll.rej"   /* sum of int64 rejected_auth of each member's context */
#define K_STOP "coll.stop"

static orpc_t *rpc_g;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void put_i64s(orpc_call_t *c, const int64_t *v, int n)
{
    uint8_t out[64];
    orpc_enc_t e;
    orpc_enc_init(&e, out, sizeof(out));
    for (int i = 0; i < n; i++)
        orpc_enc_i64(&e, v[i]);
    orpc_respond(c, 0, out, e.pos);
}

static void h_who(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    uint8_t out[256];
    orpc_enc_t e;
    orpc_enc_init(&e, out, sizeof(out));
    orpc_enc_u32(&e, (uint32_t)orpc_call_member(c));
    orpc_enc_u32(&e, (uint32_t)orpc_call_members(c));
    orpc_enc_u32(&e, (uint32_t)orpc_call_context(c));
    orpc_enc_u32(&e, (uint32_t)getpid());
    orpc_enc_bytes(&e, in, n < 200 ? n : 200);
    orpc_respond(c, 0, out, e.pos);
}

static void h_sum(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    int64_t m = orpc_call_member(c);
    int64_t v[3] = {m + 1, 1, -m};
    put_i64s(c, v, 3);
}

static void h_minmax(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    int64_t m = orpc_call_member(c);
    int64_t v[2] = {100 - m, m};
    put_i64s(c, v, 2);
}

static void h_mask(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    uint64_t v = 1ull << orpc_call_member(c);
    orpc_respond(c, 0, &v, sizeof(v));
}

static int combine_or(void *acc, size_t *acc_len, size_t cap, const void *in, size_t in_len,
                      void *arg)
{
    CHECK(arg == (void *)&t_stop_g, "combine got the wrong argument");
    if (*acc_len != 8 || in_len != 8 || cap < 8)
        return ORPC_EPROTO;
    uint64_t a, b;
    memcpy(&a, acc, 8);
    memcpy(&b, in, 8);
    CHECK((a & b) == 0, "a member's bit came twice (%llx, %llx)", (unsigned long long)a,
          (unsigned long long)b);
    a |= b;
    memcpy(acc, &a, 8);
    return 0;
}

static void h_fail(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    uint32_t bad = 0;
    CHECK(n == 4, "fail args %zu", n);
    memcpy(&bad, in, 4);
    int m = orpc_call_member(c);
    orpc_respond(c, (uint32_t)m == bad ? ORPC_EPERM : m % 3, &m, sizeof(m));
}

static void h_rej(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    orpc_stats_t st;
    orpc_context_stats(rpc_g, orpc_call_context(c), &st);
    int64_t v = (int64_t)st.rejected_auth;
    put_i64s(c, &v, 1);
}

static int server(const char *af, const char *prov, int nctx)
{
    signal(SIGTERM, t_on_term);
    signal(SIGPIPE, SIG_IGN);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    o.contexts = nctx;
    o.progress_thread = 1;
    CHECK_RC(orpc_open(&o, &rpc_g), ORPC_OK, "server orpc_open");
    orpc_register(rpc_g, K_WHO, h_who, NULL, 0, NULL);
    CHECK_RC(orpc_register_coll(rpc_g, K_SUM, h_sum, NULL, 0, ORPC_COLL_SUM_I64, NULL, NULL,
                                NULL), ORPC_OK, "register sum");
    CHECK_RC(orpc_register_coll(rpc_g, K_MIN, h_minmax, NULL, 0, ORPC_COLL_MIN_I64, NULL, NULL,
                                NULL), ORPC_OK, "register min");
    CHECK_RC(orpc_register_coll(rpc_g, K_MAX, h_minmax, NULL, 0, ORPC_COLL_MAX_I64, NULL, NULL,
                                NULL), ORPC_OK, "register max");
    CHECK_RC(orpc_register_coll(rpc_g, K_MASK, h_mask, NULL, 0, ORPC_COLL_COMBINE, combine_or,
                                (void *)&t_stop_g, NULL), ORPC_OK, "register mask");
    CHECK_RC(orpc_register_coll(rpc_g, "coll.bad", h_mask, NULL, 0, ORPC_COLL_COMBINE, NULL,
                                NULL, NULL), ORPC_EINVAL, "a combine op without its callback");
    orpc_register(rpc_g, K_FAIL, h_fail, NULL, 0, NULL);
    CHECK_RC(orpc_register_coll(rpc_g, K_REJ, h_rej, NULL, 0, ORPC_COLL_SUM_I64, NULL, NULL,
                                NULL), ORPC_OK, "register rej");
    orpc_register(rpc_g, K_STOP, t_h_stop, NULL, 0, NULL);
    t_publish_addr(rpc_g, af);
    while (!t_stop_g)
        usleep(10000);
    usleep(100000); /* the stop answer goes up the tree before the contexts close */
    CHECK_RC(orpc_close(rpc_g), ORPC_OK, "orpc_close");
    return 0;
}

/* ---------------------------------------------------------------- client */

static const char *af_g;

static orpc_t *client_open(orpc_peer_t **p, const char *key)
{
    char addr[ORPC_ADDR_STRLEN];
    FILE *f = fopen(af_g, "r");
    CHECK(f && fgets(addr, sizeof(addr), f), "cannot read %s", af_g);
    fclose(f);
    orpc_t *r;
    CHECK_RC(orpc_open(NULL, &r), ORPC_OK, "client orpc_open");
    CHECK_RC(orpc_lookup(r, addr, key, p), ORPC_OK, "orpc_lookup");
    return r;
}

static void get_i64s(const void *buf, size_t len, int64_t *v, int n)
{
    CHECK(len == 8 * (size_t)n, "reduced result of %zu bytes, want %d", len, 8 * n);
    orpc_dec_t d;
    orpc_dec_init(&d, buf, len);
    for (int i = 0; i < n; i++)
        v[i] = orpc_dec_i64(&d);
}

/* Every shape of tree for n members: gather and the reductions. */
static void check_shape(orpc_t *r, orpc_peer_t *p, int n, int root, int fanout)
{
    static uint8_t out[65536];
    orpc_coll_opts_t o;
    orpc_coll_opts_init(&o);
    o.root = root;
    o.fanout = fanout;
    const char arg[] = "the same arguments for everyone";
    size_t ol = 0;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_WHO), arg, sizeof(arg), out, sizeof(out), &ol, 20000,
                           &o), ORPC_OK, "gather");
    CHECK(o.members == n && o.failed == -1, "members %d failed %d", o.members, o.failed);
    size_t pos = 0;
    int m, st, k = 0, rc;
    const void *d;
    size_t dl;
    while ((rc = orpc_coll_next(out, ol, &pos, &m, &st, &d, &dl)) == 1) {
        CHECK(m == k, "record %d is member %d (root %d fanout %d)", k, m, root, fanout);
        CHECK(st == 0 && dl == 16 + sizeof(arg), "member %d: status %d, %zu bytes", m, st, dl);
        orpc_dec_t x;
        orpc_dec_init(&x, d, dl);
        uint32_t mm = orpc_dec_u32(&x), nn = orpc_dec_u32(&x);
        (void)orpc_dec_u32(&x);
        (void)orpc_dec_u32(&x);
        CHECK(mm == (uint32_t)m && nn == (uint32_t)n, "member %d thinks it is %u of %u", m, mm,
              nn);
        CHECK(memcmp(orpc_dec_bytes(&x, sizeof(arg)), arg, sizeof(arg)) == 0,
              "member %d got other arguments", m);
        k++;
    }
    CHECK(rc == 0 && k == n, "gathered %d records of %d (rc %d)", k, n, rc);

    int64_t v[3];
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_SUM), NULL, 0, out, sizeof(out), &ol, 20000, &o),
             ORPC_OK, "sum");
    get_i64s(out, ol, v, 3);
    CHECK(v[0] == (int64_t)n * (n + 1) / 2 && v[1] == n && v[2] == -(int64_t)n * (n - 1) / 2,
          "sum %lld %lld %lld for %d members", (long long)v[0], (long long)v[1],
          (long long)v[2], n);
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_MIN), NULL, 0, out, sizeof(out), &ol, 20000, &o),
             ORPC_OK, "min");
    get_i64s(out, ol, v, 2);
    CHECK(v[0] == 100 - (n - 1) && v[1] == 0, "min %lld %lld", (long long)v[0],
          (long long)v[1]);
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_MAX), NULL, 0, out, sizeof(out), &ol, 20000, &o),
             ORPC_OK, "max");
    get_i64s(out, ol, v, 2);
    CHECK(v[0] == 100 && v[1] == n - 1, "max %lld %lld", (long long)v[0], (long long)v[1]);
    uint64_t mask = 0;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_MASK), NULL, 0, &mask, sizeof(mask), &ol, 20000, &o),
             ORPC_OK, "combine");
    CHECK(ol == 8 && mask == (n == 64 ? ~0ull : (1ull << n) - 1), "mask %llx for %d members",
          (unsigned long long)mask, n);
}

static int c_basic(int n)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    CHECK(orpc_peer_contexts(p) == n, "the service has %d members, want %d",
          orpc_peer_contexts(p), n);
    int fans[] = {1, 2, 4, n > 1 ? n - 1 : 1};
    for (int f = 0; f < 4; f++)
        for (int root = 0; root < n; root += n > 2 ? n - 1 : 1) {
            check_shape(r, p, n, root, fans[f]);
            if (n == 1)
                break;
        }
    /* An ordinary call to the same handler: not collective. */
    uint8_t out[256];
    size_t ol = 0;
    CHECK_RC(orpc_call(r, p, orpc_id(K_WHO), NULL, 0, out, sizeof(out), &ol, 20000), ORPC_OK,
             "an ordinary call");
    uint32_t mm, nn;
    memcpy(&mm, out, 4);
    memcpy(&nn, out + 4, 4);
    CHECK(ol == 16 && mm == 0xffffffffu && nn == 0,
          "an ordinary call's handler saw member %d of %u", (int)mm, nn);
    /* Refusals: a root that is no member; arguments beyond the eager limit. */
    orpc_coll_opts_t o;
    orpc_coll_opts_init(&o);
    o.root = n;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_WHO), NULL, 0, out, sizeof(out), &ol, 20000, &o),
             ORPC_EINVAL, "root beyond the members");
    size_t big = 1 << 20;
    void *b = calloc(1, big);
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_WHO), b, big, out, sizeof(out), &ol, 20000, NULL),
             ORPC_ERANGE, "1 MiB of arguments");
    free(b);
    /* An unknown handler: the root refuses, and is named. */
    orpc_coll_opts_init(&o);
    CHECK_RC(orpc_call_all(r, p, orpc_id("coll.none"), NULL, 0, out, sizeof(out), &ol, 20000,
                           &o), ORPC_ENOENT, "unknown handler");
    CHECK(o.failed == 0, "unknown handler: failed member %d", o.failed);
    printf("basic: %d members: gather, sum, min, max, combine over fanout 1, 2, 4, %d and "
           "roots 0 and %d\n", n, fans[3], n - 1);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* A member's negative status ends the call and names it; positive ones are kept. */
static int c_fail(int n)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    uint8_t out[4096];
    size_t ol = 0;
    orpc_coll_opts_t o;
    for (int bad = 0; bad < n; bad += (n > 2 ? (n - 1) / 2 : 1)) {
        uint32_t b = (uint32_t)bad;
        orpc_coll_opts_init(&o);
        o.fanout = 2;
        CHECK_RC(orpc_call_all(r, p, orpc_id(K_FAIL), &b, 4, out, sizeof(out), &ol, 20000, &o),
                 ORPC_EPERM, "a member answering ORPC_EPERM");
        CHECK(o.failed == bad, "member %d failed, the call named %d", bad, o.failed);
    }
    /* Nobody fails: statuses member % 3 kept in the records. */
    uint32_t none = 1000;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_FAIL), &none, 4, out, sizeof(out), &ol, 20000, &o),
             ORPC_OK, "no member failing");
    size_t pos = 0;
    int m, st, k = 0;
    while (orpc_coll_next(out, ol, &pos, &m, &st, NULL, NULL) == 1) {
        CHECK(m == k && st == m % 3, "record %d: member %d status %d", k, m, st);
        k++;
    }
    CHECK(k == n, "%d records", k);
    pos = 0;
    CHECK_RC(orpc_coll_next(out, 5, &pos, &m, &st, NULL, NULL), ORPC_EPROTO,
             "orpc_coll_next on a cut result");
    printf("fail: a member's error ends the call naming it (members 0..%d tried)\n", n - 1);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* Prints "MEMBER PID" of every member. */
static int c_pids(void)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    static uint8_t out[65536];
    size_t ol = 0, pos = 0, dl;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_WHO), NULL, 0, out, sizeof(out), &ol, 20000, NULL),
             ORPC_OK, "gather pids");
    int m, st;
    const void *d;
    while (orpc_coll_next(out, ol, &pos, &m, &st, &d, &dl) == 1) {
        uint32_t pid;
        memcpy(&pid, (const uint8_t *)d + 12, 4);
        printf("%d %u\n", m, pid);
    }
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* Member want is stopped or dead: the call fails within its deadline, naming it. */
static int c_stalled(int n, int want, int timeout)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    uint8_t out[4096];
    size_t ol = 0;
    orpc_coll_opts_t o;
    orpc_coll_opts_init(&o);
    o.fanout = 2;
    double t0 = now_ms();
    int rc = orpc_call_all(r, p, orpc_id(K_WHO), NULL, 0, out, sizeof(out), &ol, timeout, &o);
    double dt = now_ms() - t0;
    CHECK(rc == ORPC_ETIMEDOUT || rc == ORPC_EPEER, "call with member %d out: %d (%s)", want, rc,
          orpc_strerror(rc));
    CHECK(o.failed == want && o.members == n, "member %d out, the call named %d of %d", want,
          o.failed, o.members);
    /* Its parent answered (before the caller's own deadline) unless it is the root. */
    CHECK(dt < timeout + 1000, "took %.0f ms, deadline %d ms", dt, timeout);
    printf("stalled: member %d of %d named, %s after %.0f ms (deadline %d ms)\n", want, n,
           orpc_strerror(rc), dt, timeout);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* A wrong key: the root drops the request (counted), the caller times out naming it. */
static int c_auth(int n)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, "ffeeddccbbaa99887766554433221100");
    uint8_t out[4096];
    size_t ol = 0;
    orpc_coll_opts_t o;
    orpc_coll_opts_init(&o);
    o.root = n - 1;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_WHO), NULL, 0, out, sizeof(out), &ol, 1000, &o),
             ORPC_ETIMEDOUT, "a call with a wrong key");
    CHECK(o.failed == n - 1, "wrong key: named member %d, want the root %d", o.failed, n - 1);
    orpc_peer_release(p);
    orpc_close(r);
    r = client_open(&p, NULL);
    int64_t rej = 0;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_REJ), NULL, 0, &rej, sizeof(rej), &ol, 20000, NULL),
             ORPC_OK, "rejected_auth summed over the members");
    CHECK(rej >= 1, "no member counted the wrong key (%lld)", (long long)rej);
    printf("auth: a wrong key is dropped by the root (%lld rejected over the members)\n",
           (long long)rej);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

static int c_stop(void)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    uint8_t out[65536];
    size_t ol = 0;
    CHECK_RC(orpc_call_all(r, p, orpc_id(K_STOP), NULL, 0, out, sizeof(out), &ol, 20000, NULL),
             ORPC_OK, "stop every member");
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

static int join(const char *out, int n, char **files)
{
    const char *ap[64];
    static char a[64][ORPC_ADDR_STRLEN];
    CHECK(n >= 1 && n <= 64, "1..64 addresses");
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(files[i], "r");
        CHECK(f && fgets(a[i], sizeof(a[i]), f), "cannot read %s", files[i]);
        fclose(f);
        a[i][strcspn(a[i], "\n")] = '\0';
        ap[i] = a[i];
    }
    char j[ORPC_ADDR_STRLEN], tmp[600];
    CHECK_RC(orpc_addr_join(ap, n, j, sizeof(j)), ORPC_OK, "orpc_addr_join");
    snprintf(tmp, sizeof(tmp), "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    CHECK(f && fprintf(f, "%s\n", j) > 0 && fclose(f) == 0 && rename(tmp, out) == 0,
          "cannot write %s", out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "server") == 0)
        return server(argv[2], argv[3], atoi(argv[4]));
    if (argc >= 4 && strcmp(argv[1], "join") == 0)
        return join(argv[2], argc - 3, argv + 3);
    if (argc < 4 || strcmp(argv[1], "client") != 0) {
        fprintf(stderr, "usage: see the header of rpc_coll.c\n");
        return 2;
    }
    af_g = argv[2];
    const char *sc = argv[3];
    int a1 = argc > 4 ? atoi(argv[4]) : 0, a2 = argc > 5 ? atoi(argv[5]) : 0;
    if (strcmp(sc, "basic") == 0)
        return c_basic(a1);
    if (strcmp(sc, "fail") == 0)
        return c_fail(a1);
    if (strcmp(sc, "pids") == 0)
        return c_pids();
    if (strcmp(sc, "stalled") == 0 && argc > 6)
        return c_stalled(a1, a2, atoi(argv[6]));
    if (strcmp(sc, "auth") == 0)
        return c_auth(a1);
    if (strcmp(sc, "stop") == 0)
        return c_stop();
    fprintf(stderr, "unknown scenario %s\n", sc);
    return 2;
}
