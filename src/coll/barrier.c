// SPDX-License-Identifier: BSD-3-Clause
/*
 * Team barriers (synchronisation only: completing RMA is the caller's
 * business, as in shmem_barrier_all = quiet + sync).
 *   linear:        everyone tells rank 0, rank 0 tells everyone (2 steps,
 *                  n-1 messages at rank 0) -- best for a handful of PEs;
 *   dissemination: ceil(log2 n) rounds; in round k each PE tells the PE
 *                  2^k ahead and waits for the one 2^k behind. Any n.
 */
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
