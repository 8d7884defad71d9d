// SPDX-License-Identifier: BSD-3-Clause
/*
 * Emulation of the atomics the conduit does not carry, by a compare-and-swap
 * loop on a word of the same width: read the word, compute the new value
 * here, swap it in if the word did not change meanwhile, else retry with
 * what the swap returned. Atomic with respect to every other AMO because the
 * swap itself is the provider's (all PEs, this one included, use it). Used
 * for data/BSS words, and for every word when the direct path is off.
 * Also: shm_amo_fabric, the out-of-line road of every AMO that is not a CPU
 * atomic on a mapped word.
 */
#include <string.h>

#include "atomics/amo.h"

void shm_amo_misaligned(const char *fn, const void *addr, size_t size, int pe)
{
    shm_fatal("%s: atomic target %p (for PE %d) is not aligned to %zu bytes", fn, addr, pe,
              size);
}

typedef union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f;
    double d;
} amo_word_t;

static size_t type_size(cdt_amo_type_t t)
{
    return t == CDT_AMO_INT32 || t == CDT_AMO_UINT32 || t == CDT_AMO_FLOAT ? 4 : 8;
}

/* new = old OP v, in type t (integers wrap, as the providers' do). */
#define AMO_APPLY(F, TY)                                                       \
    switch (op) {                                                              \
    case CDT_AMO_ADD:                                                          \
    case CDT_AMO_FETCH_ADD: r.F = (TY)(o.F + v.F); break;                      \
    case CDT_AMO_SET:                                                          \
    case CDT_AMO_SWAP: r.F = v.F; break;                                       \
    default: bitwise = 1; break;                                               \
    }

static int apply(cdt_amo_type_t t, cdt_amo_op_t op, const amo_word_t *old, const void *operand,
                 amo_word_t *new_p)
{
    amo_word_t o = *old, v = {0}, r = {0};
    int bitwise = 0;
    memcpy(&v, operand, type_size(t));
    switch (t) {
    case CDT_AMO_INT32:
    case CDT_AMO_UINT32: AMO_APPLY(u32, uint32_t); break;
    case CDT_AMO_INT64:
    case CDT_AMO_UINT64: AMO_APPLY(u64, uint64_t); break;
    case CDT_AMO_FLOAT: AMO_APPLY(f, float); break;
    case CDT_AMO_DOUBLE: AMO_APPLY(d, double); break;
    default: return -1;
    }
    if (bitwise) {
        if (t == CDT_AMO_FLOAT || t == CDT_AMO_DOUBLE)
            return -1;
        switch (op) {
        case CDT_AMO_AND:
        case CDT_AMO_FETCH_AND: r.u64 = o.u64 & v.u64; break;
        case CDT_AMO_OR:
        case CDT_AMO_FETCH_OR: r.u64 = o.u64 | v.u64; break;
        case CDT_AMO_XOR:
        case CDT_AMO_FETCH_XOR: r.u64 = o.u64 ^ v.u64; break;
        default: return -1;
        }
    }
    *new_p = r;
    return 0;
}

/* The integer type of t's width whose compare-and-swap the conduit carries. */
static int cswap_type(cdt_amo_type_t t, cdt_amo_type_t *ct_p)
{
    static const cdt_amo_type_t w4[] = {CDT_AMO_UINT32, CDT_AMO_INT32};
    static const cdt_amo_type_t w8[] = {CDT_AMO_UINT64, CDT_AMO_INT64};
    const cdt_amo_type_t *c = type_size(t) == 4 ? w4 : w8;
    for (int i = 0; i < 2; i++)
        if (cdt_amo_offered(c[i], CDT_AMO_CSWAP)) {
            *ct_p = c[i];
            return 0;
        }
    return -1;
}

void shm_amo_emulate(const char *fn, cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                     size_t off, const void *operand, const void *cond, void *result, int pe)
{
    size_t size = type_size(t);
    cdt_amo_type_t ct;
    if (cswap_type(t, &ct) != 0)
        shm_fatal("%s: provider %s offers no atomic %s on %s, nor a %zu-bit compare-and-swap to "
                  "emulate it",
                  fn, cdt_provider_name(), cdt_amo_op_name(op), cdt_amo_type_name(t), size * 8);

    amo_word_t old = {0}, cur = {0}, nv = {0};
    if (op == CDT_AMO_CSWAP) {
        /* Same width, other signedness: equality of bits is equality of values. */
        cdt_cswap(ctx, ct, seg, off, cond, operand, &cur, pe);
        memcpy(result, &cur, size);
        return;
    }
    /* Read the word: swapping 0 for 0 changes nothing and returns it. */
    if (cdt_amo_offered(t, CDT_AMO_FETCH))
        cdt_fetch_amo(ctx, t, CDT_AMO_FETCH, seg, off, NULL, &old, pe);
    else
        cdt_cswap(ctx, ct, seg, off, &nv, &nv, &old, pe);
    if (op != CDT_AMO_FETCH) {
        for (;;) {
            if (apply(t, op, &old, operand, &nv) != 0)
                shm_fatal("%s: atomic %s is not defined on %s", fn, cdt_amo_op_name(op),
                          cdt_amo_type_name(t));
            cdt_cswap(ctx, ct, seg, off, &old, &nv, &cur, pe);
            if (memcmp(&cur, &old, size) == 0)
                break;
            old = cur;
        }
    }
    if (result)
        memcpy(result, &old, size);
}

/*
 * Every road but a CPU atomic by the origin on a mapped word:
 *  - words of a segment whose AMOs are CPU atomics (shm_amo_seg_cpu): this
 *    PE's own word when it is not mapped (it shares its host with nobody, its
 *    memfd could not be made, or the word is on an edge page of data+BSS
 *    left unshared), else the target applies it on request;
 *  - otherwise the conduit: the provider's atomic, its active messages, or
 *    a compare-and-swap loop for what it lacks.
 */
void shm_amo_fabric(const char *fn, cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg,
                    size_t off, const void *operand, const void *cond, void *result, int pe,
                    int nbi)
{
    if (shm_amo_seg_cpu(seg)) {
        if (pe == shm_state_g.me) {
            shm_amo_cpu(t, op, (void *)(shm_seg_g[seg].base + off), operand, cond, result);
            if (result)
                shm_amo_cpu_serve();
        } else {
            cdt_amo_by_target(ctx, t, op, seg, off, operand, cond, result, pe,
                              result != NULL && !nbi);
        }
        return;
    }
    if (!cdt_amo_offered(t, op)) {
        shm_amo_emulate(fn, ctx, t, op, seg, off, operand, cond, result, pe);
    } else if (result == NULL) {
        cdt_amo(ctx, t, op, seg, off, operand, pe);
    } else if (op == CDT_AMO_CSWAP) {
        if (nbi)
            cdt_cswap_nbi(ctx, t, seg, off, cond, operand, result, pe);
        else
            cdt_cswap(ctx, t, seg, off, cond, operand, result, pe);
    } else if (nbi) {
        cdt_fetch_amo_nbi(ctx, t, op, seg, off, operand, result, pe);
    } else {
        cdt_fetch_amo(ctx, t, op, seg, off, operand, result, pe);
    }
}
