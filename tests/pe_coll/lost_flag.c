// SPDX-License-Identifier: BSD-3-Clause
//
// Collectives survive flags that never arrive (issue 19: tcp;ofi_rxm loses
// an 8-byte put in flight on a connection the kernel reset, without an
// error, and reconnects). Run with SHMEM_COLL_LOSE_FLAG=N: every Nth
// collective flag a PE sends through libfabric is counted but not sent.
// The wait for such a flag must take it from the sender's count after
// ~0.5 s (coll/barrier.c) instead of waiting for ever; without that this
// test hangs to its watchdog. Every round: barrier_all, a sum reduction, an
// fcollect and a broadcast on WORLD (values checked), a sync and a
// reduction on a split team (even PEs), and an active-set barrier.
#include "pe_check.h"

#define ROUNDS 24

static long pSync[SHMEM_BARRIER_SYNC_SIZE];

int main(void)
{
    shmem_init();
    pe_begin("lost_flag");
    int me = pe_me_g, n = pe_npes_g;
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    // One destination per collective: a PE may start the next collective
    // (writing into its peers' destination) before a peer has left this one.
    long *src = shmem_malloc(sizeof(long));
    long *sum = shmem_malloc(sizeof(long));
    long *all = shmem_malloc((size_t)n * sizeof(long));
    long *bc = shmem_malloc(sizeof(long));
    long *max = shmem_malloc(sizeof(long));
    shmem_team_t even = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even);
    shmem_barrier_all();

    for (int r = 0; r < ROUNDS; r++) {
        pe_step("barrier_all, round %d", r);
        shmem_barrier_all();

        pe_step("sum reduction on WORLD, round %d", r);
        *src = me + r;
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sum, src, 1);
        PE_EXPECT_EQ(*sum, (long)n * (n - 1) / 2 + (long)n * r, "sum reduction, round %d", r);

        pe_step("fcollect on WORLD, round %d", r);
        *src = me * 1000 + r;
        shmem_long_fcollect(SHMEM_TEAM_WORLD, all, src, 1);
        for (int i = 0; i < n; i++)
            PE_EXPECT_EQ(all[i], (long)i * 1000 + r, "fcollect block of PE %d, round %d", i, r);

        pe_step("broadcast on WORLD, round %d", r);
        int root = r % n;
        *src = 7000 + r;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, bc, src, 1, root);
        PE_EXPECT_EQ(*bc, 7000L + r, "broadcast from PE %d, round %d", root, r);

        if (even != SHMEM_TEAM_INVALID) {
            pe_step("sync and max reduction on the even team, round %d", r);
            shmem_team_sync(even);
            *src = me + r;
            shmem_long_max_reduce(even, max, src, 1);
            PE_EXPECT_EQ(*max, (long)((n - 1) / 2 * 2 + r), "max over the even PEs, round %d",
                         r);
        }

        pe_step("active-set barrier, round %d", r);
        shmem_barrier(0, 0, n, pSync);
    }
    pe_step("final barrier");
    shmem_barrier_all();
    if (even != SHMEM_TEAM_INVALID)
        shmem_team_destroy(even);
    shmem_free(max);
    shmem_free(bc);
    shmem_free(all);
    shmem_free(sum);
    shmem_free(src);
    shmem_finalize();
    return pe_end();
}
