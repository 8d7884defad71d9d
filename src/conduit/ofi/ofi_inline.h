// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fast paths of the libfabric conduit. Only what every small operation
 * needs is here; EAGAIN retries, fragmentation, waiting and error reports
 * live out of line in ofi_rma.c.
 */
#ifndef SHM_CONDUIT_OFI_INLINE_H
#define SHM_CONDUIT_OFI_INLINE_H

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <string.h>
#include <time.h>

#include "conduit/ofi/ofi_plan.h"
#include "core/status.h"
#include "heap/heap.h"

/* Remote segment of one PE: what to add to an offset, and the key. */
typedef struct {
    uint64_t base;
    uint64_t key;
} cdt_ofi_rseg_t;

/* Operations named in error reports (carried in the op context). */
typedef enum {
    CDT_OP_PUT = 1,
    CDT_OP_GET,
    CDT_OP_AMO,
    CDT_OP_FETCH_AMO,
    CDT_OP_N
} cdt_ofi_op_t;

/*
 * An operation's context: what the provider owns in FI_CONTEXT/FI_CONTEXT2
 * mode (first, so that the pointer handed to libfabric is the struct's),
 * and what a fault report names. Where the provider owns none, each peer
 * has one per kind of operation (cdt_ofi_peer_t); where it does, each
 * operation in flight has its own (the context's ring, ofi_mr.c). Never an
 * integer cast to a pointer.
 */
typedef struct {
    struct fi_context2 fi;
    uint32_t op;                /* cdt_ofi_op_t */
    int32_t pe;
} cdt_ofi_opctx_t;

/*
 * What this PE knows of another: its address-vector entry and its segments.
 * Filled on first contact (cdt_ofi_peer_slow, ofi_init.c), not at init, so
 * that start-up does not grow with the job: a PE inserts and asks the
 * launcher for the addresses of the PEs it talks to only.
 */
typedef struct {
    uint64_t addr1;             /* fi_addr_t + 1; 0: not known yet */
    cdt_ofi_rseg_t seg[SHM_NSEGS];
    cdt_ofi_opctx_t opctx[CDT_OP_N]; /* [op]: contexts where the provider owns none */
} cdt_ofi_peer_t;

typedef struct {
    cdt_ofi_peer_t *peer;       /* [pe], zero until first contact */
    size_t inject_size;         /* 0 when injects are not remotely complete */
    int inject_flush;           /* injects are not delivery-complete: quiet reads back */
    int flag_progress;          /* a flag leaves only in a progress call: make one after it */
    size_t bounce_size;
    size_t frag_size;
    int yield;
    /* Waking same-host targets whose progress thread sleeps with no wait
     * object to wake it (ofi_progress.c): on when kick_idx is set. */
    uint16_t *kick_idx;         /* [pe]: 1 + index among this host's PEs, 0: not kicked */
    uint64_t *kick_last;        /* [pe]: when we last woke it (ns) */
    uint64_t kick_ns;           /* wake a peer at most this often */
    uint64_t stall_ns;          /* a wait that sees no completion this long ends the job */
    /* The provider's contract asks for more than the fast paths give (a
     * descriptor per local buffer, or context memory per operation): every
     * operation but an inject goes out of line (ofi_mr.c, ofi_amo.c). */
    int contract;
} cdt_ofi_fast_t;

extern cdt_ofi_fast_t cdt_ofi_fast_g;

/* Bumped by every operation this PE issues (cdt_ofi_issued): the progress
 * thread stands back while it moves (ofi_progress.c app_polling). */
extern unsigned cdt_ofi_app_ops_g;

#define CDT_OFI_FLUSH_MAX 32

/* A local copy that waits for a read to complete (FI_MR_LOCAL: the data
 * came into a registered slot, not the caller's buffer). */
typedef struct {
    void *dst;
    const void *src;
    size_t len;
} cdt_ofi_defer_t;

/* What a context keeps for the provider's contract (ofi_mr.c); NULL when
 * the provider asks for nothing beyond the fast paths. */
typedef struct cdt_ofi_lmr cdt_ofi_lmr_t;

struct cdt_ctx {
    struct fid_ep *ep;
    struct fid_cntr *put_cntr; /* FI_WRITE completions (puts, non-fetching AMOs) */
    struct fid_cntr *get_cntr; /* FI_READ completions (gets, fetching AMOs) */
    struct fid_cq *cq;         /* errors only (selective completion) */
    uint64_t put_issued, get_issued;
    uint64_t put_done, get_done;   /* last counter values seen complete */
    uint64_t put_err, get_err;     /* error counts already reported */
    char *bounce;                  /* bounce_n slots of bounce_size */
    unsigned bounce_next, bounce_n;
    unsigned flags;
    uint64_t kick_mask;            /* same-host targets (index % 64) since the last quiet */
    int last_pe;                   /* target of the last operation issued */
    size_t inject_size;            /* puts up to this size are injected */
    /* inject_flush: PEs injected to since the last quiet, read back by it. */
    int last_flush_pe;
    unsigned nflush;
    int flush_pe[CDT_OFI_FLUSH_MAX];
    unsigned char flush_inj[CDT_OFI_FLUSH_MAX]; /* an inject went there: read it back */
    uint64_t flush_sink;
    cdt_ofi_lmr_t *lmr;            /* descriptors, context ring, deferred copies (ofi_mr.c) */
};

