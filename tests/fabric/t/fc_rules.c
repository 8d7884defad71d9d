// SPDX-License-Identifier: BSD-3-Clause
/*
 * fabcheck's rule tests: for each rule a small raw-libfabric program pair
 * (origin and target, forked) that breaks exactly that rule ("bad") and its
 * correct twin ("good"), which must run clean under every profile.
 *
 *   fc_rules <scenario> good|bad     one scenario
 *   fc_rules all good                every scenario's correct twin, in turn
 *   fc_rules list                    scenario, rule and profile of each bad run
 *   fc_rules hold                    register an MR, print the pid, sleep
 *
 * A bad run exits 0 when the operation failed (post error or error
 * completion) and 1 when it went through; a good run exits 0 when every
 * operation completed with the right data. tests/fabric/t/run.sh checks the
 * fabcheck log lines on top of that.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fc_t.h"

#define WIN 4096
#define ALL_ACCESS (FI_READ | FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE)

static int bad_g;

/* What a scenario's origin reports. */
#define FAILED(how, ...)                                                       \
    do {                                                                       \
        printf("origin: OP FAILED: " how "\n", ##__VA_ARGS__);                 \
        return bad_g ? 0 : 1;                                                  \
    } while (0)
#define PASSED(how, ...)                                                       \
    do {                                                                       \
        printf("origin: OP OK: " how "\n", ##__VA_ARGS__);                     \
        return bad_g ? 1 : 0;                                                  \
    } while (0)

/* Posts (retrying -FI_EAGAIN) and waits: 0 ok, else a FAILED report. */
#define POST_WAIT(t, call, what)                                               \
    do {                                                                       \
        ssize_t rc_ = T_POST(t, call);                                         \
        if (rc_ != 0)                                                          \
            FAILED("%s: post returned %zd (%s)", what, rc_, fi_strerror((int)-rc_)); \
        int e_ = t_wait(t);                                                    \
        if (e_ > 0)                                                            \
            FAILED("%s: completion error %d (%s)", what, e_, fi_strerror(e_)); \
        if (e_ < 0) {                                                          \
            printf("origin: no completion for %s in 10 s\n", what);            \
            return 2;                                                          \
        }                                                                      \
    } while (0)

static void fill(char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seed + i * 7);
}

static int check(const char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (char)(seed + i * 7))
            return (int)i + 1;
    return 0;
}

/* Reads the peer's window back into buf+off and compares with seed. */
static int read_back(t_ctx_t *t, size_t off, size_t len, int seed)
{
    memset(t->buf + off, 0, len);
    ssize_t rc = T_POST(t, fi_read(t->ep, t->buf + off, len, t->desc, t->peer, t->rbase,
                                   t->rkey, t_ctx(t)));
    if (rc != 0 || t_wait(t) != 0)
        return -1;
    return check(t->buf + off, len, seed);
}

/* ---- the generic RMA pair -------------------------------------------- */

typedef struct scen scen_t;
typedef int (*origin_fn)(t_ctx_t *t);

typedef struct {
    uint64_t access;      /* of the target's window */
    int no_enable;        /* the target leaves its MR disabled */
    int two_eps;          /* MR bound to one endpoint, the other one's name published */
    int mr_on_named;      /* ... unless the MR is bound to the named one */
    uint8_t auth_byte;
} tgt_t;

struct scen {
    const char *name;
    const char *rule;     /* logged by the bad run */
    const char *profile;  /* the bad run's profile */
    origin_fn origin;     /* the origin side (NULL: local) */
    int (*local)(t_ctx_t *t); /* one process only */
    void (*target_opts)(tgt_t *g);
    void (*origin_opts)(t_opts_t *o);
    const char *env;      /* extra setting of the bad run (run.sh) */
};

static int target_side(t_ctx_t *t, const scen_t *s)
{
    tgt_t g = {.access = ALL_ACCESS};
    if (s->target_opts)
        s->target_opts(&g);
    t_opts_t o = {.auth_byte = g.auth_byte};
    int rc = t_open(t, &o);
    if (rc != 0) {
        fprintf(stderr, "target: t_open: %s\n", fi_strerror(-rc));
        return 3;
    }
    struct fid_ep *other = NULL;
    if (g.two_eps) {
        /* A second endpoint, the one peers are told about. */
        T_CHECK(fi_endpoint(t->dom, t->info, &other, NULL));
        T_CHECK(fi_ep_bind(other, &t->av->fid, 0));
        T_CHECK(fi_ep_bind(other, &t->cq->fid, FI_TRANSMIT | FI_RECV));
        T_CHECK(fi_enable(other));
    }
    T_CHECK(t_reg(t, WIN, g.access, 0));
    if (t->mr_mode & FI_MR_ENDPOINT) {
        struct fid_ep *bind_to = (g.two_eps && g.mr_on_named) ? other : t->ep;
        T_CHECK(fi_mr_bind(t->mr, &bind_to->fid, 0));
        if (!g.no_enable)
            T_CHECK(fi_mr_enable(t->mr));
    }
    if (other) {
        struct fid_ep *mine = t->ep;
        t->ep = other;
        t_exchange(t);
        t->ep = mine;
    } else {
        t_exchange(t);
    }
    if (other) {
        for (;;) { /* serve both */
            (void)fi_cq_read(t->cq, NULL, 0);
            char c;
            if (recv(t->sock, &c, 1, MSG_DONTWAIT) == 1)
                break;
        }
    } else {
        t_serve(t);
    }
    if (t->mr) {
        fi_close(&t->mr->fid);
        t->mr = NULL;
    }
    if (other)
        fi_close(&other->fid);
    t_close(t);
    return 0;
}

