// SPDX-License-Identifier: BSD-3-Clause
/*
 * Collectives: team-based forms, the deprecated active-set forms, and the
 * typed reduction operators. Everything becomes bytes (or elements and an
 * operator) at once; src/coll does the rest.
 */
#include <complex.h>

#include "api/api.h"
#include "coll/coll.h"
#include "core/check.h"

#define TEAM(t) ((shm_team_t *)(t))

/* NULL for SHMEM_TEAM_INVALID: the call then returns nonzero. */
static inline shm_team_t *coll_team(const char *fn, shmem_team_t team)
{
    shm_check_running(fn);
    shm_check_team_live(fn, TEAM(team));
    return TEAM(team);
}

/* An active set as a team view, on the caller's stack. */
#define ACTIVE_SET(t, start, log_stride, size)                                 \
    shm_team_t t;                                                              \
    shm_check_running(__func__);                                               \
    shm_team_active_set(&t, __func__, start, log_stride, size)

/* ---- barriers ---- */

SHM_DEFINE(void, shmem_barrier, (int PE_start, int logPE_stride, int PE_size, long *pSync), {
    (void)pSync;
    ACTIVE_SET(t, PE_start, logPE_stride, PE_size);
    cdt_quiet(&shm_ctx_default_g.cdt);
    shm_coll_sync(&t);
})

SHM_DEFINE(void, shmem_sync, (int PE_start, int logPE_stride, int PE_size, long *pSync), {
    (void)pSync;
    ACTIVE_SET(t, PE_start, logPE_stride, PE_size);
    shm_coll_sync(&t);
})

/* ---- broadcast, collect, fcollect, alltoall(s): one body per family ---- */

static int bcast(const char *fn, shmem_team_t team, void *dest, const void *src, size_t bytes,
                 int root)
{
    shm_team_t *t = coll_team(fn, team);
    if (t == NULL)
        return -1;
    shm_check_coll_args(fn, t, bytes, root);
    shm_coll_bcast(fn, t, dest, src, bytes, root, 1);
    return 0;
}

static int collect(const char *fn, shmem_team_t team, void *dest, const void *src, size_t bytes,
                   int fixed)
{
    shm_team_t *t = coll_team(fn, team);
    if (t == NULL)
        return -1;
    if (fixed)
        shm_check_coll_args(fn, t, bytes, -1);
    if (fixed)
        shm_coll_fcollect(fn, t, dest, src, bytes);
    else
        shm_coll_collect(fn, t, dest, src, bytes);
    return 0;
}

static int alltoall(const char *fn, shmem_team_t team, void *dest, const void *src, size_t bytes)
{
    shm_team_t *t = coll_team(fn, team);
    if (t == NULL)
        return -1;
    shm_check_coll_args(fn, t, bytes, -1);
    shm_coll_alltoall(fn, t, dest, src, bytes);
    return 0;
}

static int alltoalls(const char *fn, shmem_team_t team, void *dest, const void *src,
                     ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize)
{
    shm_team_t *t = coll_team(fn, team);
    if (t == NULL)
        return -1;
    shm_check_coll_args(fn, t, shm_check_nbytes(fn, nelems, esize), -1);
    shm_coll_alltoalls(fn, t, dest, src, dst, sst, nelems, esize);
    return 0;
}

#define SHM_COLL_RMA(T, N)                                                     \
    SHM_DEFINE(int, shmem_##N##_broadcast,                                     \
               (shmem_team_t team, T * dest, const T *source, size_t nelems, int PE_root), \
               { return bcast(__func__, team, dest, source, shm_check_nbytes(__func__, nelems, sizeof(T)), PE_root); }) \
    SHM_DEFINE(int, shmem_##N##_collect,                                       \
               (shmem_team_t team, T * dest, const T *source, size_t nelems),  \
               { return collect(__func__, team, dest, source, shm_check_nbytes(__func__, nelems, sizeof(T)), 0); }) \
    SHM_DEFINE(int, shmem_##N##_fcollect,                                      \
               (shmem_team_t team, T * dest, const T *source, size_t nelems),  \
               { return collect(__func__, team, dest, source, shm_check_nbytes(__func__, nelems, sizeof(T)), 1); }) \
    SHM_DEFINE(int, shmem_##N##_alltoall,                                      \
               (shmem_team_t team, T * dest, const T *source, size_t nelems),  \
               { return alltoall(__func__, team, dest, source, shm_check_nbytes(__func__, nelems, sizeof(T))); }) \
    SHM_DEFINE(int, shmem_##N##_alltoalls,                                     \
               (shmem_team_t team, T * dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, \
                size_t nelems),                                                \
               { return alltoalls(__func__, team, dest, source, dst, sst, nelems, sizeof(T)); })