/* Out of line (ofi_rma.c). */
void cdt_ofi_put_slow(cdt_ctx_t *ctx, uint64_t raddr, uint64_t key, const void *src,
                      size_t bytes, int pe, int blocking);
void cdt_ofi_get_slow(cdt_ctx_t *ctx, void *dst, uint64_t raddr, uint64_t key, size_t bytes,
                      int pe, int blocking);
void cdt_ofi_inject_retry(cdt_ctx_t *ctx, ssize_t rc, uint64_t raddr, uint64_t key,
                          const void *src, size_t bytes, int pe);
void cdt_ofi_wait_puts(cdt_ctx_t *ctx);
void cdt_ofi_wait_gets(cdt_ctx_t *ctx);
void cdt_ofi_wait_all(cdt_ctx_t *ctx);
void cdt_ofi_kick_slow(int pe, uint64_t now);
int cdt_ofi_flush_note(cdt_ctx_t *ctx, int pe);
void cdt_ofi_flush(cdt_ctx_t *ctx);
void cdt_ofi_lmr_quiet_done(cdt_ctx_t *ctx);

const cdt_ofi_peer_t *cdt_ofi_peer_slow(int pe);

/* pe's entry, resolved on first contact. */
static inline const cdt_ofi_peer_t *cdt_ofi_peer(int pe)
{
    const cdt_ofi_peer_t *p = &cdt_ofi_fast_g.peer[pe];
    if (shm_unlikely(__atomic_load_n(&p->addr1, __ATOMIC_ACQUIRE) == 0))
        p = cdt_ofi_peer_slow(pe);
    return p;
}

/* pe's address-vector entry (pe was resolved by the caller's cdt_ofi_peer). */
static inline fi_addr_t cdt_ofi_addr(int pe)
{
    return (fi_addr_t)(cdt_ofi_peer(pe)->addr1 - 1);
}

