// SPDX-License-Identifier: BSD-3-Clause
/*
 * Operations in flight and their completions. Every operation reaches the
 * real provider with a context of ours (fc_op_t), and every real completion
 * lands on the endpoint's private CQ; from it we make what the app sees:
 * its CQ entries (with its context, only where it asked for one), counter
 * increments and error entries. That is where FI_CONTEXT space is checked
 * (scribbled at post, verified at completion) and FI_ASYNC_IOV vectors are
 * compared with their copies.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fc.h"

static uint64_t op_seq;

/* In-flight app contexts, bucketed by 64-byte granule. */
#define CTX_BUCKETS 4096
static fc_op_t *ctx_tab[CTX_BUCKETS];

static size_t ctx_bucket(uintptr_t a)
{
    return (size_t)(a >> 6) & (CTX_BUCKETS - 1);
}

static void ctx_insert(fc_op_t *op)
{
    size_t b = ctx_bucket((uintptr_t)op->app_ctx);
    op->hnext = ctx_tab[b];
    ctx_tab[b] = op;
}

static void ctx_remove(fc_op_t *op);
static void ctx_remove_all(fc_op_t *op)
{
    ctx_remove(op);
    for (int i = 0; i < op->nsnap; i++)
        free(op->snap[i].copy);
    op->nsnap = 0;
}

static void ctx_remove(fc_op_t *op)
{
    for (fc_op_t **pp = &ctx_tab[ctx_bucket((uintptr_t)op->app_ctx)]; *pp; pp = &(*pp)->hnext) {
        if (*pp == op) {
            *pp = op->hnext;
            return;
        }
    }
}

/* An in-flight op whose context space overlaps [a, a+len). */
static fc_op_t *ctx_overlap(uintptr_t a, size_t len)
{
    for (int d = -1; d <= 1; d++) {
        for (fc_op_t *o = ctx_tab[ctx_bucket(a + (uintptr_t)((intptr_t)d * 64))]; o;
             o = o->hnext) {
            uintptr_t b = (uintptr_t)o->app_ctx;
            if (a < b + o->ctx_size && b < a + len)
                return o;
        }
    }
    return NULL;
}

fc_op_t *fc_op_new(fc_ep_t *ep, enum fc_op_kind kind, int is_tx)
{
    fc_op_t *op = calloc(1, sizeof(*op));
    if (op == NULL)
        return NULL;
    op->magic = FC_OP_MAGIC;
    op->kind = kind;
    op->ep = ep;
    op->is_tx = is_tx;
    op->seq = ++op_seq;
    op->next = ep->ops;
    if (ep->ops)
        ep->ops->prev = op;
    ep->ops = op;
    if (is_tx)
        ep->tx_inflight++;
    else
        ep->rx_inflight++;
    return op;
}

void fc_op_free(fc_op_t *op)
{
    fc_ep_t *ep = op->ep;
    if (op->prev)
        op->prev->next = op->next;
    else
        ep->ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    if (op->is_tx)
        ep->tx_inflight--;
    else
        ep->rx_inflight--;
    if (op->ctx_size)
        ctx_remove(op);
    for (int i = 0; i < op->nsnap; i++)
        free(op->snap[i].copy);
    free(op->bounce);
    op->magic = 0;
    free(op);
}

static void pattern(const fc_op_t *op, uint64_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] = 0xfabc0de000000000ull ^ (op->seq * 0x9E3779B97F4A7C15ull) ^ (i * 0x1111);
}

int fc_op_ctx_begin(fc_op_t *op, void *ctx, int generates_completion)
{
    fc_domain_t *dom = op->ep->dom;
    op->app_ctx = ctx;
    size_t need = (dom->mode & FI_CONTEXT2) ? sizeof(struct fi_context2)
                  : (dom->mode & FI_CONTEXT) ? sizeof(struct fi_context) : 0;
    /* fi_getinfo.3: "If an operation does not generate a completion ...
     * then the context parameter is ignored by the fabric provider." */
    if (need == 0 || (!generates_completion && !dom->prof->ctx_all_ops))
        return 0;
    /* fi_psm3.7: "any request belonging to these two categories [FI_TAGGED
     * and FI_MSG] that generates a completion must pass ... fi_context" */
    if (dom->prof->mode_msg_only && op->kind != FC_OP_SEND && op->kind != FC_OP_RECV &&
        op->kind != FC_OP_TSEND && op->kind != FC_OP_TRECV)
        return 0;
    const char *mname = (dom->mode & FI_CONTEXT2) ? "FI_CONTEXT2" : "FI_CONTEXT";
    if (ctx == NULL) {
        fc_violation(FC_RULE_CONTEXT,
                     "%s: NULL context, and %s requires %s (%zu bytes the provider owns until "
                     "the operation completes)", op->what, dom->prof->prov_name, mname, need);
        return -FI_EINVAL;
    }
    fc_op_t *o = ctx_overlap((uintptr_t)ctx, need);
    if (o) {
        fc_violation(FC_RULE_CONTEXT,
                     "%s: context %p overlaps the %s space of an operation still in flight (%s, "
                     "context %p)", op->what, ctx, mname, o->what, o->app_ctx);
        return -FI_EINVAL;
    }
    uint64_t pat[8];
    pattern(op, pat, need / 8);
    if (fc_mem_write(ctx, pat, need) != 0) {
        fc_violation(FC_RULE_CONTEXT,
                     "%s: context %p is not %zu bytes of writable memory (an integer cast to a "
                     "pointer?), and %s writes its own state there (%s)",
                     op->what, ctx, need, dom->prof->prov_name, mname);
        return -FI_EINVAL;
    }
    op->ctx_size = need;
    ctx_insert(op);
    return 0;
}

