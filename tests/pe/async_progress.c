// SPDX-License-Identifier: BSD-3-Clause
//
// Asynchronous progress, written the way other people's SHMEM programs are:
// a PE spins on a *global* with plain loads, or computes without calling the
// library, while other PEs put, get and do atomics on its memory. The spec
// (Execution Model, "Progress of OpenSHMEM Operations") requires those
// operations to complete; without asynchronous progress these spin forever
// on providers that move data only inside the target's library calls.
//
//  1. flag: every other PE puts into PE 0's `static int flag_g` (a global,
//     not the heap) and quiets; PE 0 spins `while (*(volatile int *)&flag_g
//     != want)` without any library call. The same with a heap flag.
//  2. computing target: PE 0 computes (a clock loop, no library call) until
//     PE 1 sets a global flag; meanwhile PE 1 gets from, fetch-adds to,
//     compare-swaps and puts into PE 0's globals. PE 1's operations must
//     finish while PE 0 computes.
//  3. histogram: every PE adds into bins of a global histogram spread over
//     all PEs (atomic inc / add, no fetch) and then increments a global
//     counter on PE 0, which spins on it with plain loads. The sums must be
//     exact.
#include "pe_check.h"

#define NBINS 64
#define HIST_ROUNDS 400

static int flag_g;
static long garr_g[256];
static long counter_g;
static volatile int done_g;
static long hist_g[NBINS];
static long arrivals_g;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Spin with plain loads only; gives up after `limit` seconds. */
static int spin_until_int(volatile int *p, int want, double limit)
{
    double t0 = now_s();
    while (*p != want)
        if (now_s() - t0 > limit)
            return 0;
    return 1;
}

static int spin_until_long(volatile long *p, long want, double limit)
{
    double t0 = now_s();
    while (*p != want)
        if (now_s() - t0 > limit)
            return 0;
    return 1;
}

static void part_flag(int *heap_flag)
{
    int me = pe_me_g, n = pe_npes_g;
    pe_step("flag: global flag written by every other PE");
    for (int round = 1; round <= 3; round++) {
        int want = round * (n - 1);
        if (me != 0) {
            shmem_int_atomic_add(&flag_g, 1, 0);
            shmem_quiet();
        } else {
            PE_EXPECT(spin_until_int(&flag_g, want, 20.0),
                      "global flag: round %d: spinning PE 0 saw %d, expected %d", round, flag_g,
                      want);
        }
        shmem_barrier_all();
    }
    pe_step("flag: put of a global int, target spins");
    if (me == 1) {
        shmem_int_p(&flag_g, -7, 0);
        shmem_quiet();
    } else if (me == 0) {
        PE_EXPECT(spin_until_int(&flag_g, -7, 20.0), "put to global flag: PE 0 saw %d, expected -7",
                  flag_g);
    }
    shmem_barrier_all();
    pe_step("flag: put of a heap int, target spins");
    if (me == 1) {
        shmem_int_p(heap_flag, 99, 0);
        shmem_quiet();
    } else if (me == 0) {
        PE_EXPECT(spin_until_int(heap_flag, 99, 20.0), "put to heap flag: PE 0 saw %d, expected 99",
                  *heap_flag);
    }
    shmem_barrier_all();
}

static void part_compute(void)
{
    int me = pe_me_g;
    for (int i = 0; i < 256; i++)
        garr_g[i] = (long)me * 1000 + i;
    counter_g = 0;
    done_g = 0;
    shmem_barrier_all();
    pe_step("compute: PE 0 computes while PE 1 gets, fetch-adds and puts");
    if (me == 0) {
        double t0 = now_s();
        double x = 1.0;
        while (!done_g && now_s() - t0 < 30.0)
            x = x * 1.0000001 + 1e-9; /* work, no library call */
        double took = now_s() - t0;
        PE_EXPECT(done_g == 1, "PE 0 computed %.1f s and PE 1's operations never completed",
                  took);
        if (x < 0) /* keep the loop */
            printf("%g\n", x);
    } else if (me == 1) {
        double t0 = now_s();
        long got[256];
        shmem_long_get(got, garr_g, 256, 0);
        for (int i = 0; i < 256; i++)
            PE_EXPECT_EQ(got[i], (long)i, "get of PE 0's global garr[%d] while it computes", i);
        for (int i = 0; i < 100; i++) {
            long old = shmem_long_atomic_fetch_add(&counter_g, 2, 0);
            PE_EXPECT_EQ(old, 2L * i, "fetch_add %d on PE 0's global counter", i);
        }
        long prev = shmem_long_atomic_compare_swap(&counter_g, 200, 1000, 0);
        PE_EXPECT_EQ(prev, 200L, "compare_swap on PE 0's global counter");
        long src[256];
        for (int i = 0; i < 256; i++)
            src[i] = -i;
        shmem_long_put(garr_g, src, 256, 0);
        shmem_quiet();
        shmem_int_p((int *)&done_g, 1, 0);
        shmem_quiet();
        double took = now_s() - t0;
        PE_EXPECT(took < 20.0, "PE 1's operations on a computing PE took %.1f s", took);
    }
    shmem_barrier_all();
    if (me == 0) {
        PE_EXPECT_EQ(counter_g, 1000L, "PE 0's global counter after PE 1's atomics");
        for (int i = 0; i < 256; i++)
            PE_EXPECT_EQ(garr_g[i], (long)-i, "PE 0's garr[%d] after PE 1's put", i);
    }
    shmem_barrier_all();
}

static void part_histogram(void)
{
    int me = pe_me_g, n = pe_npes_g;
    memset(hist_g, 0, sizeof(hist_g));
    arrivals_g = 0;
    shmem_barrier_all();
    pe_step("histogram: atomics into global bins on every PE");
    unsigned seed = 12345u + (unsigned)me * 7919u;
    for (int r = 0; r < HIST_ROUNDS; r++) {
        seed = seed * 1103515245u + 12345u;
        int pe = (int)((seed >> 16) % (unsigned)n);
        int bin = (int)((seed >> 8) % NBINS);
        if (r % 2)
            shmem_long_atomic_inc(&hist_g[bin], pe);
        else
            shmem_long_atomic_add(&hist_g[bin], 1, pe);
    }
    shmem_quiet();
    shmem_long_atomic_inc(&arrivals_g, 0);
    shmem_quiet();
    if (me == 0)
        PE_EXPECT(spin_until_long(&arrivals_g, n, 20.0),
                  "histogram: PE 0 spun on its global arrival counter: %ld of %d arrived",
                  arrivals_g, n);
    shmem_barrier_all();
    long mine = 0, total = 0;
    for (int b = 0; b < NBINS; b++)
        mine += hist_g[b];
    static long sum_g, mine_g;
    static long psync_g[SHMEM_REDUCE_SYNC_SIZE];
    static long pwrk_g[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync_g[i] = SHMEM_SYNC_VALUE;
    mine_g = mine;
    shmem_barrier_all();
    shmem_long_sum_to_all(&sum_g, &mine_g, 1, 0, 0, n, pwrk_g, psync_g);
    total = sum_g;
    PE_EXPECT_EQ(total, (long)n * HIST_ROUNDS, "histogram: total count over all PEs' bins");
}

int main(void)
{
    shmem_init();
    pe_begin("async_progress");
    if (pe_npes_g < 2) {
        printf("async_progress needs 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    int *heap_flag = shmem_calloc(1, sizeof(int));
    part_flag(heap_flag);
    part_compute();
    part_histogram();
    shmem_free(heap_flag);
    shmem_finalize();
    return pe_end();
}
