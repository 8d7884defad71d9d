// SPDX-License-Identifier: BSD-3-Clause
/*
 * Team barriers (synchronisation only: completing RMA is the caller's
 * business, as in shmem_barrier_all = quiet + sync).
 *   linear:        everyone tells rank 0, rank 0 tells everyone (2 steps,
 *                  n-1 messages at rank 0) -- best for a handful of PEs;
 *   dissemination: ceil(log2 n) rounds; in round k each PE tells the PE
 *                  2^k ahead and waits for the one 2^k behind. Any n.
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

/*
 * A PE waiting for another's flag cannot tell a peer that computes from a
 * link that is down: the flag simply does not come. So once a wait has
 * lasted SHM_COLL_PROBE_MS, and every SHM_COLL_PROBE_MS after that, read 8
 * bytes of that peer's heap through the fabric, a read bounded by
 * SHMEM_FABRIC_TIMEOUT: a computing peer's progress thread answers it, a
 * dead link or a stopped PE ends the job naming that PE. Peers whose heap
 * is mapped here (same host, direct path) need no fabric and are not
 * probed.
 */
#define SHM_COLL_PROBE_MS 500

void shm_coll_wait_long(shm_team_t *t, int from, uint64_t *since_ns)
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
    int pe = shm_team_pe(t, from);
    if (shm_heap_peer_addr(pe, 0) == NULL)
        cdt_probe_peer(shm_coll_cdt(), pe,
                       "barrier/collective wait: liveness probe (8-byte read)");
    *since_ns = now;
}

void shm_coll_barrier_alg(shm_team_t *t, shm_barrier_alg_t alg)
{
    if (t->n == 1)
        return;
    /* Up to 4 PEs dissemination needs no more steps than linear's two. */
    if (alg == SHM_BARRIER_AUTO)
        alg = t->n > 4 && t->n <= shm_coll_cfg_g.barrier_linear_npes ? SHM_BARRIER_LINEAR
                                                                      : SHM_BARRIER_DISSEM;
    if (alg == SHM_BARRIER_LINEAR)
        barrier_linear(t);
    else
        barrier_dissemination(t);
}

void shm_coll_sync(shm_team_t *t)
{
    shm_coll_barrier_alg(t, shm_coll_cfg_g.barrier);
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