SHM_RMA_TYPES(SHM_COLL_RMA)

SHM_DEFINE(int, shmem_broadcastmem,
           (shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root),
           { return bcast(__func__, team, dest, source, nelems, PE_root); })
SHM_DEFINE(int, shmem_collectmem, (shmem_team_t team, void *dest, const void *source, size_t nelems),
           { return collect(__func__, team, dest, source, nelems, 0); })
SHM_DEFINE(int, shmem_fcollectmem,
           (shmem_team_t team, void *dest, const void *source, size_t nelems),
           { return collect(__func__, team, dest, source, nelems, 1); })
SHM_DEFINE(int, shmem_alltoallmem,
           (shmem_team_t team, void *dest, const void *source, size_t nelems),
           { return alltoall(__func__, team, dest, source, nelems); })
SHM_DEFINE(int, shmem_alltoallsmem,
           (shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
            size_t nelems),
           { return alltoalls(__func__, team, dest, source, dst, sst, nelems, 1); })

/* Deprecated active-set forms; the root's dest is left alone (it is not "updated" there). */
#define SHM_COLL_SIZED(BITS)                                                   \
    SHM_DEFINE(void, shmem_broadcast##BITS,                                    \
               (void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                int logPE_stride, int PE_size, long *pSync),                   \
               {                                                               \
                   (void)pSync;                                                \
                   ACTIVE_SET(t, PE_start, logPE_stride, PE_size);             \
                   if (shm_unlikely(PE_root < 0 || PE_root >= PE_size))        \
                       shm_fatal("%s: PE_root %d is not a position in the active set (0..%d): " \
                                 "it counts the PEs of the set (PE_start %d, stride %d), " \
                                 "it is not a PE number",                      \
                                 __func__, PE_root, PE_size - 1, PE_start, 1 << logPE_stride); \
                   shm_coll_bcast(__func__, &t, dest, source, shm_check_nbytes(__func__, nelems, BITS / 8), PE_root, 0); \
               })                                                              \
    SHM_DEFINE(void, shmem_collect##BITS,                                      \
               (void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                int PE_size, long *pSync),                                     \
               {                                                               \
                   (void)pSync;                                                \
                   ACTIVE_SET(t, PE_start, logPE_stride, PE_size);             \
                   shm_coll_collect(__func__, &t, dest, source, shm_check_nbytes(__func__, nelems, BITS / 8)); \
               })                                                              \
    SHM_DEFINE(void, shmem_fcollect##BITS,                                     \
               (void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                int PE_size, long *pSync),                                     \
               {                                                               \
                   (void)pSync;                                                \
                   ACTIVE_SET(t, PE_start, logPE_stride, PE_size);             \
                   shm_coll_fcollect(__func__, &t, dest, source, shm_check_nbytes(__func__, nelems, BITS / 8)); \
               })                                                              \
    SHM_DEFINE(void, shmem_alltoall##BITS,                                     \
               (void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride, \
                int PE_size, long *pSync),                                     \
               {                                                               \
                   (void)pSync;                                                \
                   ACTIVE_SET(t, PE_start, logPE_stride, PE_size);             \
                   shm_coll_alltoall(__func__, &t, dest, source, shm_check_nbytes(__func__, nelems, BITS / 8)); \
               })                                                              \
    SHM_DEFINE(void, shmem_alltoalls##BITS,                                    \
               (void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                int PE_start, int logPE_stride, int PE_size, long *pSync),     \
               {                                                               \
                   (void)pSync;                                                \
                   ACTIVE_SET(t, PE_start, logPE_stride, PE_size);             \
                   shm_coll_alltoalls(__func__, &t, dest, source, dst, sst, nelems, BITS / 8); \
               })
SHM_COLL_SIZED(32)
SHM_COLL_SIZED(64)

/* ---- reduction operators: acc[i] = acc[i] OP in[i] ---- */

#define SHM_OP(T, N, OP, EXPR)                                                 \
    static void op_##N##_##OP(void *acc_, const void *in_, size_t n)           \
    {                                                                          \
        T *a = acc_;                                                           \
        const T *b = in_;                                                      \
        for (size_t i = 0; i < n; i++)                                         \
            a[i] = (EXPR);                                                     \
    }
#define SHM_OPS_BITWISE(T, N)                                                  \
    SHM_OP(T, N, and, a[i] & b[i]) SHM_OP(T, N, or, a[i] | b[i]) SHM_OP(T, N, xor, a[i] ^ b[i])
