// SPDX-License-Identifier: BSD-3-Clause
//
// Run without oshrun (no PMIx server): the program is a job of one PE.
// n_pes must be 1, my_pe 0, and RMA to itself must work.
#include "pe_check.h"

static long g_bss[16];

int main(void)
{
    shmem_init();
    pe_begin("no_launcher");
    PE_EXPECT_EQ(shmem_n_pes(), 1, "shmem_n_pes() without a launcher");
    PE_EXPECT_EQ(shmem_my_pe(), 0, "shmem_my_pe() without a launcher");
    PE_EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_WORLD), 1, "shmem_team_n_pes(SHMEM_TEAM_WORLD)");
    PE_EXPECT_EQ(shmem_pe_accessible(0), 1, "shmem_pe_accessible(0)");
    PE_EXPECT_EQ(shmem_pe_accessible(1), 0, "shmem_pe_accessible(1)");

    enum { N = 100000 };
    uint8_t *heap = shmem_malloc(N);
    uint8_t *src = malloc(N), *back = malloc(N);
    PE_EXPECT(heap != NULL, "shmem_malloc(%d) returned NULL", N);
    if (!heap)
        shmem_global_exit(1);
    pe_fill(src, N, 0, 1, 0);
    memset(back, 0, N);
    shmem_putmem(heap, src, N, 0);
    shmem_barrier_all();
    pe_check_fill(heap, N, 0, 1, 0, "putmem to self, heap contents");
    shmem_getmem(back, heap, N, 0);
    pe_check_fill(back, N, 0, 1, 0, "getmem from self");
    memset(back, 0, N);
    shmem_putmem_nbi(heap + 3, src, N - 3, 0);
    shmem_quiet();
    pe_check_fill(heap + 3, N - 3, 0, 1, 0, "putmem_nbi to self (offset 3)");
    shmem_getmem_nbi(back, heap + 3, N - 3, 0);
    shmem_quiet();
    pe_check_fill(back, N - 3, 0, 1, 0, "getmem_nbi from self");

    shmem_long_p(&g_bss[3], 42, 0);
    shmem_quiet();
    PE_EXPECT_EQ(g_bss[3], 42L, "long_p to self into .bss");
    PE_EXPECT_EQ(shmem_long_g(&g_bss[3], 0), 42L, "long_g from self out of .bss");
    long vals[4] = {1, 2, 3, 4};
    shmem_long_put(&g_bss[8], vals, 4, 0);
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        PE_EXPECT_EQ(g_bss[8 + i], (long)(i + 1), "long_put to self, .bss[%d]", 8 + i);

    shmem_free(heap);
    free(src);
    free(back);
    shmem_finalize();
    return pe_end();
}
