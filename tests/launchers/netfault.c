// SPDX-License-Identifier: BSD-3-Clause
//
// Traffic across two hosts while netfault_test.sh breaks the link between
// them (tests/launchers). Ranks alternate between the hosts (mpirun
// --map-by node), so each PE's right neighbour is on the other host.
//   netfault MODE [SECONDS]
// MODE: put | get | amo | barrier | coll | mixed. Each PE works on its right
// neighbour in a loop, checking every value it can (the pattern a get
// returns, the old value a fetch-add returns, a reduction's result, what
// puts left behind), and prints "netfault: streaming MODE" (PE 0) once
// traffic runs, so the script knows when to break the link.
// Without SECONDS the loop runs until the job is ended (link-down cases).
// With SECONDS (the flapping case) the PEs agree to stop after that long
// (a max-reduction every 32 rounds), check what the puts left at every PE,
// and pass. Any wrong value fails the PE ("PE n: ... expected ... got").
#include <time.h>

#include "pe_check.h"

#define BLOCK 4096

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: netfault put|get|amo|barrier|coll|mixed [SECONDS]\n");
        return 2;
    }
    const char *mode = argv[1];
    double limit_s = argc > 2 ? atof(argv[2]) : 0;
    int put = !strcmp(mode, "put") || !strcmp(mode, "mixed");
    int get = !strcmp(mode, "get") || !strcmp(mode, "mixed");
    int amo = !strcmp(mode, "amo") || !strcmp(mode, "mixed");
    int bar = !strcmp(mode, "barrier") || !strcmp(mode, "mixed");
    int coll = !strcmp(mode, "coll") || !strcmp(mode, "mixed");
    if (!put && !get && !amo && !bar && !coll) {
        fprintf(stderr, "netfault: unknown mode '%s'\n", mode);
        return 2;
    }
    shmem_init();
    pe_begin("netfault");
    int me = pe_me_g, n = pe_npes_g, right = pe_right(), left = pe_left();

    uint8_t *src = shmem_malloc(BLOCK);      // my pattern, read by my left neighbour
    uint8_t *in = shmem_malloc(BLOCK);       // what my left neighbour puts
    long *in_round = shmem_calloc(1, sizeof(long)); // the round of the last block in `in`
    long *counter = shmem_calloc(1, sizeof(long));  // fetch-added by my left neighbour
    static long red_src[2], red_dst[2];
    uint8_t out[BLOCK], got[BLOCK];
    pe_fill(src, BLOCK, me, 1, 0);
    shmem_barrier_all(); // every pair connected, buffers ready
    if (me == 0)
        fprintf(stderr, "netfault: streaming %s at %lld ms (%d PEs)\n", mode, wall_ms(), n);

    double t0 = now_s();
    long round = 0;
    for (;; round++) {
        pe_step("%s round %ld", mode, round);
        if (put) {
            pe_fill(out, BLOCK, me, 2, (uint64_t)round);
            shmem_putmem(in, out, BLOCK, right);
            shmem_quiet(); // the block before its round number
            shmem_long_p(in_round, round, right);
            shmem_quiet();
        }
        if (get) {
            shmem_getmem(got, src, BLOCK, right);
            pe_check_fill(got, BLOCK, right, 1, 0, "get from the right neighbour");
        }
        if (amo) {
            long old = shmem_long_atomic_fetch_add(counter, 1, right);
            PE_EXPECT_EQ(old, round, "fetch-add on the right neighbour, round %ld", round);
        }
        if (bar)
            shmem_barrier_all();
        if (coll) {
            red_src[0] = me + round;
            red_src[1] = 1;
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, red_dst, red_src, 2);
            PE_EXPECT_EQ(red_dst[0], (long)n * (n - 1) / 2 + (long)n * round,
                         "sum reduction, round %ld", round);
            PE_EXPECT_EQ(red_dst[1], (long)n, "count reduction, round %ld", round);
        }
        if (pe_errors_g)
            break;
        if (limit_s > 0 && round % 32 == 31) {
            red_src[0] = now_s() - t0 >= limit_s;
            shmem_long_max_reduce(SHMEM_TEAM_WORLD, red_dst, red_src, 1);
            if (red_dst[0])
                break;
        }
    }
    if (pe_errors_g) {
        fprintf(stderr, "PE %d: netfault: wrong data in round %ld\n", me, round);
        shmem_global_exit(1);
    }
    pe_step("final check after %ld rounds", round + 1);
    shmem_barrier_all();
    if (put) {
        PE_EXPECT_EQ(*in_round, round, "round of the last block from PE %d", left);
        pe_check_fill(in, BLOCK, left, 2, (uint64_t)*in_round, "last block put by the left neighbour");
    }
    if (amo)
        PE_EXPECT_EQ(*counter, round + 1, "fetch-adds from PE %d", left);
    shmem_barrier_all();
    if (me == 0)
        fprintf(stderr, "netfault: %ld rounds of %s in %.1f s\n", round + 1, mode, now_s() - t0);
    shmem_finalize();
    return pe_end();
}
