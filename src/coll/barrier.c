// SPDX-License-Identifier: BSD-3-Clause
/*
 * Team barriers (synchronisation only: completing RMA is the caller's
 * business, as in shmem_barrier_all = quiet + sync).
 *   linear:        everyone tells rank 0, rank 0 tells everyone (2 steps,
 *                  n-1 messages at rank 0) -- best for a handful of PEs;
 *   dissemination: ceil(log2 n) rounds; in round k each PE tells the PE
 *                  2^k ahead and waits for the one 2^k behind. Any n.
 *   node:          each host's members tell their host's first PE (a tree,
 *                  SHMEM_COLL_NODE_RADIX), the hosts' first PEs run a
 *                  dissemination barrier among themselves (ceil(log2 K)
 *                  rounds, one fabric message each), and the release goes
 *                  back down the trees: no fabric message but the leaders'.
 */
#include <time.h>

#include "coll/coll.h"
#include "core/init.h"

static void barrier_linear(shm_team_t *t)
{
    int n = t->n;
    shm_coll_quiet();
    if (t->me == 0) {
        for (int r = 1; r < n; r++)
            shm_coll_wait(t, r);
        for (int r = 1; r < n; r++)
            shm_coll_flag(t, r);
    } else {
        shm_coll_flag(t, 0);
        shm_coll_wait(t, 0);
    }
}

static void barrier_dissemination(shm_team_t *t)
{
    int n = t->n, me = t->me;
    for (int d = 1; d < n; d <<= 1) {
        /* The previous round's flag must land before this one (it may go to the same PE). */
        shm_coll_quiet();
        shm_coll_flag(t, (me + d) % n);
        shm_coll_wait(t, (me - d + n) % n);
    }
}

static void barrier_node(shm_team_t *t)
{
    shm_coll_hosts_t *h = t->hosts;
    shm_team_t *l = &h->local;
    shm_coll_tree_t x = shm_coll_tree(l->me, l->n);
    shm_coll_quiet();
    for (int c = x.first; c < x.end; c++)
        shm_coll_wait(l, c);
    if (x.parent >= 0) {
        shm_coll_flag(l, x.parent);
        shm_coll_wait(l, x.parent);
    } else {
        barrier_dissemination(&h->column); /* the hosts' leaders */
    }
    for (int c = x.first; c < x.end; c++)
        shm_coll_flag(l, c);
}

/*
 * A PE waiting for another's flag cannot tell a peer that computes from a
 * link that is down, or from a flag that was lost: the flag simply does
 * not come. So once a wait has lasted SHM_COLL_PROBE_MS, and every
 * SHM_COLL_PROBE_MS after that, read through the fabric the peer's count
 * of messages sent to this PE (its sent[] word in the team's slot, stored
 * after the flag was issued), a read bounded by SHMEM_FABRIC_TIMEOUT:
 *  - a computing peer's progress thread answers it, a dead link or a
 *    stopped PE ends the job naming that PE;
 *  - a count that has reached the message waited for means the flag was
 *    issued and everything before it completed, yet it is not here: lost
 *    (tcp;ofi_rxm after a connection reset loses RMA in flight without an
 *    error, then reconnects). The flag is raised from the count (an atomic
 *    max: never rolled back, harmless if the put lands after all).
 * Only collective flags are covered: a user's shmem_wait_until on a put
 * that was lost has no count to read. Peers whose heap is mapped here (same
 * host, direct path) need no fabric and are not probed.
 */
#define SHM_COLL_PROBE_MS 500

static void flag_raise(volatile uint64_t *flag, uint64_t v)
{
    uint64_t cur = __atomic_load_n(flag, __ATOMIC_RELAXED);
    while (cur < v && !__atomic_compare_exchange_n(flag, &cur, v, 0, __ATOMIC_RELEASE,
                                                  __ATOMIC_RELAXED))
        ;
}

int shm_coll_lose_flag(int pe, uint64_t v)
{
    static uint64_t flags_sent;
    uint64_t n = __atomic_add_fetch(&flags_sent, 1, __ATOMIC_RELAXED);
    if (n % (uint64_t)shm_coll_cfg_g.lose_flag != 0)
        return 0;
    SHM_INFO(COLL, "SHMEM_COLL_LOSE_FLAG: flag %llu to PE %d counted but not sent",
             (unsigned long long)v, pe);
    return 1;
}

void shm_coll_wait_long(shm_team_t *t, int from, uint64_t want, uint64_t *since_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (*since_ns == 0) {
        *since_ns = now;
        return;
    }
    if (now - *since_ns < SHM_COLL_PROBE_MS * 1000000u)
        return;
    *since_ns = now;
    int pe = shm_team_pe(t, from);
    if (shm_heap_peer_addr(pe, 0) != NULL)
        return;
    size_t me = (size_t)shm_coll_idx(t, t->me);
    volatile uint64_t *flag = &t->flags[shm_coll_idx(t, from)];
    uint64_t sent = cdt_probe_peer(shm_coll_cdt(), pe, t->sent_off + me * sizeof(uint64_t),
                                   "barrier/collective wait: liveness probe (8-byte read)");
    if (sent < want || *flag >= want)
        return;
    SHM_WARN(COLL,
             "collective flag %llu from PE %d never arrived though that PE issued it (a "
             "connection reset?): taken from its count (%llu)",
             (unsigned long long)want, pe, (unsigned long long)sent);
    flag_raise(flag, sent);
}

void shm_coll_barrier_alg(shm_team_t *t, shm_barrier_alg_t alg)
{
    if (t->n == 1)
        return;
    if (shm_coll_use_node(t, alg == SHM_BARRIER_NODE, alg == SHM_BARRIER_AUTO)) {
        barrier_node(t);
        return;
    }
    /* Up to 4 PEs dissemination needs no more steps than linear's two. */
    if (alg == SHM_BARRIER_AUTO || alg == SHM_BARRIER_NODE)
        alg = t->n > 4 && t->n <= shm_coll_cfg_g.barrier_linear_npes ? SHM_BARRIER_LINEAR
                                                                      : SHM_BARRIER_DISSEM;
    if (alg == SHM_BARRIER_LINEAR)
        barrier_linear(t);
    else
        barrier_dissemination(t);
}

void shm_coll_sync(shm_team_t *t)
{
    int sk = shm_stats_begin(SHM_STAT_BARRIER);
    shm_coll_barrier_alg(t, shm_coll_cfg_g.barrier);
    shm_stats_end(sk);
}

void shm_coll_barrier_world(void)
{
    cdt_quiet(&shm_ctx_default_g.cdt);
    shm_coll_sync(&shm_team_world_g);
}

void shm_coll_sync_world(void)
{
    shm_coll_sync(&shm_team_world_g);
}
