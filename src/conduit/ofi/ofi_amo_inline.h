// SPDX-License-Identifier: BSD-3-Clause
/*
 * Atomics of the conduit: the types and operations (ours, not libfabric's)
 * and the fast paths, which issue one fabric atomic each.
 *
 *   void cdt_amo(ctx, type, op, seg, off, const void *operand, pe);
 *       non-fetching (ADD AND OR XOR SET); issued delivery-complete and
 *       counted as a write, so cdt_quiet() means applied at the target.
 *       Returns at once; the operand may be reused. Where the provider's
 *       delivery-complete atomics are unsound (the amo_post_via_fetch
 *       quirk), issued as the fetching twin into a sink and counted as a
 *       read: same guarantee.
 *   void cdt_fetch_amo(ctx, type, op, seg, off, const void *operand, void *result, pe);
 *   void cdt_fetch_amo_nbi(...same...);
 *       fetching (FETCH_ADD FETCH_AND FETCH_OR FETCH_XOR SWAP FETCH); the
 *       blocking form returns with *result written, the nbi form writes it
 *       by the next cdt_quiet(). The operand may be reused at once.
 *   void cdt_cswap(ctx, type, seg, off, const void *cond, const void *value, void *result, pe);
 *   void cdt_cswap_nbi(...same...);
 *
 * Heap words (and data/BSS words, unless SHMEM_DIRECT_GLOBALS=0: the layer
 * above decides per segment) when the same-host direct path is on
 * (cdt_amo_heap_cpu()):
 * every AMO on them is a CPU atomic, by the origin on a mapped heap (the
 * layer above, src/atomics/amo.h) or by the target for an origin that does
 * not map it:
 *   void cdt_amo_by_target(ctx, type, op, seg, off, operand, cond, result, pe, blocking);
 *       any op, any type; the request travels as an active message and the
 *       target applies the CPU atomic in its progress. Counted like the
 *       others (quiet waits for it; blocking: *result on return).
 * The provider's atomics are then never used on heap words: they are not
 * atomic with respect to CPU atomics on the same word.
 *
 * Only (type, op) pairs for which cdt_amo_offered() is true may be issued:
 * the provider's own atomic (the capability table, probed at init), or the
 * conduit's active-message path when the provider has no usable atomics.
 * The layer above emulates the rest with compare-and-swap (src/atomics).
 * Every PE, this one included, is reached through the fabric, so atomicity
 * holds between all PEs. pe is valid and (seg, off) symmetric and aligned:
 * the caller checks.
 */
#ifndef SHM_CONDUIT_OFI_AMO_INLINE_H
#define SHM_CONDUIT_OFI_AMO_INLINE_H

#include <rdma/fi_atomic.h>

#include "conduit/ofi/ofi_inline.h"

/** Element types of the atomics. */
#define CDT_AMO_TYPES(X)                                                       \
    X(INT32, "int32", FI_INT32, 4) X(UINT32, "uint32", FI_UINT32, 4)           \
    X(INT64, "int64", FI_INT64, 8) X(UINT64, "uint64", FI_UINT64, 8)           \
    X(FLOAT, "float", FI_FLOAT, 4) X(DOUBLE, "double", FI_DOUBLE, 8)

/**
 * Operations: X(id, name, libfabric op, kind) with kind 0 non-fetching,
 * 1 fetching, 2 compare. SWAP is the fetching form of SET.
 */
#define CDT_AMO_OPS(X)                                                         \
    X(ADD, "add", FI_SUM, 0) X(AND, "and", FI_BAND, 0) X(OR, "or", FI_BOR, 0)  \
    X(XOR, "xor", FI_BXOR, 0) X(SET, "set", FI_ATOMIC_WRITE, 0)                \
    X(FETCH_ADD, "fetch_add", FI_SUM, 1) X(FETCH_AND, "fetch_and", FI_BAND, 1) \
    X(FETCH_OR, "fetch_or", FI_BOR, 1) X(FETCH_XOR, "fetch_xor", FI_BXOR, 1)   \
    X(SWAP, "swap", FI_ATOMIC_WRITE, 1) X(FETCH, "fetch", FI_ATOMIC_READ, 1)   \
    X(CSWAP, "compare_swap", FI_CSWAP, 2)