static inline uint64_t cdt_ofi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * After issuing an operation to pe: remember pe (named if the context's
 * waits stall), and where the target must drive the operation itself (shm
 * applies injected puts and atomics in the target's progress), wake its
 * progress thread unless we did so less than kick_ns ago, when it is still
 * polling. A clock read on those paths only; nothing where the provider has
 * a wait object or the peer is on another host.
 */
static inline void cdt_ofi_issued(cdt_ctx_t *ctx, int pe)
{
    __atomic_store_n(&ctx->last_pe, pe, __ATOMIC_RELAXED); /* shared contexts: any thread */
    /* Racy across threads on purpose: the thread only asks "did it move". */
    __atomic_store_n(&cdt_ofi_app_ops_g, __atomic_load_n(&cdt_ofi_app_ops_g, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
    if (shm_likely(cdt_ofi_fast_g.kick_idx == NULL))
        return;
    unsigned li = cdt_ofi_fast_g.kick_idx[pe];
    if (li == 0)
        return;
    uint64_t bit = 1ull << (li % 64);
    if (!(__atomic_load_n(&ctx->kick_mask, __ATOMIC_RELAXED) & bit))
        __atomic_fetch_or(&ctx->kick_mask, bit, __ATOMIC_RELAXED);
    uint64_t t = cdt_ofi_now_ns();
    if (t - __atomic_load_n(&cdt_ofi_fast_g.kick_last[pe], __ATOMIC_RELAXED) >=
        cdt_ofi_fast_g.kick_ns)
        cdt_ofi_kick_slow(pe, t);
}

/* The context of an operation op to peer p where the provider owns none. */
static inline void *cdt_ofi_peer_opctx(const cdt_ofi_peer_t *p, int op)
{
    return (void *)&p->opctx[op];
}

/*
 * Counts operations issued on a context. An operation is counted BEFORE it
 * is handed to the provider: a completion counter does not say which
 * operations completed, so on a context shared by threads a waiter is done
 * only when the counter has reached everything counted so far (wait_cntr
 * in ofi_rma.c). Were an operation counted after its issue, another
 * thread's operation, issued but not yet counted, could complete in its
 * place and let a blocking get or fetching atomic return before its own
 * data arrived (issue 14: a lock read a garbage predecessor).
 */
static inline uint64_t cdt_ofi_count(cdt_ctx_t *ctx, uint64_t *cnt, uint64_t n)
{
    if (ctx->flags & 0x1 /* CDT_CTX_SHARED */)
        return __atomic_add_fetch(cnt, n, __ATOMIC_RELAXED);
    return *cnt += n;
}

static inline void cdt_ofi_put(cdt_ctx_t *ctx, int seg, size_t off, const void *src,
                               size_t bytes, int pe, int blocking)
{
    const cdt_ofi_peer_t *p = cdt_ofi_peer(pe);
    const cdt_ofi_rseg_t *r = &p->seg[seg];
    if (cdt_plan_put(bytes, ctx->inject_size, 0, 0) == CDT_PATH_INJECT) {
        /* The first put to a PE since the last quiet goes delivery-complete
         * (no read-back needed if it stays alone: put + quiet is one answer);
         * the ones after it are injected and read back (cdt_ofi_flush_note). */
        if (shm_unlikely(cdt_ofi_fast_g.inject_flush) && ctx->last_flush_pe != pe &&
            cdt_ofi_flush_note(ctx, pe)) {
            cdt_ofi_put_slow(ctx, r->base + off, r->key, src, bytes, pe, blocking);
            return;
        }
        cdt_ofi_count(ctx, &ctx->put_issued, 1); /* before the issue: see cdt_ofi_count */
        ssize_t rc = fi_inject_write(ctx->ep, src, bytes, (fi_addr_t)(p->addr1 - 1),
                                     r->base + off, r->key);
        if (shm_unlikely(rc != 0))
            cdt_ofi_inject_retry(ctx, rc, r->base + off, r->key, src, bytes, pe);
        cdt_ofi_issued(ctx, pe);
        return;
    }
    cdt_ofi_put_slow(ctx, r->base + off, r->key, src, bytes, pe, blocking);
}

static inline void cdt_put(cdt_ctx_t *ctx, int seg, size_t off, const void *src, size_t bytes,
                           int pe)
{
    cdt_ofi_put(ctx, seg, off, src, bytes, pe, 1);
}

/*
 * A collective's flag: never an inject that quiet reads back. Its target
 * may finish the collective as soon as the flag lands and leave it (in
 * finalize: leave the job) before our next quiet; a read-back then waited
 * for a PE that was gone (launchers.slurm_multihost.probe: a PE in round 2
 * of the finalize barrier read back its round-1 flag from a PE that had
 * finished; 3 hangs in ~32 runs). A delivery-complete write is complete
 * when its answer comes, which the target's provider sends on arrival.
 */
static inline void cdt_put_flag(cdt_ctx_t *ctx, int seg, size_t off, const void *src,
                                size_t bytes, int pe)
{
    if (shm_likely(!cdt_ofi_fast_g.inject_flush)) {
        cdt_ofi_put(ctx, seg, off, src, bytes, pe, 1);
    } else {
        const cdt_ofi_rseg_t *r = &cdt_ofi_peer(pe)->seg[seg];
        cdt_ofi_put_slow(ctx, r->base + off, r->key, src, bytes, pe, 1);
    }
    /* sockets: the flag is only queued until a progress call sends it; a
     * PE that has its last flag of a barrier (it may leave the library
     * now: computing, or in the launcher's fence at finalize) sends it. */
    if (shm_unlikely(cdt_ofi_fast_g.flag_progress))
        cdt_progress();
}

static inline void cdt_put_nbi(cdt_ctx_t *ctx, int seg, size_t off, const void *src,
                               size_t bytes, int pe)
{
    cdt_ofi_put(ctx, seg, off, src, bytes, pe, 0);
}

static inline void cdt_get(cdt_ctx_t *ctx, void *dst, int seg, size_t off, size_t bytes, int pe)
{
    const cdt_ofi_rseg_t *r = &cdt_ofi_peer(pe)->seg[seg];
    cdt_ofi_get_slow(ctx, dst, r->base + off, r->key, bytes, pe, 1);
}

static inline void cdt_get_nbi(cdt_ctx_t *ctx, void *dst, int seg, size_t off, size_t bytes,
                               int pe)
{
    const cdt_ofi_rseg_t *r = &cdt_ofi_peer(pe)->seg[seg];
    cdt_ofi_get_slow(ctx, dst, r->base + off, r->key, bytes, pe, 0);
}

static inline void cdt_quiet(cdt_ctx_t *ctx)
{
    /* Stores made straight into peers' mapped heaps (direct path, possibly
     * non-temporal inside memcpy) are ordered before whatever follows. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (ctx->nflush != 0) {
        /* Injected puts: one read per PE written, waited for with them. */
        cdt_ofi_flush(ctx);
        cdt_ofi_wait_all(ctx);
    }
    if (__atomic_load_n(&ctx->put_done, __ATOMIC_RELAXED) !=
        __atomic_load_n(&ctx->put_issued, __ATOMIC_RELAXED))
        cdt_ofi_wait_puts(ctx);
    if (__atomic_load_n(&ctx->get_done, __ATOMIC_RELAXED) !=
        __atomic_load_n(&ctx->get_issued, __ATOMIC_RELAXED))
        cdt_ofi_wait_gets(ctx);
    if (!(ctx->flags & 0x1)) {
        ctx->bounce_next = 0;
        if (shm_unlikely(ctx->lmr != NULL))
            cdt_ofi_lmr_quiet_done(ctx);
    }
}

/*
 * No provider here keeps an atomic ordered before a later put to the same
 * word (PROVIDERS.md), so ordering is bought with completion.
 */
static inline void cdt_fence(cdt_ctx_t *ctx)
{
    cdt_quiet(ctx);
}

#endif /* SHM_CONDUIT_OFI_INLINE_H */
