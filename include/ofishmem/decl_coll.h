/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives: declarations (from the type tables) and C11 generics.
 * Included by <shmem.h>; not meant to be included on its own.
 */
#ifndef OFISHMEM_DECL_COLL_H
#define OFISHMEM_DECL_COLL_H

/* ---- Barriers (team_sync is with the teams) ---------------------------- */
/* Deprecated active-set forms. */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

/*
 * shmem_sync has two forms of different arity: shmem_sync(team) (1.5, the
 * same as shmem_team_sync) and the deprecated active-set
 * shmem_sync(PE_start, logPE_stride, PE_size, pSync) above. In C the name is
 * a macro that picks by the number of arguments; any other count does not
 * compile. The exported symbol shmem_sync is the active-set form (binaries
 * built before the team form existed call it).
 */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
struct shm_sync_takes_1_or_4_arguments;
void shm_sync_wrong_arity(struct shm_sync_takes_1_or_4_arguments *);
#define SHM_SYNC_PICK_(a, b, c, d, NAME, ...) NAME
#define shmem_sync(...)                                                        \
    SHM_SYNC_PICK_(__VA_ARGS__, shmem_sync, shm_sync_wrong_arity, shm_sync_wrong_arity, \
                   shmem_team_sync, shm_sync_wrong_arity)(__VA_ARGS__)
#endif

/* ---- Broadcast, collect, fcollect, alltoall(s) ------------------------- */
#define SHM_DECL_COLL_RMA(T, N)                                                \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,      \
                              int PE_root);                                    \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);        \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);       \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);       \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,      \
                              ptrdiff_t sst, size_t nelems);
SHM_RMA_TYPES(SHM_DECL_COLL_RMA)
#undef SHM_DECL_COLL_RMA

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

/* Deprecated active-set forms: elements of 4 or 8 bytes. */
#define SHM_DECL_COLL_SIZED(BITS)                                              \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root,     \
                               int PE_start, int logPE_stride, int PE_size, long *pSync);      \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start,      \
                             int logPE_stride, int PE_size, long *pSync);      \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start,     \
                              int logPE_stride, int PE_size, long *pSync);     \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start,     \
                              int logPE_stride, int PE_size, long *pSync);     \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,   \
                               size_t nelems, int PE_start, int logPE_stride, int PE_size,     \
                               long *pSync);
SHM_DECL_COLL_SIZED(32)
SHM_DECL_COLL_SIZED(64)
#undef SHM_DECL_COLL_SIZED

/* ---- Reductions and scans ---------------------------------------------- */
#define SHM_DECL_REDUCE(T, N, OP)                                              \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define SHM_DECL_REDUCE_BITWISE(T, N)                                          \
    SHM_DECL_REDUCE(T, N, and) SHM_DECL_REDUCE(T, N, or) SHM_DECL_REDUCE(T, N, xor)
#define SHM_DECL_REDUCE_MINMAX(T, N) SHM_DECL_REDUCE(T, N, max) SHM_DECL_REDUCE(T, N, min)
#define SHM_DECL_REDUCE_ARITH(T, N)                                            \
    SHM_DECL_REDUCE(T, N, sum) SHM_DECL_REDUCE(T, N, prod)                      \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems);    \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems);
SHM_REDUCE_BITWISE_TYPES(SHM_DECL_REDUCE_BITWISE)
SHM_REDUCE_MINMAX_TYPES(SHM_DECL_REDUCE_MINMAX)
SHM_REDUCE_ARITH_TYPES(SHM_DECL_REDUCE_ARITH)
#undef SHM_DECL_REDUCE_BITWISE
#undef SHM_DECL_REDUCE_MINMAX
#undef SHM_DECL_REDUCE_ARITH
#undef SHM_DECL_REDUCE

/* Deprecated active-set reductions; pWrk and pSync are accepted and not needed. */
#define SHM_DECL_TOALL(T, N, OP)                                               \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,        \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define SHM_DECL_TOALL_BITWISE(T, N)                                           \
    SHM_DECL_TOALL(T, N, and) SHM_DECL_TOALL(T, N, or) SHM_DECL_TOALL(T, N, xor)
