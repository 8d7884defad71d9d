/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The OpenSHMEM generic interfaces for C++: shmem_put(dest, src, n, pe),
 * shmem_atomic_add(ctx, x, 1L, pe), shmem_sum_reduce(team, d, s, n), ...
 *
 * C gets these names from C11 _Generic (<ofishmem/generics.h> and the
 * generics at the end of decl_amo.h and decl_coll.h). C++ has no _Generic,
 * so here each generic name is a set of inline overloads, one per type,
 * produced by expanding the SAME type lists of <ofishmem/typelists.h> that
 * feed the C11 associations (the *_GENERIC_TYPES lists: distinct C types, so
 * no overload is declared twice). Each overload calls the typed C function;
 * `g++ -E` shows them all. A type the C generic does not accept has no
 * overload, so the call does not compile either.
 *
 * Included by <shmem.h> when compiled as C++, after its extern "C" block;
 * not meant to be included on its own.
 */
#ifndef OFISHMEM_CXX_GENERICS_H
#define OFISHMEM_CXX_GENERICS_H

#ifdef __cplusplus

/* The reduction tables hold double _Complex and float _Complex: a C99
 * extension to clang++ -pedantic (g++ accepts them quietly). */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc99-extensions"
#endif

/* Overloads have C++ linkage even when <shmem.h> is included inside a
 * program's own extern "C" block. */
