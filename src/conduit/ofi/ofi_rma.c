// SPDX-License-Identifier: BSD-3-Clause
/*
 * Slow paths of the data path: bounce buffers, fragmentation, EAGAIN
 * retries, waiting on counters (errors are reported by ofi_fault.c).
 */
#include <sched.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "core/log.h"
#include "runtime/rt.h"
#include "conduit/ofi/ofi_amo_inline.h"
#include "conduit/ofi/ofi_msg.h"

/* Drive this context's endpoint (and the default one, for incoming traffic). */
static void ctx_progress(cdt_ctx_t *ctx)
{
    /* One CQ read per turn for the default context: on tcp each is a poll(). */
    if (ctx != cdt_ofi_g.dflt && shm_unlikely(fi_cq_read(ctx->cq, NULL, 0) == -FI_EAVAIL))
        cdt_ofi_report_cq_error(ctx, "operation");
    cdt_progress();
}

/* Issue an operation, retrying on -FI_EAGAIN with progress in between. */
#define CDT_RETRY(ctx, call, opname, pe)                                       \
    do {                                                                       \
        ssize_t rc_;                                                           \
        cdt_ofi_stall_t stall_ = {0};                                          \
        while ((rc_ = (call)) == -FI_EAGAIN) {                                 \
            ctx_progress(ctx);                                                 \
            cdt_ofi_issued(ctx, pe);                                           \
            cdt_ofi_stall_check(&stall_, 0, ctx, opname, pe);                  \
        }                                                                      \
        if (shm_unlikely(rc_ != 0))                                            \
            cdt_ofi_fatal_rc(opname, pe, rc_);                                 \
    } while (0)

void cdt_ofi_inject_retry(cdt_ctx_t *ctx, ssize_t rc, uint64_t raddr, uint64_t key,
                          const void *src, size_t bytes, int pe)
{
    cdt_ofi_stall_t stall = {0};
    while (rc == -FI_EAGAIN) {
        ctx_progress(ctx);
        cdt_ofi_issued(ctx, pe);
        cdt_ofi_stall_check(&stall, 0, ctx, "put", pe);
        rc = fi_inject_write(ctx->ep, src, bytes, cdt_ofi_addr(pe), raddr, key);
    }
    if (rc != 0)
        cdt_ofi_fatal_rc("put", pe, rc);
}

/*
 * Waits until everything counted on cntr so far is complete. The counter
 * is read first and the issued count after it: operations are counted
 * before they are issued (cdt_ofi_count), so a counter that has reached
 * the issued count read after it means every operation issued by then --
 * the caller's included -- is complete. A target read once at entry would
 * not do on a context shared by threads: the counter does not say whose
 * operations completed, and another thread's later one could stand in for
 * ours. So a shared context's waiter waits for all the context's traffic.
 */
/* One of a wait's counters: complete (1) when it has reached the issued
 * count read after it; errors counted on it are reported. */
typedef struct {
    struct fid_cntr *cntr;
    uint64_t *issued, *done, *errs;
    const char *what;
} wait_one_t;

