// SPDX-License-Identifier: BSD-3-Clause
/* RMA: typed, sized and mem forms, each with its context form. */
#include "api/api.h"

#define CTX(c) ((struct shm_ctx *)(c))
#define DFLT (&shm_ctx_default_g)

/* Contiguous put/get family for one element size expression ES. */
#define SHM_RMA_FAMILY(PFX, T, ES)                                             \
    SHM_DEFINE(void, shmem_ctx_##PFX##put, (shmem_ctx_t ctx, T *dest, const T *src, size_t n, int pe), \
               { shm_rma_put(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, ES), pe, 0); })               \
    SHM_DEFINE(void, shmem_##PFX##put, (T *dest, const T *src, size_t n, int pe),              \
               { shm_rma_put(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, ES), pe, 0); })                   \
    SHM_DEFINE(void, shmem_ctx_##PFX##get, (shmem_ctx_t ctx, T *dest, const T *src, size_t n, int pe), \
               { shm_rma_get(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, ES), pe, 0); })               \
    SHM_DEFINE(void, shmem_##PFX##get, (T *dest, const T *src, size_t n, int pe),              \
               { shm_rma_get(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, ES), pe, 0); })                   \
    SHM_DEFINE(void, shmem_ctx_##PFX##put_nbi,                                                  \
               (shmem_ctx_t ctx, T *dest, const T *src, size_t n, int pe),                      \
               { shm_rma_put(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, ES), pe, 1); })               \
    SHM_DEFINE(void, shmem_##PFX##put_nbi, (T *dest, const T *src, size_t n, int pe),          \
               { shm_rma_put(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, ES), pe, 1); })                   \
    SHM_DEFINE(void, shmem_ctx_##PFX##get_nbi,                                                  \
               (shmem_ctx_t ctx, T *dest, const T *src, size_t n, int pe),                      \
               { shm_rma_get(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, ES), pe, 1); })               \
    SHM_DEFINE(void, shmem_##PFX##get_nbi, (T *dest, const T *src, size_t n, int pe),          \
               { shm_rma_get(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, ES), pe, 1); })

/* Strided family: iput/iget are ibput/ibget with blocks of one element. */
#define SHM_STRIDED_FAMILY(PFX, T, ES)                                         \
    SHM_DEFINE(void, shmem_ctx_##PFX##iput,                                    \
               (shmem_ctx_t ctx, T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, \
                int pe),                                                       \
               { shm_rma_iput(__func__, CTX(ctx), dest, src, dst, sst, 1, n, (ES), pe); }) \
    SHM_DEFINE(void, shmem_##PFX##iput,                                        \
               (T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe), \
               { shm_rma_iput(__func__, DFLT, dest, src, dst, sst, 1, n, (ES), pe); })     \
    SHM_DEFINE(void, shmem_ctx_##PFX##iget,                                    \
               (shmem_ctx_t ctx, T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, \
                int pe),                                                       \
               { shm_rma_iget(__func__, CTX(ctx), dest, src, dst, sst, 1, n, (ES), pe); }) \
    SHM_DEFINE(void, shmem_##PFX##iget,                                        \
               (T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe), \
               { shm_rma_iget(__func__, DFLT, dest, src, dst, sst, 1, n, (ES), pe); })     \
    SHM_DEFINE(void, shmem_ctx_##PFX##ibput,                                   \
               (shmem_ctx_t ctx, T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst,  \
                size_t bsize, size_t nblocks, int pe),                         \
               { shm_rma_iput(__func__, CTX(ctx), dest, src, dst, sst, bsize, nblocks, (ES), pe); }) \
    SHM_DEFINE(void, shmem_##PFX##ibput,                                       \
               (T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                size_t nblocks, int pe),                                       \
               { shm_rma_iput(__func__, DFLT, dest, src, dst, sst, bsize, nblocks, (ES), pe); }) \
    SHM_DEFINE(void, shmem_ctx_##PFX##ibget,                                   \
               (shmem_ctx_t ctx, T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst,  \
                size_t bsize, size_t nblocks, int pe),                         \
               { shm_rma_iget(__func__, CTX(ctx), dest, src, dst, sst, bsize, nblocks, (ES), pe); }) \
    SHM_DEFINE(void, shmem_##PFX##ibget,                                       \
               (T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                size_t nblocks, int pe),                                       \
               { shm_rma_iget(__func__, DFLT, dest, src, dst, sst, bsize, nblocks, (ES), pe); })

