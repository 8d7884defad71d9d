// SPDX-License-Identifier: BSD-3-Clause
/*
 * fcollect and collect: every PE's block lands straight at its final place
 * in every PE's dest (so a PE writes a peer's dest only once that peer is in
 * the call: coll.h, "back-to-back"), except small linear fcollects, staged
 * through the team's scratch (no handshake; one local copy).
 *   linear: each PE puts its block to every PE (one step, n-1 puts);
 *   ring:   n-1 steps, each passing one block to the right neighbour
 *           (bandwidth-optimal, for large blocks);
 *   bruck:  dissemination, ceil(log2 n) steps: in the step of distance d a
 *           PE forwards the min(d, n-d) blocks it holds to the PE d ahead.
 * collect first exchanges the block sizes the same way (into the team's
 * sizes words; active sets use the linear exchange indexed by world PE).
 */
#include <stdlib.h>

#include "coll/coll.h"

typedef struct {
    size_t nb;          /* fcollect: every block has nb bytes at rank * nb */
    const size_t *off;  /* collect: per rank (NULL for fcollect) */
    const size_t *len;
} blocks_t;

static inline size_t blk_off(const blocks_t *b, int r)
{
    return b->off ? b->off[r] : (size_t)r * b->nb;
}

static inline size_t blk_len(const blocks_t *b, int r)
{
    return b->off ? b->len[r] : b->nb;
}

/* Puts blocks first .. first+cnt-1 (mod n), held in d, to rank `to` at the same place. */
static void put_range(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b, int first,
                      int cnt, int to)
{
    int n = t->n;
    while (cnt > 0) {
        int run = first + cnt <= n ? cnt : n - first; /* up to the wrap */
        size_t a = blk_off(b, first);
        size_t e = blk_off(b, first + run - 1) + blk_len(b, first + run - 1);
        shm_coll_put(t, d, a, d->addr + a, e - a, to);
        cnt -= run;
        first = 0;
    }
}

static void gather_linear(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b,
                          const void *src)
{
    int n = t->n, me = t->me;
    for (int s = 1; s < n; s++)
        shm_coll_put(t, d, blk_off(b, me), src, blk_len(b, me), (me + s) % n);
    shm_coll_linear_sync(t);
}

static void gather_ring(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b)
{
    int n = t->n, me = t->me, right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int s = 0; s < n - 1; s++) {
        put_range(t, d, b, (me - s + n) % n, 1, right);
        shm_coll_quiet();
        shm_coll_flag(t, right);
        shm_coll_wait(t, left);
    }
}

static void gather_bruck(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b)
{
    int n = t->n, me = t->me;
    /* Before the step of distance d this PE holds blocks me-d+1 .. me. */
    for (int dist = 1; dist < n; dist <<= 1) {
        int cnt = dist < n - dist ? dist : n - dist;
        put_range(t, d, b, (me - cnt + 1 + n) % n, cnt, (me + dist) % n);
        shm_coll_quiet();
        shm_coll_flag(t, (me + dist) % n);
        shm_coll_wait(t, (me - dist + n) % n);
    }
}

/*
 * Entry handshake (coll.h, "back-to-back"): every rank that writes into my
 * dest learns that I am in the call, and I wait until every rank I write
 * into is in it.
 */
static void dest_ready(shm_team_t *t, shm_gather_alg_t alg)
{
    int n = t->n, me = t->me;
    shm_coll_quiet();
    switch (alg) {
    case SHM_GATHER_LINEAR:
        for (int s = 1; s < n; s++)
            shm_coll_ready_to(t, (me - s + n) % n);
        for (int s = 1; s < n; s++)
            shm_coll_wait(t, (me + s) % n);
        break;
    case SHM_GATHER_RING:
        shm_coll_ready_to(t, (me - 1 + n) % n);
        shm_coll_wait(t, (me + 1) % n);
        break;
    default:
        for (int dist = 1; dist < n; dist <<= 1)
            shm_coll_ready_to(t, (me - dist + n) % n);
        for (int dist = 1; dist < n; dist <<= 1)
            shm_coll_wait(t, (me + dist) % n);
        break;
    }
}