static int origin_side(t_ctx_t *t, const scen_t *s)
{
    t_opts_t o = {0};
    if (s->origin_opts)
        s->origin_opts(&o);
    int rc = t_open(t, &o);
    if (rc != 0) {
        fprintf(stderr, "origin: t_open: %s\n", fi_strerror(-rc));
        return 3;
    }
    T_CHECK(t_reg(t, WIN, ALL_ACCESS, 1));
    t_exchange(t);
    rc = s->origin(t);
    t_done(t);
    t_close(t);
    return rc;
}

/* ---- scenarios ------------------------------------------------------- */

/* MR_LOCAL: a local buffer of a transfer without its descriptor. */
static int o_mr_local(t_ctx_t *t)
{
    fill(t->buf, 64, 1);
    POST_WAIT(t, fi_write(t->ep, t->buf, 64, bad_g ? NULL : t->desc, t->peer, t->rbase, t->rkey,
                          t_ctx(t)), "fi_write");
    int bad = read_back(t, 1024, 64, 1);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("64 bytes written and read back");
}

/* MR_LOCAL: a descriptor whose MR does not cover the buffer. */
static int o_mr_local_range(t_ctx_t *t)
{
    char *other = malloc(64);
    fill(other, 64, 2);
    struct fid_mr *mr2 = t_reg_buf(t, other, 64, ALL_ACCESS, 1);
    void *d = bad_g ? t->desc : fi_mr_desc(mr2);
    ssize_t rc = T_POST(t, fi_write(t->ep, other, 64, d, t->peer, t->rbase, t->rkey, t_ctx(t)));
    int e = rc == 0 ? t_wait(t) : 0;
    fi_close(&mr2->fid);
    free(other);
    if (rc != 0)
        FAILED("fi_write: post returned %zd", rc);
    if (e)
        FAILED("fi_write: completion error %d", e);
    int bad = read_back(t, 0, 64, 2);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("64 bytes from a second MR");
}

/* RMA helpers for the scenarios that change only the remote address/key. */
static int write_to(t_ctx_t *t, uint64_t addr, uint64_t key, size_t len)
{
    fill(t->buf, len, 3);
    POST_WAIT(t, fi_write(t->ep, t->buf, len, t->desc, t->peer, addr, key, t_ctx(t)), "fi_write");
    int bad = read_back(t, WIN / 2, len, 3);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("%zu bytes written and read back", len);
}

static int o_plain_write(t_ctx_t *t)
{
    return write_to(t, t->rbase, t->rkey, 64);
}

/* MR_ENDPOINT: the target never enables its MR. */
static void g_no_enable(tgt_t *g)
{
    g->no_enable = bad_g;
}

/* MR_ENDPOINT: the MR is bound to the target's other endpoint. */
static void g_two_eps(tgt_t *g)
{
    g->two_eps = 1;
    g->mr_on_named = !bad_g;
}

/* MR_ENDPOINT: the endpoint closed before an MR bound to it. */
static int l_mr_ep_close(t_ctx_t *t)
{
    t_opts_t o = {0};
    T_CHECK(t_open(t, &o));
    char *b = malloc(WIN);
    struct fid_mr *mr = t_reg_buf(t, b, WIN, ALL_ACCESS, 1);
    int rc = 0;
    if (bad_g) {
        rc = fi_close(&t->ep->fid);
        if (rc == 0)
            t->ep = NULL;
        fi_close(&mr->fid);
    } else {
        fi_close(&mr->fid);
    }
    t_close(t);
    free(b);
    if (rc != 0)
        FAILED("fi_close(ep) returned %d (%s)", rc, fi_strerror(-rc));
    PASSED("closed in order");
}

/* VIRT_ADDR: an offset where the virtual address is due (verbs). */
static int o_virt_offset(t_ctx_t *t)
{
    return write_to(t, bad_g ? 0 : t->rbase, t->rkey, 64);
}

/* VIRT_ADDR: the virtual address where an offset is due (opx). */
static int o_virt_vaddr(t_ctx_t *t)
{
    return write_to(t, bad_g ? t->rvaddr : t->rbase, t->rkey, 64);
}

/* PROV_KEY: the key requested at registration instead of fi_mr_key's. */
static int o_prov_key(t_ctx_t *t)
{
    return write_to(t, t->rbase, bad_g ? t->rreq_key : t->rkey, 64);
}

/* PROV_KEY: a requested key larger than mr_key_size (opx: 2 bytes). */
static int l_key_size(t_ctx_t *t)
{
    T_CHECK(t_open(t, NULL));
    char *b = malloc(WIN);
    size_t ks = t->info->domain_attr->mr_key_size;
    uint64_t key = bad_g ? 0x123456 : (ks >= 2 ? 0x1234 : 0x12);
    struct fid_mr *mr = NULL;
    int rc = fi_mr_reg(t->dom, b, WIN, ALL_ACCESS, 0, key, 0, &mr, NULL);
    if (rc == 0)
        fi_close(&mr->fid);
    t_close(t);
    free(b);
    if (rc != 0)
        FAILED("fi_mr_reg with key 0x%llx returned %d (%s)", (unsigned long long)key, rc,
               fi_strerror(-rc));
    PASSED("fi_mr_reg with key 0x%llx", (unsigned long long)key);
}

