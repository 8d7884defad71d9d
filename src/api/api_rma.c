// SPDX-License-Identifier: BSD-3-Clause
/* RMA: typed, sized and mem forms, each with its context form. */
#include "api/api.h"
#include "core/strided.h"

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

/*
 * Strided transfers. The whole remote range is translated once; then the
 * shortest road: a strided copy loop for this PE or a PE whose memory is
 * mapped here (core/strided.h), else the conduit's strided engine, which
 * packs the blocks into few operations (conduit/ofi/ofi_strided.c).
 */
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

/* Bytes from the first element of a strided range to past its last one. */
static size_t strided_span(ptrdiff_t stride, size_t bsize, size_t nblocks, size_t esize)
{
    return ((nblocks - 1) * (size_t)stride + bsize) * esize;
}

/* A copy within this PE whose two ranges overlap: block by block with
 * memmove, in increasing order, as one transfer per block would do. */
static void self_copy(char *d, size_t ds, const char *s, size_t ss, size_t bsize,
                      size_t nblocks, size_t esize)
{
    size_t dspan = (nblocks - 1) * ds + bsize * esize, sspan = (nblocks - 1) * ss + bsize * esize;
    if (d + dspan <= s || s + sspan <= d) {
        shm_strided_copy(d, ds, s, ss, bsize, nblocks, esize);
        return;
    }
    for (size_t b = 0; b < nblocks; b++)
        memmove(d + b * ds, s + b * ss, bsize * esize);
}

void shm_rma_iput(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe)
{
    if (nblocks == 0 || bsize == 0)
        return;
    pe = shm_rma_check(fn, ctx, pe);
    check_strides(fn, dst, sst, bsize, nblocks, esize);
    size_t off, ds = (size_t)dst * esize, ss = (size_t)sst * esize;
    size_t span = strided_span(dst, bsize, nblocks, esize);
    int seg = shm_xlate_or_die(fn, dest, span, &off, "destination");
    if (pe == shm_state_g.me) {
        self_copy(dest, ds, src, ss, bsize, nblocks, esize);
        return;
    }
    void *peer = shm_seg_peer_addr(seg, pe, off, span);
    if (peer != NULL) {
        shm_strided_copy(peer, ds, src, ss, bsize, nblocks, esize);
        return;
    }
    cdt_iput(&ctx->cdt, seg, off, ds, src, ss, bsize, nblocks, esize, pe);
}

void shm_rma_iget(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe)
{
    if (nblocks == 0 || bsize == 0)
        return;
    pe = shm_rma_check(fn, ctx, pe);
    check_strides(fn, dst, sst, bsize, nblocks, esize);
    size_t off, ds = (size_t)dst * esize, ss = (size_t)sst * esize;
    size_t span = strided_span(sst, bsize, nblocks, esize);
    int seg = shm_xlate_or_die(fn, src, span, &off, "source");
    if (pe == shm_state_g.me) {
        self_copy(dest, ds, src, ss, bsize, nblocks, esize);
        return;
    }
    const void *peer = shm_seg_peer_addr(seg, pe, off, span);
    if (peer != NULL) {
        shm_strided_copy(dest, ds, peer, ss, bsize, nblocks, esize);
        return;
    }
    cdt_iget(&ctx->cdt, dest, ds, seg, off, ss, bsize, nblocks, esize, pe);
}
