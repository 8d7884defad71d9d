// SPDX-License-Identifier: BSD-3-Clause
//
// Distributed locks: mutual exclusion over a non-atomic read-modify-write.
// Every PE, many times: take the lock (shmem_set_lock, or spinning on
// shmem_test_lock), read a counter on PE 0 with a get, write it back + 1
// with a put, release. Lost updates mean two PEs were inside at once. A
// second witness: an "inside" word incremented on entry and decremented on
// exit must read 0 on entry. Two locks (heap and .bss, so different home
// PEs) are used alternately; each guards its own counter.
//
// argv[1]: lock acquisitions per PE per lock (default 300).
#include "amo_check.h"

static long bss_lock_g;
static long bss_counter_g;

static void critical(long *lock, long *counter, long *inside, int use_test, long *bad)
{
    if (use_test) {
        long spins = 0;
        while (shmem_test_lock(lock) != 0)
            spins++;
        (void)spins;
    } else {
        shmem_set_lock(lock);
    }
    long in = shmem_long_atomic_fetch_inc(inside, 0);
    if (in != 0)
        (*bad)++;
    long v = shmem_long_g(counter, 0);
    shmem_long_p(counter, v + 1, 0);
    shmem_long_atomic_add(inside, -1, 0);
    shmem_clear_lock(lock); // quiets first: the put and the add are done
}

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("amo_lock");
    const long iters = argc > 1 ? atol(argv[1]) : 300;
    long *heap_lock = shmem_calloc(1, sizeof(long));
    long *heap_counter = shmem_calloc(1, sizeof(long));
    long *inside = shmem_calloc(2, sizeof(long));
    shmem_barrier_all();

    long bad = 0;
    for (long i = 0; i < iters; i++) {
        pe_step("acquisition %ld of the heap lock", i);
        critical(heap_lock, heap_counter, &inside[0], (int)(i % 3 == 1), &bad);
        pe_step("acquisition %ld of the .bss lock", i);
        critical(&bss_lock_g, &bss_counter_g, &inside[1], (int)(i % 3 == 2), &bad);
    }
    PE_EXPECT(bad == 0, "%ld entries found another PE inside the critical section", bad);

    // test_lock on a held lock fails; after release it succeeds.
    pe_step("test_lock on a lock held by PE 0");
    shmem_barrier_all();
    if (pe_me_g == 0)
        shmem_set_lock(heap_lock);
    shmem_barrier_all();
    if (pe_me_g != 0)
        PE_EXPECT_EQ(shmem_test_lock(heap_lock), 1, "shmem_test_lock while PE 0 holds the lock");
    shmem_barrier_all();
    if (pe_me_g == 0)
        shmem_clear_lock(heap_lock);
    shmem_barrier_all();
    if (pe_me_g == pe_npes_g - 1) {
        PE_EXPECT_EQ(shmem_test_lock(heap_lock), 0, "shmem_test_lock on the free lock");
        shmem_clear_lock(heap_lock);
    }

    pe_step("final barrier");
    shmem_barrier_all();
    if (pe_me_g == 0) {
        PE_EXPECT_EQ(*heap_counter, iters * pe_npes_g, "counter guarded by the heap lock");
        PE_EXPECT_EQ(bss_counter_g, iters * pe_npes_g, "counter guarded by the .bss lock");
    }
    shmem_barrier_all();
    shmem_free(inside);
    shmem_free(heap_counter);
    shmem_free(heap_lock);
    shmem_finalize();
    return pe_end();
}