/*
 * Small fcollect, linear: blocks go to the peers' scratch half (coll.h:
 * staged, so no entry handshake), and each PE copies them into its dest.
 * Returns 0 (nothing done) when the team has no scratch or it is too small.
 */
static int gather_staged(shm_team_t *t, const shm_coll_buf_t *d, size_t nb, const void *src)
{
    int n = t->n, me = t->me;
    if (t->scratch == NULL || nb * (size_t)n > t->scratch_half)
        return 0;
    shm_coll_half_t h = shm_coll_half_next(t);
    shm_coll_buf_t s = {.seg = SHM_SEG_HEAP, .off = h.off, .addr = h.base};
    for (int k = 1; k < n; k++)
        shm_coll_put(t, &s, (size_t)me * nb, src, nb, (me + k) % n);
    shm_coll_staged_finish(t, h, d->addr, nb);
    return 1;
}

/*
 * Node: every member puts its block into its host leader's dest; the
 * leaders exchange whole hosts' blocks (linear up to 3 hosts, then bruck;
 * ring from FCOLLECT_RING_MIN bytes in all); each member then copies the rest
 * of the result from its leader's dest (in place on one host) and tells
 * it so, so that the leader's dest is not written again before. A host's
 * blocks need not be adjacent in dest: each host goes as runs of adjacent
 * ranks. entered: every member is known to be in this call (no readies).
 */
/* Puts the blocks of hosts first .. first+cnt-1 (mod k), held in d, to rank
 * `to` at the same places: runs of adjacent ranks, merged across hosts
 * whose blocks follow each other (ranks in blocks: one put per step). */
static void put_hosts(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b,
                      const shm_coll_hosts_t *ho, int first, int cnt, int to)
{
    size_t a = 0, e = 0; /* the run being gathered, [a, e) */
    int open = 0;
    for (int g = 0; g < cnt; g++) {
        int x = (first + g) % ho->k;
        const int *m = ho->memb + ho->start[x];
        for (int i = 0; i < shm_coll_host_size(ho, x); i++) {
            size_t o = blk_off(b, m[i]), l = blk_len(b, m[i]);
            if (open && o == e) {
                e += l;
                continue;
            }
            if (open)
                shm_coll_put(t, d, a, d->addr + a, e - a, to);
            a = o;
            e = o + l;
            open = 1;
        }
    }
    if (open)
        shm_coll_put(t, d, a, d->addr + a, e - a, to);
}