extern "C++" {

/* One overload: NAME PARAMS calls CFN ARGS (PARAMS and ARGS in parentheses). */
#define SHM_CXX_FN(RET, NAME, CFN, PARAMS, ARGS)                               \
    inline RET NAME PARAMS { return CFN ARGS; }
/* The same, and its context form: shmem_ctx_t ctx first, calling CTXFN. */
#define SHM_CXX_WITH_CTX_(...) (shmem_ctx_t ctx, __VA_ARGS__)
#define SHM_CXX_PASS_CTX_(...) (ctx, __VA_ARGS__)
#define SHM_CXX_FN_CTX(RET, NAME, CFN, CTXFN, PARAMS, ARGS)                    \
    SHM_CXX_FN(RET, NAME, CFN, PARAMS, ARGS)                                   \
    inline RET NAME SHM_CXX_WITH_CTX_ PARAMS { return CTXFN SHM_CXX_PASS_CTX_ ARGS; }

/* Typed C function names. */
#define SHM_CXX_T_(N, OP) shmem_##N##_##OP
#define SHM_CXX_CTX_T_(N, OP) shmem_ctx_##N##_##OP

/* ---- RMA: SHM_GENERIC_TYPES (as <ofishmem/generics.h>) ----------------- */
#define SHM_CXX_RMA_CONTIG_(T, N, OP)                                          \
    SHM_CXX_FN_CTX(void, shmem_##OP, SHM_CXX_T_(N, OP), SHM_CXX_CTX_T_(N, OP), \
                   (T * dest, const T *source, size_t nelems, int pe),         \
                   (dest, source, nelems, pe))
#define SHM_CXX_RMA_STRIDED_(T, N, OP)                                         \
    SHM_CXX_FN_CTX(void, shmem_##OP, SHM_CXX_T_(N, OP), SHM_CXX_CTX_T_(N, OP), \
                   (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                    int pe),                                                   \
                   (dest, source, dst, sst, nelems, pe))
#define SHM_CXX_RMA_BLOCKED_(T, N, OP)                                         \
    SHM_CXX_FN_CTX(void, shmem_##OP, SHM_CXX_T_(N, OP), SHM_CXX_CTX_T_(N, OP), \
                   (T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                    size_t nblocks, int pe),                                   \
                   (dest, source, dst, sst, bsize, nblocks, pe))
#define SHM_CXX_RMA(T, N)                                                      \
    SHM_CXX_RMA_CONTIG_(T, N, put)                                             \
    SHM_CXX_RMA_CONTIG_(T, N, get)                                             \
    SHM_CXX_RMA_CONTIG_(T, N, put_nbi)                                         \
    SHM_CXX_RMA_CONTIG_(T, N, get_nbi)                                         \
    SHM_CXX_FN_CTX(void, shmem_p, SHM_CXX_T_(N, p), SHM_CXX_CTX_T_(N, p),      \
                   (T * dest, T value, int pe), (dest, value, pe))             \
    SHM_CXX_FN_CTX(T, shmem_g, SHM_CXX_T_(N, g), SHM_CXX_CTX_T_(N, g),         \
                   (const T *source, int pe), (source, pe))                    \
    SHM_CXX_RMA_STRIDED_(T, N, iput)                                           \
    SHM_CXX_RMA_STRIDED_(T, N, iget)                                           \
    SHM_CXX_RMA_BLOCKED_(T, N, ibput)                                          \
    SHM_CXX_RMA_BLOCKED_(T, N, ibget)
SHM_GENERIC_TYPES(SHM_CXX_RMA)
#undef SHM_CXX_RMA
#undef SHM_CXX_RMA_CONTIG_
#undef SHM_CXX_RMA_STRIDED_
#undef SHM_CXX_RMA_BLOCKED_

/* ---- put-with-signal: SHM_GENERIC_TYPES (as decl_amo.h) ---------------- */
#define SHM_CXX_PUT_SIGNAL_(T, N, OP)                                          \
    SHM_CXX_FN_CTX(void, shmem_##OP, SHM_CXX_T_(N, OP), SHM_CXX_CTX_T_(N, OP), \
                   (T * dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                    uint64_t signal, int sig_op, int pe),                      \
                   (dest, source, nelems, sig_addr, signal, sig_op, pe))
#define SHM_CXX_PUT_SIGNAL(T, N)                                               \
    SHM_CXX_PUT_SIGNAL_(T, N, put_signal) SHM_CXX_PUT_SIGNAL_(T, N, put_signal_nbi)
SHM_GENERIC_TYPES(SHM_CXX_PUT_SIGNAL)
#undef SHM_CXX_PUT_SIGNAL
#undef SHM_CXX_PUT_SIGNAL_

/* ---- AMOs (as decl_amo.h) ------------------------------------------------
 * NAME is the generic name, OP the typed function it calls: the deprecated
 * 1.4 names (shmem_add, shmem_fadd, ...) call the current functions, as in C. */
#define SHM_CXX_AMO_POST_(T, N, NAME, OP)                                      \
    SHM_CXX_FN_CTX(void, shmem_##NAME, SHM_CXX_T_(N, atomic_##OP),             \
                   SHM_CXX_CTX_T_(N, atomic_##OP), (T * dest, T value, int pe), \
                   (dest, value, pe))
#define SHM_CXX_AMO_FETCH_(T, N, NAME, OP)                                     \
    SHM_CXX_FN_CTX(T, shmem_##NAME, SHM_CXX_T_(N, atomic_##OP),                \
                   SHM_CXX_CTX_T_(N, atomic_##OP), (T * dest, T value, int pe), \
                   (dest, value, pe))
#define SHM_CXX_AMO_FETCH_NBI_(T, N, OP)                                       \
    SHM_CXX_FN_CTX(void, shmem_atomic_##OP##_nbi, SHM_CXX_T_(N, atomic_##OP##_nbi), \
                   SHM_CXX_CTX_T_(N, atomic_##OP##_nbi), (T * fetch, T * dest, T value, int pe), \
                   (fetch, dest, value, pe))
#define SHM_CXX_AMO_INC_(T, N, NAME)                                           \
    SHM_CXX_FN_CTX(void, shmem_##NAME, SHM_CXX_T_(N, atomic_inc),              \
                   SHM_CXX_CTX_T_(N, atomic_inc), (T * dest, int pe), (dest, pe))
#define SHM_CXX_AMO_FINC_(T, N, NAME)                                          \
    SHM_CXX_FN_CTX(T, shmem_##NAME, SHM_CXX_T_(N, atomic_fetch_inc),           \
                   SHM_CXX_CTX_T_(N, atomic_fetch_inc), (T * dest, int pe), (dest, pe))
#define SHM_CXX_AMO_CSWAP_(T, N, NAME)                                         \
    SHM_CXX_FN_CTX(T, shmem_##NAME, SHM_CXX_T_(N, atomic_compare_swap),        \
                   SHM_CXX_CTX_T_(N, atomic_compare_swap), (T * dest, T cond, T value, int pe), \
                   (dest, cond, value, pe))
#define SHM_CXX_AMO_FETCHONLY_(T, N, NAME)                                     \
    SHM_CXX_FN_CTX(T, shmem_##NAME, SHM_CXX_T_(N, atomic_fetch),               \
                   SHM_CXX_CTX_T_(N, atomic_fetch), (const T *source, int pe), (source, pe))

/* Table "Standard AMO Types and Names": SHM_AMO_STD_GENERIC_TYPES. */
#define SHM_CXX_AMO_STD(T, N)                                                  \
    SHM_CXX_AMO_POST_(T, N, atomic_add, add)                                   \
    SHM_CXX_AMO_INC_(T, N, atomic_inc)                                         \
    SHM_CXX_AMO_FETCH_(T, N, atomic_fetch_add, fetch_add)                      \
    SHM_CXX_AMO_FINC_(T, N, atomic_fetch_inc)                                  \
    SHM_CXX_AMO_CSWAP_(T, N, atomic_compare_swap)                              \
    SHM_CXX_AMO_FETCH_NBI_(T, N, fetch_add)                                    \
    SHM_CXX_FN_CTX(void, shmem_atomic_fetch_inc_nbi, SHM_CXX_T_(N, atomic_fetch_inc_nbi), \
                   SHM_CXX_CTX_T_(N, atomic_fetch_inc_nbi), (T * fetch, T * dest, int pe), \
                   (fetch, dest, pe))                                          \
    SHM_CXX_FN_CTX(void, shmem_atomic_compare_swap_nbi,                        \
                   SHM_CXX_T_(N, atomic_compare_swap_nbi),                     \
                   SHM_CXX_CTX_T_(N, atomic_compare_swap_nbi),                 \
                   (T * fetch, T * dest, T cond, T value, int pe),             \
                   (fetch, dest, cond, value, pe))                             \
    /* Deprecated (OpenSHMEM 1.4) */                                           \
    SHM_CXX_AMO_POST_(T, N, add, add)                                          \
    SHM_CXX_AMO_INC_(T, N, inc)                                                \
    SHM_CXX_AMO_FETCH_(T, N, fadd, fetch_add)                                  \
    SHM_CXX_AMO_FINC_(T, N, finc)                                              \
    SHM_CXX_AMO_CSWAP_(T, N, cswap)
SHM_AMO_STD_GENERIC_TYPES(SHM_CXX_AMO_STD)
#undef SHM_CXX_AMO_STD

/* Table "Extended AMO Types and Names": SHM_AMO_EXT_GENERIC_TYPES. */
#define SHM_CXX_AMO_EXT(T, N)                                                  \
    SHM_CXX_AMO_POST_(T, N, atomic_set, set)                                   \
    SHM_CXX_AMO_FETCH_(T, N, atomic_swap, swap)                                \
    SHM_CXX_AMO_FETCHONLY_(T, N, atomic_fetch)                                 \
    SHM_CXX_AMO_FETCH_NBI_(T, N, swap)                                         \
    SHM_CXX_FN_CTX(void, shmem_atomic_fetch_nbi, SHM_CXX_T_(N, atomic_fetch_nbi), \
                   SHM_CXX_CTX_T_(N, atomic_fetch_nbi), (T * fetch, const T *source, int pe), \
                   (fetch, source, pe))                                        \
    /* Deprecated (OpenSHMEM 1.4) */                                           \
    SHM_CXX_AMO_FETCHONLY_(T, N, fetch)                                        \
    SHM_CXX_AMO_POST_(T, N, set, set)                                          \
    SHM_CXX_AMO_FETCH_(T, N, swap, swap)
SHM_AMO_EXT_GENERIC_TYPES(SHM_CXX_AMO_EXT)
#undef SHM_CXX_AMO_EXT

/* Table "Bitwise AMO Types and Names": SHM_AMO_BITWISE_GENERIC_TYPES. */
#define SHM_CXX_AMO_BITWISE(T, N)                                              \
    SHM_CXX_AMO_POST_(T, N, atomic_and, and)                                   \
    SHM_CXX_AMO_POST_(T, N, atomic_or, or)                                     \
    SHM_CXX_AMO_POST_(T, N, atomic_xor, xor)                                   \
    SHM_CXX_AMO_FETCH_(T, N, atomic_fetch_and, fetch_and)                      \
    SHM_CXX_AMO_FETCH_(T, N, atomic_fetch_or, fetch_or)                        \
    SHM_CXX_AMO_FETCH_(T, N, atomic_fetch_xor, fetch_xor)                      \
    SHM_CXX_AMO_FETCH_NBI_(T, N, fetch_and)                                    \
    SHM_CXX_AMO_FETCH_NBI_(T, N, fetch_or)                                     \
    SHM_CXX_AMO_FETCH_NBI_(T, N, fetch_xor)
SHM_AMO_BITWISE_GENERIC_TYPES(SHM_CXX_AMO_BITWISE)
#undef SHM_CXX_AMO_BITWISE
#undef SHM_CXX_AMO_POST_
#undef SHM_CXX_AMO_FETCH_
#undef SHM_CXX_AMO_FETCH_NBI_
#undef SHM_CXX_AMO_INC_
#undef SHM_CXX_AMO_FINC_
#undef SHM_CXX_AMO_CSWAP_
#undef SHM_CXX_AMO_FETCHONLY_

/* ---- Point-to-point synchronisation: SHM_P2P_WAIT_GENERIC_TYPES ---------
 * On ivars, no context forms. C accepts T* and volatile T*; one overload on
 * volatile T* takes both here. (The deprecated C function
 * shmem_wait_until(long *, int, long) stays the exact match for long *.) */
#define SHM_CXX_P2P_FN_(RET, T, N, OP, PARAMS, ARGS)                           \
    SHM_CXX_FN(RET, shmem_##OP, SHM_CXX_T_(N, OP), PARAMS, ARGS)
#define SHM_CXX_P2P_IV_(T) const_cast<T *>(ivars)
#define SHM_CXX_P2P(T, N)                                                      \
    SHM_CXX_P2P_FN_(void, T, N, wait_until, (volatile T * ivars, int cmp, T cmp_value), \
                    (SHM_CXX_P2P_IV_(T), cmp, cmp_value))                         \
    SHM_CXX_P2P_FN_(int, T, N, test, (volatile T * ivars, int cmp, T cmp_value), \
                    (SHM_CXX_P2P_IV_(T), cmp, cmp_value))                         \
    SHM_CXX_P2P_FN_(void, T, N, wait_until_all,                                \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_value))         \
    SHM_CXX_P2P_FN_(size_t, T, N, wait_until_any,                              \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_value))         \
    SHM_CXX_P2P_FN_(size_t, T, N, wait_until_some,                             \
                    (volatile T * ivars, size_t nelems, size_t *indices, const int *status, \
                     int cmp, T cmp_value),                                    \
                    (SHM_CXX_P2P_IV_(T), nelems, indices, status, cmp, cmp_value)) \
    SHM_CXX_P2P_FN_(void, T, N, wait_until_all_vector,                         \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, \
                     const T *cmp_values),                                     \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_values))        \
    SHM_CXX_P2P_FN_(size_t, T, N, wait_until_any_vector,                       \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, \
                     const T *cmp_values),                                     \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_values))        \
    SHM_CXX_P2P_FN_(size_t, T, N, wait_until_some_vector,                      \
                    (volatile T * ivars, size_t nelems, size_t *indices, const int *status, \
                     int cmp, const T *cmp_values),                            \
                    (SHM_CXX_P2P_IV_(T), nelems, indices, status, cmp, cmp_values)) \
    SHM_CXX_P2P_FN_(int, T, N, test_all,                                       \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_value))         \
    SHM_CXX_P2P_FN_(size_t, T, N, test_any,                                    \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_value))         \
    SHM_CXX_P2P_FN_(size_t, T, N, test_some,                                   \
                    (volatile T * ivars, size_t nelems, size_t *indices, const int *status, \
                     int cmp, T cmp_value),                                    \
                    (SHM_CXX_P2P_IV_(T), nelems, indices, status, cmp, cmp_value)) \
    SHM_CXX_P2P_FN_(int, T, N, test_all_vector,                                \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, \
                     const T *cmp_values),                                     \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_values))        \
    SHM_CXX_P2P_FN_(size_t, T, N, test_any_vector,                             \
                    (volatile T * ivars, size_t nelems, const int *status, int cmp, \
                     const T *cmp_values),                                     \
                    (SHM_CXX_P2P_IV_(T), nelems, status, cmp, cmp_values))        \
    SHM_CXX_P2P_FN_(size_t, T, N, test_some_vector,                            \
                    (volatile T * ivars, size_t nelems, size_t *indices, const int *status, \
                     int cmp, const T *cmp_values),                            \
                    (SHM_CXX_P2P_IV_(T), nelems, indices, status, cmp, cmp_values))