/* MR_KEY: a key the target never handed out. */
static int o_mr_key(t_ctx_t *t)
{
    return write_to(t, t->rbase, bad_g ? t->rkey + 0x777 : t->rkey, 64);
}

/* MR_RANGE: a write past the end of the target's MR. */
static int o_mr_range(t_ctx_t *t)
{
    return write_to(t, t->rbase + (bad_g ? WIN - 32 : 0), t->rkey, 64);
}

/* MR_ACCESS: the target registered its window read-only for peers. */
static void g_read_only(tgt_t *g)
{
    g->access = bad_g ? (FI_READ | FI_WRITE | FI_REMOTE_READ) : ALL_ACCESS;
}

/* MR_RAW: a raw key's bytes used as a key, unmapped (strict). */
static int o_mr_raw(t_ctx_t *t)
{
    uint64_t k = t->rkey;
    if (bad_g)
        memcpy(&k, t->rraw, sizeof(k));
    return write_to(t, t->rbase, k, 64);
}

/* MR_ALLOCATED: registering memory that is not mapped. */
static int l_mr_allocated(t_ctx_t *t)
{
    T_CHECK(t_open(t, NULL));
    long pg = sysconf(_SC_PAGESIZE);
    char *b = mmap(NULL, 4 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (bad_g)
        munmap(b + pg, (size_t)pg); /* a hole in the middle */
    struct fid_mr *mr = NULL;
    int rc = fi_mr_reg(t->dom, b, 4 * (size_t)pg, ALL_ACCESS, 0, 0x77, 0, &mr, NULL);
    if (rc == 0)
        fi_close(&mr->fid);
    t_close(t);
    munmap(b, 4 * (size_t)pg);
    if (rc != 0)
        FAILED("fi_mr_reg returned %d (%s)", rc, fi_strerror(-rc));
    PASSED("fi_mr_reg of mapped memory");
}

/* CONTEXT: an integer cast to a pointer as the context (opx). */
static int o_ctx_int(t_ctx_t *t)
{
    fill(t->buf, 64, 4);
    void *c = bad_g ? (void *)(uintptr_t)((1ull << 32) | 3) : t_ctx(t);
    POST_WAIT(t, fi_write(t->ep, t->buf, 64, t->desc, t->peer, t->rbase, t->rkey, c), "fi_write");
    PASSED("write with a real context");
}

/* CONTEXT: NULL context on a message (psm3: FI_CONTEXT for FI_MSG). */
static int o_ctx_null(t_ctx_t *t)
{
    fill(t->buf, 64, 5);
    POST_WAIT(t, fi_send(t->ep, t->buf, 64, t->desc, t->peer, bad_g ? NULL : t_ctx(t)),
              "fi_send");
    PASSED("send with a context");
}

/* CONTEXT: the app writes into the context while its operation runs. */
static int o_ctx_touch(t_ctx_t *t)
{
    fill(t->buf, 64, 6);
    struct fi_context2 *c = t_ctx(t);
    ssize_t rc = T_POST(t, fi_write(t->ep, t->buf, 64, t->desc, t->peer, t->rbase, t->rkey, c));
    if (rc != 0)
        FAILED("fi_write: post returned %zd", rc);
    if (bad_g)
        memset(c, 0, sizeof(*c)); /* "zero it for the next use" */
    int e = t_wait(t);
    if (e)
        FAILED("fi_write: completion error %d", e);
    PASSED("context untouched until completion");
}

/* CONTEXT: one context for two operations in flight at once. */
static int o_ctx_reuse(t_ctx_t *t)
{
    fill(t->buf, 128, 7);
    void *c1 = t_ctx(t), *c2 = bad_g ? c1 : t_ctx(t);
    ssize_t rc = T_POST(t, fi_write(t->ep, t->buf, 64, t->desc, t->peer, t->rbase, t->rkey, c1));
    if (rc != 0)
        FAILED("first fi_write: post returned %zd", rc);
    ssize_t rc2 = T_POST(t, fi_write(t->ep, t->buf + 64, 64, t->desc, t->peer, t->rbase + 64,
                                     t->rkey, c2));
    int e = t_wait(t);
    int e2 = rc2 == 0 ? t_wait(t) : 0;
    if (rc2 != 0)
        FAILED("second fi_write: post returned %zd (%s)", rc2, fi_strerror((int)-rc2));
    if (e || e2)
        FAILED("completion errors %d %d", e, e2);
    PASSED("two writes, two contexts");
}

/* ASYNC_IOV: the IO vector changed before the operation completed. */
static int o_async_iov(t_ctx_t *t)
{
    fill(t->buf, 64, 8);
    size_t n = t->info->tx_attr->iov_limit >= 2 ? 2 : 1;
    struct iovec *iov = malloc(2 * sizeof(*iov));
    void **desc = malloc(2 * sizeof(void *));
    for (size_t i = 0; i < n; i++) {
        iov[i].iov_base = t->buf + i * (64 / n);
        iov[i].iov_len = 64 / n;
        desc[i] = t->desc;
    }
    struct fi_rma_iov r = {.addr = t->rbase, .len = 64, .key = t->rkey};
    struct fi_msg_rma m = {.msg_iov = iov, .desc = desc, .iov_count = n, .addr = t->peer,
                           .rma_iov = &r, .rma_iov_count = 1, .context = t_ctx(t)};
    ssize_t rc = T_POST(t, fi_writemsg(t->ep, &m, FI_COMPLETION));
    if (rc != 0)
        FAILED("fi_writemsg: post returned %zd", rc);
    if (bad_g)
        memset(iov, 0xee, 2 * sizeof(*iov)); /* reused for the next message */
    int e = t_wait(t);
    free(iov);
    free(desc);
    if (e)
        FAILED("fi_writemsg: completion error %d", e);
    int bad = read_back(t, WIN / 2, 64, 8);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("%zu-vector write", n);
}

/* ATOMIC: an atomic outside the profile's table (strict: no FI_BAND). */
static int o_atomic(t_ctx_t *t)
{
    struct fi_atomic_attr a;
    int64_t *res = (int64_t *)(t->buf + 256), *opnd = (int64_t *)(t->buf + 264);
    int64_t *cmp = (int64_t *)(t->buf + 272);
    enum fi_op op = bad_g ? FI_BAND : FI_SUM;
    if (!bad_g && fi_query_atomic(t->dom, FI_INT64, FI_SUM, &a, 0) != 0)
        PASSED("no FI_SUM on FI_INT64 offered: nothing to do");
    *opnd = 5;
    POST_WAIT(t, fi_atomic(t->ep, opnd, 1, t->desc, t->peer, t->rbase + 8, t->rkey, FI_INT64, op,
                           t_ctx(t)), "fi_atomic");
    if (fi_query_atomic(t->dom, FI_INT64, FI_SUM, &a, FI_FETCH_ATOMIC) == 0) {
        *opnd = 2;
        POST_WAIT(t, fi_fetch_atomic(t->ep, opnd, 1, t->desc, res, t->desc, t->peer,
                                     t->rbase + 8, t->rkey, FI_INT64, FI_SUM, t_ctx(t)),
                  "fi_fetch_atomic");
        if (*res != 5)
            FAILED("fetch-add returned %lld, expected 5", (long long)*res);
    }
    if (fi_query_atomic(t->dom, FI_INT64, FI_CSWAP, &a, FI_COMPARE_ATOMIC) == 0) {
        *cmp = 7;
        *opnd = 100;
        POST_WAIT(t, fi_compare_atomic(t->ep, opnd, 1, t->desc, cmp, t->desc, res, t->desc,
                                       t->peer, t->rbase + 8, t->rkey, FI_INT64, FI_CSWAP,
                                       t_ctx(t)), "fi_compare_atomic");
        if (*res != 7)
            FAILED("compare-swap returned %lld, expected 7", (long long)*res);
    }
    PASSED("atomics from the table");
}

/* LIMIT: an inject over inject_size (cxi: 192 bytes). */
static int o_limit_inject(t_ctx_t *t)
{
    size_t lim = t->info->tx_attr->inject_size;
    size_t n = bad_g ? 256 : (lim < 8 ? lim : 8);
    if (n == 0)
        PASSED("inject_size 0: nothing to inject");
    fill(t->buf, n, 9);
    ssize_t rc = T_POST(t, fi_inject_write(t->ep, t->buf, n, t->peer, t->rbase, t->rkey));
    if (rc != 0)
        FAILED("fi_inject_write of %zu bytes returned %zd (%s)", n, rc, fi_strerror((int)-rc));
    int bad = read_back(t, WIN / 2, n, 9);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("%zu bytes injected", n);
}

/* LIMIT: an RMA over max_msg_size (strict: 64 KiB), chunked when correct. */
static int o_limit_msg(t_ctx_t *t)
{
    size_t total = WIN, max = t->info->ep_attr->max_msg_size;
    size_t chunk = bad_g ? total : (max < 1024 ? max : 1024);
    if (bad_g) {
        /* more than strict's 64 KiB from an MR of its own */
        total = chunk = 128 * 1024;
    }
    char *src = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fill(src, total, 10);
    struct fid_mr *mr = t_reg_buf(t, src, total, ALL_ACCESS, 1);
    int rc = 0;
    for (size_t off = 0; off < total && rc == 0; off += chunk) {
        size_t n = total - off < chunk ? total - off : chunk;
        ssize_t r = T_POST(t, fi_write(t->ep, src + off, n, fi_mr_desc(mr), t->peer,
                                       t->rbase + (bad_g ? 0 : off), t->rkey, t_ctx(t)));
        if (r != 0)
            rc = (int)r;
        else if (t_wait(t) != 0)
            rc = -FI_EIO;
    }
    fi_close(&mr->fid);
    munmap(src, total);
    if (rc != 0)
        FAILED("fi_write: %d (%s)", rc, fi_strerror(-rc));
    int bad = read_back(t, 0, WIN, 10);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("%zu bytes in pieces of %zu", total, chunk);
}

/* LIMIT: more IO vectors than iov_limit (cxi: 1). */
static int o_limit_iov(t_ctx_t *t)
{
    size_t lim = t->info->tx_attr->iov_limit;
    size_t n = bad_g ? 2 : (lim >= 2 ? 2 : 1);
    fill(t->buf, 64, 11);
    struct iovec iov[2] = {{t->buf, 64 / n}, {t->buf + 32, 32}};
    void *desc[2] = {t->desc, t->desc};
    POST_WAIT(t, fi_writev(t->ep, iov, desc, n, t->peer, t->rbase, t->rkey, t_ctx(t)),
              "fi_writev");
    int bad = read_back(t, WIN / 2, 64, 11);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("%zu vectors", n);
}

/* AUTH_KEY: the two processes use different keys (psm3). */
static void g_other_key(tgt_t *g)
{
    g->auth_byte = bad_g ? 0x24 : 0x42;
}

/* AUTH_KEY: no key where FABCHECK_AUTH_REQUIRED demands one. */
static int l_auth_missing(t_ctx_t *t)
{
    t_opts_t o = {.no_auth = bad_g};
    int rc = t_open(t, &o);
    t_close(t);
    if (rc != 0)
        FAILED("fi_domain/fi_endpoint returned %d (%s)", rc, fi_strerror(-rc));
    PASSED("opened with a key");
}

/* AV: an index where the AV handed out an opaque fi_addr_t (opx: FI_AV_MAP). */
static int o_av(t_ctx_t *t)
{
    fill(t->buf, 64, 12);
    fi_addr_t to = bad_g ? 0 : t->peer;
    POST_WAIT(t, fi_write(t->ep, t->buf, 64, t->desc, to, t->rbase, t->rkey, t_ctx(t)),
              "fi_write");
    PASSED("write to the fi_addr the AV returned");
}

/* EP_STATE: a transfer on an endpoint not enabled. */
static int l_ep_state(t_ctx_t *t)
{
    t_opts_t o = {.no_enable = 1};
    T_CHECK(t_open(t, &o));
    if (!bad_g)
        T_CHECK(fi_enable(t->ep));
    T_CHECK(t_reg(t, WIN, ALL_ACCESS, !bad_g));
    /* ourselves as the peer */
    uint8_t name[256];
    size_t nl = sizeof(name);
    T_CHECK(fi_getname(&t->ep->fid, name, &nl));
    if (fi_av_insert(t->av, name, 1, &t->peer, 0, NULL) != 1)
        t_die();
    t->rbase = (t->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)t->buf : 0;
    t->rkey = fi_mr_key(t->mr);
    if (t->mr_mode & FI_MR_RAW) {
        uint8_t raw[64];
        size_t ks = sizeof(raw);
        uint64_t base;
        if (fi_mr_raw_attr(t->mr, &base, raw, &ks, 0) == 0)
            fi_mr_map_raw(t->dom, base, raw, ks, &t->rkey, 0);
    }
    fill(t->buf, 64, 13);
    ssize_t rc = T_POST(t, fi_write(t->ep, t->buf, 64, t->desc, t->peer, t->rbase + 1024, t->rkey,
                                    t_ctx(t)));
    int e = rc == 0 ? t_wait(t) : 0;
    int bad = rc == 0 && e == 0 ? check(t->buf + 1024, 64, 13) : 0;
    t_close(t);
    if (rc != 0)
        FAILED("fi_write: post returned %zd (%s)", rc, fi_strerror((int)-rc));
    if (e || bad)
        FAILED("completion %d, byte %d", e, bad - 1);
    PASSED("write to itself after fi_enable");
}

/* Not a rule: -FI_EAGAIN at every turn must not lose or repeat anything. */
static int o_many(t_ctx_t *t)
{
    enum { N = 100 };
    fill(t->buf, WIN / 2, 14);
    unsigned long before = t->eagains;
    for (int i = 0; i < N; i++) {
        ssize_t rc = T_POST(t, fi_write(t->ep, t->buf + (i % 32) * 64, 64, t->desc, t->peer,
                                        t->rbase + (i % 32) * 64, t->rkey, t_ctx(t)));
        if (rc != 0)
            FAILED("write %d: post returned %zd", i, rc);
    }
    int done = 0;
    while (done < N) {
        int e = t_wait(t);
        if (e)
            FAILED("completion %d: %d", done, e);
        done++;
    }
    int bad = read_back(t, WIN / 2, WIN / 2, 14);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    printf("origin: eagains=%lu\n", t->eagains - before);
    PASSED("%d writes in flight", N);
}

/*
 * Not a rule: the queue depth. With tx_attr->size operations in flight the
 * next post answers -FI_EAGAIN (strict: 64), and nothing is lost.
 */
static int o_queue_depth(t_ctx_t *t)
{
    fill(t->buf, 64, 16);
    POST_WAIT(t, fi_write(t->ep, t->buf, 64, t->desc, t->peer, t->rbase, t->rkey, t_ctx(t)),
              "fi_write"); /* connected */
    size_t depth = t->info->tx_attr->size, posted = 0;
    int injected = getenv("FABCHECK_EAGAIN") != NULL;
    ssize_t rc = 0;
    while (posted < 200) {
        rc = fi_write(t->ep, t->buf, 64, t->desc, t->peer, t->rbase, t->rkey, t_ctx(t));
        if (rc != 0)
            break;
        posted++;
    }
    if (rc == -FI_EAGAIN)
        t->nctx--; /* that context was not taken */
    else if (rc != 0)
        FAILED("post %zu returned %zd", posted, rc);
    if (depth < 200 && !injected && (rc != -FI_EAGAIN || posted != depth))
        FAILED("tx_attr->size %zu, yet post %zu answered %zd", depth, posted, rc);
    for (size_t i = 0; i < posted; i++)
        if (t_wait(t) != 0)
            FAILED("completion %zu", i);
    printf("origin: %zu posts in flight, then %s\n", posted,
           rc == -FI_EAGAIN ? "-FI_EAGAIN" : "no refusal");
    PASSED("queue depth");
}

/* Not a rule: selective completion with counters, then one asked completion. */
static void o_selective_opts(t_opts_t *o)
{
    o->selective = 1;
}

static int o_selective(t_ctx_t *t)
{
    fill(t->buf, 256, 15);
    uint64_t w0 = fi_cntr_read(t->wcntr);
    for (int i = 0; i < 4; i++)
        if (T_POST(t, fi_write(t->ep, t->buf + i * 64, 64, t->desc, t->peer, t->rbase + i * 64,
                               t->rkey, t_ctx(t))) != 0)
            FAILED("write %d", i);
    int rc = fi_cntr_wait(t->wcntr, w0 + 4, 10000);
    if (rc != 0)
        FAILED("fi_cntr_wait: %d", rc);
    struct fi_cq_data_entry e;
    if (fi_cq_read(t->cq, &e, 1) != -FI_EAGAIN)
        FAILED("a completion where none was asked for");
    struct iovec iov = {t->buf, 64};
    struct fi_rma_iov r = {t->rbase, 64, t->rkey};
    void *c = t_ctx(t);
    struct fi_msg_rma m = {&iov, &t->desc, 1, t->peer, &r, 1, c, 0};
    if (T_POST(t, fi_writemsg(t->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE)) != 0)
        FAILED("fi_writemsg");
    if (t_wait(t) != 0)
        FAILED("no completion for FI_COMPLETION");
    uint64_t r0 = fi_cntr_read(t->rcntr);
    memset(t->buf + WIN / 2, 0, 256);
    if (T_POST(t, fi_read(t->ep, t->buf + WIN / 2, 256, t->desc, t->peer, t->rbase, t->rkey,
                          t_ctx(t))) != 0)
        FAILED("read back");
    if (fi_cntr_wait(t->rcntr, r0 + 1, 10) != -FI_ENOSYS)
        FAILED("fi_cntr_wait on an FI_WAIT_NONE counter did not answer -FI_ENOSYS");
    while (fi_cntr_read(t->rcntr) < r0 + 1) /* its errors would show on the CQ */
        if (fi_cntr_readerr(t->rcntr) != 0)
            FAILED("read back: error");
    int bad = check(t->buf + WIN / 2, 256, 15);
    if (bad)
        FAILED("read back: byte %d wrong", bad - 1);
    PASSED("counted writes, one completion asked for");
}

/* Not a rule: messages into a multi-receive buffer, with FI_SOURCE. */
static int msg_target(t_ctx_t *t)
{
    T_CHECK(t_open(t, NULL));
    T_CHECK(t_reg(t, WIN, ALL_ACCESS, 1));
    size_t min = 256;
    T_CHECK(fi_setopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)));
    struct iovec iov = {t->buf, WIN};
    struct fi_msg m = {&iov, &t->desc, 1, FI_ADDR_UNSPEC, t_ctx(t), 0};
    T_CHECK(T_POST(t, fi_recvmsg(t->ep, &m, FI_MULTI_RECV | FI_COMPLETION)));
    t_exchange(t);
    int got = 0, rc = 0;
    while (got < 3) {
        struct fi_cq_data_entry e;
        fi_addr_t src;
        ssize_t n = fi_cq_readfrom(t->cq, &e, 1, &src);
        if (n == -FI_EAVAIL) {
            rc = 1;
            break;
        }
        if (n != 1 || !(e.flags & FI_RECV))
            continue;
        if (e.len != 100 || check(e.buf, 100, 20 + got) != 0) {
            fprintf(stderr, "target: message %d: %zu bytes, wrong data\n", got, e.len);
            rc = 1;
        }
        if ((t->info->caps & FI_SOURCE) && src != t->peer) {
            fprintf(stderr, "target: message %d from fi_addr 0x%llx, the sender is 0x%llx\n",
                    got, (unsigned long long)src, (unsigned long long)t->peer);
            rc = 1;
        }
        got++;
    }
    t_send(t, &rc, sizeof(rc));
    t_serve(t);
    t_close(t);
    return rc;
}

