// SPDX-License-Identifier: BSD-3-Clause
/*
 * Collectives over a team (or an active set viewed as one). Byte-level
 * entry points used by the typed API, the algorithms behind them, and the
 * flag/put helpers every algorithm is built from (see core/team.h for the
 * workspace and the flag protocol).
 *
 * Algorithms are picked per call from the team size and the message size,
 * with thresholds from the env table, or forced by name with
 * SHMEM_<COLL>_ALGORITHM. Every member must pick the same one: choices
 * depend only on values every member shares.
 */
#ifndef SHM_COLL_COLL_H
#define SHM_COLL_COLL_H

#include <string.h>

#include "coll/hosts.h"
#include "core/stats.h"
#include "core/team.h"

/* NODE, in every list: the node-aware form (coll/hosts.h), for teams whose
 * members sit on several hosts with several on some host; others flat. */
typedef enum {
    SHM_BARRIER_AUTO,
    SHM_BARRIER_LINEAR,
    SHM_BARRIER_DISSEM,
    SHM_BARRIER_NODE,
} shm_barrier_alg_t;
typedef enum { SHM_BCAST_AUTO, SHM_BCAST_LINEAR, SHM_BCAST_TREE, SHM_BCAST_NODE } shm_bcast_alg_t;
typedef enum {
    SHM_REDUCE_AUTO,
    SHM_REDUCE_LINEAR, /* everyone's block to everyone's scratch; combine in rank order */
    SHM_REDUCE_RD,     /* recursive doubling through scratch (folding for non-powers of 2) */
    SHM_REDUCE_RSAG,   /* reduce-scatter by gets of the sources, allgather by puts */
    SHM_REDUCE_NODE,
} shm_reduce_alg_t;
typedef enum {
    SHM_GATHER_AUTO,
    SHM_GATHER_LINEAR, /* every block straight to every PE */
    SHM_GATHER_RING,   /* n-1 steps to the right neighbour */
    SHM_GATHER_BRUCK,  /* dissemination: ceil(log2 n) steps, doubling blocks */
    SHM_GATHER_NODE,
} shm_gather_alg_t;
typedef enum { SHM_A2A_AUTO, SHM_A2A_LINEAR, SHM_A2A_PAIRWISE, SHM_A2A_NODE } shm_a2a_alg_t;

/* Settings from the env table, parsed once at init (coll/select.c). */
typedef struct {
    shm_barrier_alg_t barrier;
    shm_bcast_alg_t bcast;
    shm_reduce_alg_t reduce;
    shm_gather_alg_t fcollect, collect;
    shm_a2a_alg_t alltoall;
    long barrier_linear_npes;
    long bcast_linear_npes;
    size_t bcast_tree_min;
    size_t bcast_segment;
    long reduce_linear_npes;
    size_t reduce_linear_max;
    size_t reduce_rsag_min;
    long reduce_node_linear_hosts;
    long fcollect_linear_npes;
    size_t fcollect_ring_min;
    long alltoall_linear_npes;
    size_t alltoall_pairwise_min;
    size_t alltoall_node_max;
    int node_aware; /* SHMEM_COLL_NODE_AWARE: auto may pick the node forms */
    int node_radix; /* children per PE of a host's gather/release tree */
    long lose_flag; /* SHMEM_COLL_LOSE_FLAG (testing) */
} shm_coll_config_t;

extern shm_coll_config_t shm_coll_cfg_g;

/* Reads the SHMEM_*_ALGORITHM and threshold rows; ends the job on a bad name. */
void shm_coll_configure(void);

/* acc[i] = acc[i] OP in[i] for i < n: one per (type, operation). */
typedef void (*shm_coll_op_fn)(void *acc, const void *in, size_t n);

/* ---- entry points (fn names the API call in error messages) ---- */
void shm_coll_sync(shm_team_t *t);
void shm_coll_bcast(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes,
                    int root, int root_copies);
void shm_coll_fcollect(const char *fn, shm_team_t *t, void *dest, const void *src,
                       size_t bytes);
void shm_coll_collect(const char *fn, shm_team_t *t, void *dest, const void *src, size_t bytes);
void shm_coll_alltoall(const char *fn, shm_team_t *t, void *dest, const void *src,
                       size_t bytes);
void shm_coll_alltoalls(const char *fn, shm_team_t *t, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize);
void shm_coll_reduce(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
                     size_t esize, shm_coll_op_fn op);
void shm_coll_scan(const char *fn, shm_team_t *t, void *dest, const void *src, size_t count,
                   size_t esize, shm_coll_op_fn op, int inclusive);

/* Reduction of private (not symmetric) buffers, through the team's scratch: team creation. */
void shm_coll_reduce_private(shm_team_t *t, void *dest, const void *src, size_t count,
                             size_t esize, shm_coll_op_fn op);

/* Algorithms (also callable directly by tests through the env table). */
void shm_coll_barrier_alg(shm_team_t *t, shm_barrier_alg_t alg);