void fc_op_snap(fc_op_t *op, const void *ptr, size_t count, size_t elem)
{
    if (!(op->ep->dom->mode & FI_ASYNC_IOV) || count <= 1 || ptr == NULL ||
        op->nsnap == FC_MAX_SNAP)
        return;
    size_t len = count * elem;
    void *copy = malloc(len);
    if (copy == NULL || fc_mem_read(copy, ptr, len) != 0) {
        free(copy);
        return;
    }
    op->snap[op->nsnap].ptr = ptr;
    op->snap[op->nsnap].len = len;
    op->snap[op->nsnap].copy = copy;
    op->nsnap++;
}

/*
 * The checks due when an operation completes, either way. Nonzero when the
 * app broke one: the provider's own state was in that memory, so the
 * operation completes in error (FI_EIO) where it would have succeeded.
 */
static int verify(fc_op_t *op)
{
    int broken = 0;
    if (op->ctx_size) {
        uint64_t want[8], have[8];
        pattern(op, want, op->ctx_size / 8);
        if (fc_mem_read(have, op->app_ctx, op->ctx_size) != 0) {
            fc_violation(FC_RULE_CONTEXT, "%s: context %p was unmapped before the operation "
                         "completed", op->what, op->app_ctx);
            broken = 1;
        } else {
            for (size_t i = 0; i < op->ctx_size / 8; i++) {
                if (have[i] != want[i]) {
                    fc_violation(FC_RULE_CONTEXT,
                                 "%s: the app wrote into context %p (byte %zu) while the "
                                 "operation was in flight; the provider owns that space "
                                 "until completion",
                                 op->what, op->app_ctx, i * 8);
                    broken = 1;
                    break;
                }
            }
        }
    }
    for (int i = 0; i < op->nsnap; i++) {
        void *now = malloc(op->snap[i].len);
        int bad = now == NULL ? 0
                  : fc_mem_read(now, op->snap[i].ptr, op->snap[i].len) != 0 ||
                        memcmp(now, op->snap[i].copy, op->snap[i].len) != 0;
        free(now);
        broken |= bad;
        if (bad)
            fc_violation(FC_RULE_ASYNC_IOV,
                         "%s: its IO vector at %p (%zu bytes) changed before the operation "
                         "completed; under FI_ASYNC_IOV the provider reads it until then "
                         "(a vector on the stack of a function that returned?)",
                         op->what, op->snap[i].ptr, op->snap[i].len);
    }
    if (broken) { /* checked once */
        op->ctx_size = 0;
        ctx_remove_all(op);
    }
    return broken;
}

static fc_cntr_t *op_cntr(const fc_op_t *op)
{
    fc_ep_t *ep = op->ep;
    switch (op->kind) {
    case FC_OP_WRITE: case FC_OP_ATOMIC: return ep->c_write;
    case FC_OP_READ: case FC_OP_FETCH: case FC_OP_CSWAP: return ep->c_read;
    case FC_OP_SEND: case FC_OP_TSEND: return ep->c_send;
    default: return ep->c_recv;
    }
}

static fc_cq_t *op_cq(const fc_op_t *op)
{
    return op->is_tx ? op->ep->tx_cq : op->ep->rx_cq;
}

void fc_op_done(fc_op_t *op, const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
    fc_ep_t *ep = op->ep;
    int is_rx = !op->is_tx;
    int final = !op->multi || (e->flags & FI_MULTI_RECV);
    int is_msg = is_rx && (e->flags & FI_RECV);
    if (final && verify(op)) {
        fc_op_fail(op, FI_EIO, FC_PROV_ERRNO, 0);
        return;
    }
    fc_cntr_t *c = op_cntr(op);
    if (c && (!op->multi || is_msg))
        c->val++;
    fc_cq_t *cq = op_cq(op);
    if (cq && op->report && (!op->multi || is_msg || (e->flags & FI_MULTI_RECV))) {
        fc_cqe_t q = {0};
        q.e.op_context = op->app_ctx;
        if (is_rx) {
            q.e.flags = e->flags;
            q.e.len = e->len;
            q.e.buf = e->buf;
            q.e.data = e->data;
            q.e.tag = e->tag;
            q.src = fc_av_app_addr(ep->av, src);
        } else {
            q.e.flags = op->cq_flags;
            q.e.len = op->len;
            q.src = FI_ADDR_NOTAVAIL;
        }
        fc_cq_push(cq, &q);
    }
    if (final)
        fc_op_free(op);
}

