// SPDX-License-Identifier: BSD-3-Clause
/*
 * Broadcast: data goes straight into the receivers' dest, then a flag; a
 * receiver says it has entered the call first (coll.h, "back-to-back").
 *   linear: the root puts to every PE (one step; the root sends n-1 copies);
 *   tree:   binomial tree rooted at the root (ceil(log2 n) steps), in
 *           segments of SHMEM_BCAST_SEGMENT bytes so that a PE forwards
 *           segment k while its parent sends segment k+1.
 *   node:   the same across hosts, one representative each, then down each
 *           host's tree: ceil(log2 K) fabric steps.
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

/*
 * Pushes the data down a tree in segments: parent (-1 at the root) and
 * children kids[0..nk) are team ranks. Each PE says it has entered to its
 * parent (who will write its dest), waits for its children's word, then per
 * segment waits for its parent's flag and forwards to every child.
 */
static void bcast_push(shm_team_t *t, const shm_coll_buf_t *d, const void *src, size_t bytes,
                       int parent, const int *kids, int nk)
{
    size_t seg = shm_coll_cfg_g.bcast_segment;
    const char *from = parent >= 0 ? d->addr : (const char *)src;
    if (parent >= 0) {
        shm_coll_quiet();
        shm_coll_ready_to(t, parent);
    }
    for (int k = 0; k < nk; k++)
        shm_coll_wait(t, kids[k]); /* the child's dest is free */
    for (size_t off = 0; off < bytes; off += seg) {
        size_t len = bytes - off < seg ? bytes - off : seg;
        if (parent >= 0)
            shm_coll_wait(t, parent);
        for (int k = 0; k < nk; k++)
            shm_coll_put(t, d, off, from + off, len, kids[k]);
        if (nk) {
            shm_coll_quiet();
            for (int k = 0; k < nk; k++)
                shm_coll_flag(t, kids[k]);
        }
    }
}

/* Binomial tree over n ranks rooted at rank root: this PE's parent and
 * children (largest subtree first: it has the longest way to go). */
static int binomial(int n, int me, int root, int *parent_p, int *kids)
{
    int v = (me - root + n) % n;         /* rank relative to the root */
    int low = v ? v & -v : 1 << 30;      /* children are v + m for m < low */
    int top = 1, nk = 0;
    while (top * 2 < n)
        top *= 2;
    *parent_p = v ? (v - low + root) % n : -1;
    for (int m = top; m >= 1; m >>= 1)
        if (m < low && v + m < n)
            kids[nk++] = (v + m + root) % n;
    return nk;
}

static void bcast_tree(shm_team_t *t, const shm_coll_buf_t *d, const void *src, size_t bytes,
                       int root)
{
    int parent, kids[32];
    int nk = binomial(t->n, t->me, root, &parent, kids);
    bcast_push(t, d, src, bytes, parent, kids, nk);
}

/*
 * Node: a binomial tree over the hosts, rooted at the root's host, whose
 * nodes are each host's representative (the root on its host, the leader
 * elsewhere); under each representative its host's tree (coll.h), rooted at
 * it. A representative sends to the other hosts first.
 */
static void bcast_node(shm_team_t *t, const shm_coll_buf_t *d, const void *src, size_t bytes,
                       int root)
{
    shm_coll_hosts_t *h = t->hosts;
    int k = h->k, x = h->host, hr = h->hof[root], p = shm_coll_host_size(h, x);
    const int *mine = h->memb + h->start[x];
    int rp = 0; /* index of this host's representative among its members */
    if (x == hr)
        while (mine[rp] != root)
            rp++;
    int pos = (h->lme - rp + p) % p;
    shm_coll_tree_t lt = shm_coll_tree(pos, p);
    int kids[32 + p], nk = 0, parent = -1;
    if (pos == 0) {
        int hp, hk[32];
        int nh = binomial(k, x, hr, &hp, hk);
        if (hp >= 0) /* the root's host is represented by the root */
            parent = hp == hr ? root : shm_coll_host_leader(h, hp);
        for (int i = 0; i < nh; i++)
            kids[nk++] = shm_coll_host_leader(h, hk[i]);
    } else {
        parent = mine[(lt.parent + rp) % p];
    }
    for (int c = lt.first; c < lt.end; c++)
        kids[nk++] = mine[(c + rp) % p];
    bcast_push(t, d, src, bytes, parent, kids, nk);
}

static void shm_coll_bcast_run(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes,
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
    if (shm_coll_use_node(t, alg == SHM_BCAST_NODE, alg == SHM_BCAST_AUTO)) {
        bcast_node(t, &d, src, bytes, root);
        return;
    }
    if (alg == SHM_BCAST_AUTO || alg == SHM_BCAST_NODE)
        alg = t->n <= shm_coll_cfg_g.bcast_linear_npes && bytes < shm_coll_cfg_g.bcast_tree_min
                  ? SHM_BCAST_LINEAR
                  : SHM_BCAST_TREE;
    if (alg == SHM_BCAST_LINEAR)
        bcast_linear(t, &d, src, bytes, root);
    else
        bcast_tree(t, &d, src, bytes, root);
}

void shm_coll_bcast(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes,
                    int root, int root_copies)
{
    int sk = shm_stats_begin(SHM_STAT_BCAST);
    shm_coll_bcast_run(fn, t, dest, src, bytes, root, root_copies);
    shm_stats_end(sk);
}
