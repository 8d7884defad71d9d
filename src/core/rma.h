// SPDX-License-Identifier: BSD-3-Clause
/*
 * Byte-level RMA used by the typed API: checks, translation, self-copy,
 * then the conduit. Everything here is inline: it is the put path.
 */
#ifndef SHM_CORE_RMA_H
#define SHM_CORE_RMA_H

#include <string.h>

#include "core/check.h"
#include "core/state.h"
#include "core/team.h"

/*
 * The world PE that pe names on ctx: a context made from a team
 * (shmem_team_create_ctx) numbers PEs within that team (spec: "all
 * point-to-point routines operating on this context will use team-relative
 * PE numbering"); every other context numbers them in SHMEM_TEAM_WORLD.
 */
static inline int shm_ctx_world_pe(const char *fn, const struct shm_ctx *ctx, int pe)
{
    const shm_team_t *t = ctx != NULL ? ctx->team : NULL;
    if (shm_likely(t == NULL))
        return pe;
    if (shm_unlikely((unsigned)pe >= (unsigned)t->n))
        shm_bad_team_pe(fn, pe, t->n);
    return shm_team_pe(t, pe);
}

/* Checks a call on ctx towards pe; returns the world PE. */
static inline int shm_rma_check(const char *fn, struct shm_ctx *ctx, int pe)
{
    if (shm_unlikely(shm_state_g.debug)) {
        shm_check_running(fn);
        if (ctx == NULL)
            shm_bad_addr(fn, NULL, 0, "context (SHMEM_CTX_INVALID)");
        shm_check_ctx_live(fn, ctx);
    }
    pe = shm_ctx_world_pe(fn, ctx, pe);
    shm_check_pe(fn, pe);
    return pe;
}

/*
 * One transfer between a local buffer and a symmetric object on pe, in either
 * direction: checks, translation, then the shortest road — a copy for this PE,
 * a memcpy for a PE whose heap or globals are mapped here (same host), else
 * the conduit.
 * Always inlined so that `is_put` and `nbi` fold away.
 */
static inline __attribute__((always_inline)) void
shm_rma_xfer(const char *fn, struct shm_ctx *ctx, void *local, const void *remote, size_t bytes,
             int pe, int nbi, int is_put)
{
    size_t off;
    pe = shm_rma_check(fn, ctx, pe);
    /* Zero bytes: no effect, whatever the pointers (the spec allows NULL). */
    if (shm_unlikely(bytes == 0))
        return;
    int seg = shm_xlate_or_die(fn, remote, bytes, &off, is_put ? "destination" : "source");
    if (pe == shm_state_g.me) {
        if (is_put)
            memmove((void *)remote, local, bytes);
        else
            memmove(local, remote, bytes);
        return;
    }
    void *peer;
    if ((peer = shm_seg_peer_addr(seg, pe, off, bytes)) != NULL) {
        if (is_put)
            memcpy(peer, local, bytes);
        else
            memcpy(local, peer, bytes);
        return;
    }
    if (is_put && nbi)
        cdt_put_nbi(&ctx->cdt, seg, off, local, bytes, pe);
    else if (is_put)
        cdt_put(&ctx->cdt, seg, off, local, bytes, pe);
    else if (nbi)
        cdt_get_nbi(&ctx->cdt, local, seg, off, bytes, pe);
    else
        cdt_get(&ctx->cdt, local, seg, off, bytes, pe);
}

static inline void shm_rma_put(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                               size_t bytes, int pe, int nbi)
{
    shm_rma_xfer(fn, ctx, (void *)src, dest, bytes, pe, nbi, 1);
}

static inline void shm_rma_get(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                               size_t bytes, int pe, int nbi)
{
    shm_rma_xfer(fn, ctx, dest, src, bytes, pe, nbi, 0);
}

/* Strided forms: blocks of bsize elements of esize bytes. */
void shm_rma_iput(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe);
void shm_rma_iget(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                  int pe);

#endif /* SHM_CORE_RMA_H */
