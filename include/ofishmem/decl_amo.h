/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomic memory operations, signals, distributed locks and the
 * wait/test families beyond wait_until/test: declarations (from the type tables) and C11 generics.
 * Included by <shmem.h>; not meant to be included on its own.
 */
#ifndef OFISHMEM_DECL_AMO_H
#define OFISHMEM_DECL_AMO_H

/* ---- AMOs ------------------------------------------------------------- */
/* Non-fetching (value) and fetching (value, _nbi) forms of one operation. */
#define SHM_DECL_AMO_POST(T, N, OP)                                            \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe);                    \
    void shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);
#define SHM_DECL_AMO_FETCHING(T, N, OP)                                        \
    T shmem_##N##_atomic_##OP(T *dest, T value, int pe);                       \
    T shmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);  \
    void shmem_##N##_atomic_##OP##_nbi(T *fetch, T *dest, T value, int pe);    \
    void shmem_ctx_##N##_atomic_##OP##_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);

/* Table "Standard AMO Types and Names". */
#define SHM_DECL_AMO_STD(T, N)                                                 \
    SHM_DECL_AMO_POST(T, N, add)                                               \
    SHM_DECL_AMO_FETCHING(T, N, fetch_add)                                     \
    void shmem_##N##_atomic_inc(T *dest, int pe);                              \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);         \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                           \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);      \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);          \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch, T *dest, int pe); \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);       \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond, T value, int pe); \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe); \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest, T cond, \
                                                 T value, int pe);            \
    /* Deprecated (OpenSHMEM 1.4) */                                           \
    void shmem_##N##_add(T *dest, T value, int pe);                            \
    void shmem_##N##_inc(T *dest, int pe);                                     \
    T shmem_##N##_fadd(T *dest, T value, int pe);                              \
    T shmem_##N##_finc(T *dest, int pe);                                       \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe);
SHM_AMO_STD_TYPES(SHM_DECL_AMO_STD)
#undef SHM_DECL_AMO_STD

/* Table "Extended AMO Types and Names". */
#define SHM_DECL_AMO_EXT(T, N)                                                 \
    SHM_DECL_AMO_POST(T, N, set)                                               \
    SHM_DECL_AMO_FETCHING(T, N, swap)                                          \
    T shmem_##N##_atomic_fetch(const T *source, int pe);                       \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe);  \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);      \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch, const T *source, int pe); \
    /* Deprecated (OpenSHMEM 1.4) */                                           \
    T shmem_##N##_fetch(const T *source, int pe);                              \
    void shmem_##N##_set(T *dest, T value, int pe);                            \
    T shmem_##N##_swap(T *dest, T value, int pe);
SHM_AMO_EXT_TYPES(SHM_DECL_AMO_EXT)
#undef SHM_DECL_AMO_EXT

/* Table "Bitwise AMO Types and Names". */
#define SHM_DECL_AMO_BITWISE(T, N)                                             \
    SHM_DECL_AMO_POST(T, N, and)                                               \
    SHM_DECL_AMO_POST(T, N, or)                                                \
    SHM_DECL_AMO_POST(T, N, xor)                                               \
    SHM_DECL_AMO_FETCHING(T, N, fetch_and)                                     \
    SHM_DECL_AMO_FETCHING(T, N, fetch_or)                                      \
    SHM_DECL_AMO_FETCHING(T, N, fetch_xor)
SHM_AMO_BITWISE_TYPES(SHM_DECL_AMO_BITWISE)
#undef SHM_DECL_AMO_BITWISE
#undef SHM_DECL_AMO_POST
#undef SHM_DECL_AMO_FETCHING

/* ---- Signals ---------------------------------------------------------- */
#define SHM_DECL_PUT_SIGNAL(PFX, T)                                            \
    void shmem_##PFX##_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                              uint64_t signal, int sig_op, int pe);            \
    void shmem_ctx_##PFX##_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                  uint64_t *sig_addr, uint64_t signal, int sig_op, int pe); \
    void shmem_##PFX##_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                  uint64_t signal, int sig_op, int pe);        \
    void shmem_ctx_##PFX##_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, \
                                      uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