static int cntr_reached(cdt_ctx_t *ctx, const wait_one_t *w, uint64_t *seen)
{
    uint64_t v = fi_cntr_read(w->cntr);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint64_t target = __atomic_load_n(w->issued, __ATOMIC_SEQ_CST);
    *seen += v;
    if (v >= target) {
        /* Shared contexts: keep the largest value any thread saw. */
        uint64_t d = __atomic_load_n(w->done, __ATOMIC_RELAXED);
        while (d < target && !__atomic_compare_exchange_n(w->done, &d, target, 0,
                                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
        return 1;
    }
    uint64_t e = fi_cntr_readerr(w->cntr);
    if (shm_unlikely(e != __atomic_load_n(w->errs, __ATOMIC_RELAXED))) {
        __atomic_store_n(w->errs, e, __ATOMIC_RELAXED);
        cdt_ofi_report_cq_error(ctx, w->what);
    }
    return 0;
}

/*
 * A wait's turn, after its counter reads. fi_cntr_read drives the
 * endpoints bound to the counter (libfabric's util counters, sockets' own),
 * so on the default context -- the endpoint peers address, which
 * cdt_progress drives -- a CQ read each turn is a second pass through the
 * provider for nothing where it is an epoll_wait: tcp;ofi_rxm under a CQ
 * with a wait object (the progress thread's), the answer waiting half a
 * turn longer. There the CQ (error entries) is read every WAIT_CQ_TURNS
 * turns; errors of the waited operations come through the counters' error
 * counts at once (cntr_reached). Measured (osu_put_lat 8 B over
 * tcp;ofi_rxm, progress thread on, medians of 7 alternating rounds): put +
 * quiet 13.90 -> 13.14 us (raw delivery-complete write 10.09); with the
 * thread off (no wait object) no gain (11.43 -> 11.67 us), nor on sockets
 * (bench/results/pq-2026-11-26), which keep a CQ read every turn.
 */
#define WAIT_CQ_TURNS 8

static void wait_turn_progress(cdt_ctx_t *ctx, unsigned turn)
{
    if (ctx != cdt_ofi_g.dflt || !cdt_ofi_g.dflt_wait_fd || turn % WAIT_CQ_TURNS == 0)
        ctx_progress(ctx);
    else if (shm_unlikely(cdt_ofi_amo_g.am_on))
        cdt_ofi_amo_am_progress(); /* atomics by message: others' requests */
}

/* Waits for one or two counters at once (a quiet after a read-back waits
 * for its puts and its reads in one loop, one progress pass per turn). */
static void wait_cntrs(cdt_ctx_t *ctx, const wait_one_t *w, int n)
{
    cdt_ofi_stall_t stall = {0};
    int left = (1 << n) - 1;
    unsigned turn = 0;
    uint64_t t0 = 0;
    __atomic_add_fetch(&cdt_ofi_app_waiting_g, 1, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t seen = 0;
        for (int i = 0; i < n; i++)
            if ((left & (1 << i)) && cntr_reached(ctx, &w[i], &seen))
                left &= ~(1 << i);
        if (left == 0)
            break;
        wait_turn_progress(ctx, ++turn);
        cdt_ofi_kick_pending(ctx);
        cdt_ofi_stall_check(&stall, seen, ctx, w[left & 1 ? 0 : 1].what, -1);
        cdt_ofi_wait_pause(ctx, &t0);
    }
    __atomic_sub_fetch(&cdt_ofi_app_waiting_g, 1, __ATOMIC_RELAXED);
    /* Every read is complete: values that came into slots go out. */
    if (shm_unlikely(ctx->lmr != NULL) && !(ctx->flags & CDT_CTX_SHARED))
        for (int i = 0; i < n; i++)
            if (w[i].cntr == ctx->get_cntr)
                cdt_ofi_lmr_gets_done(ctx);
}

static void wait_cntr(cdt_ctx_t *ctx, struct fid_cntr *cntr, uint64_t *issued, uint64_t *done,
                      uint64_t *errs, const char *what)
{
    wait_one_t w = {cntr, issued, done, errs, what};
    wait_cntrs(ctx, &w, 1);
}

void cdt_ofi_wait_puts(cdt_ctx_t *ctx)
{
    wait_cntr(ctx, ctx->put_cntr, &ctx->put_issued, &ctx->put_done, &ctx->put_err, "put");
}

void cdt_ofi_wait_gets(cdt_ctx_t *ctx)
{
    wait_cntr(ctx, ctx->get_cntr, &ctx->get_issued, &ctx->get_done, &ctx->get_err, "get");
}

void cdt_ofi_wait_gets_for(cdt_ctx_t *ctx, const char *what)
{
    wait_cntr(ctx, ctx->get_cntr, &ctx->get_issued, &ctx->get_done, &ctx->get_err, what);
}

void cdt_ofi_wait_all(cdt_ctx_t *ctx)
{
    wait_one_t w[2] = {
        {ctx->put_cntr, &ctx->put_issued, &ctx->put_done, &ctx->put_err, "put"},
        {ctx->get_cntr, &ctx->get_issued, &ctx->get_done, &ctx->get_err, "get"},
    };
    wait_cntrs(ctx, w, 2);
}

/* A free bounce slot; when all are in flight, drain the context's puts. */
static char *bounce_slot(cdt_ctx_t *ctx)
{
    if (ctx->bounce_next == ctx->bounce_n) {
        cdt_ofi_wait_puts(ctx);
        ctx->bounce_next = 0;
    }
    return ctx->bounce + (size_t)ctx->bounce_next++ * cdt_ofi_fast_g.bounce_size;
}

/*
 * The fragment engine shared by PE puts/gets and RPC bulk transfers: all
 * fragments in flight at once (the provider pipelines them), each counted
 * on the context. Returns 0 or the first -FI_E* that is not -FI_EAGAIN;
 * fragments issued before an error stay counted. Callers decide whether an
 * error ends the job (PE RMA) or fails one request (RPC bulk). Each
 * fragment has a context of its own where the provider owns contexts (the
 * context's ring, or the message endpoint's pool).
 */
ssize_t cdt_ofi_rma_frags(cdt_ctx_t *ctx, int is_get, void *lbuf, uint64_t raddr, uint64_t key,
                          size_t bytes, fi_addr_t addr, const cdt_ofi_xfer_t *x)
{
    char *p = lbuf;
    /* A process that is not a PE (RPC client or server) has no fast table. */
    size_t frag = cdt_ofi_fast_g.frag_size ? cdt_ofi_fast_g.frag_size
                                           : cdt_plan_frag_size(0, 0);
    if (x->max_frag && frag > x->max_frag)
        frag = x->max_frag;
    uint64_t *issued = is_get ? &ctx->get_issued : &ctx->put_issued;
    int pe = x->mep ? -1 : x->pe;
    for (size_t done = 0; done < bytes; done += frag) {
        size_t len = bytes - done < frag ? bytes - done : frag;
        ssize_t rc;
        void *oc;
        if (x->mep) {
            cdt_ofi_count(ctx, issued, 1); /* before the issue: see cdt_ofi_count */
            oc = cdt_msg_opctx_get(x->mep, x->user);
            cdt_msg_bulk_ref(x->mep, x->mreg, oc);
        } else if (ctx->lmr) {
            cdt_ofi_lmr_reserve(ctx, 0, 0, 0);
            oc = cdt_ofi_lmr_opctx(ctx, x->op, pe, issued);
        } else {
            cdt_ofi_count(ctx, issued, 1);
            oc = cdt_ofi_peer_opctx(cdt_ofi_peer(pe), x->op);
        }
        cdt_ofi_stall_t stall = {0};
        for (;;) {
            rc = is_get ? fi_read(ctx->ep, p + done, len, x->desc, addr, raddr + done, key, oc)
                        : fi_write(ctx->ep, p + done, len, x->desc, addr, raddr + done, key, oc);
            if (rc != -FI_EAGAIN)
                break;
            ctx_progress(ctx);
            if (pe >= 0) {
                cdt_ofi_issued(ctx, pe);
                cdt_ofi_stall_check(&stall, 0, ctx, is_get ? "get" : "put", pe);
            } else if (x->mep) {
                cdt_msg_progress(x->mep);
            }
        }
        if (shm_unlikely(rc != 0)) {
            cdt_ofi_count(ctx, issued, (uint64_t)-1); /* not issued after all */
            if (x->mep)
                cdt_msg_opctx_put(x->mep, oc);
            return rc;
        }
    }
    return 0;
}

/*
 * Injected puts that are not delivery-complete (tcp;ofi_rxm): the PEs they
 * went to since the last quiet. A read from such a PE completes only after
 * the writes before it on the same connection have landed, so quiet issues
 * one 8-byte read to each and waits for them with the other gets.
 *
 * The first small put to a PE since the last quiet is not injected but
 * written delivery-complete (returns 1: the caller sends it so): a put
 * followed by quiet then waits for one answer, the write's, instead of an
 * inject and a read round trip (raw_fi: the read path answers slower than
 * a delivery-complete write). The PE is listed without a read; the next
 * put to it (last_flush_pe is not set, so it comes back here) marks it, is
 * injected, and so are the ones after it. Returns 0: inject.
 */
int cdt_ofi_flush_note(cdt_ctx_t *ctx, int pe)
{
    for (unsigned i = 0; i < ctx->nflush; i++)
        if (ctx->flush_pe[i] == pe) {
            ctx->flush_inj[i] = 1;
            ctx->last_flush_pe = pe;
            return 0;
        }
    if (ctx->nflush == CDT_OFI_FLUSH_MAX) {
        cdt_ofi_flush(ctx); /* a full list: settle it now */
        cdt_ofi_wait_gets(ctx);
    }
    ctx->flush_inj[ctx->nflush] = 0;
    ctx->flush_pe[ctx->nflush++] = pe;
    ctx->last_flush_pe = -1;
    return 1;
}

void cdt_ofi_flush(cdt_ctx_t *ctx)
{
    for (unsigned i = 0; i < ctx->nflush; i++) {
        if (!ctx->flush_inj[i])
            continue; /* only a delivery-complete write went there */
        int pe = ctx->flush_pe[i];
        const cdt_ofi_peer_t *p = cdt_ofi_peer(pe);
        const cdt_ofi_rseg_t *r = &p->seg[SHM_SEG_HEAP];
        cdt_ofi_count(ctx, &ctx->get_issued, 1); /* before the issue: see cdt_ofi_count */
        /* Never in contract mode (fill_caps): the sink needs no descriptor. */
        CDT_RETRY(ctx,
                  fi_read(ctx->ep, &ctx->flush_sink, sizeof(ctx->flush_sink), NULL,
                          (fi_addr_t)(p->addr1 - 1), r->base, r->key,
                          cdt_ofi_peer_opctx(p, CDT_OP_PUT)),
                  "put (completion read)", pe);
    }
    ctx->nflush = 0;
    ctx->last_flush_pe = -1;
}

/* Where the provider's contract asks for descriptors or contexts (ofi_mr.c).
 * A shared context holds its lock for the whole operation, its wait too. */
static void put_contract(cdt_ctx_t *ctx, uint64_t raddr, uint64_t key, const void *src,
                         size_t bytes, int pe, int blocking)
{
    cdt_ofi_lmr_lock(ctx);
    cdt_ofi_xfer_t x = {.op = CDT_OP_PUT, .pe = pe};
    void *b = NULL;
    if (cdt_plan_put(bytes, 0, cdt_ofi_fast_g.bounce_size, ctx->bounce_n) == CDT_PATH_BOUNCE &&
        bytes <= cdt_ofi_fast_g.frag_size) {
        cdt_ofi_lmr_reserve(ctx, 0, 0, 1);
        b = ctx->bounce + (size_t)ctx->bounce_next++ * cdt_ofi_fast_g.bounce_size;
        memcpy(b, src, bytes);
    } else if (bytes <= CDT_OFI_LMR_SLOT && cdt_ofi_g.caps.mr_local &&
               cdt_ofi_lmr_desc(ctx, src, bytes) == NULL) {
        cdt_ofi_lmr_reserve(ctx, 1, 0, 0);
        b = cdt_ofi_lmr_slot(ctx, src, bytes);
    }
    if (b != NULL) {
        void *oc = cdt_ofi_lmr_opctx(ctx, CDT_OP_PUT, pe, &ctx->put_issued);
        void *desc = cdt_ofi_lmr_desc(ctx, b, bytes);
        CDT_RETRY(ctx, fi_write(ctx->ep, b, bytes, desc, cdt_ofi_addr(pe), raddr, key, oc),
                  "put", pe);
        cdt_ofi_issued(ctx, pe);
        cdt_ofi_lmr_unlock(ctx);
        return;
    }
    x.desc = cdt_ofi_lmr_desc(ctx, src, bytes);
    int reg = x.desc == NULL && cdt_ofi_g.caps.mr_local;
    if (reg)
        x.desc = cdt_ofi_lmr_reg(ctx, src, bytes, FI_WRITE, pe);
    ssize_t rc = cdt_ofi_rma_frags(ctx, 0, (void *)src, raddr, key, bytes, cdt_ofi_addr(pe), &x);
    if (shm_unlikely(rc != 0))
        cdt_ofi_fatal_rc("put", pe, rc);
    cdt_ofi_issued(ctx, pe);
    if (blocking) {
        cdt_ofi_wait_puts(ctx);
        if (reg) /* the caller may free the buffer once we return */
            cdt_ofi_lmr_unreg_last(ctx);
    }
    cdt_ofi_lmr_unlock(ctx);
}

static void get_contract(cdt_ctx_t *ctx, void *dst, uint64_t raddr, uint64_t key, size_t bytes,
                         int pe, int blocking)
{
    cdt_ofi_lmr_lock(ctx);
    cdt_ofi_xfer_t x = {.op = CDT_OP_GET, .pe = pe};
    x.desc = cdt_ofi_lmr_desc(ctx, dst, bytes);
    int shared = (ctx->flags & CDT_CTX_SHARED) != 0;
    void *b = NULL;
    if (x.desc == NULL && cdt_ofi_g.caps.mr_local && bytes <= cdt_ofi_fast_g.frag_size) {
        /* Into a registered slot, copied out once the reads are complete
         * (a shared context copies right after its wait, lock held). */
        if (!shared && bytes <= cdt_ofi_fast_g.bounce_size && ctx->bounce_n > 0) {
            cdt_ofi_lmr_reserve(ctx, 0, 1, 1);
            b = ctx->bounce + (size_t)ctx->bounce_next++ * cdt_ofi_fast_g.bounce_size;
        } else if (bytes <= CDT_OFI_LMR_SLOT && (!shared || blocking)) {
            cdt_ofi_lmr_reserve(ctx, 1, !shared, 0);
            b = cdt_ofi_lmr_slot(ctx, NULL, 0);
        }
    }
    if (b != NULL) {
        if (!shared)
            cdt_ofi_lmr_defer(ctx, dst, b, bytes);
        void *oc = cdt_ofi_lmr_opctx(ctx, CDT_OP_GET, pe, &ctx->get_issued);
        void *desc = cdt_ofi_lmr_desc(ctx, b, bytes);
        CDT_RETRY(ctx, fi_read(ctx->ep, b, bytes, desc, cdt_ofi_addr(pe), raddr, key, oc),
                  "get", pe);
        cdt_ofi_issued(ctx, pe);
        if (blocking)
            cdt_ofi_wait_gets(ctx); /* runs the deferred copies */
        if (shared)
            memcpy(dst, b, bytes);
        cdt_ofi_lmr_unlock(ctx);
        return;
    }
    int reg = x.desc == NULL && cdt_ofi_g.caps.mr_local;
    if (reg)
        x.desc = cdt_ofi_lmr_reg(ctx, dst, bytes, FI_READ, pe);
    ssize_t rc = cdt_ofi_rma_frags(ctx, 1, dst, raddr, key, bytes, cdt_ofi_addr(pe), &x);
    if (shm_unlikely(rc != 0))
        cdt_ofi_fatal_rc("get", pe, rc);
    cdt_ofi_issued(ctx, pe);
    if (blocking) {
        cdt_ofi_wait_gets(ctx);
        if (reg)
            cdt_ofi_lmr_unreg_last(ctx);
    }
    cdt_ofi_lmr_unlock(ctx);
}

void cdt_ofi_put_slow(cdt_ctx_t *ctx, uint64_t raddr, uint64_t key, const void *src,
                      size_t bytes, int pe, int blocking)
{
    if (shm_unlikely(ctx->lmr != NULL)) {
        put_contract(ctx, raddr, key, src, bytes, pe, blocking);
        return;
    }
    const cdt_ofi_xfer_t x = {.op = CDT_OP_PUT, .pe = pe};
    void *opctx = cdt_ofi_peer_opctx(cdt_ofi_peer(pe), CDT_OP_PUT);
    if (cdt_plan_put(bytes, 0, cdt_ofi_fast_g.bounce_size, ctx->bounce_n) == CDT_PATH_BOUNCE) {
        char *b = bounce_slot(ctx);
        memcpy(b, src, bytes);
        cdt_ofi_count(ctx, &ctx->put_issued, 1);
        CDT_RETRY(ctx, fi_write(ctx->ep, b, bytes, NULL, cdt_ofi_addr(pe), raddr, key, opctx),
                  "put", pe);
        cdt_ofi_issued(ctx, pe);
        return;
    }
    ssize_t rc = cdt_ofi_rma_frags(ctx, 0, (void *)src, raddr, key, bytes, cdt_ofi_addr(pe), &x);
    if (shm_unlikely(rc != 0))
        cdt_ofi_fatal_rc("put", pe, rc);
    cdt_ofi_issued(ctx, pe);
    if (blocking)
        cdt_ofi_wait_puts(ctx);
}

void cdt_ofi_get_slow(cdt_ctx_t *ctx, void *dst, uint64_t raddr, uint64_t key, size_t bytes,
                      int pe, int blocking)
{
    if (shm_unlikely(ctx->lmr != NULL)) {
        get_contract(ctx, dst, raddr, key, bytes, pe, blocking);
        return;
    }
    const cdt_ofi_xfer_t x = {.op = CDT_OP_GET, .pe = pe};
    ssize_t rc = cdt_ofi_rma_frags(ctx, 1, dst, raddr, key, bytes, cdt_ofi_addr(pe), &x);
    if (shm_unlikely(rc != 0))
        cdt_ofi_fatal_rc("get", pe, rc);
    cdt_ofi_issued(ctx, pe);
    if (blocking)
        cdt_ofi_wait_gets(ctx);
}