typedef enum {
#define CDT_AMO_TYPE_ENUM(id, name, fi, size) CDT_AMO_##id,
    CDT_AMO_TYPES(CDT_AMO_TYPE_ENUM)
#undef CDT_AMO_TYPE_ENUM
    CDT_AMO_NTYPES
} cdt_amo_type_t;

typedef enum {
#define CDT_AMO_OP_ENUM(id, name, fi, kind) CDT_AMO_##id,
    CDT_AMO_OPS(CDT_AMO_OP_ENUM)
#undef CDT_AMO_OP_ENUM
    CDT_AMO_NOPS
} cdt_amo_op_t;

/** How a (type, op) is carried. */
typedef enum {
    CDT_AMO_PATH_NONE = 0, /**< not by the conduit: the caller emulates it */
    CDT_AMO_PATH_NATIVE,   /**< the provider's atomic */
    CDT_AMO_PATH_AM,       /**< active message applied by the target's progress */
} cdt_amo_path_t;

typedef struct {
    uint8_t path[CDT_AMO_NTYPES][CDT_AMO_NOPS]; /* has_native_amo, and what else */
    uint64_t post_flags;  /* non-fetching: FI_INJECT | FI_DELIVERY_COMPLETE */
    uint64_t fetch_flags; /* fetching and compare: FI_INJECT where the provider takes it */
    int post_via_fetch;   /* non-fetching ones issued as fetching (result to a sink) */
    int am_on;            /* the active-message endpoint is open and served (ofi_amo_am.c) */
    int am_all;           /* every (type, op) goes by active message (no provider atomics) */
    int heap_cpu;         /* heap words: CPU atomics only, job-wide (direct path on) */
} cdt_ofi_amo_t;

extern cdt_ofi_amo_t cdt_ofi_amo_g;
extern uint64_t cdt_ofi_amo_sink_g; /* results nobody reads */

/** Nonzero if the conduit carries (t, op), natively or by active messages. */
static inline int cdt_amo_offered(cdt_amo_type_t t, cdt_amo_op_t op)
{
    return cdt_ofi_amo_g.path[t][op] != CDT_AMO_PATH_NONE;
}

/** The path of (t, op), for SHMEM_INFO and tests. */
static inline cdt_amo_path_t cdt_amo_path(cdt_amo_type_t t, cdt_amo_op_t op)
{
    return (cdt_amo_path_t)cdt_ofi_amo_g.path[t][op];
}

/**
 * Nonzero when every AMO on a symmetric word (heap; data/BSS too unless
 * SHMEM_DIRECT_GLOBALS=0) must be a CPU atomic (the same-host direct path is
 * on somewhere in the job). The same on every PE.
 */
static inline int cdt_amo_heap_cpu(void)
{
    return cdt_ofi_amo_g.heap_cpu;
}

/** Nonzero when other PEs may send this one AMO requests to apply: a PE
 * spinning on its own words must then drive progress now and then. */
static inline int cdt_amo_serves_requests(void)
{
    return cdt_ofi_amo_g.am_on;
}

const char *cdt_amo_type_name(cdt_amo_type_t t);
const char *cdt_amo_op_name(cdt_amo_op_t op);

/* Out of line (ofi_amo.c): EAGAIN retries, the active-message path. */
void cdt_ofi_amo_retry(cdt_ctx_t *ctx, ssize_t rc, const struct fi_msg_atomic *msg,
                       const struct fi_ioc *cmp, struct fi_ioc *res, int pe);
void cdt_ofi_amo_am(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                    const void *operand, const void *cond, void *result, int pe, int blocking);
void cdt_ofi_amo_wait(cdt_ctx_t *ctx);
void cdt_amo_by_target(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                       const void *operand, const void *cond, void *result, int pe, int blocking);
/* Any provider atomic where the provider's contract asks for descriptors or
 * contexts (cdt_ofi_fast_g.contract). */
void cdt_ofi_amo_contract(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                          const void *operand, const void *cond, void *result, int pe,
                          int blocking);

static inline enum fi_datatype cdt_ofi_amo_dt(cdt_amo_type_t t)
{
    switch (t) {
#define CDT_AMO_TYPE_DT(id, name, fi, size)                                    \
    case CDT_AMO_##id:                                                         \
        return fi;
        CDT_AMO_TYPES(CDT_AMO_TYPE_DT)
#undef CDT_AMO_TYPE_DT
    default: return FI_DATATYPE_LAST;
    }
}