#define SHM_DECL_PUT_SIGNAL_TYPED(T, N) SHM_DECL_PUT_SIGNAL(N##_put, T)
#define SHM_DECL_PUT_SIGNAL_SIZED(BITS, BYTES) SHM_DECL_PUT_SIGNAL(put##BITS, void)
SHM_RMA_TYPES(SHM_DECL_PUT_SIGNAL_TYPED)
SHM_SIZED_TYPES(SHM_DECL_PUT_SIGNAL_SIZED)
SHM_DECL_PUT_SIGNAL(putmem, void)
#undef SHM_DECL_PUT_SIGNAL_TYPED
#undef SHM_DECL_PUT_SIGNAL_SIZED
#undef SHM_DECL_PUT_SIGNAL

uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- Distributed locks ------------------------------------------------ */
void shmem_set_lock(long *lock);
int shmem_test_lock(long *lock);
void shmem_clear_lock(long *lock);

/* ---- Point-to-point synchronisation on sets of variables -------------- */
#define SHM_DECL_P2P_SETS(T, N)                                                \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, \
                                    T cmp_value);                              \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, \
                                      T cmp_value);                            \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, \
                                       const int *status, int cmp, T cmp_value); \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                           const T *cmp_values);               \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, \
                                             int cmp, const T *cmp_values);    \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                              const int *status, int cmp, const T *cmp_values); \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, \
                                T cmp_value);                                  \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, \
                                 int cmp, T cmp_value);                        \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                    const T *cmp_values);                      \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                       const T *cmp_values);                   \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                        const int *status, int cmp, const T *cmp_values);
SHM_P2P_WAIT_TYPES(SHM_DECL_P2P_SETS) /* short and ushort: deprecated */
#undef SHM_DECL_P2P_SETS

/* ---- C11 generics ------------------------------------------------------
 * SHM_GENERIC / SHM_GENERIC_NOCTX come from <ofishmem/generics.h>, which
 * <shmem.h> includes after this file; macros expand where they are used,
 * so only the order of use matters.
 */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* Associations on the destination: T*, with and without a context. */
#define SHM_GA_AMO_(T, NAME) T *: NAME,
#define SHM_GA_atomic_add(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_add)
#define SHM_GA_CTX_atomic_add(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_add)
#define SHM_GA_atomic_inc(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_inc)
#define SHM_GA_CTX_atomic_inc(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_inc)
#define SHM_GA_atomic_fetch_add(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_add)
#define SHM_GA_CTX_atomic_fetch_add(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_add)
#define SHM_GA_atomic_fetch_inc(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_inc)
#define SHM_GA_CTX_atomic_fetch_inc(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_inc)
#define SHM_GA_atomic_compare_swap(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_compare_swap)
#define SHM_GA_CTX_atomic_compare_swap(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_compare_swap)
#define SHM_GA_atomic_fetch_add_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_add_nbi)
#define SHM_GA_CTX_atomic_fetch_add_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_add_nbi)
#define SHM_GA_atomic_fetch_inc_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_inc_nbi)
#define SHM_GA_CTX_atomic_fetch_inc_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_inc_nbi)
#define SHM_GA_atomic_compare_swap_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_compare_swap_nbi)
#define SHM_GA_CTX_atomic_compare_swap_nbi(T, N)                               \
    SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_compare_swap_nbi)
#define SHM_GA_atomic_set(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_set)
#define SHM_GA_CTX_atomic_set(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_set)
#define SHM_GA_atomic_swap(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_swap)
#define SHM_GA_CTX_atomic_swap(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_swap)
#define SHM_GA_atomic_swap_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_swap_nbi)
#define SHM_GA_CTX_atomic_swap_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_swap_nbi)
#define SHM_GA_atomic_fetch(T, N)                                              \
    T *: shmem_##N##_atomic_fetch, const T *: shmem_##N##_atomic_fetch,
