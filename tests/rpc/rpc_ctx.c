/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Service contexts (issue #18 item 3): a server with N contexts behind one
 * address, clients that spread calls over them.
 *   rpc_ctx server ADDRFILE KEYFILE PROV NCTX thread|app
 *       thread: each context its own progress thread; app: one application
 *       thread per context drives it (orpc_progress_context).
 *   rpc_ctx client ADDRFILE KEYFILE spread THREADS CALLS | keyed | deadline |
 *                  auth | hold CALLS_PER_CTX | stop
 * Handlers answer with the context they ran on (orpc_call_context) and the
 * thread that ran them, so clients check where their calls landed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rpc_test.h"

#define C_WHO "ctx.who" /* args: u64 key, u32 sleep ms; answers u32 ctx, u32 tid, u64 key, u32 pid */
#define C_HOLD "ctx.hold"   /* kept, never answered (until the server closes) */
#define C_HELD "ctx.held"   /* answers u32 held calls per context */
#define C_STATS "ctx.stats" /* answers per context: u64 requests, u64 rejected_auth */
#define C_STOP "ctx.stop"
#define C_BIG "ctx.big" /* args: n pattern bytes (seed n), above the eager limit: answers u32 ctx */
#define MAXC 16

static int nctx_g;
static orpc_t *rpc_g;
static orpc_call_t *held_g[MAXC][256];
static int nheld_g[MAXC];
static pthread_t tid_of_ctx_g[MAXC];

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void h_who(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    uint64_t key = orpc_dec_u64(&d);
    uint32_t ms = orpc_dec_u32(&d);
    if (d.err) {
        orpc_respond(c, ORPC_EPROTO, NULL, 0);
        return;
    }
    if (ms) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    int ctx = orpc_call_context(c);
    CHECK(ctx >= 0 && ctx < nctx_g, "handler saw context %d of %d", ctx, nctx_g);
    CHECK(orpc_call_rpc(c) == rpc_g, "orpc_call_rpc is not the instance opened");
    uint8_t out[20];
    orpc_enc_t e;
    orpc_enc_init(&e, out, sizeof(out));
    orpc_enc_u32(&e, (uint32_t)ctx);
    orpc_enc_u32(&e, (uint32_t)syscall(SYS_gettid));
    orpc_enc_u64(&e, key);
    orpc_enc_u32(&e, (uint32_t)getpid());
    orpc_respond(c, 0, out, e.pos);
}

static void h_big(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    uint32_t ctx = (uint32_t)orpc_call_context(c);
    orpc_respond(c, t_check(in, 0, n, (uint32_t)n) == -1 ? 0 : ORPC_EPROTO, &ctx, sizeof(ctx));
}

static void h_hold(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    int ctx = orpc_call_context(c);
    /* Each context's handlers run on one thread: its own slot, no lock. */
    if (nheld_g[ctx] < 256)
        held_g[ctx][nheld_g[ctx]] = c;
    __atomic_add_fetch(&nheld_g[ctx], 1, __ATOMIC_RELEASE);
}

static void h_held(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    uint32_t out[MAXC];
    for (int i = 0; i < nctx_g; i++)
        out[i] = (uint32_t)__atomic_load_n(&nheld_g[i], __ATOMIC_ACQUIRE);
    orpc_respond(c, 0, out, sizeof(uint32_t) * (size_t)nctx_g);
}

static void h_stats(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    uint64_t out[2 * MAXC];
    for (int i = 0; i < nctx_g; i++) {
        orpc_stats_t st;
        CHECK_RC(orpc_context_stats(rpc_g, i, &st), ORPC_OK, "orpc_context_stats");
        out[2 * i] = st.requests;
        out[2 * i + 1] = st.rejected_auth;
    }
    orpc_respond(c, 0, out, sizeof(uint64_t) * 2 * (size_t)nctx_g);
}

static void *drive_ctx(void *arg)
{
    int i = (int)(intptr_t)arg;
    while (!t_stop_g)
        orpc_progress_context(rpc_g, i, 10);
    return NULL;
}

static int server(const char *af, const char *kf, const char *prov, int nctx, int app)
{
    signal(SIGTERM, t_on_term);
    signal(SIGPIPE, SIG_IGN);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    o.auth_key_file = strcmp(kf, "-") ? kf : NULL; /* "-": SHMEM_RPC_AUTH_KEY */
    o.contexts = nctx;
    o.progress_thread = !app;
    int rc = orpc_open(&o, &rpc_g);
    if (rc != ORPC_OK) { /* e.g. SHMEM_RPC_CONTEXTS out of range: the driver checks the message */
        fprintf(stderr, "server: orpc_open: %s\n", orpc_strerror(rc));
        return 3;
    }
    nctx_g = orpc_contexts(rpc_g);
    /* nctx 0: SHMEM_RPC_CONTEXTS decides. */
    CHECK(nctx == 0 || nctx_g == nctx, "orpc_contexts %d, opened with %d", nctx_g, nctx);
    printf("server: %d contexts\n", nctx_g);
    fflush(stdout);
    nctx = nctx_g;
    CHECK_RC(orpc_progress_context(rpc_g, nctx, 0), ORPC_EINVAL, "progress of a context beyond");
    orpc_register(rpc_g, C_WHO, h_who, NULL, 0, NULL);
    orpc_register(rpc_g, C_HOLD, h_hold, NULL, 0, NULL);
    orpc_register(rpc_g, C_BIG, h_big, NULL, 0, NULL);
    orpc_register(rpc_g, C_HELD, h_held, NULL, 0, NULL);
    orpc_register(rpc_g, C_STATS, h_stats, NULL, 0, NULL);
    orpc_register(rpc_g, C_STOP, t_h_stop, NULL, 0, NULL);
    t_publish_addr(rpc_g, af);
    if (app) {
        for (int i = 0; i < nctx; i++)
            pthread_create(&tid_of_ctx_g[i], NULL, drive_ctx, (void *)(intptr_t)i);
        for (int i = 0; i < nctx; i++)
            pthread_join(tid_of_ctx_g[i], NULL);
    } else {
        while (!t_stop_g)
            usleep(10000);
    }
    int held = 0;
    for (int i = 0; i < nctx; i++)
        held += nheld_g[i];
    orpc_stats_t st;
    orpc_stats(rpc_g, &st);
    double t0 = now_s();
    CHECK_RC(orpc_close(rpc_g), ORPC_OK, "orpc_close");
    printf("server: %d contexts, requests %llu, closed with %d calls held in %.3f s\n", nctx,
           (unsigned long long)st.requests, held, now_s() - t0);
    return 0;
}

/* ---------------------------------------------------------------- client */

static const char *af_g, *kf_g;
static int nsrv_ctx_g;

static orpc_t *client_open(orpc_peer_t **p, const char *key)
{
    char addr[ORPC_ADDR_STRLEN];
    FILE *f = fopen(af_g, "r");
    CHECK(f && fgets(addr, sizeof(addr), f), "cannot read %s", af_g);
    fclose(f);
    orpc_t *r;
    CHECK_RC(orpc_open(NULL, &r), ORPC_OK, "client orpc_open");
    char ks[300];
    snprintf(ks, sizeof(ks), "@%s", kf_g);
    CHECK_RC(orpc_lookup(r, addr, key ? key : ks, p), ORPC_OK, "orpc_lookup");
    return r;
}

static uint32_t who_pid_g;

static int who(orpc_t *r, orpc_peer_t *p, uint64_t key, uint32_t ms, int timeout, int *ctx)
{
    uint8_t in[12], out[20];
    orpc_enc_t e;
    orpc_enc_init(&e, in, sizeof(in));
    orpc_enc_u64(&e, key);
    orpc_enc_u32(&e, ms);
    size_t ol = 0;
    int rc = orpc_call(r, p, orpc_id(C_WHO), in, e.pos, out, sizeof(out), &ol, timeout);
    if (rc == ORPC_OK) {
        orpc_dec_t d;
        orpc_dec_init(&d, out, ol);
        *ctx = (int)orpc_dec_u32(&d);
        (void)orpc_dec_u32(&d);
        CHECK(orpc_dec_u64(&d) == key && !d.err, "wrong answer");
        who_pid_g = orpc_dec_u32(&d);
    }
    return rc;
}

typedef struct {
    int calls;
    int hist[MAXC];
} spread_arg_t;

/* Each thread its own client instance (its own endpoint), round robin. */
static void *spread_thread(void *arg)
{
    spread_arg_t *a = arg;
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    int n = orpc_peer_contexts(p);
    CHECK(n == nsrv_ctx_g, "orpc_peer_contexts %d, server has %d", n, nsrv_ctx_g);
    int prev = -1;
    for (int i = 0; i < a->calls; i++) {
        int ctx = -1;
        CHECK_RC(who(r, p, (uint64_t)i, 0, 20000, &ctx), ORPC_OK, "round-robin call");
        CHECK(ctx >= 0 && ctx < n, "context %d", ctx);
        /* Round robin: one client's consecutive calls go to consecutive contexts. */
        CHECK(prev < 0 || ctx == (prev + 1) % n, "call %d went to context %d after %d", i, ctx,
              prev);
        prev = ctx;
        a->hist[ctx]++;
    }
    orpc_peer_release(p);
    orpc_close(r);
    return NULL;
}

static int c_spread(int threads, int calls)
{
    spread_arg_t a[64];
    pthread_t t[64];
    CHECK(threads <= 64, "at most 64 threads");
    memset(a, 0, sizeof(a));
    for (int i = 0; i < threads; i++) {
        a[i].calls = calls;
        pthread_create(&t[i], NULL, spread_thread, &a[i]);
    }
    int hist[MAXC] = {0};
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        for (int k = 0; k < nsrv_ctx_g; k++)
            hist[k] += a[i].hist[k];
    }
    printf("spread: %d threads x %d calls; per context:", threads, calls);
    for (int k = 0; k < nsrv_ctx_g; k++)
        printf(" %d", hist[k]);
    printf("\n");
    for (int k = 0; k < nsrv_ctx_g; k++)
        CHECK(hist[k] >= threads * (calls / nsrv_ctx_g), "context %d got %d calls", k, hist[k]);
    return 0;
}