/*
 * Whether a call takes the node form: forced by name (NODE) or auto with
 * SHMEM_COLL_NODE_AWARE, on a team that has hosts (coll/hosts.h). The same
 * on every member: both depend only on the team and the settings.
 */
static inline int shm_coll_use_node(const shm_team_t *t, int forced_node, int is_auto)
{
    int node = t->hosts != NULL && (forced_node || (is_auto && shm_coll_cfg_g.node_aware));
    if (node)
        shm_stats_node();
    return node;
}

/*
 * A host's tree (node forms): its members by position (0: the root, the
 * others in rank order after it), node_radix children each: position p's
 * children are p*R+1 .. p*R+R, its parent (p-1)/R. With R >= n-1 the root
 * is every other member's parent (flags are stores on one host).
 */
typedef struct {
    int parent;        /* position, -1 at the root */
    int first, end;    /* children: positions first .. end-1 */
} shm_coll_tree_t;

static inline shm_coll_tree_t shm_coll_tree(int pos, int n)
{
    long r = shm_coll_cfg_g.node_radix, c = (long)pos * r + 1;
    shm_coll_tree_t x = {pos ? (int)((pos - 1) / r) : -1, c < n ? (int)c : n,
                         c + r < n ? (int)(c + r) : n};
    return x;
}

/* ---- helpers every algorithm uses ---- */

/* Collectives travel on the default context: its progress is what every wait loop drives. */
static inline cdt_ctx_t *shm_coll_cdt(void)
{
    return &shm_ctx_default_g.cdt;
}

static inline int shm_coll_idx(const shm_team_t *t, int rank)
{
    if (t->fidx)
        return t->fidx[rank];
    return t->by_world ? shm_team_pe(t, rank) : rank;
}

/* SHMEM_COLL_LOSE_FLAG (testing, barrier.c): 1 if this flag is to be lost. */
int shm_coll_lose_flag(int pe, uint64_t v);

/*
 * One message to rank `to`: the sender's count for that peer, written into
 * its own flag word there. Everything this PE issued through the fabric
 * before must be complete (the caller quiets once per phase): data before
 * flag, and one flag word's writes land in order. A peer on this host whose
 * heap is mapped here (the direct path) gets a release store instead, which
 * also orders this PE's memcpy'd data before it.
 */
static inline void shm_coll_flag(shm_team_t *t, int to)
{
    uint64_t *sent = &t->sent[shm_coll_idx(t, to)];
    uint64_t v = *sent + 1;
    size_t off = t->flags_off + (size_t)shm_coll_idx(t, t->me) * sizeof(uint64_t);
    int pe = shm_team_pe(t, to);
    uint64_t *peer = shm_heap_peer_addr(pe, off);
    if (peer) {
        __atomic_store_n(peer, v, __ATOMIC_RELEASE);
    } else if (shm_likely(shm_coll_cfg_g.lose_flag == 0) || !shm_coll_lose_flag(pe, v)) {
        cdt_put_flag(shm_coll_cdt(), SHM_SEG_HEAP, off, &v, sizeof(v), pe);
        shm_stats_flag();
    }
    /* After the flag: a peer that reads this count (shm_coll_wait_long) and
     * finds the flag missing knows it was lost, not still to be issued. */
    __atomic_store_n(sent, v, __ATOMIC_RELEASE);
}

/* A wait for message `want` from rank `from` that has lasted a while
 * (barrier.c): reads the sender's count across the fabric now and then,
 * so a broken link ends the job and a lost flag is taken from the count. */
void shm_coll_wait_long(shm_team_t *t, int from, uint64_t want, uint64_t *since_ns);