#define SHM_GA_CTX_atomic_fetch(T, N)                                          \
    T *: shmem_ctx_##N##_atomic_fetch, const T *: shmem_ctx_##N##_atomic_fetch,
#define SHM_GA_atomic_fetch_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_nbi)
#define SHM_GA_CTX_atomic_fetch_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_nbi)
#define SHM_GA_atomic_and(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_and)
#define SHM_GA_CTX_atomic_and(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_and)
#define SHM_GA_atomic_or(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_or)
#define SHM_GA_CTX_atomic_or(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_or)
#define SHM_GA_atomic_xor(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_xor)
#define SHM_GA_CTX_atomic_xor(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_xor)
#define SHM_GA_atomic_fetch_and(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_and)
#define SHM_GA_CTX_atomic_fetch_and(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_and)
#define SHM_GA_atomic_fetch_or(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_or)
#define SHM_GA_CTX_atomic_fetch_or(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_or)
#define SHM_GA_atomic_fetch_xor(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_xor)
#define SHM_GA_CTX_atomic_fetch_xor(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_xor)
#define SHM_GA_atomic_fetch_and_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_and_nbi)
#define SHM_GA_CTX_atomic_fetch_and_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_and_nbi)
#define SHM_GA_atomic_fetch_or_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_or_nbi)
#define SHM_GA_CTX_atomic_fetch_or_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_or_nbi)
#define SHM_GA_atomic_fetch_xor_nbi(T, N) SHM_GA_AMO_(T, shmem_##N##_atomic_fetch_xor_nbi)
#define SHM_GA_CTX_atomic_fetch_xor_nbi(T, N) SHM_GA_AMO_(T, shmem_ctx_##N##_atomic_fetch_xor_nbi)

#define shmem_atomic_add(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_add, __VA_ARGS__)
#define shmem_atomic_inc(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...)                                            \
    SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...)                                            \
    SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_compare_swap(...)                                         \
    SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...)                                        \
    SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...)                                        \
    SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...)                                     \
    SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_set(...) SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, atomic_swap, __VA_ARGS__)
#define shmem_atomic_fetch(...) SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...)                                             \
    SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...)                                            \
    SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_and(...) SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_and, __VA_ARGS__)
#define shmem_atomic_or(...) SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_or, __VA_ARGS__)
#define shmem_atomic_xor(...) SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_and(...)                                            \
    SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)                                             \
    SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...)                                            \
    SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...)                                        \
    SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...)                                         \
    SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...)                                        \
    SHM_GENERIC(SHM_AMO_BITWISE_GENERIC_TYPES, atomic_fetch_xor_nbi, __VA_ARGS__)

/* Deprecated (1.4) generic names, onto the current functions. */
#define SHM_GA_add SHM_GA_atomic_add
#define SHM_GA_CTX_add SHM_GA_CTX_atomic_add
#define SHM_GA_inc SHM_GA_atomic_inc
#define SHM_GA_CTX_inc SHM_GA_CTX_atomic_inc
#define SHM_GA_fadd SHM_GA_atomic_fetch_add
#define SHM_GA_CTX_fadd SHM_GA_CTX_atomic_fetch_add
#define SHM_GA_finc SHM_GA_atomic_fetch_inc
#define SHM_GA_CTX_finc SHM_GA_CTX_atomic_fetch_inc
#define SHM_GA_cswap SHM_GA_atomic_compare_swap
#define SHM_GA_CTX_cswap SHM_GA_CTX_atomic_compare_swap
#define SHM_GA_fetch SHM_GA_atomic_fetch
#define SHM_GA_CTX_fetch SHM_GA_CTX_atomic_fetch
#define SHM_GA_set SHM_GA_atomic_set
#define SHM_GA_CTX_set SHM_GA_CTX_atomic_set
#define SHM_GA_swap SHM_GA_atomic_swap
#define SHM_GA_CTX_swap SHM_GA_CTX_atomic_swap
#define shmem_add(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, add, __VA_ARGS__)
#define shmem_inc(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, inc, __VA_ARGS__)
#define shmem_fadd(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, fadd, __VA_ARGS__)
#define shmem_finc(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, finc, __VA_ARGS__)
#define shmem_cswap(...) SHM_GENERIC(SHM_AMO_STD_GENERIC_TYPES, cswap, __VA_ARGS__)
#define shmem_fetch(...) SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, fetch, __VA_ARGS__)
#define shmem_set(...) SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, set, __VA_ARGS__)
#define shmem_swap(...) SHM_GENERIC(SHM_AMO_EXT_GENERIC_TYPES, swap, __VA_ARGS__)

