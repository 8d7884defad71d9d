// SPDX-License-Identifier: BSD-3-Clause
//
// Distributed locks under SHMEM_THREAD_MULTIPLE. Each PE has THR_N threads;
// there are npes locks in each of two arrays, one in .bss and one in the
// symmetric heap (so the lock words and their home PEs differ). Lock k
// guards counter k, which lives on PE k. A thread, many times: picks an
// array and a lock k, takes the PE's pthread mutex of that lock (so this
// test is about threads of one PE holding different locks at once; threads
// of one PE asking for the same lock are thread_lock_same's),
// takes the lock (shmem_set_lock, or spinning on shmem_test_lock), reads
// counter k on PE k with a get and writes it back + 1 with a put (not
// atomic: only the lock makes it exact), releases the lock, then the mutex.
// At the end counter k on PE k must equal the number of increments every
// thread of every PE made on it.
//
// argv[1]: acquisitions per thread (default 150).
#include "thread_check.h"

static long bss_locks_g[THR_MAX_PES];
static long bss_counts_g[THR_MAX_PES];

typedef struct {
    long *locks, *counts;
    pthread_mutex_t mutex[THR_MAX_PES];
    long done[THR_MAX_PES]; // increments by this PE's threads (atomic adds)
} lockset_t;

static lockset_t sets_g[2];
static long iters_g;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t seed = thr_seed(t);
    long mine[2][THR_MAX_PES] = {{0}};
    thr_go();
    for (long i = 0; i < iters_g; i++) {
        int s = (int)(thr_rand(&seed) & 1);
        int k = (int)(thr_rand(&seed) % (uint32_t)pe_npes_g);
        lockset_t *ls = &sets_g[s];
        pthread_mutex_lock(&ls->mutex[k]);
        if (i % 4 == 3) {
            while (shmem_test_lock(&ls->locks[k]) != 0)
                sched_yield();
        } else {
            shmem_set_lock(&ls->locks[k]);
        }
        long v = shmem_long_g(&ls->counts[k], k);
        shmem_long_p(&ls->counts[k], v + 1, k);
        shmem_clear_lock(&ls->locks[k]); // quiets first: the put is done
        pthread_mutex_unlock(&ls->mutex[k]);
        mine[s][k]++;
    }
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < pe_npes_g; k++)
            __atomic_fetch_add(&sets_g[s].done[k], mine[s][k], __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    thr_init("thread_lock");
    iters_g = argc > 1 ? atol(argv[1]) : 150;
    const int n = pe_npes_g;
    long *heap_locks = shmem_calloc((size_t)n, sizeof(long));
    long *heap_counts = shmem_calloc((size_t)n, sizeof(long));
    long *done = shmem_calloc(2 * (size_t)n, sizeof(long));
    long *total = shmem_calloc(2 * (size_t)n, sizeof(long));
    sets_g[0].locks = bss_locks_g;
    sets_g[0].counts = bss_counts_g;
    sets_g[1].locks = heap_locks;
    sets_g[1].counts = heap_counts;
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < n; k++)
            pthread_mutex_init(&sets_g[s].mutex[k], NULL);
    shmem_barrier_all();

    pe_step("%d threads x %ld lock acquisitions", THR_N, iters_g);
    thr_run(worker);

    pe_step("summing the increments");
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < n; k++)
            done[s * n + k] = sets_g[s].done[k];
    shmem_barrier_all(); // every PE's increments are complete (clear_lock quiets)
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, total, done, 2 * (size_t)n);
    PE_EXPECT_EQ(bss_counts_g[pe_me_g], total[pe_me_g],
                 "counter of .bss lock %d (get + put under the lock)", pe_me_g);
    PE_EXPECT_EQ(heap_counts[pe_me_g], total[n + pe_me_g],
                 "counter of heap lock %d (get + put under the lock)", pe_me_g);
    long all = 0;
    for (int k = 0; k < 2 * n; k++)
        all += total[k];
    PE_EXPECT_EQ(all, (long)n * THR_N * iters_g, "increments counted job-wide");

    // Every lock is free again: test_lock takes it at once.
    pe_step("locks free at the end");
    shmem_barrier_all();
    if (pe_me_g == 0)
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < n; k++) {
                PE_EXPECT_EQ(shmem_test_lock(&sets_g[s].locks[k]), 0,
                             "test_lock on free lock %d of array %d", k, s);
                shmem_clear_lock(&sets_g[s].locks[k]);
            }
    shmem_barrier_all();
    shmem_free(total);
    shmem_free(done);
    shmem_free(heap_counts);
    shmem_free(heap_locks);
    shmem_finalize();
    return pe_end();
}
