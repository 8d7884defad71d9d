/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C11 type-generic interfaces of <shmem.h>, expanded from the type tables.
 * Each generic name dispatches on its first argument: a shmem_ctx_t selects
 * the context form (then dispatching on the second argument).
 */
#ifndef OFISHMEM_GENERICS_H
#define OFISHMEM_GENERICS_H

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* Chosen when no type matches: the call then fails to compile. */
struct shm_generic_type_not_supported;
void shm_generic_no_match(struct shm_generic_type_not_supported *);

#define SHM_ARG1_(a, ...) a
#define SHM_ARG1(...) SHM_ARG1_(__VA_ARGS__, 0)
#define SHM_ARG2_(a, b, ...) b
#define SHM_ARG2(...) SHM_ARG2_(__VA_ARGS__, 0, 0)

/* OP: dispatch on a T* argument, with and without a leading context. */
#define SHM_GENERIC(LIST, OP, ...)                                             \
    _Generic(SHM_ARG1(__VA_ARGS__),                                            \
        shmem_ctx_t: _Generic(SHM_ARG2(__VA_ARGS__),                           \
                              LIST(SHM_GA_CTX_##OP) default: shm_generic_no_match), \
        LIST(SHM_GA_##OP) default: shm_generic_no_match)(__VA_ARGS__)

/* The same without context forms. */
#define SHM_GENERIC_NOCTX(LIST, OP, ...)                                       \
    _Generic(SHM_ARG1(__VA_ARGS__), LIST(SHM_GA_##OP) default: shm_generic_no_match)(__VA_ARGS__)

/* Associations: T* (and const T* where the argument is a source). */
#define SHM_GA_put(T, N) T *: shmem_##N##_put,
#define SHM_GA_CTX_put(T, N) T *: shmem_ctx_##N##_put,
#define SHM_GA_get(T, N) T *: shmem_##N##_get,
#define SHM_GA_CTX_get(T, N) T *: shmem_ctx_##N##_get,
#define SHM_GA_put_nbi(T, N) T *: shmem_##N##_put_nbi,
#define SHM_GA_CTX_put_nbi(T, N) T *: shmem_ctx_##N##_put_nbi,
#define SHM_GA_get_nbi(T, N) T *: shmem_##N##_get_nbi,
#define SHM_GA_CTX_get_nbi(T, N) T *: shmem_ctx_##N##_get_nbi,
#define SHM_GA_p(T, N) T *: shmem_##N##_p,
#define SHM_GA_CTX_p(T, N) T *: shmem_ctx_##N##_p,
#define SHM_GA_g(T, N) T *: shmem_##N##_g, const T *: shmem_##N##_g,
#define SHM_GA_CTX_g(T, N) T *: shmem_ctx_##N##_g, const T *: shmem_ctx_##N##_g,
#define SHM_GA_iput(T, N) T *: shmem_##N##_iput,
#define SHM_GA_CTX_iput(T, N) T *: shmem_ctx_##N##_iput,
#define SHM_GA_iget(T, N) T *: shmem_##N##_iget,
#define SHM_GA_CTX_iget(T, N) T *: shmem_ctx_##N##_iget,
#define SHM_GA_ibput(T, N) T *: shmem_##N##_ibput,
#define SHM_GA_CTX_ibput(T, N) T *: shmem_ctx_##N##_ibput,
#define SHM_GA_ibget(T, N) T *: shmem_##N##_ibget,
#define SHM_GA_CTX_ibget(T, N) T *: shmem_ctx_##N##_ibget,
#define SHM_GA_wait_until(T, N) T *: shmem_##N##_wait_until, volatile T *: shmem_##N##_wait_until,
#define SHM_GA_test(T, N) T *: shmem_##N##_test, volatile T *: shmem_##N##_test,

#define shmem_put(...) SHM_GENERIC(SHM_GENERIC_TYPES, put, __VA_ARGS__)
#define shmem_get(...) SHM_GENERIC(SHM_GENERIC_TYPES, get, __VA_ARGS__)
#define shmem_put_nbi(...) SHM_GENERIC(SHM_GENERIC_TYPES, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) SHM_GENERIC(SHM_GENERIC_TYPES, get_nbi, __VA_ARGS__)
#define shmem_p(...) SHM_GENERIC(SHM_GENERIC_TYPES, p, __VA_ARGS__)
#define shmem_g(...) SHM_GENERIC(SHM_GENERIC_TYPES, g, __VA_ARGS__)
#define shmem_iput(...) SHM_GENERIC(SHM_GENERIC_TYPES, iput, __VA_ARGS__)
#define shmem_iget(...) SHM_GENERIC(SHM_GENERIC_TYPES, iget, __VA_ARGS__)
#define shmem_ibput(...) SHM_GENERIC(SHM_GENERIC_TYPES, ibput, __VA_ARGS__)
#define shmem_ibget(...) SHM_GENERIC(SHM_GENERIC_TYPES, ibget, __VA_ARGS__)
#define shmem_wait_until(...) SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, wait_until, __VA_ARGS__)
#define shmem_test(...) SHM_GENERIC_NOCTX(SHM_P2P_WAIT_GENERIC_TYPES, test, __VA_ARGS__)

#endif /* C11 */
#endif /* OFISHMEM_GENERICS_H */