/* Calls with a key always land on one context; keys use every context. */
static int c_keyed(void)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    int used[MAXC] = {0};
    for (uint64_t key = 0; key < 64; key++) {
        orpc_peer_t *kp = orpc_peer_key(p, key);
        CHECK(kp == orpc_peer_key(p, key), "orpc_peer_key not stable");
        int first = -1;
        for (int i = 0; i < 6; i++) {
            int ctx = -1;
            int rc = i % 2 ? who(r, kp, key, 0, 20000, &ctx) : ORPC_OK;
            if (i % 2 == 0) {
                uint8_t in[12], out[20];
                orpc_enc_t e;
                orpc_enc_init(&e, in, sizeof(in));
                orpc_enc_u64(&e, key);
                orpc_enc_u32(&e, 0);
                size_t ol = 0;
                rc = orpc_call_key(r, p, key, orpc_id(C_WHO), in, e.pos, out, sizeof(out), &ol,
                                   20000);
                ctx = (int)(out[0] | out[1] << 8);
            }
            CHECK_RC(rc, ORPC_OK, "keyed call");
            CHECK(first < 0 || ctx == first, "key %llu went to context %d and %d",
                  (unsigned long long)key, first, ctx);
            first = ctx;
        }
        used[first]++;
        /* Arguments above the eager limit: pulled by that context (two-phase). */
        if (key < 8) {
            size_t big = 200000 + (size_t)key;
            char *buf = malloc(big);
            t_fill(buf, 0, big, (uint32_t)big);
            uint32_t ctx = 99;
            size_t ol = 0;
            CHECK_RC(orpc_call(r, kp, orpc_id(C_BIG), buf, big, &ctx, sizeof(ctx), &ol, 20000),
                     ORPC_OK, "large argument through a key");
            CHECK((int)ctx == first, "large argument of key %llu on context %u, not %d",
                  (unsigned long long)key, ctx, first);
            free(buf);
        }
    }
    printf("keyed: 64 keys x 6 calls; keys per context:");
    for (int k = 0; k < nsrv_ctx_g; k++) {
        printf(" %d", used[k]);
        CHECK(used[k] > 0, "no key maps to context %d", k);
    }
    printf("\n");
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* A slow handler on every context: each call ends at its deadline. */
static int c_deadline(void)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    for (int k = 0; k < nsrv_ctx_g; k++) {
        int ctx;
        double t0 = now_s();
        int rc = who(r, p, (uint64_t)k, 600, 150, &ctx);
        double dt = now_s() - t0;
        CHECK_RC(rc, ORPC_ETIMEDOUT, "call past its deadline");
        CHECK(dt >= 0.14 && dt < 3.0, "timed out after %.3f s (deadline 0.15 s)", dt);
    }
    /* Every context serves on after it. */
    usleep(700000);
    for (int k = 0; k < nsrv_ctx_g; k++) {
        int ctx;
        CHECK_RC(who(r, p, (uint64_t)k, 0, 20000, &ctx), ORPC_OK, "call after timeouts");
    }
    printf("deadline: %d contexts timed out and served on\n", nsrv_ctx_g);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

