// SPDX-License-Identifier: BSD-3-Clause
/*
 * Reductions (all-reduce: every PE gets the result) and scans.
 *
 *   linear: each PE puts its block into every PE's scratch (one step), and
 *           every PE combines all n blocks in rank order.
 *   rd:     recursive doubling through scratch, ceil(log2 n) steps; with a
 *           non-power-of-two n the first 2*(n - 2^k) ranks fold in pairs
 *           first and the odd one hands the result back at the end.
 *   rsag:   no staging: after a barrier (sources readable), PE i gets
 *           segment i of every source, reduces it, and puts it into every
 *           PE's dest; bandwidth-optimal, for large counts, and the only one
 *           the active-set forms use (they have no scratch).
 *   node:   teams across hosts (coll/hosts.h): small counts combine up each
 *           host's tree, by recursive doubling among the hosts' leaders and
 *           back down; large ones reduce-scatter on each host and across
 *           hosts by slices, several PEs per host at once (reduce_node_rsag).
 *
 * linear and rd go through the team's scratch in chunks; each chunk is one
 * "staged collective" using the half (scratch_uses & 1). Staged collectives
 * depend on every member (every result needs every input), so a PE that
 * starts the next-but-one is past the point where everybody finished
 * reading this half: two halves are enough, whatever runs in between.
 *
 * Every PE ends with bit-identical results: linear combines in rank order
 * everywhere, rd combines the same pairs everywhere (the operations are
 * commutative), and rsag computes each segment once.
 */
#include <stdlib.h>

#include "coll/coll.h"

#define ALIGN 16 /* regions hold long double and double _Complex */

/* Bytes of scratch region when the half holds `regions` of them; 0 if too small. */
static size_t region_bytes(const shm_team_t *t, int regions)
{
    size_t r = t->scratch_half / (size_t)regions / ALIGN * ALIGN;
    return r;
}

typedef shm_coll_half_t half_t;

static half_t half_next(shm_team_t *t)
{
    return shm_coll_half_next(t);
}

static void put_region(shm_team_t *t, const half_t *h, size_t region_off, const void *src,
                       size_t len, int to)
{
    shm_coll_buf_t b = {.seg = SHM_SEG_HEAP, .off = h->off, .addr = h->base};
    shm_coll_put(t, &b, region_off, src, len, to);
}

/* One chunk, linear, through half h. dst and src may be private and may be the same. */
static void chunk_linear(shm_team_t *t, half_t h, char *dst, const char *src, size_t len,
                         size_t esize, shm_coll_op_fn op, size_t region)
{
    int n = t->n, me = t->me;
    char *mine = h.base + (size_t)me * region;
    memcpy(mine, src, len);
    for (int s = 1; s < n; s++)
        put_region(t, &h, (size_t)me * region, mine, len, (me + s) % n);
    shm_coll_linear_sync(t);
    memcpy(dst, h.base, len);
    for (int r = 1; r < n; r++)
        op(dst, h.base + (size_t)r * region, len / esize);
}

/* One chunk, recursive doubling, through the regions of half h from offset
 * base on (a team or a view). dst and src may be private and may be the same. */
