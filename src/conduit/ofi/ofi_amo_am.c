// SPDX-License-Identifier: BSD-3-Clause
/*
 * Atomics by active message, for a provider with no usable atomics (net
 * offers none; SHMEM_AMO_NATIVE=none forces this path for tests), and for
 * heap words of PEs not mapped here while the same-host direct path makes
 * every heap AMO a CPU atomic (cdt_amo_by_target).
 *
 * Every PE opens a message endpoint (in the PE's domain where the provider
 * allows) and publishes its name before cdt_connect's fence. An AMO on
 * another PE is a request message; the target applies it with a CPU atomic
 * in its progress (cdt_progress) and answers with the old value. An AMO on
 * this PE applies the same CPU atomic at once. So every AMO on a PE's
 * memory is a CPU atomic by that PE: atomicity holds between all PEs.
 *
 * Completion is counted like the provider's: the issuing context's issued
 * count goes up at issue and its counter (fi_cntr_add) when the answer is
 * in, so cdt_quiet waits for these AMOs too, fetched values included.
 * Slow path by design: one lock, allocation when pools run dry.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conduit/ofi/ofi.h"
#include "conduit/ofi/ofi_msg.h"
#include "core/log.h"
#include "runtime/rt.h"

#define AM_KEY "ofishmem.amo"
#define AM_SLOTS 1024           /* requests in flight from this PE */
#define AM_RBUFS 2              /* multi-recv buffers */
#define AM_RBUF_LEN (64 * 1024)
#define AM_RESP_CHUNK 256       /* answers in flight, grown by chunks */

enum { AM_REQ = 0x414d5131, AM_RESP = 0x414d5232 }; /* "AMQ1", "AMR2" */

typedef struct {
    uint32_t kind;
    uint32_t origin;   /* PE that asked */
    uint32_t slot;     /* its request slot */
    uint8_t type, op, seg, pad;
    uint64_t off;
    uint64_t operand;  /* answer: the old value */
    uint64_t cond;
} am_msg_t;

typedef struct am_slot {
    am_msg_t msg;      /* the request: valid until it is sent */
    cdt_ctx_t *ctx;
    void *result;      /* where the old value goes (NULL: nowhere) */
    volatile int *done_p;
    int fetching, sent, answered;
    int pe;            /* the target */
    struct am_slot *next_free;
} am_slot_t;

typedef struct am_resp {
    am_msg_t msg;
    int pe;
    struct am_resp *next; /* free list, or the queue of answers not yet sent */
} am_resp_t;

typedef struct {
    uint32_t len;
    char name[CDT_ADDR_MAX];
} am_card_t;

static struct {
    cdt_msg_ep_t *ep;
    pthread_mutex_t lock;
    cdt_peer_t *peer;          /* per PE, resolved on first use */
    am_slot_t *slots, *free_slots;
    am_resp_t *free_resp, *unsent, **unsent_tail;
    char *rbuf[AM_RBUFS];
    void **chunks;             /* answer buffers, freed at fini */
    size_t nchunks;
} am_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t am_size(int t)
{
    return t == CDT_AMO_INT32 || t == CDT_AMO_UINT32 || t == CDT_AMO_FLOAT ? 4 : 8;
}