static int o_msgs(t_ctx_t *t)
{
    for (int i = 0; i < 3; i++) {
        fill(t->buf + i * 128, 100, 20 + i);
        POST_WAIT(t, fi_send(t->ep, t->buf + i * 128, 100, t->desc, t->peer, t_ctx(t)), "fi_send");
    }
    int trc;
    t_recv_progress(t, &trc, sizeof(trc));
    if (trc)
        FAILED("the target saw wrong messages");
    PASSED("3 messages into one multi-receive buffer");
}

/* Not a rule: the rest of the API a program may use, through the wrapper. */
static int api_target(t_ctx_t *t)
{
    T_CHECK(t_open(t, NULL));
    T_CHECK(t_reg(t, WIN, ALL_ACCESS, 1));
    T_CHECK(T_POST(t, fi_trecv(t->ep, t->buf, 256, t->desc, FI_ADDR_UNSPEC, 0x77, 0, t_ctx(t))));
    T_CHECK(T_POST(t, fi_recv(t->ep, t->buf + 256, 256, t->desc, FI_ADDR_UNSPEC, t_ctx(t))));
    size_t min = 0, ml = sizeof(min);
    T_CHECK(fi_getopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &ml));
    t_exchange(t);
    int rc = 0;
    for (int got = 0; got < 2;) {
        struct fi_cq_data_entry e;
        ssize_t n = fi_cq_read(t->cq, &e, 1);
        if (n == -FI_EAVAIL) {
            rc = 1;
            break;
        }
        if (n != 1)
            continue;
        int tagged = (e.flags & FI_TAGGED) != 0;
        if (e.buf != (tagged ? t->buf : t->buf + 256) || check(e.buf, 8, tagged ? 30 : 31)) {
            fprintf(stderr, "target: %s message wrong\n", tagged ? "tagged" : "plain");
            rc = 1;
        }
        got++;
    }
    t_send(t, &rc, sizeof(rc));
    t_serve(t);
    t_close(t);
    return rc;
}

