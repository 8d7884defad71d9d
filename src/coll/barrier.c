// SPDX-License-Identifier: BSD-3-Clause
/*
 * Barrier of all PEs: dissemination (ceil(log2 n) rounds, one 8-byte put
 * per round). Round r writes the barrier's epoch into word r of the PE
 * 2^r ahead; epochs only grow, so a fast PE can never be mistaken for a
 * slow one's previous barrier.
 */
#include "core/init.h"
#include "core/rma.h"

static void dissemination(void)
{
    int n = shm_state_g.npes, me = shm_state_g.me;
    uint64_t epoch = ++shm_state_g.barrier_epoch;
    volatile uint64_t *flags = shm_state_g.barrier_psync;
    size_t base = (uintptr_t)shm_state_g.barrier_psync - shm_seg_g[SHM_SEG_HEAP].base;
    cdt_ctx_t *ctx = &shm_ctx_default_g.cdt;

    for (int r = 0, d = 1; d < n; r++, d <<= 1) {
        int to = (me + d) % n;
        cdt_put(ctx, SHM_SEG_HEAP, base + (size_t)r * sizeof(uint64_t), &epoch, sizeof(epoch),
                to);
        while (flags[r] < epoch)
            cdt_poll_idle();
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

void shm_coll_barrier_world(void)
{
    cdt_quiet(&shm_ctx_default_g.cdt);
    dissemination();
}

void shm_coll_sync_world(void)
{
    dissemination();
}
