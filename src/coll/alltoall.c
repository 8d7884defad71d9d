// SPDX-License-Identifier: BSD-3-Clause
/*
 * alltoall(s): block j of my source goes to PE j's dest at my rank's place.
 *   linear:   all n-1 blocks in flight at once, then one flag to each PE;
 *   pairwise: n-1 steps; in step s, send to me+s and wait for me-s, so
 *             each PE has one block in flight per step (large blocks).
 *   staged:   linear through the peers' scratch, for small contiguous blocks
 *             (no entry handshake: coll.h), then a local copy into dest.
 * The staggered order (me+1, me+2, ...) keeps PEs from all hitting one target.
 */
#include "coll/coll.h"

typedef struct {
    const shm_coll_buf_t *d;
    const char *src;
    size_t block;               /* bytes per PE (contiguous form) */
    ptrdiff_t dst, sst;         /* strided form: element strides; 0: contiguous */
    size_t nelems, esize;
} a2a_t;

/* My block for rank `to`, into its dest at my place. */
static void a2a_send(shm_team_t *t, const a2a_t *a, int to)
{
    int me = t->me;
    if (a->dst == 0) {
        shm_coll_put(t, a->d, (size_t)me * a->block, a->src + (size_t)to * a->block, a->block,
                     to);
        return;
    }
    size_t es = a->esize;
    for (size_t i = 0; i < a->nelems; i++) {
        size_t di = ((size_t)me * a->nelems + i) * (size_t)a->dst;
        size_t si = ((size_t)to * a->nelems + i) * (size_t)a->sst;
        shm_coll_put(t, a->d, di * es, a->src + si * es, es, to);
    }
}

/*
 * Small contiguous alltoall, linear: my block for rank r goes to r's scratch
 * half at my place (coll.h: staged, so no entry handshake), and each PE
 * copies the blocks into its dest. Returns 0 when the scratch cannot hold them.
 */
static int a2a_staged(shm_team_t *t, const a2a_t *a)
{
    int n = t->n, me = t->me;
    size_t nb = a->block;
    if (t->scratch == NULL || nb * (size_t)n > t->scratch_half)
        return 0;
    shm_coll_half_t h = shm_coll_half_next(t);
    shm_coll_buf_t s = {.seg = SHM_SEG_HEAP, .off = h.off, .addr = h.base};
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n;
        shm_coll_put(t, &s, (size_t)me * nb, a->src + (size_t)to * nb, nb, to);
    }
    shm_coll_staged_finish(t, h, a->d->addr, nb);
    return 1;
}

static void a2a_run(shm_team_t *t, const a2a_t *a, size_t block_bytes)
{
    int n = t->n, me = t->me;
    a2a_send(t, a, me);
    if (n == 1)
        return;
    shm_a2a_alg_t alg = shm_coll_cfg_g.alltoall;
    if (alg == SHM_A2A_AUTO)
        alg = n > shm_coll_cfg_g.alltoall_linear_npes &&
                      block_bytes >= shm_coll_cfg_g.alltoall_pairwise_min
                  ? SHM_A2A_PAIRWISE
                  : SHM_A2A_LINEAR;
    if (alg == SHM_A2A_LINEAR && a->dst == 0 && a2a_staged(t, a))
        return;
    /* Entry handshake (coll.h, "back-to-back"): everyone writes into everyone. */
    shm_coll_quiet();
    for (int s = 1; s < n; s++)
        shm_coll_ready_to(t, (me - s + n) % n);
    for (int s = 1; s < n; s++)
        shm_coll_wait(t, (me + s) % n);
    if (alg == SHM_A2A_LINEAR) {
        for (int s = 1; s < n; s++)
            a2a_send(t, a, (me + s) % n);
        shm_coll_linear_sync(t);
        return;
    }
    for (int s = 1; s < n; s++) {
        a2a_send(t, a, (me + s) % n);
        shm_coll_quiet();
        shm_coll_flag(t, (me + s) % n);
        shm_coll_wait(t, (me - s + n) % n);
    }
}

void shm_coll_alltoall(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    if (bytes == 0)
        return;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, bytes * (size_t)t->n, "destination");
    a2a_t a = {.d = &d, .src = src, .block = bytes};
    a2a_run(t, &a, bytes);
}

void shm_coll_alltoalls(const char *fn, shm_team_t *t, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize)
{
    if (nelems == 0)
        return;
    if (shm_unlikely(dst < 1 || sst < 1))
        shm_fatal("%s: strides must be positive (dst %td, sst %td)", fn, dst, sst);
    if (dst == 1 && sst == 1) {
        shm_coll_alltoall(fn, t, dest, src, nelems * esize);
        return;
    }
    size_t last = ((size_t)t->n * nelems - 1) * (size_t)dst + 1;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, last * esize, "destination");
    a2a_t a = {.d = &d, .src = src, .dst = dst, .sst = sst, .nelems = nelems, .esize = esize};
    a2a_run(t, &a, nelems * esize);
}