static inline enum fi_op cdt_ofi_amo_fiop(cdt_amo_op_t op)
{
    switch (op) {
#define CDT_AMO_OP_FI(id, name, fi, kind)                                      \
    case CDT_AMO_##id:                                                         \
        return fi;
        CDT_AMO_OPS(CDT_AMO_OP_FI)
#undef CDT_AMO_OP_FI
    default: return FI_ATOMIC_OP_LAST;
    }
}

/* The message every form shares; ioc/rioc live in the caller's frame. */
#define CDT_OFI_AMO_MSG(msg_, ioc_, rioc_, t_, op_, seg_, off_, operand_, pe_, kind_) \
    const cdt_ofi_peer_t *p_ = cdt_ofi_peer(pe_);                              \
    const cdt_ofi_rseg_t *r_ = &p_->seg[seg_];                                 \
    struct fi_ioc ioc_ = {.addr = (void *)(operand_), .count = 1};             \
    struct fi_rma_ioc rioc_ = {.addr = r_->base + (off_), .count = 1, .key = r_->key}; \
    struct fi_msg_atomic msg_ = {.msg_iov = &ioc_,                             \
                                 .iov_count = 1,                               \
                                 .addr = (fi_addr_t)(p_->addr1 - 1),           \
                                 .rma_iov = &rioc_,                            \
                                 .rma_iov_count = 1,                           \
                                 .datatype = cdt_ofi_amo_dt(t_),               \
                                 .op = cdt_ofi_amo_fiop(op_),                  \
                                 .context = cdt_ofi_peer_opctx(p_, kind_)}

static inline void cdt_amo(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                           size_t off, const void *operand, int pe)
{
    if (shm_unlikely(cdt_ofi_amo_g.path[t][op] != CDT_AMO_PATH_NATIVE)) {
        cdt_ofi_amo_am(ctx, t, op, seg, off, operand, NULL, NULL, pe, 0);
        return;
    }
    if (shm_unlikely(cdt_ofi_fast_g.contract)) {
        cdt_ofi_amo_contract(ctx, t, op, seg, off, operand, NULL, NULL, pe, 0);
        return;
    }
    CDT_OFI_AMO_MSG(msg, ioc, rioc, t, op, seg, off, operand, pe, CDT_OP_AMO);
    if (cdt_ofi_amo_g.post_via_fetch) {
        struct fi_ioc res = {.addr = &cdt_ofi_amo_sink_g, .count = 1};
        cdt_ofi_count(ctx, &ctx->get_issued, 1);
        ssize_t rc = fi_fetch_atomicmsg(ctx->ep, &msg, &res, NULL, 1, cdt_ofi_amo_g.fetch_flags);
        if (shm_unlikely(rc != 0))
            cdt_ofi_amo_retry(ctx, rc, &msg, NULL, &res, pe);
        cdt_ofi_issued(ctx, pe);
        if (shm_unlikely(!(cdt_ofi_amo_g.fetch_flags & FI_INJECT)))
            cdt_ofi_wait_gets(ctx);
        return;
    }
    cdt_ofi_count(ctx, &ctx->put_issued, 1);
    ssize_t rc = fi_atomicmsg(ctx->ep, &msg, cdt_ofi_amo_g.post_flags);
    if (shm_unlikely(rc != 0))
        cdt_ofi_amo_retry(ctx, rc, &msg, NULL, NULL, pe);
    cdt_ofi_issued(ctx, pe);
    /* A provider that refused FI_INJECT reads the operand until completion. */
    if (shm_unlikely(!(cdt_ofi_amo_g.post_flags & FI_INJECT)))
        cdt_ofi_wait_puts(ctx);
}

