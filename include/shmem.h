/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofishmem: OpenSHMEM 1.6 for C.
 *
 * Typed functions are declared by expanding the type tables of
 * <ofishmem/typelists.h>; `gcc -E` shows every prototype. Every function
 * also exists as pshmem_<name> for profiling tools, declared in <pshmem.h>
 * (generated from this header at build time).
 */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>

#include "ofishmem/typelists.h"

#ifdef __cplusplus
/* The reduction tables declare double _Complex / float _Complex functions:
 * a C99 extension to clang++ -pedantic, popped at the end of this file. */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc99-extensions"
#endif
extern "C" {
#endif

/* ---- Library constants ------------------------------------------------ */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 256
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "ofishmem 0.1.0 (libfabric conduit, PMIx bootstrap)"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

/* Work-array sizes of the deprecated active-set collectives. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 72
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_SYNC_SIZE SHMEM_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- Handles ---------------------------------------------------------- */
typedef struct shm_ctx *shmem_ctx_t;
extern struct shm_ctx shm_ctx_default_g;
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)&shm_ctx_default_g)
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* ---- Setup, exit and query -------------------------------------------- */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
int shmem_query_initialized(int *initialized);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(const int level, ...);
/* Deprecated */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);

/* ---- Memory management ------------------------------------------------ */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);
void *shmem_malloc_with_hints(size_t size, long hints);
/* Deprecated (1.2) */
void *shmalloc(size_t size);
void shfree(void *ptr);
void *shrealloc(void *ptr, size_t size);
void *shmemalign(size_t alignment, size_t size);

/* ---- Cache management: removed after 1.4, kept for old programs; no effect */
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

/* ---- RMA -------------------------------------------------------------- */
#define SHM_DECL_RMA(T, N)                                                     \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);      \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);      \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe); \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);  \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,    \
                                 int pe);                                      \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);  \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,    \
                                 int pe);                                      \
    void shmem_##N##_p(T *dest, T value, int pe);                               \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);          \
    T shmem_##N##_g(const T *source, int pe);                                   \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);              \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                          int pe);                                             \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,      \
                              ptrdiff_t sst, size_t nelems, int pe);           \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                          int pe);                                             \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,      \
                              ptrdiff_t sst, size_t nelems, int pe);           \
    void shmem_##N##_ibput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                           size_t nblocks, int pe);                            \
    void shmem_ctx_##N##_ibput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,     \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe); \
    void shmem_##N##_ibget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                           size_t nblocks, int pe);                            \
    void shmem_ctx_##N##_ibget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,     \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);
SHM_RMA_TYPES(SHM_DECL_RMA)
#undef SHM_DECL_RMA

#define SHM_DECL_RMA_SIZED(BITS, BYTES)                                        \
    void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                             int pe);                                          \
    void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                             int pe);                                          \
    void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source,          \
                                   size_t nelems, int pe);                     \
    void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe); \
    void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source,          \
                                   size_t nelems, int pe);                     \
    void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t nelems, int pe);                              \
    void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems, int pe);           \
    void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t nelems, int pe);                              \
    void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                              ptrdiff_t sst, size_t nelems, int pe);           \
    void shmem_ibput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,     \
                           size_t bsize, size_t nblocks, int pe);              \
    void shmem_ctx_ibput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe); \
    void shmem_ibget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,     \
                           size_t bsize, size_t nblocks, int pe);              \
    void shmem_ctx_ibget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);
SHM_SIZED_TYPES(SHM_DECL_RMA_SIZED)
#undef SHM_DECL_RMA_SIZED

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                          int pe);

/* ---- Memory ordering -------------------------------------------------- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);

/* ---- Barriers --------------------------------------------------------- */
void shmem_barrier_all(void);
void shmem_sync_all(void);

/* ---- Point-to-point synchronisation ----------------------------------- */
#define SHM_DECL_P2P(T, N)                                                     \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);
SHM_P2P_WAIT_TYPES(SHM_DECL_P2P) /* short and ushort: deprecated */
#undef SHM_DECL_P2P

#define SHM_DECL_P2P_DEPRECATED(T, N) void shmem_##N##_wait(T *ivar, T cmp_value);
SHM_P2P_DEPRECATED_TYPES(SHM_DECL_P2P_DEPRECATED)
#undef SHM_DECL_P2P_DEPRECATED
void shmem_wait_until(long *ivar, int cmp, long cmp_value); /* deprecated */
void shmem_wait(long *ivar, long cmp_value);                /* deprecated */

/* Families owned by their own headers (each with its C11 generics). */
#include "ofishmem/decl_amo.h"    /* atomics, signals, locks, wait/test vectors */
#include "ofishmem/decl_team.h"   /* teams and contexts */
#include "ofishmem/decl_coll.h"   /* collectives */

#include "ofishmem/generics.h"

#ifdef __cplusplus
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
/* C++: the generic names as overloads over the same type tables. */
#include "ofishmem/cxx_generics.h"
#endif

#endif /* SHMEM_H */
