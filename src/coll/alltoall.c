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

/*
 * Node, small contiguous blocks: each host's leader sends one message per
 * other host holding every block its host has for that host, through the
 * team scratch (staged: coll.h, no entry handshake). Half layout, P_x the
 * members of host x, Pm the most on any host:
 *   local  [Pm blocks]: slot i holds the block from this host's member i;
 *   send   (leaders) per other host y, in host order: [i in x][j in y];
 *   recv   (leaders) per other host y: [i in y][j in x].
 * Members put their blocks for their own host straight into the local slots
 * and those for other hosts into their leader's send area; leaders exchange
 * the send areas; each member copies its blocks out of its leader's recv
 * area (in place on one host) after the leader's flag.
 */
static size_t a2a_node_local(const shm_coll_hosts_t *ho, size_t nb)
{
    return ((size_t)ho->pmax * nb + 63) / 64 * 64;
}

/* Scratch bytes the node form needs on the busiest leader, or 0 if it does not apply. */
static size_t a2a_node_bytes(const shm_team_t *t, size_t nb)
{
    const shm_coll_hosts_t *ho = t->hosts;
    size_t most = 0;
    for (int x = 0; x < ho->k; x++) {
        size_t px = (size_t)shm_coll_host_size(ho, x);
        size_t v = px * ((size_t)t->n - px);
        most = v > most ? v : most;
    }
    return a2a_node_local(ho, nb) + 2 * most * nb;
}

/* Offset of host y's matrix in host x's send (or recv) area, in blocks. */
static size_t a2a_node_mat(const shm_coll_hosts_t *ho, int x, int y)
{
    size_t px = (size_t)shm_coll_host_size(ho, x);
    return px * ((size_t)ho->start[y] - (y > x ? px : 0));
}

static void a2a_node(shm_team_t *t, const a2a_t *a)
{
    shm_coll_hosts_t *ho = t->hosts;
    int n = t->n, k = ho->k, x = ho->host, i = ho->lme;
    size_t nb = a->block;
    const int *mine = ho->memb + ho->start[x];
    size_t px = (size_t)shm_coll_host_size(ho, x);
    size_t loc = a2a_node_local(ho, nb);
    size_t send = loc, recv = loc + px * ((size_t)n - px) * nb; /* on host x's leader */
    shm_coll_half_t h = shm_coll_half_next(t);
    shm_coll_buf_t hb = {.seg = SHM_SEG_HEAP, .off = h.off, .addr = h.base};
    int leader = mine[0];

    for (size_t j = 1; j < px; j++) {
        int to = mine[(i + j) % px];
        shm_coll_put(t, &hb, (size_t)i * nb, a->src + (size_t)to * nb, nb, to);
    }
    for (int y = 0; y < k; y++) {
        if (y == x)
            continue;
        const int *m = ho->memb + ho->start[y];
        size_t py = (size_t)shm_coll_host_size(ho, y);
        size_t row = send + (a2a_node_mat(ho, x, y) + (size_t)i * py) * nb;
        for (size_t j = 0, e; j < py; j = e) { /* runs of adjacent ranks: one put */
            for (e = j + 1; e < py && m[e] == m[e - 1] + 1; e++)
                ;
            shm_coll_put(t, &hb, row + j * nb, a->src + (size_t)m[j] * nb, (e - j) * nb, leader);
        }
    }
    shm_coll_quiet();
    if (i == 0) {
        for (size_t j = 1; j < px; j++)
            shm_coll_wait(t, mine[j]); /* its blocks are here */
        for (int s = 1; s < k; s++) {
            int y = (x + s) % k;
            size_t py = (size_t)shm_coll_host_size(ho, y);
            size_t yrecv = loc + py * ((size_t)n - py) * nb;
            shm_coll_put(t, &hb, yrecv + a2a_node_mat(ho, y, x) * nb,
                         h.base + send + a2a_node_mat(ho, x, y) * nb, px * py * nb,
                         shm_coll_host_leader(ho, y));
        }
        shm_coll_quiet();
        for (int s = 1; s < k; s++)
            shm_coll_flag(t, shm_coll_host_leader(ho, (x + s) % k));
        for (int s = 1; s < k; s++)
            shm_coll_wait(t, shm_coll_host_leader(ho, (x - s + k) % k));
        for (size_t j = 1; j < px; j++)
            shm_coll_flag(t, mine[j]);
    } else {
        shm_coll_flag(t, leader);
        shm_coll_wait(t, leader);
    }
    /* Blocks from this host, then from the others (out of the leader's recv area). */
    for (size_t j = 1; j < px; j++) {
        size_t from = (i + px - j) % px;
        memcpy(a->d->addr + (size_t)mine[from] * nb, h.base + from * nb, nb);
    }
    for (int y = 0; y < k; y++) {
        if (y == x)
            continue;
        const int *m = ho->memb + ho->start[y];
        size_t py = (size_t)shm_coll_host_size(ho, y);
        size_t mat = recv + a2a_node_mat(ho, x, y) * nb;
        for (size_t j = 0; j < py; j++) {
            size_t off = mat + (j * px + (size_t)i) * nb;
            char *to = a->d->addr + (size_t)m[j] * nb;
            const char *peer = i == 0 ? h.base + off : shm_coll_peer(t, &hb, off, nb, leader);
            if (peer) {
                memcpy(to, peer, nb);
            } else {
                cdt_get_nbi(shm_coll_cdt(), to, SHM_SEG_HEAP, h.off + off, nb,
                            shm_team_pe(t, leader));
                shm_stats_get(nb);
            }
        }
    }
    shm_coll_quiet();
}

static void a2a_run(shm_team_t *t, const a2a_t *a, size_t block_bytes)
{
    int n = t->n, me = t->me;
    a2a_send(t, a, me);
    if (n == 1)
        return;
    shm_a2a_alg_t alg = shm_coll_cfg_g.alltoall;
    if (a->dst == 0 && t->scratch != NULL &&
        shm_coll_use_node(t, alg == SHM_A2A_NODE,
                          alg == SHM_A2A_AUTO && block_bytes <= shm_coll_cfg_g.alltoall_node_max) &&
        a2a_node_bytes(t, block_bytes) <= t->scratch_half) {
        a2a_node(t, a);
        return;
    }
    if (alg == SHM_A2A_NODE)
        alg = SHM_A2A_AUTO;
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

static void shm_coll_alltoall_run(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    if (bytes == 0)
        return;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, bytes * (size_t)t->n, "destination");
    a2a_t a = {.d = &d, .src = src, .block = bytes};
    a2a_run(t, &a, bytes);
}

void shm_coll_alltoall(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    int sk = shm_stats_begin(SHM_STAT_ALLTOALL);
    shm_coll_alltoall_run(fn, t, dest, src, bytes);
    shm_stats_end(sk);
}

static void shm_coll_alltoalls_run(const char *fn, shm_team_t *t, void *dest, const void *src,
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

void shm_coll_alltoalls(const char *fn, shm_team_t *t, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize)
{
    int sk = shm_stats_begin(SHM_STAT_ALLTOALL);
    shm_coll_alltoalls_run(fn, t, dest, src, dst, sst, nelems, esize);
    shm_stats_end(sk);
}
