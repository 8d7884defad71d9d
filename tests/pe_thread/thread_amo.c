// SPDX-License-Identifier: BSD-3-Clause
//
// Atomics under SHMEM_THREAD_MULTIPLE, all on the default context (shared by
// the threads). THR_N threads per PE, each round targeting every PE k:
//   - tickets: fetch_inc on a heap word and fetch_add on a .bss word of PE k;
//     each ticket t is marked by an atomic add on seen[t] of PE k. Every
//     ticket 0..N-1 must be handed out exactly once: a fetching AMO that
//     returned before its own result arrived, or returned another thread's,
//     shows as a duplicate, a gap or a ticket out of range;
//   - the same with fetch_add_nbi (four in flight, then shmem_quiet);
//   - a compare-and-swap increment loop on a heap word (fetch, then cswap
//     until it takes): exact only if each cswap returns its own old value;
//   - fetch_xor of the thread's own bit in a word of PE k: the bit in the
//     old value must be what this thread left there (no one else touches it).
// Afterwards every counter equals the number of operations made on it and
// each bit word holds the bits of the threads that toggled an odd number of
// times.
//
// argv[1]: rounds per thread (default 40).
#include "thread_check.h"

#define SEEN_MAX 4096 // tickets per PE per counter: THR_N * npes * rounds

static long bss_ticket_g;
static long bss_seen_g[SEEN_MAX];

static long *heap_ticket_g, *nbi_ticket_g, *cas_counter_g;
static long *seen_heap_g, *seen_nbi_g;
static uint64_t *bits_g;
static long rounds_g, ntickets_g;

static void check_ticket(long t, const char *what, int k)
{
    if (t < 0 || t >= ntickets_g)
        THR_EXPECT(0, "%s ticket from PE %d: %ld not in [0, %ld)", what, k, t, ntickets_g);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    const int me = pe_me_g, n = pe_npes_g;
    const uint64_t mybit = 1ULL << (me * THR_N + t);
    uint64_t mystate[THR_MAX_PES] = {0}; // my bit in bits_g on PE k
    thr_go();
    for (long r = 0; r < rounds_g; r++) {
        for (int j = 0; j < n; j++) {
            int k = (j + t + me) % n;
            long a = shmem_long_atomic_fetch_inc(heap_ticket_g, k);
            check_ticket(a, "heap fetch_inc", k);
            if (a >= 0 && a < ntickets_g)
                shmem_long_atomic_add(&seen_heap_g[a], 1, k);

            long b = shmem_long_atomic_fetch_add(&bss_ticket_g, 1, k);
            check_ticket(b, ".bss fetch_add", k);
            if (b >= 0 && b < ntickets_g)
                shmem_long_atomic_inc(&bss_seen_g[b], k);

            long v = shmem_long_atomic_fetch(cas_counter_g, k), old;
            while ((old = shmem_long_atomic_compare_swap(cas_counter_g, v, v + 1, k)) != v)
                v = old;

            uint64_t o = shmem_uint64_atomic_fetch_xor(bits_g, mybit, k);
            THR_EXPECT((o & mybit ? 1u : 0u) == mystate[k],
                       "thread %d: fetch_xor on PE %d round %ld: own bit %d in old value 0x%llx, "
                       "expected %d",
                       t, k, r, o & mybit ? 1 : 0, (unsigned long long)o, (int)mystate[k]);
            mystate[k] ^= 1;
        }
        // Four fetching AMOs in flight per round, results by quiet.
        if (r % 4 == 0) {
            long res[4] = {-1, -1, -1, -1};
            for (int q = 0; q < 4; q++)
                shmem_long_atomic_fetch_add_nbi(&res[q], nbi_ticket_g, 1, (q + t + me) % n);
            shmem_quiet();
            for (int q = 0; q < 4; q++) {
                int k = (q + t + me) % n;
                check_ticket(res[q], "fetch_add_nbi", k);
                if (res[q] >= 0 && res[q] < ntickets_g)
                    shmem_long_atomic_inc(&seen_nbi_g[res[q]], k);
            }
        }
    }
    shmem_quiet(); // the seen[] marks are applied
    return NULL;
}

static void check_seen(const long *seen, long count, const char *what)
{
    long dup = 0, missing = 0, first_bad = -1;
    for (long i = 0; i < ntickets_g; i++) {
        long want = i < count ? 1 : 0;
        if (seen[i] != want) {
            if (first_bad < 0)
                first_bad = i;
            if (seen[i] > want)
                dup++;
            else
                missing++;
        }
    }
    PE_EXPECT(dup == 0 && missing == 0,
              "%s: of %ld tickets %ld handed out twice or more and %ld never (first: ticket %ld "
              "seen %ld times)",
              what, count, dup, missing, first_bad, first_bad >= 0 ? seen[first_bad] : 0);
}

int main(int argc, char **argv)
{
    thr_init("thread_amo");
    rounds_g = argc > 1 ? atol(argv[1]) : 40;
    const int n = pe_npes_g;
    ntickets_g = (long)THR_N * n * rounds_g;
    if (ntickets_g > SEEN_MAX || n * THR_N > 64) {
        fprintf(stderr, "PE %d: too many rounds or PEs for the ticket tables\n", pe_me_g);
        shmem_global_exit(2);
    }
    heap_ticket_g = shmem_calloc(1, sizeof(long));
    nbi_ticket_g = shmem_calloc(1, sizeof(long));
    cas_counter_g = shmem_calloc(1, sizeof(long));
    bits_g = shmem_calloc(1, sizeof(uint64_t));
    seen_heap_g = shmem_calloc((size_t)ntickets_g, sizeof(long));
    seen_nbi_g = shmem_calloc((size_t)ntickets_g, sizeof(long));
    shmem_barrier_all();

    pe_step("%d threads x %ld rounds of AMOs on every PE", THR_N, rounds_g);
    thr_run(worker);
    pe_step("checking");
    shmem_barrier_all();

    long per_pe = (long)THR_N * n * rounds_g; // each thread hits each PE once a round
    PE_EXPECT_EQ(*heap_ticket_g, per_pe, "heap fetch_inc counter");
    PE_EXPECT_EQ(bss_ticket_g, per_pe, ".bss fetch_add counter");
    PE_EXPECT_EQ(*cas_counter_g, per_pe, "compare-and-swap counter");
    check_seen(seen_heap_g, per_pe, "heap fetch_inc");
    check_seen(bss_seen_g, per_pe, ".bss fetch_add");

    // fetch_add_nbi: thread t of PE p sends round r's q-th to PE (q+t+p)%n.
    long nbi = 0;
    for (int p = 0; p < n; p++)
        for (int t = 0; t < THR_N; t++)
            for (long r = 0; r < rounds_g; r += 4)
                for (int q = 0; q < 4; q++)
                    nbi += (q + t + p) % n == pe_me_g;
    PE_EXPECT_EQ(*nbi_ticket_g, nbi, "fetch_add_nbi counter");
    check_seen(seen_nbi_g, nbi, "fetch_add_nbi");

    uint64_t want_bits = 0;
    if (rounds_g % 2)
        want_bits = n * THR_N == 64 ? ~0ULL : (1ULL << (n * THR_N)) - 1;
    PE_EXPECT_EQ(*bits_g, want_bits, "fetch_xor word (own bit toggled once a round)");

    shmem_barrier_all();
    shmem_free(seen_nbi_g);
    shmem_free(seen_heap_g);
    shmem_free(bits_g);
    shmem_free(cas_counter_g);
    shmem_free(nbi_ticket_g);
    shmem_free(heap_ticket_g);
    shmem_finalize();
    return pe_end();
}
