// SPDX-License-Identifier: BSD-3-Clause
//
// Threads of one PE asking for the SAME distributed lock, with nothing of
// their own to keep them apart (unlike thread_lock, whose threads take a
// pthread mutex per lock first). Under SHMEM_THREAD_MULTIPLE every routine
// may be called from several threads at once, locks included, so the lock
// must exclude the PE's other threads as well as the other PEs.
//
// One lock per PE, in .bss; lock k guards a counter on PE k. Every thread of
// every PE, for each k in turn and many rounds: takes lock k (set_lock on
// even rounds, a test_lock loop on odd ones, the two kinds mixed within a PE
// because threads drift apart), reads counter k with a get, writes it back
// + 1 with a put, and clears the lock. At the end counter k must be exactly
// npes * SAME_THREADS * rounds: a lost increment means two holders at once.
//
// Before the fix the second thread of a PE to ask swapped itself into the
// queue's tail behind its own PE and waited on its own queue node for ever.
//
// argv[1]: rounds per thread (default 40). SAME_THREADS threads per PE (more
// than THR_N: the more threads queue at once, the surer the old hang).
#include "thread_check.h"

#define SAME_THREADS 8
static pthread_barrier_t same_go_g;

static long locks_g[THR_MAX_PES];
static long counts_g[THR_MAX_PES];
static long rounds_g;
static long test_lock_spins_g; // how often test_lock said "set" (atomic)

static void *worker(void *arg)
{
    (void)arg;
    long spins = 0;
    pthread_barrier_wait(&same_go_g);
    for (long r = 0; r < rounds_g; r++)
        for (int k = 0; k < pe_npes_g; k++) {
            if (r % 2 == 0) {
                shmem_set_lock(&locks_g[k]);
            } else {
                while (shmem_test_lock(&locks_g[k]) != 0)
                    spins++;
            }
            long v = shmem_long_g(&counts_g[k], k);
            shmem_long_p(&counts_g[k], v + 1, k);
            shmem_clear_lock(&locks_g[k]);
        }
    __atomic_fetch_add(&test_lock_spins_g, spins, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    thr_init("thread_lock_same");
    rounds_g = argc > 1 ? atol(argv[1]) : 40;
    shmem_barrier_all();

    pe_step("%d threads x %ld rounds over %d locks, no user mutex", SAME_THREADS, rounds_g,
            pe_npes_g);
    pthread_t tid[SAME_THREADS];
    pthread_barrier_init(&same_go_g, NULL, SAME_THREADS);
    for (int t = 0; t < SAME_THREADS; t++)
        if (pthread_create(&tid[t], NULL, worker, NULL) != 0) {
            fprintf(stderr, "PE %d: pthread_create failed\n", pe_me_g);
            shmem_global_exit(2);
        }
    for (int t = 0; t < SAME_THREADS; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&same_go_g);

    pe_step("checking the counters");
    shmem_barrier_all(); // clear_lock completed every put
    PE_EXPECT_EQ(counts_g[pe_me_g], (long)pe_npes_g * SAME_THREADS * rounds_g,
                 "counter under lock %d (get + put by every thread of every PE)", pe_me_g);

    // The locks are free again, for this PE's threads as for the others.
    pe_step("locks free at the end");
    PE_EXPECT_EQ(shmem_test_lock(&locks_g[pe_me_g]), 0, "test_lock on free lock %d", pe_me_g);
    shmem_clear_lock(&locks_g[pe_me_g]);
    shmem_barrier_all();
    if (pe_me_g == 0)
        printf("thread_lock_same: %d PEs x %d threads x %ld rounds, test_lock said 'set' %ld "
               "times on PE 0\n",
               pe_npes_g, SAME_THREADS, rounds_g, test_lock_spins_g);
    shmem_finalize();
    return pe_end();
}
