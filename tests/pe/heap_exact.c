// SPDX-License-Identifier: BSD-3-Clause
//
// SHMEM_SYMMETRIC_SIZE is what the program may allocate: with the variable
// set to <bytes> (argv[1]), one shmem_malloc of exactly <bytes> succeeds
// and is usable (a put of all of it to the right neighbour, checked), and
// after shmem_free two blocks of half the size do too. The library's own
// symmetric memory (team workspaces, barrier words) comes on top; a heap of
// 64 KiB used to end the job at init ("too small for the team workspaces").
#include "pe_check.h"

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : ((size_t)1 << 20);
    shmem_init();
    pe_begin("heap_exact");
    const int me = shmem_my_pe();

    pe_step("shmem_malloc(%zu), the whole SHMEM_SYMMETRIC_SIZE", bytes);
    char *all = shmem_malloc(bytes);
    PE_EXPECT(all != NULL, "shmem_malloc of the whole SHMEM_SYMMETRIC_SIZE (%zu bytes)", bytes);
    if (all != NULL) {
        char *mine = malloc(bytes);
        pe_fill(mine, bytes, me, 1, 0);
        shmem_barrier_all();
        shmem_putmem(all, mine, bytes, pe_right());
        shmem_barrier_all();
        pe_check_fill(all, bytes, pe_left(), 1, 0, "put of the whole heap from the left");
        free(mine);
    } else {
        shmem_barrier_all();
        shmem_barrier_all();
    }
    // The heap is "at least as large" (page rounding): not twice as large.
    PE_EXPECT(shmem_malloc(bytes) == NULL, "a second block of the whole size");
    shmem_free(all);

    pe_step("two blocks of half");
    char *a = shmem_malloc(bytes / 2), *b = shmem_malloc(bytes / 2);
    PE_EXPECT(a != NULL && b != NULL, "two blocks of %zu bytes after the free", bytes / 2);
    shmem_free(b);
    shmem_free(a);
    // Collectives and teams still work: their workspaces are the library's.
    shmem_team_t t;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &t);
    static int x, sum;
    x = me + 1;
    shmem_int_sum_reduce(t, &sum, &x, 1);
    int n = shmem_n_pes();
    PE_EXPECT_EQ(sum, n * (n + 1) / 2, "sum_reduce on a new team");
    shmem_team_destroy(t);

    shmem_finalize();
    return pe_end();
}