#define SHM_OPS_MINMAX(T, N)                                                   \
    SHM_OP(T, N, max, b[i] > a[i] ? b[i] : a[i]) SHM_OP(T, N, min, b[i] < a[i] ? b[i] : a[i])
#define SHM_OPS_ARITH(T, N) SHM_OP(T, N, sum, a[i] + b[i]) SHM_OP(T, N, prod, a[i] * b[i])
SHM_REDUCE_BITWISE_TYPES(SHM_OPS_BITWISE)
SHM_REDUCE_MINMAX_TYPES(SHM_OPS_MINMAX)
SHM_REDUCE_ARITH_TYPES(SHM_OPS_ARITH)
/* The active-set bitwise table has signed types the team table lacks. */
SHM_TOALL_BITWISE_TYPES(SHM_OPS_BITWISE)

/* ---- team reductions and scans ---- */

#define SHM_REDUCE(T, N, OP)                                                   \
    SHM_DEFINE(int, shmem_##N##_##OP##_reduce,                                 \
               (shmem_team_t team, T * dest, const T *source, size_t nreduce), { \
                   shm_team_t *t = coll_team(__func__, team);                  \
                   if (t == NULL)                                              \
                       return -1;                                              \
                   shm_check_coll_args(__func__, t, shm_check_nbytes(__func__, nreduce, sizeof(T)), \
                                       -1);                                    \
                   shm_coll_reduce(__func__, t, dest, source, nreduce, sizeof(T), op_##N##_##OP); \
                   return 0;                                                   \
               })
#define SHM_SCAN(T, N, KIND, INCL)                                             \
    SHM_DEFINE(int, shmem_##N##_sum_##KIND,                                    \
               (shmem_team_t team, T * dest, const T *source, size_t nelems), { \
                   shm_team_t *t = coll_team(__func__, team);                  \
                   if (t == NULL)                                              \
                       return -1;                                              \
                   shm_check_coll_args(__func__, t, shm_check_nbytes(__func__, nelems, sizeof(T)), \
                                       -1);                                    \
                   shm_coll_scan(__func__, t, dest, source, nelems, sizeof(T), op_##N##_sum, INCL); \
                   return 0;                                                   \
               })
#define SHM_REDUCE_BITWISE(T, N) SHM_REDUCE(T, N, and) SHM_REDUCE(T, N, or) SHM_REDUCE(T, N, xor)
#define SHM_REDUCE_MINMAX(T, N) SHM_REDUCE(T, N, max) SHM_REDUCE(T, N, min)
#define SHM_REDUCE_ARITH(T, N)                                                 \
    SHM_REDUCE(T, N, sum) SHM_REDUCE(T, N, prod) SHM_SCAN(T, N, inscan, 1)      \
    SHM_SCAN(T, N, exscan, 0)
SHM_REDUCE_BITWISE_TYPES(SHM_REDUCE_BITWISE)
SHM_REDUCE_MINMAX_TYPES(SHM_REDUCE_MINMAX)
SHM_REDUCE_ARITH_TYPES(SHM_REDUCE_ARITH)

/* ---- deprecated active-set reductions (pWrk, pSync not needed: rsag has no staging) ---- */

#define SHM_TOALL(T, N, OP)                                                    \
    SHM_DEFINE(void, shmem_##N##_##OP##_to_all,                                \
               (T * dest, const T *source, int nreduce, int PE_start, int logPE_stride, \
                int PE_size, T *pWrk, long *pSync),                            \
               {                                                               \
                   (void)pWrk;                                                 \
                   (void)pSync;                                                \
                   ACTIVE_SET(t, PE_start, logPE_stride, PE_size);             \
                   if (shm_unlikely(nreduce < 0))                              \
                       shm_fatal("%s: nreduce %d is negative", __func__, nreduce); \
                   shm_coll_reduce(__func__, &t, dest, source, (size_t)nreduce, sizeof(T), \
                                   op_##N##_##OP);                             \
               })
#define SHM_TOALL_BITWISE(T, N) SHM_TOALL(T, N, and) SHM_TOALL(T, N, or) SHM_TOALL(T, N, xor)
#define SHM_TOALL_MINMAX(T, N) SHM_TOALL(T, N, max) SHM_TOALL(T, N, min)
#define SHM_TOALL_ARITH(T, N) SHM_TOALL(T, N, sum) SHM_TOALL(T, N, prod)
SHM_TOALL_BITWISE_TYPES(SHM_TOALL_BITWISE)
SHM_TOALL_MINMAX_TYPES(SHM_TOALL_MINMAX)
SHM_TOALL_ARITH_TYPES(SHM_TOALL_ARITH)