static void chunk_rd(shm_team_t *t, half_t h, size_t base, char *dst, const char *src,
                     size_t len, size_t esize, shm_coll_op_fn op, size_t region, int rounds)
{
    int n = t->n, me = t->me;
    int p2 = 1 << rounds, extra = n - p2;
    h.base += base;
    h.off += base;
    size_t fold = (size_t)rounds * region; /* region of the fold exchanges */
    if (dst != src)
        memcpy(dst, src, len);

    int newrank;
    if (me < 2 * extra) {
        if (me % 2 == 0) { /* hand my block to me+1, get the result back */
            put_region(t, &h, fold, dst, len, me + 1);
            shm_coll_quiet();
            shm_coll_flag(t, me + 1);
            shm_coll_wait(t, me + 1);
            memcpy(dst, h.base + fold, len);
            return;
        }
        shm_coll_wait(t, me - 1);
        op(dst, h.base + fold, len / esize);
        newrank = me / 2;
    } else {
        newrank = me - extra;
    }
    for (int k = 0; k < rounds; k++) {
        int pn = newrank ^ (1 << k);
        int partner = pn < extra ? 2 * pn + 1 : pn + extra;
        put_region(t, &h, (size_t)k * region, dst, len, partner);
        shm_coll_quiet();
        shm_coll_flag(t, partner);
        shm_coll_wait(t, partner);
        op(dst, h.base + (size_t)k * region, len / esize);
    }
    if (me < 2 * extra) {
        put_region(t, &h, fold, dst, len, me - 1);
        shm_coll_quiet();
        shm_coll_flag(t, me - 1);
    }
}

static int log2_floor(int n)
{
    int k = 0;
    while ((2 << k) <= n)
        k++;
    return k;
}

/*
 * Node, small: each host's tree (coll.h) combines its members' blocks into
 * the host's leader (a child's partial goes into region `slot` of its
 * parent's half), the leaders run recursive doubling among themselves, and
 * the result goes back down the tree into each member's result region.
 * Half layout: kids regions, the result region, then the leaders' rounds+1.
 * Every member ends with the leaders' result: bit-identical everywhere.
 */
typedef struct {
    int kids, rounds;
    size_t region;
} node_plan_t;

static node_plan_t node_plan(const shm_team_t *t)
{
    const shm_coll_hosts_t *ho = t->hosts;
    node_plan_t p;
    long r = shm_coll_cfg_g.node_radix;
    p.kids = ho->pmax - 1 < r ? ho->pmax - 1 : (int)r;
    p.rounds = log2_floor(ho->k);
    p.region = region_bytes(t, p.kids + 2 + p.rounds);
    return p;
}

static void chunk_node(shm_team_t *t, half_t h, char *dst, const char *src, size_t len,
                       size_t esize, shm_coll_op_fn op, const node_plan_t *p)
{
    shm_coll_hosts_t *ho = t->hosts;
    shm_team_t *l = &ho->local;
    shm_coll_tree_t x = shm_coll_tree(l->me, l->n);
    size_t region = p->region, res = (size_t)p->kids * region;
    if (dst != src)
        memcpy(dst, src, len);
    for (int c = x.first; c < x.end; c++) {
        shm_coll_wait(l, c);
        op(dst, h.base + (size_t)(c - x.first) * region, len / esize);
    }
    if (x.parent >= 0) {
        shm_coll_tree_t px = shm_coll_tree(x.parent, l->n);
        put_region(l, &h, (size_t)(l->me - px.first) * region, dst, len, x.parent);
        shm_coll_quiet();
        shm_coll_flag(l, x.parent);
        shm_coll_wait(l, x.parent);
        memcpy(dst, h.base + res, len);
    } else {
        chunk_rd(&ho->column, h, res + region, dst, dst, len, esize, op, region, p->rounds);
    }
    for (int c = x.first; c < x.end; c++)
        put_region(l, &h, res, dst, len, c);
    if (x.first < x.end) {
        shm_coll_quiet();
        for (int c = x.first; c < x.end; c++)
            shm_coll_flag(l, c);
    }
}

static void reduce_node_small(shm_team_t *t, char *dst, const char *src, size_t count,
                              size_t esize, shm_coll_op_fn op, const node_plan_t *p)
{
    size_t per = p->region / esize * esize, bytes = count * esize;
    for (size_t off = 0; off < bytes; off += per) {
        size_t len = bytes - off < per ? bytes - off : per;
        chunk_node(t, half_next(t), dst + off, src + off, len, esize, op, p);
    }
}