static int o_api(t_ctx_t *t)
{
    uint8_t name[256];
    size_t nl = sizeof(name);
    if (fi_av_lookup(t->av, t->peer, name, &nl) != 0)
        FAILED("fi_av_lookup");
    char str[256];
    size_t sl = sizeof(str);
    if (fi_av_straddr(t->av, name, str, &sl) == NULL || str[0] == '\0')
        FAILED("fi_av_straddr");
    if (fi_av_remove(t->av, &t->peer, 1, 0) != 0)
        FAILED("fi_av_remove");
    if (fi_av_insert(t->av, name, 1, &t->peer, 0, NULL) != 1)
        FAILED("fi_av_insert after fi_av_remove");
    uint64_t v = fi_cntr_read(t->wcntr);
    if (fi_cntr_add(t->wcntr, 5) != 0 || fi_cntr_read(t->wcntr) != v + 5)
        FAILED("fi_cntr_add");
    if (fi_cntr_set(t->wcntr, 100) != 0 || fi_cntr_read(t->wcntr) != 100 ||
        fi_cntr_readerr(t->wcntr) != 0)
        FAILED("fi_cntr_set");
    int fd = -1;
    int wrc = fi_control(&t->cq->fid, FI_GETWAIT, &fd);
    char eb[128];
    const char *es = fi_cq_strerror(t->cq, 0, NULL, eb, sizeof(eb));
    if (es == NULL)
        FAILED("fi_cq_strerror");
    fill(t->buf, 8, 30);
    fill(t->buf + 64, 8, 31);
    POST_WAIT(t, fi_tsend(t->ep, t->buf, 8, t->desc, t->peer, 0x77, t_ctx(t)), "fi_tsend");
    if (t->info->tx_attr->inject_size >= 8) {
        if (T_POST(t, fi_inject(t->ep, t->buf + 64, 8, t->peer)) != 0)
            FAILED("fi_inject");
    } else {
        POST_WAIT(t, fi_send(t->ep, t->buf + 64, 8, t->desc, t->peer, t_ctx(t)), "fi_send");
    }
    int trc;
    t_recv_progress(t, &trc, sizeof(trc));
    if (trc)
        FAILED("the target saw wrong messages");
    /* a receive that nothing matches, canceled */
    void *rc_ctx = t_ctx(t);
    if (T_POST(t, fi_trecv(t->ep, t->buf + 512, 64, t->desc, FI_ADDR_UNSPEC, 0x99, 0, rc_ctx)))
        FAILED("fi_trecv");
    if (fi_cancel(&t->ep->fid, rc_ctx) != 0)
        FAILED("fi_cancel");
    int e = t_wait(t);
    if (e != FI_ECANCELED)
        FAILED("the canceled receive completed with %d, not FI_ECANCELED", e);
    if (o_plain_write(t) != (bad_g ? 1 : 0))
        FAILED("write after the AV's reinsert");
    PASSED("AV lookup/straddr/remove, counters add/set, FI_GETWAIT %d, tagged, cancel", wrc);
}