SHM_P2P_WAIT_GENERIC_TYPES(SHM_CXX_P2P) /* short and unsigned short: deprecated */
#undef SHM_CXX_P2P
#undef SHM_CXX_P2P_IV_
#undef SHM_CXX_P2P_FN_

/* ---- Collectives on a team (as decl_coll.h) ----------------------------- */
#define SHM_CXX_COLL_(T, N, OP)                                                \
    SHM_CXX_FN(int, shmem_##OP, SHM_CXX_T_(N, OP),                             \
               (shmem_team_t team, T * dest, const T *source, size_t nelems),  \
               (team, dest, source, nelems))
#define SHM_CXX_COLL(T, N)                                                     \
    SHM_CXX_FN(int, shmem_broadcast, SHM_CXX_T_(N, broadcast),                 \
               (shmem_team_t team, T * dest, const T *source, size_t nelems, int PE_root), \
               (team, dest, source, nelems, PE_root))                          \
    SHM_CXX_COLL_(T, N, collect)                                               \
    SHM_CXX_COLL_(T, N, fcollect)                                              \
    SHM_CXX_COLL_(T, N, alltoall)                                              \
    SHM_CXX_FN(int, shmem_alltoalls, SHM_CXX_T_(N, alltoalls),                 \
               (shmem_team_t team, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                size_t nelems),                                                \
               (team, dest, source, dst, sst, nelems))
