// SPDX-License-Identifier: BSD-3-Clause
//
// The profiling interface as a tool uses it: this program includes
// <pshmem.h> and defines its own shmem_long_put, shmem_int_atomic_fetch_add
// and shmem_barrier_all, which count their calls and forward to the
// pshmem_ entry points. The program's calls (and the library's own, if it
// made any through the public names) reach the wrappers; the data still
// moves; shmem_pcontrol is there and does nothing visible.
#include <pshmem.h>

#include "pe_check.h"

static long puts_seen, fadds_seen, barriers_seen;

void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
{
    puts_seen++;
    pshmem_long_put(dest, source, nelems, pe);
}

int shmem_int_atomic_fetch_add(int *dest, int value, int pe)
{
    fadds_seen++;
    return pshmem_int_atomic_fetch_add(dest, value, pe);
}

void shmem_barrier_all(void)
{
    barriers_seen++;
    pshmem_barrier_all();
}

static long dst[4];
static int counter;

int main(void)
{
    shmem_init();
    pe_begin("profile_wrap");
    const int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_pcontrol(0);
    shmem_pcontrol(1);

    pe_step("wrapped put, fetch_add and barrier");
    long src[4] = {me + 1, me + 2, me + 3, me + 4};
    shmem_long_put(dst, src, 4, pe_right());
    int old = shmem_int_atomic_fetch_add(&counter, 1, 0);
    PE_EXPECT(old >= 0 && old < n, "fetch_add through the wrapper returned %d", old);
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        PE_EXPECT_EQ(dst[i], (long)pe_left() + 1 + i, "dst[%d] put through the wrapper", i);
    if (me == 0)
        PE_EXPECT_EQ(counter, n, "fetch_adds through the wrapper");
    // The C11 generic shmem_put on long arrays is the typed call too.
    shmem_put(dst, src, 2, pe_right());
    pshmem_barrier_all(); // the name-shifted one is not counted
    PE_EXPECT_EQ(puts_seen, 2, "calls that reached the shmem_long_put wrapper");
    PE_EXPECT_EQ(fadds_seen, 1, "calls that reached the shmem_int_atomic_fetch_add wrapper");
    PE_EXPECT_EQ(barriers_seen, 1, "calls that reached the shmem_barrier_all wrapper");

    shmem_finalize();
    return pe_end();
}
