// SPDX-License-Identifier: BSD-3-Clause
//
// Huge counts, as applications pass them: a 64 MiB shmem_putmem and
// shmem_getmem to the right neighbour, a 64 MiB putmem_nbi + quiet, a team
// reduction of 8M ints (shmem_int_sum_reduce) and an active-set
// shmem_long_max_to_all of 8M longs with its pWrk and pSync. Every byte and
// every element is checked. Needs SHMEM_SYMMETRIC_SIZE of about 400 MiB.
#include "pe_check.h"

#define BIG ((size_t)64 << 20)
#define NRED ((size_t)8 << 20)

static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE > 16 ? SHMEM_REDUCE_MIN_WRKDATA_SIZE : 16];

int main(void)
{
    shmem_init();
    pe_begin("conf_huge");
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = pe_right(), left = pe_left();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    char *dst = shmem_malloc(BIG);
    char *src = shmem_malloc(BIG); // symmetric: the right neighbour gets from it
    char *mine = malloc(BIG);
    if (!dst || !src || !mine) {
        pe_fail("cannot allocate 2 x 64 MiB of symmetric heap (SHMEM_SYMMETRIC_SIZE) and 64 MiB");
        shmem_global_exit(1);
    }
    pe_fill(src, BIG, me, 1, 0);
    memset(dst, 0, BIG);
    shmem_barrier_all();

    pe_step("64 MiB shmem_putmem to PE %d", right);
    shmem_putmem(dst, src, BIG, right);
    shmem_barrier_all();
    pe_check_fill(dst, BIG, left, 1, 0, "64 MiB putmem from the left neighbour");

    pe_step("64 MiB shmem_getmem from PE %d", right);
    memset(mine, 0, BIG);
    shmem_getmem(mine, src, BIG, right);
    pe_check_fill(mine, BIG, right, 1, 0, "64 MiB getmem from the right neighbour");

    pe_step("64 MiB shmem_putmem_nbi to PE %d + quiet", right);
    pe_fill(mine, BIG, me, 2, 0);
    shmem_barrier_all(); // everyone has checked dst
    shmem_putmem_nbi(dst, mine, BIG, right);
    shmem_quiet();
    shmem_barrier_all();
    pe_check_fill(dst, BIG, left, 2, 0, "64 MiB putmem_nbi from the left neighbour");
    shmem_free(src);
    shmem_free(dst);
    free(mine);

    pe_step("shmem_int_sum_reduce of 8M elements");
    int *is = shmem_malloc(NRED * sizeof(int)), *id = shmem_malloc(NRED * sizeof(int));
    if (!is || !id) {
        pe_fail("cannot allocate 2 x 32 MiB of symmetric heap");
        shmem_global_exit(1);
    }
    for (size_t i = 0; i < NRED; i++)
        is[i] = (int)((i % 1000) * (size_t)(me + 1));
    shmem_barrier_all();
    PE_EXPECT_EQ(shmem_int_sum_reduce(SHMEM_TEAM_WORLD, id, is, NRED), 0, "int_sum_reduce rc");
    size_t bad = 0, first = 0;
    const int tri = n * (n + 1) / 2;
    for (size_t i = 0; i < NRED; i++)
        if (id[i] != (int)(i % 1000) * tri && !bad++)
            first = i;
    PE_EXPECT(bad == 0, "int_sum_reduce of 8M: %zu elements wrong, first [%zu] = %d (want %d)",
              bad, first, id[first], (int)(first % 1000) * tri);
    shmem_free(id);
    shmem_free(is);

    pe_step("shmem_long_max_to_all of 8M elements");
    long *ls = shmem_malloc(NRED * sizeof(long)), *ld = shmem_malloc(NRED * sizeof(long));
    if (!ls || !ld) {
        pe_fail("cannot allocate 2 x 64 MiB of symmetric heap");
        shmem_global_exit(1);
    }
    for (size_t i = 0; i < NRED; i++)
        ls[i] = (long)((i + (size_t)me * 7919) % 100003);
    shmem_barrier_all();
    shmem_long_max_to_all(ld, ls, (int)NRED, 0, 0, n, pWrk, pSync);
    bad = 0;
    for (size_t i = 0; i < NRED; i++) {
        long want = 0;
        for (int p = 0; p < n; p++) {
            long v = (long)((i + (size_t)p * 7919) % 100003);
            want = v > want ? v : want;
        }
        if (ld[i] != want && !bad++)
            first = i;
    }
    PE_EXPECT(bad == 0, "long_max_to_all of 8M: %zu elements wrong, first [%zu] = %ld", bad,
              first, ld[first]);
    shmem_barrier_all();
    shmem_free(ld);
    shmem_free(ls);
    shmem_finalize();
    return pe_end();
}
