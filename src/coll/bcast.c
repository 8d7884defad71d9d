// SPDX-License-Identifier: BSD-3-Clause
/*
 * Broadcast: data goes straight into the receivers' dest, then a flag; a
 * receiver says it has entered the call first (coll.h, "back-to-back").
 *   linear: the root puts to every PE (one step; the root sends n-1 copies);
 *   tree:   binomial tree rooted at the root (ceil(log2 n) steps), in
 *           segments of SHMEM_BCAST_SEGMENT bytes so that a PE forwards
 *           segment k while its parent sends segment k+1.
 */
#include "coll/coll.h"

static void bcast_linear(shm_team_t *t, const shm_coll_buf_t *d, const void *src, size_t bytes,
                         int root)
{
    int n = t->n;
    if (t->me != root) {
        shm_coll_quiet();
        shm_coll_ready_to(t, root);
        shm_coll_wait(t, root);
        return;
    }
    for (int s = 1; s < n; s++)
        shm_coll_wait(t, (root + s) % n); /* its dest is free */
    for (int s = 1; s < n; s++)
        shm_coll_put(t, d, 0, src, bytes, (root + s) % n);
    shm_coll_quiet();
    for (int s = 1; s < n; s++)
        shm_coll_flag(t, (root + s) % n);
}

static void bcast_tree(shm_team_t *t, const shm_coll_buf_t *d, const void *src, size_t bytes,
                       int root)
{
    int n = t->n;
    int v = (t->me - root + n) % n;      /* rank relative to the root */
    int low = v ? v & -v : 1 << 30;      /* children are v + m for m < low */
    int parent = v ? (v - low + root) % n : -1;
    int top = 1;
    while (top * 2 < n)
        top *= 2;
    size_t seg = shm_coll_cfg_g.bcast_segment;
    const char *from = v ? d->addr : (const char *)src;

    if (parent >= 0) {
        shm_coll_quiet();
        shm_coll_ready_to(t, parent);
    }
    for (int m = top; m >= 1; m >>= 1)
        if (m < low && v + m < n)
            shm_coll_wait(t, (v + m + root) % n); /* the child's dest is free */

    for (size_t off = 0; off < bytes; off += seg) {
        size_t len = bytes - off < seg ? bytes - off : seg;
        if (parent >= 0)
            shm_coll_wait(t, parent);
        int kids = 0;
        /* Largest subtree first: it has the longest way to go. */
        for (int m = top; m >= 1; m >>= 1)
            if (m < low && v + m < n) {
                shm_coll_put(t, d, off, from + off, len, (v + m + root) % n);
                kids++;
            }
        if (kids) {
            shm_coll_quiet();
            for (int m = top; m >= 1; m >>= 1)
                if (m < low && v + m < n)
                    shm_coll_flag(t, (v + m + root) % n);
        }
    }
}

void shm_coll_bcast(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes,
                    int root, int root_copies)
{
    if (shm_unlikely(root < 0 || root >= t->n))
        shm_fatal("%s: root %d is not a PE of the team (0..%d)", fn, root, t->n - 1);
    if (bytes == 0)
        return;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, bytes, "destination");
    if (t->me == root && root_copies && dest != src)
        memmove(dest, src, bytes);
    if (t->n == 1)
        return;
    shm_bcast_alg_t alg = shm_coll_cfg_g.bcast;
    if (alg == SHM_BCAST_AUTO)
        alg = t->n <= shm_coll_cfg_g.bcast_linear_npes && bytes < shm_coll_cfg_g.bcast_tree_min
                  ? SHM_BCAST_LINEAR
                  : SHM_BCAST_TREE;
    if (alg == SHM_BCAST_LINEAR)
        bcast_linear(t, &d, src, bytes, root);
    else
        bcast_tree(t, &d, src, bytes, root);
}
