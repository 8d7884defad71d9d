// SPDX-License-Identifier: BSD-3-Clause
/*
 * AMO semantics above the conduit: checks, address translation, and the
 * choice between the conduit (the provider's atomic, or its active-message
 * path) and emulation by a compare-and-swap loop (amo.c) for what the
 * conduit does not carry. Inline: this is the AMO path.
 *
 * Every AMO, including one that targets this PE, goes through the conduit:
 * a plain CPU operation on our own word would not be atomic with respect to
 * the fabric's.
 */
#ifndef SHM_ATOMICS_AMO_H
#define SHM_ATOMICS_AMO_H

#include "core/rma.h"
#include "core/state.h"

/* The conduit's type for a C type T of the AMO tables (a constant). */
#define SHM_AMO_UNSIGNED(T) ((T)-1 / 2 < (T)-1)
#define SHM_AMO_TYPE(T)                                                        \
    ((T)0.5 != 0 ? (sizeof(T) == 4 ? CDT_AMO_FLOAT : CDT_AMO_DOUBLE)           \
     : sizeof(T) == 4                                                          \
         ? (SHM_AMO_UNSIGNED(T) ? CDT_AMO_UINT32 : CDT_AMO_INT32)              \
         : (SHM_AMO_UNSIGNED(T) ? CDT_AMO_UINT64 : CDT_AMO_INT64))

__attribute__((noreturn, cold)) void shm_amo_misaligned(const char *fn, const void *addr,
                                                        size_t size, int pe);

/*
 * What the conduit does not carry, by compare-and-swap on a word of the same
 * width (amo.c). Blocking: result (may be NULL) is written on return.
 */
void shm_amo_emulate(const char *fn, cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                     size_t off, const void *operand, const void *cond, void *result, int pe);

/* Checks the call and translates the target; returns the segment. */
static inline int shm_amo_target(const char *fn, struct shm_ctx *ctx, const void *dest,
                                 size_t size, int pe, size_t *off_p)
{
    shm_rma_check(fn, ctx, pe);
    int seg = shm_xlate_or_die(fn, dest, size, off_p, "atomic target");
    if (shm_unlikely(shm_state_g.debug) && ((uintptr_t)dest & (size - 1)) != 0)
        shm_amo_misaligned(fn, dest, size, pe);
    return seg;
}

/* Non-fetching op on a translated target. */
static inline void shm_amo_post_at(const char *fn, cdt_ctx_t *ctx, cdt_amo_type_t t,
                                   cdt_amo_op_t op, int seg, size_t off, const void *operand,
                                   int pe)
{
    if (shm_likely(cdt_amo_offered(t, op)))
        cdt_amo(ctx, t, op, seg, off, operand, pe);
    else
        shm_amo_emulate(fn, ctx, t, op, seg, off, operand, NULL, NULL, pe);
}

/* add, and, or, xor, set: complete at the target by the next quiet. */
static inline void shm_amo_post(const char *fn, struct shm_ctx *ctx, cdt_amo_type_t t,
                                cdt_amo_op_t op, void *dest, size_t size, const void *operand,
                                int pe)
{
    size_t off;
    int seg = shm_amo_target(fn, ctx, dest, size, pe, &off);
    shm_amo_post_at(fn, &ctx->cdt, t, op, seg, off, operand, pe);
}

/* fetch_add, fetch_and, ..., swap, fetch: *result on return (nbi: by quiet). */
static inline void shm_amo_fetch(const char *fn, struct shm_ctx *ctx, cdt_amo_type_t t,
                                 cdt_amo_op_t op, const void *dest, size_t size,
                                 const void *operand, void *result, int pe, int nbi)
{
    size_t off;
    int seg = shm_amo_target(fn, ctx, dest, size, pe, &off);
    if (shm_unlikely(!cdt_amo_offered(t, op)))
        shm_amo_emulate(fn, &ctx->cdt, t, op, seg, off, operand, NULL, result, pe);
    else if (nbi)
        cdt_fetch_amo_nbi(&ctx->cdt, t, op, seg, off, operand, result, pe);
    else
        cdt_fetch_amo(&ctx->cdt, t, op, seg, off, operand, result, pe);
}

static inline void shm_amo_cswap(const char *fn, struct shm_ctx *ctx, cdt_amo_type_t t,
                                 void *dest, size_t size, const void *cond, const void *value,
                                 void *result, int pe, int nbi)
{
    size_t off;
    int seg = shm_amo_target(fn, ctx, dest, size, pe, &off);
    if (shm_unlikely(!cdt_amo_offered(t, CDT_AMO_CSWAP)))
        shm_amo_emulate(fn, &ctx->cdt, t, CDT_AMO_CSWAP, seg, off, value, cond, result, pe);
    else if (nbi)
        cdt_cswap_nbi(&ctx->cdt, t, seg, off, cond, value, result, pe);
    else
        cdt_cswap(&ctx->cdt, t, seg, off, cond, value, result, pe);
}

/* put-with-signal (signal.c). */
void shm_put_signal(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                    size_t bytes, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                    int nbi);

/* Distributed locks (lock.c). */
void shm_lock_set(const char *fn, long *lock);
int shm_lock_test(const char *fn, long *lock);
void shm_lock_clear(const char *fn, long *lock);

#endif /* SHM_ATOMICS_AMO_H */