static void gather_leaders(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b,
                           size_t total, int entered)
{
    shm_coll_hosts_t *ho = t->hosts;
    int k = ho->k, x = ho->host;
#define LEADER(g) shm_coll_host_leader(ho, ((g) % k + k) % k)
    /* Linear costs a leader 3 (K-1) fabric messages (ready, data, flag),
     * bruck 3 ceil(log2 K): linear only where that is no more. */
    shm_gather_alg_t alg = k <= 3 ? SHM_GATHER_LINEAR
                           : total >= shm_coll_cfg_g.fcollect_ring_min ? SHM_GATHER_RING
                                                                       : SHM_GATHER_BRUCK;
    if (!entered) {
        if (alg == SHM_GATHER_LINEAR) {
            for (int s = 1; s < k; s++)
                shm_coll_ready_to(t, LEADER(x - s));
            for (int s = 1; s < k; s++)
                shm_coll_wait(t, LEADER(x + s));
        } else if (alg == SHM_GATHER_RING) {
            shm_coll_ready_to(t, LEADER(x - 1));
            shm_coll_wait(t, LEADER(x + 1));
        } else {
            for (int dist = 1; dist < k; dist <<= 1)
                shm_coll_ready_to(t, LEADER(x - dist));
            for (int dist = 1; dist < k; dist <<= 1)
                shm_coll_wait(t, LEADER(x + dist));
        }
    }
    int mh = shm_coll_host_size(ho, x);
    for (int i = 1; i < mh; i++)
        shm_coll_wait(t, ho->memb[ho->start[x] + i]); /* its block is here */
    if (alg == SHM_GATHER_LINEAR) {
        for (int s = 1; s < k; s++)
            put_hosts(t, d, b, ho, x, 1, LEADER(x + s));
        shm_coll_quiet();
        for (int s = 1; s < k; s++)
            shm_coll_flag(t, LEADER(x + s));
        for (int s = 1; s < k; s++)
            shm_coll_wait(t, LEADER(x - s));
    } else if (alg == SHM_GATHER_RING) {
        for (int s = 0; s < k - 1; s++) {
            put_hosts(t, d, b, ho, ((x - s) % k + k) % k, 1, LEADER(x + 1));
            shm_coll_quiet();
            shm_coll_flag(t, LEADER(x + 1));
            shm_coll_wait(t, LEADER(x - 1));
        }
    } else {
        for (int dist = 1; dist < k; dist <<= 1) {
            int cnt = dist < k - dist ? dist : k - dist;
            put_hosts(t, d, b, ho, ((x - cnt + 1) % k + k) % k, cnt, LEADER(x + dist));
            shm_coll_quiet();
            shm_coll_flag(t, LEADER(x + dist));
            shm_coll_wait(t, LEADER(x - dist));
        }
    }
#undef LEADER
}

static void gather_node(shm_team_t *t, const shm_coll_buf_t *d, const blocks_t *b, size_t total,
                        int entered)
{
    shm_coll_hosts_t *ho = t->hosts;
    const int *mine = ho->memb + ho->start[ho->host];
    int p = shm_coll_host_size(ho, ho->host), me = t->me;
    shm_coll_quiet();
    if (ho->lme == 0) {
        if (!entered)
            for (int i = 1; i < p; i++)
                shm_coll_ready_to(t, mine[i]);
        gather_leaders(t, d, b, total, entered);
        shm_coll_quiet();
        for (int i = 1; i < p; i++)
            shm_coll_flag(t, mine[i]); /* everything is here */
        for (int i = 1; i < p; i++)
            shm_coll_wait(t, mine[i]); /* it has copied it */
        return;
    }
    int leader = mine[0];
    if (!entered)
        shm_coll_wait(t, leader);
    shm_coll_put(t, d, blk_off(b, me), d->addr + blk_off(b, me), blk_len(b, me), leader);
    shm_coll_quiet();
    shm_coll_flag(t, leader);
    shm_coll_wait(t, leader);
    shm_coll_pull(t, d, 0, blk_off(b, me), leader);
    size_t end = blk_off(b, me) + blk_len(b, me);
    shm_coll_pull(t, d, end, total - end, leader);
    shm_coll_quiet();
    shm_coll_flag(t, leader);
}

/* entered: every member is known to be in this call already (collect, after
 * the sizes exchange), so no entry handshake is needed. */
static void gather_run(shm_team_t *t, shm_gather_alg_t alg, const shm_coll_buf_t *d,
                       const blocks_t *b, const void *src, size_t total, int entered)
{
    int me = t->me;
    /* Own block first: the ring and bruck forward it from dest. */
    if (d->addr + blk_off(b, me) != (const char *)src && blk_len(b, me))
        memmove(d->addr + blk_off(b, me), src, blk_len(b, me));
    if (t->n == 1)
        return;
    if (!t->by_world && shm_coll_use_node(t, alg == SHM_GATHER_NODE, alg == SHM_GATHER_AUTO)) {
        gather_node(t, d, b, total, entered);
        return;
    }
    if (alg == SHM_GATHER_AUTO || alg == SHM_GATHER_NODE) {
        if (t->n <= shm_coll_cfg_g.fcollect_linear_npes)
            alg = SHM_GATHER_LINEAR;
        else if (total >= shm_coll_cfg_g.fcollect_ring_min)
            alg = SHM_GATHER_RING;
        else
            alg = SHM_GATHER_BRUCK;
    }
    if (alg == SHM_GATHER_LINEAR && !entered && !b->off && gather_staged(t, d, b->nb, src))
        return;
    if (!entered)
        dest_ready(t, alg);
    switch (alg) {
    case SHM_GATHER_LINEAR: gather_linear(t, d, b, src); break;
    case SHM_GATHER_RING: gather_ring(t, d, b); break;
    default: gather_bruck(t, d, b); break;
    }
}

