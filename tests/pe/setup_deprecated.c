// SPDX-License-Identifier: BSD-3-Clause
//
// Deprecated setup routines still required by the spec: start_pes(0) instead
// of shmem_init, _my_pe() and _num_pes(). A start_pes program need not call
// shmem_finalize: the library must finalize when the program exits.
//
// _my_pe/_num_pes are not in our 1.6 name list, so they are declared weak
// here: a library without them makes this test fail with a clear message
// instead of breaking the build of the whole directory.
#include "pe_check.h"

extern int _my_pe(void) __attribute__((weak));
extern int _num_pes(void) __attribute__((weak));

static long slot[64];

int main(void)
{
    start_pes(0);
    pe_begin("setup_deprecated");
    const int me = shmem_my_pe(), n = shmem_n_pes();
    PE_EXPECT(_my_pe != NULL, "_my_pe() is not defined by the library");
    PE_EXPECT(_num_pes != NULL, "_num_pes() is not defined by the library");
    if (_my_pe)
        PE_EXPECT_EQ(_my_pe(), me, "_my_pe() vs shmem_my_pe()");
    if (_num_pes)
        PE_EXPECT_EQ(_num_pes(), n, "_num_pes() vs shmem_n_pes()");
    int initialized = -1;
    shmem_query_initialized(&initialized);
    PE_EXPECT_EQ(initialized, 1, "shmem_query_initialized after start_pes(0)");

    // start_pes(0) must give a working library: a put round and a get.
    if (n <= 64) {
        for (int p = 0; p < n; p++)
            shmem_long_p(&slot[me], 7 * me + 1, p);
        shmem_barrier_all();
        for (int p = 0; p < n; p++)
            PE_EXPECT_EQ(slot[p], (long)(7 * p + 1), "slot written by PE %d", p);
        PE_EXPECT_EQ(shmem_long_g(&slot[me], pe_right()), (long)(7 * me + 1),
                     "long_g of my slot on PE %d", pe_right());
    }
    pe_step("barrier before exit (no shmem_finalize: start_pes program)");
    shmem_barrier_all();
    return pe_end();
}