/* put-with-signal: on the destination, over the RMA types. */
#define SHM_GA_put_signal(T, N) T *: shmem_##N##_put_signal,
#define SHM_GA_CTX_put_signal(T, N) T *: shmem_ctx_##N##_put_signal,
#define SHM_GA_put_signal_nbi(T, N) T *: shmem_##N##_put_signal_nbi,
#define SHM_GA_CTX_put_signal_nbi(T, N) T *: shmem_ctx_##N##_put_signal_nbi,
#define shmem_put_signal(...) SHM_GENERIC(SHM_GENERIC_TYPES, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHM_GENERIC(SHM_GENERIC_TYPES, put_signal_nbi, __VA_ARGS__)

/* Sets of variables: on ivars (T* or volatile T*), no context forms. */
#define SHM_GA_P2P_(T, NAME) T *: NAME, volatile T *: NAME,
#define SHM_GA_wait_until_all(T, N) SHM_GA_P2P_(T, shmem_##N##_wait_until_all)
#define SHM_GA_wait_until_any(T, N) SHM_GA_P2P_(T, shmem_##N##_wait_until_any)
#define SHM_GA_wait_until_some(T, N) SHM_GA_P2P_(T, shmem_##N##_wait_until_some)
#define SHM_GA_wait_until_all_vector(T, N) SHM_GA_P2P_(T, shmem_##N##_wait_until_all_vector)
#define SHM_GA_wait_until_any_vector(T, N) SHM_GA_P2P_(T, shmem_##N##_wait_until_any_vector)
#define SHM_GA_wait_until_some_vector(T, N) SHM_GA_P2P_(T, shmem_##N##_wait_until_some_vector)
#define SHM_GA_test_all(T, N) SHM_GA_P2P_(T, shmem_##N##_test_all)
#define SHM_GA_test_any(T, N) SHM_GA_P2P_(T, shmem_##N##_test_any)
#define SHM_GA_test_some(T, N) SHM_GA_P2P_(T, shmem_##N##_test_some)
#define SHM_GA_test_all_vector(T, N) SHM_GA_P2P_(T, shmem_##N##_test_all_vector)
#define SHM_GA_test_any_vector(T, N) SHM_GA_P2P_(T, shmem_##N##_test_any_vector)
#define SHM_GA_test_some_vector(T, N) SHM_GA_P2P_(T, shmem_##N##_test_some_vector)
#define shmem_wait_until_all(...)                                              \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...)                                              \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...)                                             \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...)                                       \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...)                                       \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...)                                      \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until_some_vector, __VA_ARGS__)
#define shmem_test_all(...) SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test_all, __VA_ARGS__)
#define shmem_test_any(...) SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test_any, __VA_ARGS__)
#define shmem_test_some(...) SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test_some, __VA_ARGS__)
#define shmem_test_all_vector(...)                                             \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...)                                             \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...)                                            \
    SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test_some_vector, __VA_ARGS__)

#endif /* C11 */

#endif /* OFISHMEM_DECL_AMO_H */