/* Staged reduction of count elements in chunks that fit the scratch. */
static void reduce_staged(shm_team_t *t, char *dst, const char *src, size_t count, size_t esize,
                          shm_coll_op_fn op, shm_reduce_alg_t alg)
{
    int rounds = log2_floor(t->n);
    size_t region = alg == SHM_REDUCE_LINEAR ? region_bytes(t, t->n)
                                             : region_bytes(t, rounds + 1);
    size_t per = region / esize * esize;
    size_t bytes = count * esize;
    for (size_t off = 0; off < bytes; off += per) {
        size_t len = bytes - off < per ? bytes - off : per;
        if (alg == SHM_REDUCE_LINEAR)
            chunk_linear(t, half_next(t), dst + off, src + off, len, esize, op, region);
        else
            chunk_rd(t, half_next(t), 0, dst + off, src + off, len, esize, op, region, rounds);
    }
}

/* Bytes of each peer's piece fetched at a time by rsag. */
#define RSAG_PIECE ((size_t)64 << 10)

static void reduce_rsag(const char *fn, shm_team_t *t, char *dest, const char *src,
                        size_t count, size_t esize, shm_coll_op_fn op)
{
    int n = t->n, me = t->me;
    size_t bytes = count * esize;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, bytes, "destination");
    shm_coll_buf_t s = shm_coll_sym(fn, src, bytes, "source");
    /* Segment r: elements [r*count/n, (r+1)*count/n). */
    size_t a = (size_t)me * count / (size_t)n * esize;
    size_t b = (size_t)(me + 1) * count / (size_t)n * esize;

    shm_coll_sync(t); /* every source is ready to be read */
    if (dest != src)
        memcpy(dest + a, src + a, b - a);
    if (b > a) {
        size_t piece = b - a < RSAG_PIECE ? b - a : RSAG_PIECE / esize * esize;
        /* Sources mapped here (same host) are read in place: no buffer needed. */
        char *tmp = NULL;
        for (int k = 1; k < n && tmp == NULL; k++)
            if (shm_coll_peer(t, &s, a, b - a, (me + k) % n) == NULL) {
                tmp = malloc(piece * (size_t)(n - 1));
                if (tmp == NULL)
                    shm_fatal("%s: out of memory for a %zu-byte reduction buffer", fn,
                              piece * (size_t)(n - 1));
            }
        const char *in[n];
        for (size_t off = a; off < b; off += piece) {
            size_t len = b - off < piece ? b - off : piece;
            for (int k = 1; k < n; k++)
                in[k] = shm_coll_fetch(t, &s, off, len, (me + k) % n,
                                       tmp ? tmp + (size_t)(k - 1) * piece : NULL);
            shm_coll_quiet();
            for (int k = 1; k < n; k++)
                op(dest + off, in[k], len / esize);
        }
        free(tmp);
    }
    /* My segment to everyone; then everyone's segment here (they read my source first). */
    for (int k = 1; k < n; k++)
        shm_coll_put(t, &d, a, dest + a, b - a, (me + k) % n);
    shm_coll_linear_sync(t);
}

/* Reads [off, off+len) of `from`'s copy of b (view rank) and combines it into acc. */
static void fold_in(shm_team_t *v, const shm_coll_buf_t *b, char *acc, size_t off, size_t len,
                    size_t esize, shm_coll_op_fn op, int from, char **tmp, const char *fn)
{
    if (shm_coll_peer(v, b, off, len, from) == NULL && *tmp == NULL) {
        *tmp = malloc(RSAG_PIECE);
        if (*tmp == NULL)
            shm_fatal("%s: out of memory for a %zu-byte reduction buffer", fn, (size_t)RSAG_PIECE);
    }
    size_t piece = RSAG_PIECE / esize * esize;
    for (size_t o = 0; o < len; o += piece) {
        size_t l = len - o < piece ? len - o : piece;
        const char *in = shm_coll_fetch(v, b, off + o, l, from, *tmp);
        shm_coll_quiet();
        op(acc + o, in, l / esize);
    }
}

