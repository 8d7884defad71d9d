// SPDX-License-Identifier: BSD-3-Clause
// The ring of examples/hello_ring.c in C++, through the generic names:
// each PE puts a block into its right neighbour, counts what it received
// with a reduction, and PE 0 prints "ring OK: N of N PEs ..." (what the
// install and package tests look for).
#include <shmem.h>

#include <cstdio>
#include <vector>

int main()
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const size_t n = 1024;

    long *inbox = static_cast<long *>(shmem_malloc(n * sizeof(long)));
    std::vector<long> out(n);
    for (size_t i = 0; i < n; i++)
        out[i] = long(me) * 1000000 + long(i);
    shmem_put(inbox, out.data(), n, right); // the overload for long
    shmem_barrier_all();

    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += inbox[i] != long(left) * 1000000 + long(i);
    static int good, all_good; // symmetric: data segment
    good = bad == 0;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, &all_good, &good, 1);
    std::printf("PE %d of %d: received %zu longs from PE %d, %s\n", me, npes, n, left,
                bad ? "MISMATCH" : "ok");
    std::fflush(stdout);
    shmem_barrier_all();
    if (me == 0)
        std::printf("ring %s: %d of %d PEs received the right data (C++ %ld)\n",
                    all_good == npes ? "OK" : "FAILED", all_good, npes, long(__cplusplus));
    shmem_free(inbox);
    shmem_finalize();
    return all_good == npes ? 0 : 1;
}