#define SHM_DECL_TOALL_MINMAX(T, N) SHM_DECL_TOALL(T, N, max) SHM_DECL_TOALL(T, N, min)
#define SHM_DECL_TOALL_ARITH(T, N) SHM_DECL_TOALL(T, N, sum) SHM_DECL_TOALL(T, N, prod)
SHM_TOALL_BITWISE_TYPES(SHM_DECL_TOALL_BITWISE)
SHM_TOALL_MINMAX_TYPES(SHM_DECL_TOALL_MINMAX)
SHM_TOALL_ARITH_TYPES(SHM_DECL_TOALL_ARITH)
#undef SHM_DECL_TOALL_BITWISE
#undef SHM_DECL_TOALL_MINMAX
#undef SHM_DECL_TOALL_ARITH
#undef SHM_DECL_TOALL

/* ---- C11 generics: dispatch on the dest pointer (after the team) -------- */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* SHM_ARG2 and shm_generic_no_match come from <ofishmem/generics.h> (expanded at use). */
#define SHM_GENERIC_TEAM(LIST, OP, ...)                                        \
    _Generic(SHM_ARG2(__VA_ARGS__), LIST(SHM_GA_##OP) default: shm_generic_no_match)(__VA_ARGS__)

#define SHM_GA_broadcast(T, N) T *: shmem_##N##_broadcast,
#define SHM_GA_collect(T, N) T *: shmem_##N##_collect,
#define SHM_GA_fcollect(T, N) T *: shmem_##N##_fcollect,
#define SHM_GA_alltoall(T, N) T *: shmem_##N##_alltoall,
#define SHM_GA_alltoalls(T, N) T *: shmem_##N##_alltoalls,
#define SHM_GA_and_reduce(T, N) T *: shmem_##N##_and_reduce,
#define SHM_GA_or_reduce(T, N) T *: shmem_##N##_or_reduce,
#define SHM_GA_xor_reduce(T, N) T *: shmem_##N##_xor_reduce,
#define SHM_GA_max_reduce(T, N) T *: shmem_##N##_max_reduce,
#define SHM_GA_min_reduce(T, N) T *: shmem_##N##_min_reduce,
#define SHM_GA_sum_reduce(T, N) T *: shmem_##N##_sum_reduce,
#define SHM_GA_prod_reduce(T, N) T *: shmem_##N##_prod_reduce,
#define SHM_GA_sum_inscan(T, N) T *: shmem_##N##_sum_inscan,
#define SHM_GA_sum_exscan(T, N) T *: shmem_##N##_sum_exscan,

#define shmem_broadcast(...) SHM_GENERIC_TEAM(SHM_GENERIC_TYPES, broadcast, __VA_ARGS__)
#define shmem_collect(...) SHM_GENERIC_TEAM(SHM_GENERIC_TYPES, collect, __VA_ARGS__)
#define shmem_fcollect(...) SHM_GENERIC_TEAM(SHM_GENERIC_TYPES, fcollect, __VA_ARGS__)
#define shmem_alltoall(...) SHM_GENERIC_TEAM(SHM_GENERIC_TYPES, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) SHM_GENERIC_TEAM(SHM_GENERIC_TYPES, alltoalls, __VA_ARGS__)
#define shmem_and_reduce(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_BITWISE_GENERIC_TYPES, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...)                                                   \
    SHM_GENERIC_TEAM(SHM_REDUCE_BITWISE_GENERIC_TYPES, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_BITWISE_GENERIC_TYPES, xor_reduce, __VA_ARGS__)
#define shmem_max_reduce(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_MINMAX_GENERIC_TYPES, max_reduce, __VA_ARGS__)
#define shmem_min_reduce(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_MINMAX_GENERIC_TYPES, min_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_ARITH_GENERIC_TYPES, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...)                                                 \
    SHM_GENERIC_TEAM(SHM_REDUCE_ARITH_GENERIC_TYPES, prod_reduce, __VA_ARGS__)
#define shmem_sum_inscan(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_ARITH_GENERIC_TYPES, sum_inscan, __VA_ARGS__)
#define shmem_sum_exscan(...)                                                  \
    SHM_GENERIC_TEAM(SHM_REDUCE_ARITH_GENERIC_TYPES, sum_exscan, __VA_ARGS__)

#endif /* C11 */

#endif /* OFISHMEM_DECL_COLL_H */