static const scen_t scens[] = {
    {"mr_local", "MR_LOCAL", "verbs", o_mr_local},
    {"mr_local_range", "MR_LOCAL", "verbs", o_mr_local_range},
    {"mr_endpoint", "MR_ENDPOINT", "cxi", o_plain_write, NULL, g_no_enable},
    {"mr_ep_other", "MR_ENDPOINT", "cxi", o_plain_write, NULL, g_two_eps},
    {"mr_ep_close", "MR_ENDPOINT", "cxi", NULL, l_mr_ep_close},
    {"virt_offset", "VIRT_ADDR", "verbs", o_virt_offset},
    {"virt_vaddr", "VIRT_ADDR", "opx", o_virt_vaddr},
    {"prov_key", "PROV_KEY", "verbs", o_prov_key},
    {"key_size", "PROV_KEY", "opx", NULL, l_key_size},
    {"mr_key", "MR_KEY", "verbs", o_mr_key},
    {"mr_range", "MR_RANGE", "verbs", o_mr_range},
    {"mr_access", "MR_ACCESS", "verbs", o_plain_write, NULL, g_read_only},
    {"mr_raw", "MR_RAW", "strict", o_mr_raw},
    {"mr_allocated", "MR_ALLOCATED", "verbs", NULL, l_mr_allocated},
    {"ctx_int", "CONTEXT", "opx", o_ctx_int},
    {"ctx_null", "CONTEXT", "psm3", o_ctx_null, NULL, NULL, NULL, "msg"},
    {"ctx_touch", "CONTEXT", "opx", o_ctx_touch},
    {"ctx_reuse", "CONTEXT", "opx", o_ctx_reuse},
    {"async_iov", "ASYNC_IOV", "opx", o_async_iov},
    {"atomic", "ATOMIC", "strict", o_atomic},
    {"limit_inject", "LIMIT", "cxi", o_limit_inject},
    {"limit_msg", "LIMIT", "strict", o_limit_msg},
    {"limit_iov", "LIMIT", "cxi", o_limit_iov},
    {"auth_mismatch", "AUTH_KEY", "psm3", o_plain_write, NULL, g_other_key},
    {"auth_missing", "AUTH_KEY", "psm3", NULL, l_auth_missing, NULL, NULL,
     "FABCHECK_AUTH_REQUIRED=1"},
    {"av_map", "AV", "opx", o_av},
    {"ep_state", "EP_STATE", "verbs", NULL, l_ep_state},
    /* correct-only scenarios: no rule of their own */
    {"many", NULL, NULL, o_many},
    {"queue_depth", NULL, NULL, o_queue_depth},
    {"selective", NULL, NULL, o_selective, NULL, NULL, o_selective_opts},
    {"msgs", NULL, NULL, o_msgs, NULL, NULL, NULL, "msg"},
    {"api", NULL, NULL, o_api, NULL, NULL, NULL, "msg"},
};
#define NSCENS (sizeof(scens) / sizeof(scens[0]))