static void shm_coll_fcollect_run(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    if (bytes == 0)
        return;
    size_t total = bytes * (size_t)t->n;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, total, "destination");
    blocks_t b = {.nb = bytes};
    gather_run(t, shm_coll_cfg_g.fcollect, &d, &b, src, total, 0);
}

void shm_coll_fcollect(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    int sk = shm_stats_begin(SHM_STAT_FCOLLECT);
    shm_coll_fcollect_run(fn, t, dest, src, bytes);
    shm_stats_end(sk);
}

/* Sizes of every rank's block into sz[] (rank order). */
static void sizes_exchange(shm_team_t *t, size_t mine, size_t *sz)
{
    int n = t->n, me = t->me;
    if (!t->by_world) {
        uint64_t v = mine;
        shm_coll_buf_t d = {.seg = SHM_SEG_HEAP, .off = t->sizes_off, .addr = (char *)t->sizes};
        blocks_t b = {.nb = sizeof(uint64_t)};
        /* Team workspace: a PE ahead writes the next call's sizes only after
         * every member read these (see shm_coll_collect). */
        gather_run(t, shm_coll_cfg_g.collect, &d, &b, &v, (size_t)n * sizeof(uint64_t), 1);
        for (int r = 0; r < n; r++)
            sz[r] = t->sizes[r];
        return;
    }
    /* Active sets: word of world PE p holds p's size; linear exchange. */
    uint64_t v = mine;
    int wme = shm_team_pe(t, me);
    shm_coll_buf_t d = {.seg = SHM_SEG_HEAP, .off = t->sizes_off, .addr = (char *)t->sizes};
    t->sizes[wme] = v;
    for (int s = 1; s < n; s++)
        shm_coll_put(t, &d, (size_t)wme * sizeof(uint64_t), &v, sizeof(v), (me + s) % n);
    shm_coll_linear_sync(t);
    for (int r = 0; r < n; r++)
        sz[r] = ((volatile uint64_t *)t->sizes)[shm_team_pe(t, r)];
}

static void shm_coll_collect_run(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    int n = t->n;
    size_t stack_sz[2 * 64];
    size_t *sz = n <= 64 ? stack_sz : malloc(2 * (size_t)n * sizeof(size_t));
    if (sz == NULL)
        shm_fatal("%s: out of memory for %d block sizes", fn, n);
    size_t *off = sz + n;
    if (n == 1) {
        sz[0] = bytes;
    } else {
        sizes_exchange(t, bytes, sz);
    }
    size_t total = 0;
    for (int r = 0; r < n; r++) {
        off[r] = total;
        total += sz[r];
    }
    /*
     * Even when every block is empty the flags go round: a PE must not
     * finish (and start writing the next collect's sizes here) before
     * every PE has read this one's.
     */
    shm_coll_buf_t d = {.seg = -1, .off = 0, .addr = dest};
    if (total)
        d = shm_coll_sym(fn, dest, total, "destination");
    blocks_t b = {.off = off, .len = sz};
    /* With more than one PE, the sizes exchange has shown every member to be
     * in this call: their dests are free. */
    gather_run(t, shm_coll_cfg_g.collect, &d, &b, src, total, 1);
    if (sz != stack_sz)
        free(sz);
}

void shm_coll_collect(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes)
{
    int sk = shm_stats_begin(SHM_STAT_COLLECT);
    shm_coll_collect_run(fn, t, dest, src, bytes);
    shm_stats_end(sk);
}