SHM_GENERIC_TYPES(SHM_CXX_COLL)
#undef SHM_CXX_COLL

#define SHM_CXX_REDUCE_BITWISE(T, N)                                           \
    SHM_CXX_COLL_(T, N, and_reduce) SHM_CXX_COLL_(T, N, or_reduce) SHM_CXX_COLL_(T, N, xor_reduce)
#define SHM_CXX_REDUCE_MINMAX(T, N) SHM_CXX_COLL_(T, N, max_reduce) SHM_CXX_COLL_(T, N, min_reduce)
#define SHM_CXX_REDUCE_ARITH(T, N)                                             \
    SHM_CXX_COLL_(T, N, sum_reduce) SHM_CXX_COLL_(T, N, prod_reduce)           \
    SHM_CXX_COLL_(T, N, sum_inscan) SHM_CXX_COLL_(T, N, sum_exscan)
SHM_REDUCE_BITWISE_GENERIC_TYPES(SHM_CXX_REDUCE_BITWISE)
SHM_REDUCE_MINMAX_GENERIC_TYPES(SHM_CXX_REDUCE_MINMAX)
SHM_REDUCE_ARITH_GENERIC_TYPES(SHM_CXX_REDUCE_ARITH)
#undef SHM_CXX_REDUCE_BITWISE
#undef SHM_CXX_REDUCE_MINMAX
#undef SHM_CXX_REDUCE_ARITH
#undef SHM_CXX_COLL_

/* The C11 shmem_sync(team): shmem_team_sync. (The deprecated active-set
 * shmem_sync(PE_start, logPE_stride, PE_size, pSync) is the C function.) */
inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }

#undef SHM_CXX_T_
#undef SHM_CXX_CTX_T_
#undef SHM_CXX_FN_CTX
#undef SHM_CXX_PASS_CTX_
#undef SHM_CXX_WITH_CTX_
#undef SHM_CXX_FN

} /* extern "C++" */

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#endif /* __cplusplus */
#endif /* OFISHMEM_CXX_GENERICS_H */