/* The target of a message scenario posts receives; others serve RMA. */
static int run_target(t_ctx_t *t, const scen_t *s)
{
    if (s->local)
        return 0;
    if (s->origin == o_msgs)
        return msg_target(t);
    if (s->origin == o_api)
        return api_target(t);
    if (s->origin == o_ctx_null) {
        /* a receive for the one message (with a context: the target is correct) */
        T_CHECK(t_open(t, NULL));
        T_CHECK(t_reg(t, WIN, ALL_ACCESS, 1));
        T_CHECK(T_POST(t, fi_recv(t->ep, t->buf, WIN, t->desc, FI_ADDR_UNSPEC, t_ctx(t))));
        t_exchange(t);
        t_serve(t);
        t_close(t);
        return 0;
    }
    return target_side(t, s);
}

static int run_origin(t_ctx_t *t, const scen_t *s)
{
    if (s->local)
        return s->local(t);
    return origin_side(t, s);
}

static int run_one(const scen_t *s, int sock_o, int sock_t, pid_t *child)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(sock_o);
        t_ctx_t *t = calloc(1, sizeof(*t));
        t->sock = sock_t;
        t->role = 1;
        exit(run_target(t, s)); /* exit: the registry goes with atexit */
    }
    *child = pid;
    printf("pids %d %d\n", (int)getpid(), (int)pid);
    t_ctx_t *t = calloc(1, sizeof(*t));
    t->sock = sock_o;
    t->role = 0;
    int rc = run_origin(t, s);
    free(t);
    return rc;
}