/* Waits for the next message from rank `from`. */
static inline void shm_coll_wait(shm_team_t *t, int from)
{
    int i = shm_coll_idx(t, from);
    uint64_t want = ++t->seen[i];
    uint64_t since_ns = 0;
    for (unsigned polls = 0; t->flags[i] < want;) {
        cdt_poll_idle();
        if (shm_unlikely((++polls & 63) == 0))
            shm_coll_wait_long(t, from, want, &since_ns);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline void shm_coll_quiet(void)
{
    cdt_quiet(shm_coll_cdt());
}

/*
 * Back-to-back calls on the same dest. The algorithms that put straight
 * into the user's dest (broadcast, fcollect, alltoall[s]) must not write a
 * peer's dest before that peer has entered the call: until then it may still
 * be finishing the previous call on the same buffer, or reading its result
 * (the spec lets a PE start the next collective "without any other
 * intervening synchronization"). So on entry each PE tells every rank that
 * will write into its dest that it is here (shm_coll_ready_to), then waits
 * for the same word from every rank it will write into (shm_coll_wait).
 * Readies go before any other message of the call, in both directions, so
 * each pair's messages are consumed in the order they were sent. The
 * caller quiets once before the readies: the previous call's last flags may
 * still be in flight on the same flag words.
 */
static inline void shm_coll_ready_to(shm_team_t *t, int to)
{
    shm_coll_flag(t, to);
}

/*
 * The team's scratch half for the next staged collective (scratch_uses & 1).
 * A staged collective is one whose every result needs every member's input
 * (reductions, staged fcollect and alltoall): a PE that starts the
 * next-but-one is then past the point where everybody finished reading this
 * half, so two halves are enough whatever runs in between, and no entry
 * handshake is needed. NULL base for active sets (no scratch).
 */
typedef struct {
    char *base; /* this PE's half */
    size_t off; /* its heap offset (same on every PE) */
} shm_coll_half_t;

static inline shm_coll_half_t shm_coll_half_next(shm_team_t *t)
{
    size_t h = (size_t)(t->scratch_uses++ & 1) * t->scratch_half;
    shm_coll_half_t x = {t->scratch + h, t->scratch_off + h};
    return x;
}

/*
 * The end of a linear exchange: once this PE has put its part to every peer,
 * completes the puts (quiet), flags every peer and waits for every peer's flag.
 */
static inline void shm_coll_linear_sync(shm_team_t *t)
{
    int n = t->n, me = t->me;
    shm_coll_quiet();
    for (int k = 1; k < n; k++)
        shm_coll_flag(t, (me + k) % n);
    for (int k = 1; k < n; k++)
        shm_coll_wait(t, (me - k + n) % n);
}

/*
 * The end of a linear exchange staged through scratch half h: once this PE
 * has put its nb bytes into slot me of every peer's half, syncs (above) and
 * copies each peer's slot from h into slot r of dest.
 */
static inline void shm_coll_staged_finish(shm_team_t *t, shm_coll_half_t h, char *dest,
                                          size_t nb)
{
    shm_coll_linear_sync(t);
    for (int r = 0; r < t->n; r++)
        if (r != t->me)
            memcpy(dest + (size_t)r * nb, h.base + (size_t)r * nb, nb);
}

/* A symmetric buffer as (segment, offset); ends the job naming fn if it is not symmetric. */
typedef struct {
    int seg;
    size_t off;
    char *addr;
} shm_coll_buf_t;

static inline shm_coll_buf_t shm_coll_sym(const char *fn, const void *addr, size_t len,
                                          const char *what)
{
    shm_coll_buf_t b;
    b.addr = (char *)addr;
    b.seg = shm_xlate_or_die(fn, addr, len, &b.off, what);
    return b;
}

/* rank's copy of [b + off, +len), when it is mapped here (same host: heap or globals), else NULL. */
static inline char *shm_coll_peer(shm_team_t *t, const shm_coll_buf_t *b, size_t off,
                                  size_t len, int rank)
{
    return shm_seg_peer_addr(b->seg, shm_team_pe(t, rank), b->off + off, len);
}

/*
 * Non-blocking put of len bytes into b + off on rank `to`: a copy for this
 * PE or a mapped peer, else the fabric (complete after shm_coll_quiet).
 */
static inline void shm_coll_put(shm_team_t *t, const shm_coll_buf_t *b, size_t off,
                                const void *src, size_t len, int to)
{
    if (len == 0)
        return;
    if (to == t->me) {
        if (b->addr + off != (const char *)src)
            memmove(b->addr + off, src, len);
        return;
    }
    char *peer = shm_coll_peer(t, b, off, len, to);
    if (peer) {
        memcpy(peer, src, len);
        return;
    }
    cdt_put_nbi(shm_coll_cdt(), b->seg, b->off + off, src, len, shm_team_pe(t, to));
    shm_stats_put(len);
}

/*
 * Copies [off, off+len) of b from rank `from`'s copy into this PE's, at the
 * same place: a copy when mapped, else a get (complete after shm_coll_quiet).
 */
static inline void shm_coll_pull(shm_team_t *t, const shm_coll_buf_t *b, size_t off, size_t len,
                                 int from)
{
    if (len == 0)
        return;
    const char *peer = shm_coll_peer(t, b, off, len, from);
    if (peer) {
        memcpy(b->addr + off, peer, len);
        return;
    }
    cdt_get_nbi(shm_coll_cdt(), b->addr + off, b->seg, b->off + off, len, shm_team_pe(t, from));
    shm_stats_get(len);
}

/*
 * Source of len bytes at b + off on rank `from`: its mapping when there is
 * one, else fetched into tmp (non-blocking: use after shm_coll_quiet).
 */
static inline const char *shm_coll_fetch(shm_team_t *t, const shm_coll_buf_t *b, size_t off,
                                         size_t len, int from, char *tmp)
{
    if (from == t->me)
        return b->addr + off;
    const char *peer = shm_coll_peer(t, b, off, len, from);
    if (peer)
        return peer;
    cdt_get_nbi(shm_coll_cdt(), tmp, b->seg, b->off + off, len, shm_team_pe(t, from));
    shm_stats_get(len);
    return tmp;
}

#endif /* SHM_COLL_COLL_H */
