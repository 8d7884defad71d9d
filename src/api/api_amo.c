// SPDX-License-Identifier: BSD-3-Clause
/*
 * Atomic memory operations: standard, extended and bitwise, their
 * non-blocking fetching forms, context forms and the deprecated names.
 * Values are passed to the layer below by address and type (src/atomics).
 */
#include "api/api.h"
#include "atomics/amo.h"

#define CTX(c) ((struct shm_ctx *)(c))
#define DFLT (&shm_ctx_default_g)
#define TY(T) SHM_AMO_TYPE(T)

/* Non-fetching: shmem_[ctx_]N_atomic_NAME(dest, value, pe). */
#define SHM_AMO_POST(T, N, NAME, OP)                                           \
    SHM_DEFINE(void, shmem_ctx_##N##_atomic_##NAME, (shmem_ctx_t ctx, T *dest, T value, int pe), \
               { shm_amo_post(__func__, CTX(ctx), TY(T), OP, dest, sizeof(T), &value, pe); }) \
    SHM_DEFINE(void, shmem_##N##_atomic_##NAME, (T *dest, T value, int pe),   \
               { shm_amo_post(__func__, DFLT, TY(T), OP, dest, sizeof(T), &value, pe); })

/* Fetching with an operand, and its _nbi form. */
#define SHM_AMO_FETCHING(T, N, NAME, OP)                                       \
    SHM_DEFINE(T, shmem_ctx_##N##_atomic_##NAME, (shmem_ctx_t ctx, T *dest, T value, int pe), { \
        T r;                                                                   \
        shm_amo_fetch(__func__, CTX(ctx), TY(T), OP, dest, sizeof(T), &value, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(T, shmem_##N##_atomic_##NAME, (T *dest, T value, int pe), {    \
        T r;                                                                   \
        shm_amo_fetch(__func__, DFLT, TY(T), OP, dest, sizeof(T), &value, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(void, shmem_ctx_##N##_atomic_##NAME##_nbi,                      \
               (shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe),          \
               { shm_amo_fetch(__func__, CTX(ctx), TY(T), OP, dest, sizeof(T), &value, fetch, pe, \
                               1); })                                          \
    SHM_DEFINE(void, shmem_##N##_atomic_##NAME##_nbi, (T *fetch, T *dest, T value, int pe), \
               { shm_amo_fetch(__func__, DFLT, TY(T), OP, dest, sizeof(T), &value, fetch, pe, 1); })

/* Standard AMO types: add, inc, fetch_add, fetch_inc, compare_swap. */
#define SHM_AMO_STD(T, N)                                                      \
    SHM_AMO_POST(T, N, add, CDT_AMO_ADD)                                       \
    SHM_AMO_FETCHING(T, N, fetch_add, CDT_AMO_FETCH_ADD)                       \
    SHM_DEFINE(void, shmem_ctx_##N##_atomic_inc, (shmem_ctx_t ctx, T *dest, int pe), { \
        T one = 1;                                                             \
        shm_amo_post(__func__, CTX(ctx), TY(T), CDT_AMO_ADD, dest, sizeof(T), &one, pe); \
    })                                                                         \
    SHM_DEFINE(void, shmem_##N##_atomic_inc, (T *dest, int pe), {             \
        T one = 1;                                                             \
        shm_amo_post(__func__, DFLT, TY(T), CDT_AMO_ADD, dest, sizeof(T), &one, pe); \
    })                                                                         \
    SHM_DEFINE(T, shmem_ctx_##N##_atomic_fetch_inc, (shmem_ctx_t ctx, T *dest, int pe), { \
        T one = 1, r;                                                          \
        shm_amo_fetch(__func__, CTX(ctx), TY(T), CDT_AMO_FETCH_ADD, dest, sizeof(T), &one, &r, \
                      pe, 0);                                                  \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(T, shmem_##N##_atomic_fetch_inc, (T *dest, int pe), {          \
        T one = 1, r;                                                          \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH_ADD, dest, sizeof(T), &one, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(void, shmem_ctx_##N##_atomic_fetch_inc_nbi,                     \
               (shmem_ctx_t ctx, T *fetch, T *dest, int pe), {                 \
                   T one = 1;                                                  \
                   shm_amo_fetch(__func__, CTX(ctx), TY(T), CDT_AMO_FETCH_ADD, dest, sizeof(T), \
                                 &one, fetch, pe, 1);                          \
               })                                                              \
    SHM_DEFINE(void, shmem_##N##_atomic_fetch_inc_nbi, (T *fetch, T *dest, int pe), { \
        T one = 1;                                                             \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH_ADD, dest, sizeof(T), &one, fetch, \
                      pe, 1);                                                  \
    })                                                                         \
    SHM_DEFINE(T, shmem_ctx_##N##_atomic_compare_swap,                         \
               (shmem_ctx_t ctx, T *dest, T cond, T value, int pe), {          \
                   T r;                                                        \
                   shm_amo_cswap(__func__, CTX(ctx), TY(T), dest, sizeof(T), &cond, &value, &r, \
                                 pe, 0);                                       \
                   return r;                                                   \
               })                                                              \
    SHM_DEFINE(T, shmem_##N##_atomic_compare_swap, (T *dest, T cond, T value, int pe), { \
        T r;                                                                   \
        shm_amo_cswap(__func__, DFLT, TY(T), dest, sizeof(T), &cond, &value, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(void, shmem_ctx_##N##_atomic_compare_swap_nbi,                  \
               (shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe),  \
               { shm_amo_cswap(__func__, CTX(ctx), TY(T), dest, sizeof(T), &cond, &value, fetch, \
                               pe, 1); })                                      \
    SHM_DEFINE(void, shmem_##N##_atomic_compare_swap_nbi,                      \
               (T *fetch, T *dest, T cond, T value, int pe),                   \
               { shm_amo_cswap(__func__, DFLT, TY(T), dest, sizeof(T), &cond, &value, fetch, pe, \
                               1); })                                          \
    /* Deprecated (1.4) names, default context only. */                        \
    SHM_DEFINE(void, shmem_##N##_add, (T *dest, T value, int pe),              \
               { shm_amo_post(__func__, DFLT, TY(T), CDT_AMO_ADD, dest, sizeof(T), &value, pe); }) \
    SHM_DEFINE(void, shmem_##N##_inc, (T *dest, int pe), {                     \
        T one = 1;                                                             \
        shm_amo_post(__func__, DFLT, TY(T), CDT_AMO_ADD, dest, sizeof(T), &one, pe); \
    })                                                                         \
    SHM_DEFINE(T, shmem_##N##_fadd, (T *dest, T value, int pe), {             \
        T r;                                                                   \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH_ADD, dest, sizeof(T), &value, &r, pe, \
                      0);                                                      \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(T, shmem_##N##_finc, (T *dest, int pe), {                      \
        T one = 1, r;                                                          \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH_ADD, dest, sizeof(T), &one, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(T, shmem_##N##_cswap, (T *dest, T cond, T value, int pe), {    \
        T r;                                                                   \
        shm_amo_cswap(__func__, DFLT, TY(T), dest, sizeof(T), &cond, &value, &r, pe, 0); \
        return r;                                                              \
    })
SHM_AMO_STD_TYPES(SHM_AMO_STD)

/* Extended AMO types: fetch, set, swap. */
#define SHM_AMO_EXT(T, N)                                                      \
    SHM_AMO_POST(T, N, set, CDT_AMO_SET)                                       \
    SHM_AMO_FETCHING(T, N, swap, CDT_AMO_SWAP)                                 \
    SHM_DEFINE(T, shmem_ctx_##N##_atomic_fetch, (shmem_ctx_t ctx, const T *source, int pe), { \
        T r;                                                                   \
        shm_amo_fetch(__func__, CTX(ctx), TY(T), CDT_AMO_FETCH, source, sizeof(T), NULL, &r, pe, \
                      0);                                                      \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(T, shmem_##N##_atomic_fetch, (const T *source, int pe), {      \
        T r;                                                                   \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH, source, sizeof(T), NULL, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(void, shmem_ctx_##N##_atomic_fetch_nbi,                         \
               (shmem_ctx_t ctx, T *fetch, const T *source, int pe),           \
               { shm_amo_fetch(__func__, CTX(ctx), TY(T), CDT_AMO_FETCH, source, sizeof(T), NULL, \
                               fetch, pe, 1); })                               \
    SHM_DEFINE(void, shmem_##N##_atomic_fetch_nbi, (T *fetch, const T *source, int pe), \
               { shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH, source, sizeof(T), NULL, \
                               fetch, pe, 1); })                               \
    /* Deprecated (1.4) names. */                                              \
    SHM_DEFINE(T, shmem_##N##_fetch, (const T *source, int pe), {             \
        T r;                                                                   \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_FETCH, source, sizeof(T), NULL, &r, pe, 0); \
        return r;                                                              \
    })                                                                         \
    SHM_DEFINE(void, shmem_##N##_set, (T *dest, T value, int pe),              \
               { shm_amo_post(__func__, DFLT, TY(T), CDT_AMO_SET, dest, sizeof(T), &value, pe); }) \
    SHM_DEFINE(T, shmem_##N##_swap, (T *dest, T value, int pe), {             \
        T r;                                                                   \
        shm_amo_fetch(__func__, DFLT, TY(T), CDT_AMO_SWAP, dest, sizeof(T), &value, &r, pe, 0); \
        return r;                                                              \
    })
SHM_AMO_EXT_TYPES(SHM_AMO_EXT)

/* Bitwise AMO types: and, or, xor and their fetching forms. */
#define SHM_AMO_BITWISE(T, N)                                                  \
    SHM_AMO_POST(T, N, and, CDT_AMO_AND)                                       \
    SHM_AMO_POST(T, N, or, CDT_AMO_OR)                                         \
    SHM_AMO_POST(T, N, xor, CDT_AMO_XOR)                                       \
    SHM_AMO_FETCHING(T, N, fetch_and, CDT_AMO_FETCH_AND)                       \
    SHM_AMO_FETCHING(T, N, fetch_or, CDT_AMO_FETCH_OR)                         \
    SHM_AMO_FETCHING(T, N, fetch_xor, CDT_AMO_FETCH_XOR)
SHM_AMO_BITWISE_TYPES(SHM_AMO_BITWISE)
