// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_barrier_all and shmem_sync_all, 1000 times each. Before each, every
// PE writes its iteration count into its own slot on every other PE; after
// it, every PE checks that all the others' slots show this iteration:
//   barrier_all: completes the puts itself (it implies quiet);
//   sync_all:    does not, so the PE calls shmem_quiet first.
// Slots alternate between two banks so that a fast PE's next writes cannot
// be confused with the current ones. A last phase does the same with
// shmem_long_atomic_inc on a counter per bank (barrier_all completes AMOs too).
#include "pe_check.h"

#define ITERS 1000
#define AMO_ITERS 200
#define MAXPES 64

static long slot[2][MAXPES];
static long counter[2];

static void phase(const char *name, int use_sync)
{
    const int me = pe_me_g, n = pe_npes_g;
    memset(slot, 0, sizeof slot);
    shmem_barrier_all();
    for (long it = 1; it <= ITERS; it++) {
        const int bank = (int)(it & 1);
        for (int p = 0; p < n; p++)
            if (p != me)
                shmem_long_p(&slot[bank][me], it, p);
        pe_step("%s iteration %ld", name, it);
        if (use_sync) {
            shmem_quiet();
            shmem_sync_all();
        } else {
            shmem_barrier_all();
        }
        for (int p = 0; p < n; p++)
            if (p != me)
                PE_EXPECT_EQ(slot[bank][p], it, "after %s iteration %ld: slot written by PE %d",
                             name, it, p);
    }
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    pe_begin("barrier_sync");
    if (pe_npes_g > MAXPES) {
        pe_fail("more than %d PEs", MAXPES);
        shmem_global_exit(1);
    }
    phase("shmem_barrier_all", 0);
    phase("shmem_sync_all", 1);

    const int me = pe_me_g, n = pe_npes_g;
    counter[0] = counter[1] = 0;
    shmem_barrier_all();
    for (long it = 1; it <= AMO_ITERS; it++) {
        const int bank = (int)(it & 1);
        for (int p = 0; p < n; p++)
            if (p != me)
                shmem_long_atomic_inc(&counter[bank], p);
        pe_step("shmem_long_atomic_inc + barrier_all iteration %ld", it);
        shmem_barrier_all();
        // Bank `bank` has been incremented (n-1) times in each of the
        // iterations of this parity so far.
        PE_EXPECT_EQ(counter[bank], (long)((it + 1) / 2) * (n - 1),
                     "counter after atomic_inc + barrier_all iteration %ld", it);
    }
    shmem_finalize();
    return pe_end();
}