/*
 * Slice [a, b) of dest reduced across the column c by recursive halving
 * (reduce-scatter: each step keeps half the range and gets the partner's
 * copy of it) and then doubling (allgather: each step puts the range held
 * into the partner's dest): 2 ceil(log2 K) steps of one partner each,
 * where the linear exchange has K-1 partners. A non-power-of-two K first
 * folds its first 2(K - 2^m) ranks in pairs, as chunk_rd does. Each step
 * starts with a flag saying this PE's copy of what the partner keeps is
 * final; a range given away is never written again before the partner's
 * put at the mirror step, and every partner that read this PE's dest
 * flags it again after, so nobody reads it once this returns.
 */
static void column_halving(shm_team_t *c, const shm_coll_buf_t *d, char *dest, size_t a, size_t b,
                           size_t esize, shm_coll_op_fn op, char **tmp, const char *fn)
{
    int n = c->n, me = c->me, m = log2_floor(n), extra = n - (1 << m), nr;
    if (me < 2 * extra) {
        if (me % 2 == 0) { /* my partial goes to me+1, the result comes back */
            shm_coll_quiet();
            shm_coll_flag(c, me + 1);
            shm_coll_wait(c, me + 1);
            return;
        }
        shm_coll_wait(c, me - 1);
        fold_in(c, d, dest + a, a, b - a, esize, op, me - 1, tmp, fn);
        nr = me / 2;
    } else {
        nr = me - extra;
    }
#define REAL(x) ((x) < extra ? 2 * (x) + 1 : (x) + extra)
    size_t lo = 0, hi = (b - a) / esize, los[32], his[32];
    for (int s = 0, dist = 1 << (m - 1); dist >= 1; s++, dist >>= 1) {
        int partner = REAL(nr ^ dist);
        size_t mid = lo + (hi - lo) / 2;
        los[s] = lo;
        his[s] = hi;
        if (nr & dist)
            lo = mid;
        else
            hi = mid;
        shm_coll_quiet();
        shm_coll_flag(c, partner);
        shm_coll_wait(c, partner);
        fold_in(c, d, dest + a + lo * esize, a + lo * esize, (hi - lo) * esize, esize, op,
                partner, tmp, fn);
    }
    for (int s = m - 1, dist = 1; s >= 0; s--, dist <<= 1) {
        int partner = REAL(nr ^ dist);
        shm_coll_put(c, d, a + lo * esize, dest + a + lo * esize, (hi - lo) * esize, partner);
        shm_coll_quiet();
        shm_coll_flag(c, partner);
        shm_coll_wait(c, partner);
        lo = los[s];
        hi = his[s];
    }
#undef REAL
    if (me < 2 * extra) {
        shm_coll_put(c, d, a, dest + a, b - a, me - 1);
        shm_coll_quiet();
        shm_coll_flag(c, me - 1);
    }
}

/*
 * Node, large: after a barrier, the j-th member of each host (j < the
 * fewest members any host has) owns slice j of the elements: it reduces
 * slice j of its host's sources (read in place on one host), then the j-th
 * members of all hosts reduce-scatter + allgather slice j among themselves
 * across the hosts (through their dests), and each owner copies its slice
 * into its host's dests. Each PE moves about 2 (K-1)/K of its slice across
 * the network, where flat rsag moves 2 (N-1)/N of the whole message. Across
 * up to SHMEM_REDUCE_NODE_LINEAR_HOSTS hosts the slice's pieces go to and
 * from every other host at once; across more, by column_halving.
 * Needs no scratch: also the active-set form.
 */
