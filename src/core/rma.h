// SPDX-License-Identifier: BSD-3-Clause
/*
 * Byte-level RMA used by the typed API: checks, translation, self-copy,
 * then the conduit. Everything here is inline: it is the put path.
 */
#ifndef SHM_CORE_RMA_H
#define SHM_CORE_RMA_H

#include <string.h>

#include "core/state.h"

static inline void shm_rma_check(const char *fn, struct shm_ctx *ctx, int pe)
{
    if (shm_unlikely(shm_state_g.debug)) {
        shm_check_running(fn);
        if (ctx == NULL)
            shm_bad_addr(fn, NULL, 0, "context (SHMEM_CTX_INVALID)");
    }
    shm_check_pe(fn, pe);
}

static inline void shm_rma_put(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                               size_t bytes, int pe, int nbi)
{
    size_t off;
    shm_rma_check(fn, ctx, pe);
    int seg = shm_xlate_or_die(fn, dest, bytes, &off, "destination");
    if (shm_unlikely(bytes == 0))
        return;
    if (pe == shm_state_g.me) {
        memmove(dest, src, bytes);
        return;
    }
    void *peer;
    if (seg == SHM_SEG_HEAP && (peer = shm_heap_peer_addr(pe, off)) != NULL) {
        memcpy(peer, src, bytes); /* same host: the peer's heap is mapped here */
        return;
    }
    if (nbi)
        cdt_put_nbi(&ctx->cdt, seg, off, src, bytes, pe);
    else
        cdt_put(&ctx->cdt, seg, off, src, bytes, pe);
}

static inline void shm_rma_get(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                               size_t bytes, int pe, int nbi)
{
    size_t off;
    shm_rma_check(fn, ctx, pe);
    int seg = shm_xlate_or_die(fn, src, bytes, &off, "source");
    if (shm_unlikely(bytes == 0))
        return;
    if (pe == shm_state_g.me) {
        memmove(dest, src, bytes);
        return;
    }
    void *peer;
    if (seg == SHM_SEG_HEAP && (peer = shm_heap_peer_addr(pe, off)) != NULL) {
        memcpy(dest, peer, bytes);
        return;
    }
    if (nbi)
        cdt_get_nbi(&ctx->cdt, dest, seg, off, bytes, pe);
    else
        cdt_get(&ctx->cdt, dest, seg, off, bytes, pe);
}

/* Strided forms: blocks of bsize elements of esize bytes. */
void shm_rma_iput(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe);
void shm_rma_iget(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe);

#endif /* SHM_CORE_RMA_H */