/* The operation on local memory, as a CPU atomic; returns the old value. */
#define AM_APPLY_INT(UT, p, op, v, c)                                          \
    do {                                                                       \
        UT *p_ = (UT *)(p), e_ = (UT)(c);                                      \
        switch (op) {                                                          \
        case CDT_AMO_ADD:                                                      \
        case CDT_AMO_FETCH_ADD: return __atomic_fetch_add(p_, (UT)(v), __ATOMIC_SEQ_CST); \
        case CDT_AMO_AND:                                                      \
        case CDT_AMO_FETCH_AND: return __atomic_fetch_and(p_, (UT)(v), __ATOMIC_SEQ_CST); \
        case CDT_AMO_OR:                                                       \
        case CDT_AMO_FETCH_OR: return __atomic_fetch_or(p_, (UT)(v), __ATOMIC_SEQ_CST); \
        case CDT_AMO_XOR:                                                      \
        case CDT_AMO_FETCH_XOR: return __atomic_fetch_xor(p_, (UT)(v), __ATOMIC_SEQ_CST); \
        case CDT_AMO_SET:                                                      \
        case CDT_AMO_SWAP: return __atomic_exchange_n(p_, (UT)(v), __ATOMIC_SEQ_CST); \
        case CDT_AMO_FETCH: return __atomic_load_n(p_, __ATOMIC_SEQ_CST);     \
        case CDT_AMO_CSWAP:                                                    \
            __atomic_compare_exchange_n(p_, &e_, (UT)(v), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            return e_;                                                         \
        default: return 0;                                                     \
        }                                                                      \
    } while (0)

/* Floating-point add by compare-and-swap on the bits; the rest as integers. */
#define AM_FADD(UT, FT, p, v)                                                  \
    do {                                                                       \
        UT old_ = __atomic_load_n((UT *)(p), __ATOMIC_SEQ_CST), new_;          \
        do {                                                                   \
            FT a_, b_;                                                         \
            UT vb_ = (UT)(v);                                                  \
            memcpy(&a_, &old_, sizeof(a_));                                    \
            memcpy(&b_, &vb_, sizeof(b_));                                     \
            a_ += b_;                                                          \
            memcpy(&new_, &a_, sizeof(new_));                                  \
        } while (!__atomic_compare_exchange_n((UT *)(p), &old_, new_, 0, __ATOMIC_SEQ_CST, \
                                              __ATOMIC_SEQ_CST));              \
        return old_;                                                           \
    } while (0)

static uint64_t am_apply(void *p, int t, int op, uint64_t v, uint64_t c)
{
    int fadd = op == CDT_AMO_ADD || op == CDT_AMO_FETCH_ADD;
    if (t == CDT_AMO_FLOAT && fadd)
        AM_FADD(uint32_t, float, p, v);
    if (t == CDT_AMO_DOUBLE && fadd)
        AM_FADD(uint64_t, double, p, v);
    if (am_size(t) == 4)
        AM_APPLY_INT(uint32_t, p, op, v, c);
    AM_APPLY_INT(uint64_t, p, op, v, c);
    return 0;
}

/* Local address of (seg, off), or NULL when it is not inside the segment. */
static void *am_local(int seg, uint64_t off, size_t size)
{
    if ((unsigned)seg >= SHM_NSEGS || off > shm_seg_g[seg].len ||
        size > shm_seg_g[seg].len - off)
        return NULL;
    return (void *)(shm_seg_g[seg].base + off);
}

/* ---- setup ----------------------------------------------------------- */

int cdt_ofi_amo_am_open(void)
{
    cdt_msg_cfg_t cfg = {.provider = cdt_ofi_g.prov_name,
                         .thread_safe = cdt_ofi_g.cfg.thread_safe,
                         .wait_fd = cdt_ofi_g.prog_mode == OFI_PROG_WAIT,
                         .job_auth = 1};
    shm_status_t st = cdt_msg_open(&cfg, &am_g.ep);
    if (st != SHM_OK) {
        SHM_WARN(AMO, "no message endpoint on %s for atomics by active message: %s",
                 cdt_ofi_g.prov_name, shm_status_str(st));
        return -1;
    }
    size_t n = (size_t)cdt_ofi_g.cfg.size;
    am_g.peer = malloc(n * sizeof(*am_g.peer));
    am_g.slots = calloc(AM_SLOTS, sizeof(*am_g.slots));
    if (am_g.peer == NULL || am_g.slots == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++)
        am_g.peer[i] = CDT_PEER_NONE;
    for (int i = AM_SLOTS - 1; i >= 0; i--) {
        am_g.slots[i].next_free = am_g.free_slots;
        am_g.free_slots = &am_g.slots[i];
    }
    am_g.unsent_tail = &am_g.unsent;
    if (cdt_msg_set_min_multi_recv(am_g.ep, 4 * sizeof(am_msg_t)) != SHM_OK)
        goto fail;
    for (int i = 0; i < AM_RBUFS; i++) {
        if ((am_g.rbuf[i] = malloc(AM_RBUF_LEN)) == NULL ||
            cdt_msg_post_recv(am_g.ep, am_g.rbuf[i], AM_RBUF_LEN, 1, am_g.rbuf[i]) != SHM_OK)
            goto fail;
    }
    /* Published now, exchanged by cdt_connect's fence. */
    am_card_t card = {0};
    size_t len = sizeof(card.name);
    if (cdt_msg_name(am_g.ep, card.name, &len) != SHM_OK)
        goto fail;
    card.len = (uint32_t)len;
    if (shm_rt_put(AM_KEY, &card, sizeof(card)) != SHM_OK)
        goto fail;
    SHM_INFO(AMO, "atomics by active message on %s (%s domain)", cdt_ofi_g.prov_name,
             cdt_msg_in_pe_domain(am_g.ep) ? "the PE's" : "own");
    return 0;
fail:
    SHM_WARN(AMO, "cannot set up atomics by active message on %s", cdt_ofi_g.prov_name);
    cdt_ofi_amo_am_fini();
    return -1;
}

void cdt_ofi_amo_am_fini(void)
{
    if (am_g.ep)
        cdt_msg_close(am_g.ep);
    for (int i = 0; i < AM_RBUFS; i++)
        free(am_g.rbuf[i]);
    for (size_t i = 0; i < am_g.nchunks; i++)
        free(am_g.chunks[i]);
    free(am_g.chunks);
    free(am_g.slots);
    free(am_g.peer);
    pthread_mutex_t lock = am_g.lock;
    memset(&am_g, 0, sizeof(am_g));
    am_g.lock = lock;
}

/* ---- both sides (lock held) ----------------------------------------- */

static cdt_peer_t am_peer(int pe)
{
    if (am_g.peer[pe] != CDT_PEER_NONE)
        return am_g.peer[pe];
    am_card_t card;
    shm_status_t st = shm_rt_get(pe, AM_KEY, &card, sizeof(card));
    if (st == SHM_OK)
        st = cdt_msg_insert(am_g.ep, card.name, card.len, &am_g.peer[pe]);
    if (st != SHM_OK) {
        char host[64];
        cdt_ofi_peer_host(pe, host, sizeof(host));
        cdt_ofi_peer_fatal(pe, 1, "atomics by active message: cannot reach PE %d (host %s) on %s: %s",
                           pe, host, cdt_ofi_g.prov_name, shm_status_str(st));
    }
    return am_g.peer[pe];
}

static am_resp_t *am_resp_get(void)
{
    if (am_g.free_resp == NULL) {
        am_resp_t *c = calloc(AM_RESP_CHUNK, sizeof(*c));
        void **cs = realloc(am_g.chunks, (am_g.nchunks + 1) * sizeof(*cs));
        if (c == NULL || cs == NULL)
            shm_fatal("atomics by active message: out of memory for answers");
        am_g.chunks = cs;
        am_g.chunks[am_g.nchunks++] = c;
        for (int i = 0; i < AM_RESP_CHUNK; i++) {
            c[i].next = am_g.free_resp;
            am_g.free_resp = &c[i];
        }
    }
    am_resp_t *r = am_g.free_resp;
    am_g.free_resp = r->next;
    r->next = NULL;
    return r;
}

static int am_is_slot(void *ctx)
{
    uintptr_t p = (uintptr_t)ctx, b = (uintptr_t)am_g.slots;
    return p >= b && p < b + AM_SLOTS * sizeof(am_slot_t);
}

static void am_slot_release(am_slot_t *s)
{
    if (s->sent && s->answered) {
        s->next_free = am_g.free_slots;
        am_g.free_slots = s;
    }
}

/* Sends the queued answers until the provider is busy. */
static void am_flush_answers(void)
{
    while (am_g.unsent) {
        am_resp_t *r = am_g.unsent;
        shm_status_t st =
            cdt_msg_send(am_g.ep, am_peer(r->pe), &r->msg, sizeof(r->msg), NULL, 0, r);
        if (st == SHM_ERR_AGAIN)
            return;
        if (st != SHM_OK) {
            char host[64];
            cdt_ofi_peer_host(r->pe, host, sizeof(host));
            cdt_ofi_peer_fatal(r->pe, 1,
                               "atomics by active message: answer to PE %d (host %s) failed on "
                               "%s: %s", r->pe, host, cdt_ofi_g.prov_name, shm_status_str(st));
        }
        am_g.unsent = r->next;
        if (am_g.unsent == NULL)
            am_g.unsent_tail = &am_g.unsent;
    }
}

static void am_handle(const am_msg_t *m, size_t len)
{
    if (len < sizeof(*m))
        shm_fatal("atomics by active message: short message (%zu bytes)", len);
    if (m->kind == AM_REQ) {
        size_t size = am_size(m->type);
        void *p = am_local(m->seg, m->off, size);
        if (p == NULL)
            shm_fatal("atomic from PE %u: offset %llu of segment %u is outside this PE's memory",
                      m->origin, (unsigned long long)m->off, m->seg);
        am_resp_t *r = am_resp_get();
        r->msg = (am_msg_t){.kind = AM_RESP, .origin = (uint32_t)cdt_ofi_g.cfg.rank,
                            .slot = m->slot};
        r->msg.operand = am_apply(p, m->type, m->op, m->operand, m->cond);
        r->pe = (int)m->origin;
        *am_g.unsent_tail = r;
        am_g.unsent_tail = &r->next;
    } else if (m->kind == AM_RESP && m->slot < AM_SLOTS) {
        am_slot_t *s = &am_g.slots[m->slot];
        if (s->result)
            memcpy(s->result, &m->operand, am_size(s->msg.type));
        __atomic_thread_fence(__ATOMIC_RELEASE);
        fi_cntr_add(s->fetching ? s->ctx->get_cntr : s->ctx->put_cntr, 1);
        if (s->done_p)
            __atomic_store_n(s->done_p, 1, __ATOMIC_RELEASE);
        s->answered = 1;
        am_slot_release(s);
    } else {
        shm_fatal("atomics by active message: unknown message 0x%x", m->kind);
    }
}

/* A completion error: a request or an answer that could not be delivered. */
__attribute__((noreturn, cold)) static void am_event_error(const cdt_msg_event_t *e)
{
    int pe = -1;
    const char *what = "receive";
    if (!e->on_recv && e->ctx != NULL && am_is_slot(e->ctx)) {
        pe = ((am_slot_t *)e->ctx)->pe;
        what = "request";
    } else if (!e->on_recv && e->ctx != NULL) {
        pe = ((am_resp_t *)e->ctx)->pe;
        what = "answer";
    }
    char host[64];
    cdt_ofi_peer_host(pe, host, sizeof(host));
    cdt_ofi_peer_fatal(pe, 1, "atomic %s (by active message) to PE %d (host %s) failed on %s: %s "
                              "(provider: %s)",
                       what, pe, host, cdt_ofi_g.prov_name, shm_status_str(e->err),
                       e->prov_err ? e->prov_err : "-");
}

unsigned cdt_ofi_am_events_g;

static void am_poll_locked(void)
{
    cdt_msg_event_t ev[16];
    int n;
    am_flush_answers();
    while ((n = cdt_msg_poll(am_g.ep, ev, 16)) > 0) {
        __atomic_store_n(&cdt_ofi_am_events_g, cdt_ofi_am_events_g + (unsigned)n, __ATOMIC_RELAXED);
        for (int i = 0; i < n; i++) {
            cdt_msg_event_t *e = &ev[i];
            if (e->kind == CDT_MSG_RECV) {
                if (e->len > 0)
                    am_handle(e->buf, e->len);
                if (e->released && cdt_msg_post_recv(am_g.ep, e->ctx, AM_RBUF_LEN, 1, e->ctx) !=
                                       SHM_OK)
                    shm_fatal("atomics by active message: cannot repost a receive buffer");
            } else if (e->kind == CDT_MSG_SENT) {
                if (am_is_slot(e->ctx)) {
                    am_slot_t *s = e->ctx;
                    s->sent = 1;
                    am_slot_release(s);
                } else {
                    am_resp_t *r = e->ctx;
                    r->next = am_g.free_resp;
                    am_g.free_resp = r;
                }
            } else {
                am_event_error(e);
            }
        }
        am_flush_answers();
    }
}

struct fid_cq *cdt_ofi_amo_am_wait_cq(struct fid_fabric **fabric_p)
{
    if (am_g.ep == NULL || !am_g.ep->wait_fd)
        return NULL;
    *fabric_p = am_g.ep->dom->fabric;
    return am_g.ep->ctx.cq;
}

/* Called by cdt_progress: serve requests, take answers. */
void cdt_ofi_amo_am_progress(void)
{
    if (am_g.ep == NULL || pthread_mutex_trylock(&am_g.lock) != 0)
        return; /* another thread is at it */
    am_poll_locked();
    pthread_mutex_unlock(&am_g.lock);
}

/* ---- origin --------------------------------------------------------- */

static void am_issue(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                     const void *operand, const void *cond, void *result, int pe, int blocking);

void cdt_ofi_amo_am(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                    const void *operand, const void *cond, void *result, int pe, int blocking)
{
    if (cdt_ofi_amo_g.path[t][op] != CDT_AMO_PATH_AM || am_g.ep == NULL)
        shm_fatal("atomic %s on %s to PE %d: provider %s does not offer it and it was not "
                  "emulated (internal error)",
                  cdt_amo_op_name(op), cdt_amo_type_name(t), pe, cdt_ofi_g.prov_name);
    am_issue(ctx, t, op, seg, off, operand, cond, result, pe, blocking);
}

/* A heap word of a PE not mapped here, while heap words take CPU atomics only. */
void cdt_amo_by_target(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                       const void *operand, const void *cond, void *result, int pe, int blocking)
{
    if (am_g.ep == NULL)
        shm_fatal("atomic %s on %s to PE %d: no active-message endpoint for heap atomics "
                  "(internal error)",
                  cdt_amo_op_name(op), cdt_amo_type_name(t), pe);
    am_issue(ctx, t, op, seg, off, operand, cond, result, pe, blocking);
}

static void am_issue(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                     const void *operand, const void *cond, void *result, int pe, int blocking)
{
    size_t size = am_size(t);
    uint64_t v = 0, c = 0;
    if (operand)
        memcpy(&v, operand, size);
    if (cond)
        memcpy(&c, cond, size);
    if (pe == cdt_ofi_g.cfg.rank) {
        void *p = am_local(seg, off, size);
        if (p == NULL)
            shm_fatal("atomic on this PE: offset %zu of segment %d is outside its memory", off,
                      seg);
        uint64_t old = am_apply(p, t, op, v, c);
        if (result)
            memcpy(result, &old, size);
        /* A loop of AMOs on ourselves (a test_lock spin) must still serve
         * the others, as a round trip through the provider would. */
        cdt_progress();
        return;
    }
    int fetching = result != NULL;
    volatile int done = 0;
    pthread_mutex_lock(&am_g.lock);
    cdt_ofi_stall_t stall = {0};
    while (am_g.free_slots == NULL) { /* slots come back as answers arrive */
        am_poll_locked();
        cdt_ofi_stall_check(&stall, 0, ctx, "atomic (by active message)", -1);
    }
    am_slot_t *s = am_g.free_slots;
    am_g.free_slots = s->next_free;
    s->msg = (am_msg_t){.kind = AM_REQ, .origin = (uint32_t)cdt_ofi_g.cfg.rank,
                        .slot = (uint32_t)(s - am_g.slots), .type = (uint8_t)t,
                        .op = (uint8_t)op, .seg = (uint8_t)seg, .off = off, .operand = v,
                        .cond = c};
    s->ctx = ctx;
    s->result = result;
    s->fetching = fetching;
    s->done_p = blocking ? &done : NULL;
    s->sent = s->answered = 0;
    s->pe = pe;
    cdt_ofi_count(ctx, fetching ? &ctx->get_issued : &ctx->put_issued, 1);
    cdt_peer_t peer = am_peer(pe);
    shm_status_t st;
    while ((st = cdt_msg_send(am_g.ep, peer, &s->msg, sizeof(s->msg), NULL, 0, s)) ==
           SHM_ERR_AGAIN) {
        am_poll_locked();
        cdt_ofi_issued(ctx, pe);
        cdt_ofi_stall_check(&stall, 0, ctx, "atomic (by active message)", pe);
    }
    if (st != SHM_OK) {
        char host[64];
        cdt_ofi_peer_host(pe, host, sizeof(host));
        cdt_ofi_peer_fatal(pe, 1, "atomic %s on %s to PE %d (host %s) failed on provider %s: %s",
                           cdt_amo_op_name(op), cdt_amo_type_name(t), pe, host,
                           cdt_ofi_g.prov_name, shm_status_str(st));
    }
    pthread_mutex_unlock(&am_g.lock);
    cdt_ofi_issued(ctx, pe);
    stall = (cdt_ofi_stall_t){0};
    uint64_t t0 = 0;
    if (blocking)
        while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
            cdt_progress();
            cdt_ofi_issued(ctx, pe);
            cdt_ofi_stall_check(&stall, 0, ctx, "atomic (by active message)", pe);
            cdt_ofi_wait_pause(ctx, &t0); /* threads spinning here starved the lock's holder */
        }
}