static void reduce_node_rsag(const char *fn, shm_team_t *t, char *dest, const char *src,
                             size_t count, size_t esize, shm_coll_op_fn op)
{
    shm_coll_hosts_t *ho = t->hosts;
    shm_team_t *l = &ho->local, *c = &ho->column;
    int p = l->n, j = ho->lme, slices = ho->pmin;
    size_t bytes = count * esize;
    shm_coll_buf_t d = shm_coll_sym(fn, dest, bytes, "destination");
    shm_coll_buf_t s = shm_coll_sym(fn, src, bytes, "source");
    size_t a = (size_t)j * count / (size_t)slices * esize;
    size_t b = (size_t)(j + 1) * count / (size_t)slices * esize;
    char *tmp = NULL;

    shm_coll_barrier_alg(t, SHM_BARRIER_NODE); /* every source is ready to be read */
    if (j < slices) {
        if (dest != src)
            memcpy(dest + a, src + a, b - a);
        for (int k = 1; k < p; k++)
            fold_in(l, &s, dest + a, a, b - a, esize, op, (j + k) % p, &tmp, fn);
        if (c->n > shm_coll_cfg_g.reduce_node_linear_hosts) {
            column_halving(c, &d, dest, a, b, esize, op, &tmp, fn);
        } else {
        /* Slice j across the hosts: piece r of it is column rank r's. */
        shm_coll_barrier_alg(c, SHM_BARRIER_DISSEM); /* every host's partial is in its dest */
        int kk = c->n, r = c->me;
        size_t cnt = (b - a) / esize;
        size_t ra = a + (size_t)r * cnt / (size_t)kk * esize;
        size_t rb = a + (size_t)(r + 1) * cnt / (size_t)kk * esize;
        for (int k = 1; k < kk; k++)
            fold_in(c, &d, dest + ra, ra, rb - ra, esize, op, (r + k) % kk, &tmp, fn);
        for (int k = 1; k < kk; k++)
            shm_coll_put(c, &d, ra, dest + ra, rb - ra, (r + k) % kk);
        shm_coll_linear_sync(c);
        }
        for (int k = 1; k < p; k++)
            shm_coll_put(l, &d, a, dest + a, b - a, (j + k) % p);
    }
    free(tmp);
    shm_coll_linear_sync(l);
}

static void shm_coll_reduce_run(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
                     size_t esize, shm_coll_op_fn op)
{
    if (count == 0)
        return;
    size_t bytes = count * esize;
    if (t->n == 1) {
        shm_coll_sym(fn, dest, bytes, "destination");
        if (dest != src)
            memmove(dest, src, bytes);
        return;
    }
    shm_reduce_alg_t alg = shm_coll_cfg_g.reduce;
    if (shm_coll_use_node(t, alg == SHM_REDUCE_NODE, alg == SHM_REDUCE_AUTO)) {
        node_plan_t p;
        if (t->scratch != NULL && bytes < shm_coll_cfg_g.reduce_rsag_min &&
            (p = node_plan(t)).region >= esize) {
            shm_coll_sym(fn, dest, bytes, "destination");
            reduce_node_small(t, dest, src, count, esize, op, &p);
        } else {
            reduce_node_rsag(fn, t, dest, src, count, esize, op);
        }
        return;
    }
    if (alg == SHM_REDUCE_NODE)
        alg = SHM_REDUCE_AUTO;
    if (t->scratch == NULL) {
        alg = SHM_REDUCE_RSAG; /* active sets have no scratch */
    } else if (alg == SHM_REDUCE_AUTO) {
        if (bytes >= shm_coll_cfg_g.reduce_rsag_min)
            alg = SHM_REDUCE_RSAG;
        else if (t->n <= shm_coll_cfg_g.reduce_linear_npes &&
                 bytes <= shm_coll_cfg_g.reduce_linear_max)
            alg = SHM_REDUCE_LINEAR;
        else
            alg = SHM_REDUCE_RD;
    }
    if (alg == SHM_REDUCE_LINEAR && region_bytes(t, t->n) < esize)
        alg = SHM_REDUCE_RD; /* too many PEs for one region each */
    if (alg == SHM_REDUCE_RSAG) {
        reduce_rsag(fn, t, dest, src, count, esize, op);
        return;
    }
    shm_coll_sym(fn, dest, bytes, "destination");
    reduce_staged(t, dest, src, count, esize, op, alg);
}