static void ctx_stats(orpc_t *r, orpc_peer_t *p, uint64_t *st)
{
    size_t ol = 0;
    CHECK_RC(orpc_call(r, p, orpc_id(C_STATS), NULL, 0, st, sizeof(uint64_t) * 2 * MAXC, &ol,
                       20000),
             ORPC_OK, "stats");
}

/* A wrong key is refused by every context, counted by each. */
static int c_auth(void)
{
    orpc_peer_t *p, *bad;
    orpc_t *r = client_open(&p, NULL);
    uint64_t before[2 * MAXC], after[2 * MAXC];
    ctx_stats(r, p, before);
    orpc_t *rb = client_open(&bad, "00112233445566778899aabbccddeeff");
    CHECK(orpc_peer_contexts(bad) == nsrv_ctx_g, "contexts with another key");
    for (int k = 0; k < nsrv_ctx_g; k++) {
        int ctx;
        CHECK_RC(who(rb, bad, (uint64_t)k, 0, 200, &ctx), ORPC_ETIMEDOUT, "call with a wrong key");
    }
    orpc_peer_release(bad);
    orpc_close(rb);
    ctx_stats(r, p, after);
    for (int k = 0; k < nsrv_ctx_g; k++)
        CHECK(after[2 * k + 1] > before[2 * k + 1], "context %d counted no rejection", k);
    printf("auth: every context refused the wrong key\n");
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* Calls held on every context, then the server stops: each ends with an
 * error by its deadline, none hangs. */
static int c_hold(int per_ctx)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    int n = per_ctx * nsrv_ctx_g;
    orpc_req_t *q[256];
    CHECK(n <= 256, "too many");
    for (int i = 0; i < n; i++)
        CHECK_RC(orpc_icall(r, p, orpc_id(C_HOLD), &i, sizeof(i), NULL, 0, 4000, &q[i]),
                 ORPC_OK, "icall hold");
    uint32_t held[MAXC];
    double t0 = now_s();
    for (;;) {
        size_t ol;
        CHECK_RC(orpc_call(r, p, orpc_id(C_HELD), NULL, 0, held, sizeof(held), &ol, 3000),
                 ORPC_OK, "held");
        int all = 1;
        for (int k = 0; k < nsrv_ctx_g; k++)
            all &= held[k] >= (uint32_t)per_ctx;
        if (all)
            break;
        CHECK(now_s() - t0 < 3, "calls did not reach every context");
        usleep(10000);
    }
    orpc_peer_t *ctl;
    orpc_t *rc2 = client_open(&ctl, NULL);
    CHECK_RC(orpc_call(rc2, ctl, orpc_id(C_STOP), NULL, 0, NULL, 0, NULL, 5000), ORPC_OK, "stop");
    int fails = 0;
    t0 = now_s();
    for (int i = 0; i < n; i++) {
        int rc = orpc_wait(q[i], NULL);
        CHECK(rc != ORPC_OK, "a held call was answered OK");
        fails += rc == ORPC_EPEER;
    }
    double dt = now_s() - t0;
    printf("hold: %d calls held on %d contexts ended (%d ORPC_EPEER, the rest timed out) "
           "in %.3f s\n", n, nsrv_ctx_g, fails, dt);
    CHECK(dt < 6.0, "held calls took %.3f s to end (deadline 4 s)", dt);
    orpc_peer_release(ctl);
    orpc_close(rc2);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* A joined address (orpc_addr_join) of several servers: round robin goes
 * over every context of every server, each once per turn. */
static int c_joined(int want)
{
    orpc_peer_t *p;
    orpc_t *r = client_open(&p, NULL);
    int n = orpc_peer_contexts(p);
    CHECK(n == want, "joined address names %d contexts, want %d", n, want);
    uint64_t seen[64];
    int hits[64] = {0}, nseen = 0;
    for (int i = 0; i < 4 * n; i++) {
        int ctx = -1;
        CHECK_RC(who(r, p, (uint64_t)i, 0, 20000, &ctx), ORPC_OK, "call to a joined service");
        uint64_t id = (uint64_t)who_pid_g << 8 | (uint64_t)ctx;
        int k = 0;
        while (k < nseen && seen[k] != id)
            k++;
        if (k == nseen)
            seen[nseen++] = id;
        hits[k]++;
    }
    CHECK(nseen == n, "%d distinct (server, context) pairs served, want %d", nseen, n);
    for (int k = 0; k < nseen; k++)
        CHECK(hits[k] == 4, "pair %d served %d calls of a round robin of 4 turns", k, hits[k]);
    printf("joined: %d contexts over several servers, each served 4 calls\n", n);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

/* rpc_ctx join OUT ADDRFILE...: one address of them all. */
static int join(const char *out, int n, char **files)
{
    static char a[8][ORPC_ADDR_STRLEN];
    const char *ap[8];
    CHECK(n >= 1 && n <= 8, "1..8 addresses");
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(files[i], "r");
        CHECK(f && fgets(a[i], sizeof(a[i]), f), "cannot read %s", files[i]);
        fclose(f);
        ap[i] = a[i];
    }
    char j[ORPC_ADDR_STRLEN];
    CHECK_RC(orpc_addr_join(ap, n, j, sizeof(j)), ORPC_OK, "orpc_addr_join");
    CHECK_RC(orpc_addr_join(ap, n, j, 40), ORPC_ERANGE, "orpc_addr_join into a short buffer");
    const char *bad[2] = {ap[0], "orpc://sockets/0200/max_req=4096"};
    CHECK_RC(orpc_addr_join(bad, 2, j, sizeof(j)), ORPC_EADDR, "join across providers");
    CHECK_RC(orpc_addr_join(ap, n, j, sizeof(j)), ORPC_OK, "orpc_addr_join");
    FILE *f = fopen(out, "w");
    CHECK(f != NULL, "cannot write %s", out);
    fprintf(f, "%s\n", j);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "join") == 0)
        return join(argv[2], argc - 3, argv + 3);
    if (argc >= 7 && strcmp(argv[1], "server") == 0)
        return server(argv[2], argv[3], argv[4], atoi(argv[5]), strcmp(argv[6], "app") == 0);
    if (argc < 5 || strcmp(argv[1], "client") != 0) {
        fprintf(stderr, "usage: rpc_ctx server ADDRFILE KEYFILE PROV NCTX thread|app\n"
                        "       rpc_ctx client ADDRFILE KEYFILE spread T N|keyed|deadline|auth|"
                        "hold N|stop\n");
        return 2;
    }
    af_g = argv[2];
    kf_g = argv[3];
    const char *t = argv[4];
    {
        orpc_peer_t *p;
        orpc_t *r = client_open(&p, NULL);
        nsrv_ctx_g = orpc_peer_contexts(p);
        orpc_peer_release(p);
        orpc_close(r);
    }
    if (strcmp(t, "spread") == 0 && argc >= 7)
        return c_spread(atoi(argv[5]), atoi(argv[6]));
    if (strcmp(t, "keyed") == 0)
        return c_keyed();
    if (strcmp(t, "deadline") == 0)
        return c_deadline();
    if (strcmp(t, "auth") == 0)
        return c_auth();
    if (strcmp(t, "count") == 0) { /* prints the server's contexts */
        printf("%d\n", nsrv_ctx_g);
        return 0;
    }
    if (strcmp(t, "joined") == 0 && argc >= 6)
        return c_joined(atoi(argv[5]));
    if (strcmp(t, "hold") == 0 && argc >= 6)
        return c_hold(atoi(argv[5]));
    if (strcmp(t, "stop") == 0) {
        orpc_peer_t *p;
        orpc_t *r = client_open(&p, NULL);
        int rc = orpc_call(r, p, orpc_id(C_STOP), NULL, 0, NULL, 0, NULL, 5000);
        orpc_peer_release(p);
        orpc_close(r);
        return rc == ORPC_OK ? 0 : 1;
    }
    fprintf(stderr, "unknown client test %s\n", t);
    return 2;
}
