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

/* One chunk, linear. dst and src may be private and may be the same. */
static void chunk_linear(shm_team_t *t, char *dst, const char *src, size_t len, size_t esize,
                         shm_coll_op_fn op, size_t region)
{
    int n = t->n, me = t->me;
    half_t h = half_next(t);
    char *mine = h.base + (size_t)me * region;
    memcpy(mine, src, len);
    for (int s = 1; s < n; s++)
        put_region(t, &h, (size_t)me * region, mine, len, (me + s) % n);
    shm_coll_linear_sync(t);
    memcpy(dst, h.base, len);
    for (int r = 1; r < n; r++)
        op(dst, h.base + (size_t)r * region, len / esize);
}

/* One chunk, recursive doubling. dst and src may be private and may be the same. */
static void chunk_rd(shm_team_t *t, char *dst, const char *src, size_t len, size_t esize,
                     shm_coll_op_fn op, size_t region, int rounds)
{
    int n = t->n, me = t->me;
    int p2 = 1 << rounds, extra = n - p2;
    half_t h = half_next(t);
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
            chunk_linear(t, dst + off, src + off, len, esize, op, region);
        else
            chunk_rd(t, dst + off, src + off, len, esize, op, region, rounds);
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

void shm_coll_reduce(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
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

void shm_coll_reduce_private(shm_team_t *t, void *dest, const void *src, size_t count,
                             size_t esize, shm_coll_op_fn op)
{
    if (t->n == 1) {
        memmove(dest, src, count * esize);
        return;
    }
    shm_reduce_alg_t alg = region_bytes(t, t->n) >= esize ? SHM_REDUCE_LINEAR : SHM_REDUCE_RD;
    reduce_staged(t, dest, src, count, esize, op, alg);
}

/*
 * Scans: after a barrier every PE gets the sources of the ranks before it
 * and adds them in rank order (so results do not depend on timing), then a
 * second barrier says nobody reads any source any more. In place, the sums
 * wait in a private buffer until then.
 */
void shm_coll_scan(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
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