void fc_op_fail(fc_op_t *op, int err, int prov_errno, size_t olen)
{
    verify(op);
    fc_cntr_t *c = op_cntr(op);
    if (c)
        c->err++;
    fc_cq_t *cq = op_cq(op);
    if (cq) {
        fc_cqe_t q = {0};
        q.is_err = 1;
        q.src = FI_ADDR_NOTAVAIL;
        q.err.op_context = op->app_ctx;
        q.err.flags = op->cq_flags;
        q.err.len = op->len;
        q.err.buf = op->buf;
        q.err.data = op->data;
        q.err.tag = op->tag;
        q.err.olen = olen;
        q.err.err = err ? err : FI_EIO;
        q.err.prov_errno = prov_errno;
        fc_cq_push(cq, &q);
    }
    fc_op_free(op);
}

void fc_op_fail_now(fc_op_t *op, int err)
{
    fc_op_fail(op, err, FC_PROV_ERRNO, 0);
}

void fc_ep_progress(fc_ep_t *ep)
{
    if (ep->pcq == NULL || !ep->enabled)
        return;
    enum { N = 16 };
    struct fi_cq_tagged_entry ent[N];
    fi_addr_t src[N];
    for (;;) {
        ssize_t n = ep->has_source ? fi_cq_readfrom(ep->pcq, ent, N, src)
                                   : fi_cq_read(ep->pcq, ent, N);
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++) {
                if (ent[i].op_context == NULL)
                    continue;
                fc_op_t *op = container_of(ent[i].op_context, fc_op_t, real_ctx);
                if (op->magic != FC_OP_MAGIC) {
                    fc_note("a completion of the provider underneath carries no fabcheck op");
                    continue;
                }
                fc_op_done(op, &ent[i], ep->has_source ? src[i] : FI_ADDR_NOTAVAIL);
            }
            if (n == N)
                continue;
            break;
        }
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(ep->pcq, &err, 0) != 1)
                break;
            if (err.op_context) {
                fc_op_t *op = container_of(err.op_context, fc_op_t, real_ctx);
                if (op->magic == FC_OP_MAGIC)
                    fc_op_fail(op, err.err, err.prov_errno, err.olen);
            }
            continue;
        }
        break;
    }
}

void fc_progress_all_of(struct fc_ep **eps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fc_ep_progress(eps[i]);
}

int fc_cq_push(fc_cq_t *cq, const fc_cqe_t *e)
{
    if (cq->count == cq->cap) {
        size_t nc = cq->cap ? 2 * cq->cap : 64;
        fc_cqe_t *nq = malloc(nc * sizeof(*nq));
        if (nq == NULL)
            return -FI_ENOMEM;
        for (size_t i = 0; i < cq->count; i++)
            nq[i] = cq->q[(cq->head + i) % cq->cap];
        free(cq->q);
        cq->q = nq;
        cq->cap = nc;
        cq->head = 0;
    }
    cq->q[(cq->head + cq->count) % cq->cap] = *e;
    cq->count++;
    return 0;
}

/* ---- FI_PROGRESS_AUTO ------------------------------------------------ */

/*
 * The provider underneath runs with manual progress; a domain the app
 * opened with FI_PROGRESS_AUTO gets a thread that drives its endpoints
 * every millisecond, so that an app that relies on auto progress (and the
 * profile offers it) is served as the hardware would serve it.
 */
static pthread_t auto_thread;
static int auto_running, auto_domains;

static void *auto_loop(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(1000);
        FC_LOCK();
        if (auto_domains == 0) {
            auto_running = 0;
            FC_UNLOCK();
            return NULL;
        }
        for (fc_ep_t *ep = fc_eps_g; ep; ep = ep->next_all)
            if (ep->dom->auto_progress)
                fc_ep_progress(ep);
        FC_UNLOCK();
    }
}

void fc_auto_progress_start(fc_domain_t *dom)
{
    dom->auto_progress = 1;
    auto_domains++;
    if (!auto_running && pthread_create(&auto_thread, NULL, auto_loop, NULL) == 0) {
        pthread_detach(auto_thread);
        auto_running = 1;
    }
}

void fc_auto_progress_stop(fc_domain_t *dom)
{
    if (dom->auto_progress) {
        dom->auto_progress = 0;
        auto_domains--;
    }
}
