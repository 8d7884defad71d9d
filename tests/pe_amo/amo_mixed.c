// SPDX-License-Identifier: BSD-3-Clause
//
// Atomics and puts to different words of the same cache line: word 0 of a
// 64-byte line on PE 0 gets atomic adds from every PE while each PE puts
// its own values into its own word (1 + PE % 7) of that line, and PE 0
// itself stores into word 7 with plain stores. An AMO done as a wider
// read-modify-write, or a put that rewrites its neighbours, loses updates.
// argv[1] == "globals": the line is a static array (.bss), not a heap block.
#include "amo_check.h"

#define ITERS 1500

static long g_line[8] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
    const int globals = argc > 1 && strcmp(argv[1], "globals") == 0;
    shmem_init();
    pe_begin(globals ? "amo_mixed(globals)" : "amo_mixed");
    long *line = globals ? g_line : shmem_align(64, 8 * sizeof(long));
    memset(line, 0, 8 * sizeof(long));
    shmem_barrier_all();
    const int w = 1 + pe_me_g % 6; // words 1..6 (word 7: PE 0's own stores)
    pe_step("mixed atomics and puts into one line of PE 0");
    for (long i = 1; i <= ITERS; i++) {
        shmem_long_atomic_add(&line[0], 1, 0);
        if (pe_npes_g <= 6 || pe_me_g < 6)
            shmem_long_p(&line[w], i * 100 + pe_me_g, 0);
        if (pe_me_g == 0)
            *(volatile long *)&line[7] = i;
        if ((i & 63) == 0)
            shmem_long_atomic_fetch_add(&line[0], 0, 0); // a fetching one now and then
    }
    shmem_quiet();
    pe_step("barrier");
    shmem_barrier_all();
    if (pe_me_g == 0) {
        PE_EXPECT_EQ(line[0], (long)ITERS * pe_npes_g, "atomic word 0 of the line");
        for (int p = 0; p < pe_npes_g && p < 6; p++)
            PE_EXPECT_EQ(line[1 + p % 6], (long)ITERS * 100 + p, "word %d (put by PE %d)",
                         1 + p % 6, p);
        PE_EXPECT_EQ(line[7], (long)ITERS, "word 7 (PE 0's own stores)");
    }
    shmem_barrier_all();
    if (!globals)
        shmem_free(line);
    shmem_finalize();
    return pe_end();
}