/* Typed: shmem_long_put, ..., plus p and g. */
#define SHM_RMA_TYPED(T, N)                                                    \
    SHM_RMA_FAMILY(N##_, T, sizeof(T))                                         \
    SHM_STRIDED_FAMILY(N##_, T, sizeof(T))                                     \
    SHM_DEFINE(void, shmem_ctx_##N##_p, (shmem_ctx_t ctx, T *dest, T value, int pe), \
               { shm_rma_put(__func__, CTX(ctx), dest, &value, sizeof(T), pe, 0); }) \
    SHM_DEFINE(void, shmem_##N##_p, (T *dest, T value, int pe),               \
               { shm_rma_put(__func__, DFLT, dest, &value, sizeof(T), pe, 0); }) \
    SHM_DEFINE(T, shmem_ctx_##N##_g, (shmem_ctx_t ctx, const T *src, int pe),  \
               {                                                               \
                   T v;                                                        \
                   shm_rma_get(__func__, CTX(ctx), &v, src, sizeof(T), pe, 0); \
                   return v;                                                   \
               })                                                              \
    SHM_DEFINE(T, shmem_##N##_g, (const T *src, int pe), {                     \
        T v;                                                                   \
        shm_rma_get(__func__, DFLT, &v, src, sizeof(T), pe, 0);                \
        return v;                                                              \
    })
SHM_RMA_TYPES(SHM_RMA_TYPED)

/* Sized: shmem_put8 ... shmem_ibget128 (nelems counts elements of BYTES).
 * The width sits after the verb in these names, so they have their own macros. */
#define SHM_SIZED_ONE(VERB, BITS, BYTES, NBI, KIND)                            \
    SHM_DEFINE(void, shmem_ctx_##VERB##BITS##NBI,                              \
               (shmem_ctx_t ctx, void *dest, const void *src, size_t n, int pe),       \
               { shm_rma_##KIND(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, BYTES), pe,        \
                                sizeof(#NBI) > 1); })                          \
    SHM_DEFINE(void, shmem_##VERB##BITS##NBI, (void *dest, const void *src, size_t n, int pe), \
               { shm_rma_##KIND(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, BYTES), pe, sizeof(#NBI) > 1); })
#define SHM_SIZED_STRIDED(VERB, BITS, BYTES, KIND)                             \
    SHM_DEFINE(void, shmem_ctx_i##VERB##BITS,                                  \
               (shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, \
                size_t n, int pe),                                             \
               { shm_rma_i##KIND(__func__, CTX(ctx), dest, src, dst, sst, 1, n, BYTES, pe); }) \
    SHM_DEFINE(void, shmem_i##VERB##BITS,                                      \
               (void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe), \
               { shm_rma_i##KIND(__func__, DFLT, dest, src, dst, sst, 1, n, BYTES, pe); }) \
    SHM_DEFINE(void, shmem_ctx_ib##VERB##BITS,                                 \
               (shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, \
                size_t bsize, size_t nblocks, int pe),                         \
               { shm_rma_i##KIND(__func__, CTX(ctx), dest, src, dst, sst, bsize, nblocks, BYTES, \
                                 pe); })                                       \
    SHM_DEFINE(void, shmem_ib##VERB##BITS,                                     \
               (void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, \
                size_t nblocks, int pe),                                       \
               { shm_rma_i##KIND(__func__, DFLT, dest, src, dst, sst, bsize, nblocks, BYTES, pe); })
#define SHM_RMA_SIZED(BITS, BYTES)                                             \
    SHM_SIZED_ONE(put, BITS, BYTES, , put)                                     \
    SHM_SIZED_ONE(get, BITS, BYTES, , get)                                     \
    SHM_SIZED_ONE(put, BITS, BYTES, _nbi, put)                                 \
    SHM_SIZED_ONE(get, BITS, BYTES, _nbi, get)                                 \
    SHM_SIZED_STRIDED(put, BITS, BYTES, put)                                   \
    SHM_SIZED_STRIDED(get, BITS, BYTES, get)
SHM_SIZED_TYPES(SHM_RMA_SIZED)

/* mem forms: byte counts. */
SHM_SIZED_ONE(put, mem, 1, , put)
SHM_SIZED_ONE(get, mem, 1, , get)
SHM_SIZED_ONE(put, mem, 1, _nbi, put)
SHM_SIZED_ONE(get, mem, 1, _nbi, get)

/* Strided transfers: one conduit operation per block. */
static void check_strides(const char *fn, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,
                          size_t nblocks, size_t esize)
{
    if (dst < 1 || sst < 1)
        shm_fatal("%s: strides must be >= 1 (dst %td, sst %td)", fn, dst, sst);
    if (nblocks > 1 && (size_t)dst < bsize)
        shm_fatal("%s: destination stride %td is smaller than the block size %zu", fn, dst,
                  bsize);
    size_t span;
    if (__builtin_mul_overflow((size_t)dst, nblocks, &span) ||
        __builtin_mul_overflow(span, esize, &span) ||
        __builtin_mul_overflow((size_t)sst, nblocks, &span) ||
        __builtin_mul_overflow(span, esize, &span) ||
        __builtin_mul_overflow(bsize, esize, &span))
        shm_fatal("%s: strided range overflows (stride %td/%td, %zu blocks of %zu x %zu bytes)",
                  fn, dst, sst, nblocks, bsize, esize);
}

void shm_rma_iput(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe)
{
    if (nblocks == 0 || bsize == 0)
        return;
    check_strides(fn, dst, sst, bsize, nblocks, esize);
    for (size_t b = 0; b < nblocks; b++)
        shm_rma_put(fn, ctx, (char *)dest + b * (size_t)dst * esize,
                    (const char *)src + b * (size_t)sst * esize, bsize * esize, pe, 0);
}

void shm_rma_iget(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe)
{
    if (nblocks == 0 || bsize == 0)
        return;
    check_strides(fn, dst, sst, bsize, nblocks, esize);
    /* All blocks in flight, then one wait. */
    for (size_t b = 0; b < nblocks; b++)
        shm_rma_get(fn, ctx, (char *)dest + b * (size_t)dst * esize,
                    (const char *)src + b * (size_t)sst * esize, bsize * esize, pe, 1);
    if (shm_ctx_world_pe(fn, ctx, pe) != shm_state_g.me)
        cdt_quiet(&ctx->cdt);
}