static inline void cdt_fetch_amo_nbi(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                                     size_t off, const void *operand, void *result, int pe)
{
    if (shm_unlikely(cdt_ofi_amo_g.path[t][op] != CDT_AMO_PATH_NATIVE)) {
        cdt_ofi_amo_am(ctx, t, op, seg, off, operand, NULL, result, pe, 0);
        return;
    }
    if (shm_unlikely(cdt_ofi_fast_g.contract)) {
        cdt_ofi_amo_contract(ctx, t, op, seg, off, operand, NULL, result, pe, 0);
        return;
    }
    /* FETCH ignores the operand, but some providers copy it anyway. */
    CDT_OFI_AMO_MSG(msg, ioc, rioc, t, op, seg, off, operand ? operand : result, pe,
                    CDT_OP_FETCH_AMO);
    struct fi_ioc res = {.addr = result, .count = 1};
    cdt_ofi_count(ctx, &ctx->get_issued, 1);
    ssize_t rc = fi_fetch_atomicmsg(ctx->ep, &msg, &res, NULL, 1, cdt_ofi_amo_g.fetch_flags);
    if (shm_unlikely(rc != 0))
        cdt_ofi_amo_retry(ctx, rc, &msg, NULL, &res, pe);
    cdt_ofi_issued(ctx, pe);
    if (shm_unlikely(!(cdt_ofi_amo_g.fetch_flags & FI_INJECT)))
        cdt_ofi_wait_gets(ctx);
}

static inline void cdt_fetch_amo(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                                 size_t off, const void *operand, void *result, int pe)
{
    if (shm_unlikely(cdt_ofi_amo_g.path[t][op] != CDT_AMO_PATH_NATIVE)) {
        cdt_ofi_amo_am(ctx, t, op, seg, off, operand, NULL, result, pe, 1);
        return;
    }
    if (shm_unlikely(cdt_ofi_fast_g.contract)) {
        cdt_ofi_amo_contract(ctx, t, op, seg, off, operand, NULL, result, pe, 1);
        return;
    }
    cdt_fetch_amo_nbi(ctx, t, op, seg, off, operand, result, pe);
    cdt_ofi_amo_wait(ctx);
}

static inline void cdt_cswap_nbi(cdt_ctx_t *ctx, cdt_amo_type_t t, int seg, size_t off,
                                 const void *cond, const void *value, void *result, int pe)
{
    if (shm_unlikely(cdt_ofi_amo_g.path[t][CDT_AMO_CSWAP] != CDT_AMO_PATH_NATIVE)) {
        cdt_ofi_amo_am(ctx, t, CDT_AMO_CSWAP, seg, off, value, cond, result, pe, 0);
        return;
    }
    if (shm_unlikely(cdt_ofi_fast_g.contract)) {
        cdt_ofi_amo_contract(ctx, t, CDT_AMO_CSWAP, seg, off, value, cond, result, pe, 0);
        return;
    }
    CDT_OFI_AMO_MSG(msg, ioc, rioc, t, CDT_AMO_CSWAP, seg, off, value, pe, CDT_OP_FETCH_AMO);
    struct fi_ioc cmp = {.addr = (void *)cond, .count = 1};
    struct fi_ioc res = {.addr = result, .count = 1};
    cdt_ofi_count(ctx, &ctx->get_issued, 1);
    ssize_t rc = fi_compare_atomicmsg(ctx->ep, &msg, &cmp, NULL, 1, &res, NULL, 1,
                                      cdt_ofi_amo_g.fetch_flags);
    if (shm_unlikely(rc != 0))
        cdt_ofi_amo_retry(ctx, rc, &msg, &cmp, &res, pe);
    cdt_ofi_issued(ctx, pe);
    if (shm_unlikely(!(cdt_ofi_amo_g.fetch_flags & FI_INJECT)))
        cdt_ofi_wait_gets(ctx);
}

static inline void cdt_cswap(cdt_ctx_t *ctx, cdt_amo_type_t t, int seg, size_t off,
                             const void *cond, const void *value, void *result, int pe)
{
    if (shm_unlikely(cdt_ofi_amo_g.path[t][CDT_AMO_CSWAP] != CDT_AMO_PATH_NATIVE)) {
        cdt_ofi_amo_am(ctx, t, CDT_AMO_CSWAP, seg, off, value, cond, result, pe, 1);
        return;
    }
    if (shm_unlikely(cdt_ofi_fast_g.contract)) {
        cdt_ofi_amo_contract(ctx, t, CDT_AMO_CSWAP, seg, off, value, cond, result, pe, 1);
        return;
    }
    cdt_cswap_nbi(ctx, t, seg, off, cond, value, result, pe);
    cdt_ofi_amo_wait(ctx);
}

#endif /* SHM_CONDUIT_OFI_AMO_INLINE_H */