static const scen_t *find(const char *name)
{
    for (size_t i = 0; i < NSCENS; i++)
        if (strcmp(scens[i].name, name) == 0)
            return &scens[i];
    return NULL;
}

static int hold(void)
{
    t_ctx_t *t = calloc(1, sizeof(*t));
    T_CHECK(t_open(t, NULL));
    T_CHECK(t_reg(t, WIN, ALL_ACCESS, 1));
    printf("PID %d READY\n", (int)getpid());
    fflush(stdout);
    sleep(60);
    t_close(t);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < NSCENS; i++)
            printf("%s %s %s %s\n", scens[i].name, scens[i].rule ? scens[i].rule : "-",
                   scens[i].profile ? scens[i].profile : "-", scens[i].env ? scens[i].env : "-");
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "hold") == 0)
        return hold();
    if (argc < 3 || (strcmp(argv[2], "good") && strcmp(argv[2], "bad"))) {
        fprintf(stderr, "usage: %s <scenario>|all good|bad | list | hold\n", argv[0]);
        return 2;
    }
    bad_g = strcmp(argv[2], "bad") == 0;
    int all = strcmp(argv[1], "all") == 0;
    if (all && bad_g) {
        fprintf(stderr, "%s: 'all' runs the correct twins only\n", argv[0]);
        return 2;
    }
    int failures = 0;
    for (size_t i = 0; i < NSCENS; i++) {
        const scen_t *s = all ? &scens[i] : find(argv[1]);
        if (s == NULL) {
            fprintf(stderr, "%s: no scenario '%s' (try list)\n", argv[0], argv[1]);
            return 2;
        }
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            return 3;
        pid_t child;
        printf("== %s (%s)\n", s->name, bad_g ? "bad" : "good");
        int rc = run_one(s, sv[0], sv[1], &child);
        close(sv[0]);
        close(sv[1]);
        int st = 0;
        waitpid(child, &st, 0);
        int trc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (rc != 0 || trc != 0) {
            printf("== %s: FAIL (origin %d, target %d)\n", s->name, rc, trc);
            failures++;
        } else {
            printf("== %s: ok\n", s->name);
        }
        if (!all)
            break;
    }
    return failures ? 1 : 0;
}
