// SPDX-License-Identifier: BSD-3-Clause
/*
 * AMO semantics above the conduit: checks, address translation, and the
 * choice between the conduit (the provider's atomic, or its active-message
 * path) and emulation by a compare-and-swap loop (amo.c) for what the
 * conduit does not carry. Inline: this is the AMO path.
 *
 * Two regimes, the same on every PE of a job (atomicity needs one way per
 * word):
 *  - symmetric-heap words while the same-host direct path is on
 *    (cdt_amo_heap_cpu()), and data/BSS words too unless
 *    SHMEM_DIRECT_GLOBALS=0 (shm_amo_seg_cpu): every AMO is a CPU atomic on
 *    the word. The origin does it on the mapped address when it maps the
 *    target's segment (itself included), else the target does it on the
 *    origin's request (cdt_amo_by_target). The provider's atomics are never
 *    used on them.
 *  - every word when the direct path is off, and data/BSS words with
 *    SHMEM_DIRECT_GLOBALS=0: through the conduit (provider atomics, or its
 *    active messages), this PE included, since a CPU atomic would not be
 *    atomic with the fabric's.
 */
#ifndef SHM_ATOMICS_AMO_H
#define SHM_ATOMICS_AMO_H

#include <string.h>

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

/*
 * The CPU atomic on a mapped word p. Always inlined: t and op are constants
 * at every API call, so each typed call folds to one instruction (lock xadd,
 * lock cmpxchg, xchg, ...) or a short compare-and-swap loop (float add).
 */
#define SHM_AMO_CPU_INT(UT)                                                    \
    do {                                                                       \
        UT *w_ = (UT *)p, v_ = 0, c_ = 0, o_ = 0;                              \
        if (operand)                                                           \
            memcpy(&v_, operand, sizeof(UT));                                  \
        switch (op) {                                                          \
        case CDT_AMO_ADD: __atomic_fetch_add(w_, v_, __ATOMIC_SEQ_CST); return; \
        case CDT_AMO_AND: __atomic_fetch_and(w_, v_, __ATOMIC_SEQ_CST); return; \
        case CDT_AMO_OR: __atomic_fetch_or(w_, v_, __ATOMIC_SEQ_CST); return;  \
        case CDT_AMO_XOR: __atomic_fetch_xor(w_, v_, __ATOMIC_SEQ_CST); return; \
        case CDT_AMO_SET: __atomic_store_n(w_, v_, __ATOMIC_SEQ_CST); return;  \
        case CDT_AMO_FETCH_ADD: o_ = __atomic_fetch_add(w_, v_, __ATOMIC_SEQ_CST); break; \
        case CDT_AMO_FETCH_AND: o_ = __atomic_fetch_and(w_, v_, __ATOMIC_SEQ_CST); break; \
        case CDT_AMO_FETCH_OR: o_ = __atomic_fetch_or(w_, v_, __ATOMIC_SEQ_CST); break; \
        case CDT_AMO_FETCH_XOR: o_ = __atomic_fetch_xor(w_, v_, __ATOMIC_SEQ_CST); break; \
        case CDT_AMO_SWAP: o_ = __atomic_exchange_n(w_, v_, __ATOMIC_SEQ_CST); break; \
        case CDT_AMO_FETCH: o_ = __atomic_load_n(w_, __ATOMIC_SEQ_CST); break; \
        case CDT_AMO_CSWAP:                                                    \
            memcpy(&c_, cond, sizeof(UT));                                     \
            __atomic_compare_exchange_n(w_, &c_, v_, 0, __ATOMIC_SEQ_CST,      \
                                        __ATOMIC_SEQ_CST);                     \
            o_ = c_;                                                           \
            break;                                                             \
        default: return;                                                       \
        }                                                                      \
        memcpy(result, &o_, sizeof(UT));                                       \
    } while (0)

/* Floating-point add: compare-and-swap on the bits. */
#define SHM_AMO_CPU_FADD(UT, FT)                                               \
    do {                                                                       \
        UT *w_ = (UT *)p, o_ = __atomic_load_n(w_, __ATOMIC_RELAXED), n_;      \
        FT v_, a_;                                                             \
        memcpy(&v_, operand, sizeof(FT));                                      \
        do {                                                                   \
            memcpy(&a_, &o_, sizeof(FT));                                      \
            a_ += v_;                                                          \
            memcpy(&n_, &a_, sizeof(UT));                                      \
        } while (!__atomic_compare_exchange_n(w_, &o_, n_, 1, __ATOMIC_SEQ_CST, \
                                              __ATOMIC_RELAXED));              \
        if (op == CDT_AMO_FETCH_ADD)                                           \
            memcpy(result, &o_, sizeof(UT));                                   \
        return;                                                                \
    } while (0)

static inline __attribute__((always_inline)) void
shm_amo_cpu(cdt_amo_type_t t, cdt_amo_op_t op, void *p, const void *operand, const void *cond,
            void *result)
{
    int add = op == CDT_AMO_ADD || op == CDT_AMO_FETCH_ADD;
    if (t == CDT_AMO_FLOAT && add)
        SHM_AMO_CPU_FADD(uint32_t, float);
    if (t == CDT_AMO_DOUBLE && add)
        SHM_AMO_CPU_FADD(uint64_t, double);
    if (t == CDT_AMO_INT32 || t == CDT_AMO_UINT32 || t == CDT_AMO_FLOAT)
        SHM_AMO_CPU_INT(uint32_t);
    else
        SHM_AMO_CPU_INT(uint64_t);
}