void shm_coll_reduce(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
                     size_t esize, shm_coll_op_fn op)
{
    int sk = shm_stats_begin(SHM_STAT_REDUCE);
    shm_coll_reduce_run(fn, t, dest, src, count, esize, op);
    shm_stats_end(sk);
}

static void shm_coll_reduce_private_run(shm_team_t *t, void *dest, const void *src, size_t count,
                             size_t esize, shm_coll_op_fn op)
{
    if (t->n == 1) {
        memmove(dest, src, count * esize);
        return;
    }
    node_plan_t p;
    if (shm_coll_use_node(t, 0, 1) && (p = node_plan(t)).region >= esize) {
        reduce_node_small(t, dest, src, count, esize, op, &p);
        return;
    }
    shm_reduce_alg_t alg = region_bytes(t, t->n) >= esize ? SHM_REDUCE_LINEAR : SHM_REDUCE_RD;
    reduce_staged(t, dest, src, count, esize, op, alg);
}

void shm_coll_reduce_private(shm_team_t *t, void *dest, const void *src, size_t count,
                             size_t esize, shm_coll_op_fn op)
{
    int sk = shm_stats_begin(SHM_STAT_TEAM);
    shm_coll_reduce_private_run(t, dest, src, count, esize, op);
    shm_stats_end(sk);
}

/*
 * Scans: after a barrier every PE gets the sources of the ranks before it
 * and adds them in rank order (so results do not depend on timing), then a
 * second barrier says nobody reads any source any more. In place, the sums
 * wait in a private buffer until then.
 */
static void shm_coll_scan_run(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
                   size_t esize, shm_coll_op_fn op, int inclusive)
{
    if (count == 0)
        return;
    int me = t->me;
    size_t bytes = count * esize;
    shm_coll_buf_t s = shm_coll_sym(fn, src, bytes, "source");
    shm_coll_sym(fn, dest, bytes, "destination");
    /* Small scans stay off malloc: the sums and the fetched pieces fit on the stack. */
    char stack[2][2048] __attribute__((aligned(ALIGN)));
    char *acc = dest != src ? (char *)dest : bytes <= sizeof(stack[0]) ? stack[0] : malloc(bytes);
    char *tmp = NULL;
    if (acc == NULL)
        shm_fatal("%s: out of memory for a %zu-byte scan buffer", fn, bytes);
    shm_coll_sync(t);
    /* Rank 0's exclusive result is all zeros (the SUM identity). */
    if (me == 0)
        inclusive ? memcpy(acc, src, bytes) : memset(acc, 0, bytes);
    else {
        size_t piece = bytes < RSAG_PIECE ? bytes : RSAG_PIECE / esize * esize;
        tmp = piece <= sizeof(stack[1]) ? stack[1] : malloc(piece);
        if (tmp == NULL)
            shm_fatal("%s: out of memory for a %zu-byte scan buffer", fn, piece);
        int last = inclusive ? me : me - 1;
        for (size_t off = 0; off < bytes; off += piece) {
            size_t len = bytes - off < piece ? bytes - off : piece;
            const char *in = shm_coll_fetch(t, &s, off, len, 0, tmp);
            shm_coll_quiet();
            memcpy(acc + off, in, len);
            for (int r = 1; r <= last; r++) {
                in = shm_coll_fetch(t, &s, off, len, r, tmp);
                shm_coll_quiet();
                op(acc + off, in, len / esize);
            }
        }
        if (tmp != stack[1])
            free(tmp);
    }
    shm_coll_sync(t);
    if (acc != dest) {
        memcpy(dest, acc, bytes);
        if (acc != stack[0])
            free(acc);
    }
}

void shm_coll_scan(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
                   size_t esize, shm_coll_op_fn op, int inclusive)
{
    int sk = shm_stats_begin(SHM_STAT_SCAN);
    shm_coll_scan_run(fn, t, dest, src, count, esize, op, inclusive);
    shm_stats_end(sk);
}