/* A PE spinning on fetching AMOs on mapped words must still serve the
 * requests other PEs send it now and then (cdt_amo_by_target): those need
 * its progress. Amortised: one progress call per 256 fetching AMOs. */
static __thread __attribute__((tls_model("initial-exec"))) unsigned shm_amo_cpu_turns_g;

static inline void shm_amo_cpu_serve(void)
{
    if (shm_unlikely(cdt_amo_serves_requests()) &&
        shm_unlikely((++shm_amo_cpu_turns_g & 255) == 0))
        cdt_progress();
}

/*
 * The mapped address of a word while its segment's AMOs are CPU atomics, else
 * NULL (then the fabric road decides: this PE's own word when its direct
 * path is off, the target's CPU on request, or the conduit).
 */
static inline int shm_amo_seg_cpu(int seg)
{
    return cdt_amo_heap_cpu() && (seg == SHM_SEG_HEAP || shm_env_g.DIRECT_GLOBALS);
}

static inline __attribute__((always_inline)) void *shm_amo_cpu_addr(int seg, size_t off, int pe)
{
    if (!shm_amo_seg_cpu(seg))
        return NULL;
    return shm_seg_peer_addr(seg, pe, off, 1);
}

/* Checks the call and translates the target; returns the segment, and in
 * *pe the world PE that the context's PE number names. */
static inline __attribute__((always_inline)) int
shm_amo_target(const char *fn, struct shm_ctx *ctx, const void *dest, size_t size, int *pe,
               size_t *off_p)
{
    *pe = shm_rma_check(fn, ctx, *pe);
    int seg = shm_xlate_or_die(fn, dest, size, off_p, "atomic target");
    if (shm_unlikely(shm_state_g.debug) && ((uintptr_t)dest & (size - 1)) != 0)
        shm_amo_misaligned(fn, dest, size, *pe);
    return seg;
}

/*
 * Every road but a CPU atomic on a mapped word (amo.c): out of line, so that
 * each typed API function stays a few instructions on the direct path.
 * cond is used by CSWAP only; result may be NULL for non-fetching ops.
 */
void shm_amo_fabric(const char *fn, cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                    size_t off, const void *operand, const void *cond, void *result, int pe,
                    int nbi);

/* Non-fetching op on a translated target. */
static inline __attribute__((always_inline)) void
shm_amo_post_at(const char *fn, cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                size_t off, const void *operand, int pe)
{
    void *p = shm_amo_cpu_addr(seg, off, pe);
    if (shm_likely(p != NULL))
        shm_amo_cpu(t, op, p, operand, NULL, NULL);
    else
        shm_amo_fabric(fn, ctx, t, op, seg, off, operand, NULL, NULL, pe, 0);
}

/* add, and, or, xor, set: complete at the target by the next quiet. */
static inline __attribute__((always_inline)) void
shm_amo_post(const char *fn, struct shm_ctx *ctx, cdt_amo_type_t t, cdt_amo_op_t op, void *dest,
             size_t size, const void *operand, int pe)
{
    size_t off;
    int seg = shm_amo_target(fn, ctx, dest, size, &pe, &off);
    shm_amo_post_at(fn, &ctx->cdt, t, op, seg, off, operand, pe);
}

/* fetch_add, fetch_and, ..., swap, fetch: *result on return (nbi: by quiet). */
static inline __attribute__((always_inline)) void
shm_amo_fetch(const char *fn, struct shm_ctx *ctx, cdt_amo_type_t t, cdt_amo_op_t op,
              const void *dest, size_t size, const void *operand, void *result, int pe, int nbi)
{
    size_t off;
    int seg = shm_amo_target(fn, ctx, dest, size, &pe, &off);
    void *p = shm_amo_cpu_addr(seg, off, pe);
    if (shm_likely(p != NULL)) {
        shm_amo_cpu(t, op, p, operand, NULL, result);
        shm_amo_cpu_serve();
    } else {
        shm_amo_fabric(fn, &ctx->cdt, t, op, seg, off, operand, NULL, result, pe, nbi);
    }
}

static inline __attribute__((always_inline)) void
shm_amo_cswap(const char *fn, struct shm_ctx *ctx, cdt_amo_type_t t, void *dest, size_t size,
              const void *cond, const void *value, void *result, int pe, int nbi)
{
    size_t off;
    int seg = shm_amo_target(fn, ctx, dest, size, &pe, &off);
    void *p = shm_amo_cpu_addr(seg, off, pe);
    if (shm_likely(p != NULL)) {
        shm_amo_cpu(t, CDT_AMO_CSWAP, p, value, cond, result);
        shm_amo_cpu_serve();
    } else {
        shm_amo_fabric(fn, &ctx->cdt, t, CDT_AMO_CSWAP, seg, off, value, cond, result, pe, nbi);
    }
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
