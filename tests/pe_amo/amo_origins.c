// SPDX-License-Identifier: BSD-3-Clause
//
// One word, atomics from both roads at once. With SHMEM_DIRECT_NOMAP some
// PEs map no other PE's heap: their AMOs reach the target through libfabric
// (the target applies them), while the other PEs do CPU atomics on the
// mapped word. If the two were not atomic with respect to each other
// (e.g. a provider atomic racing a CPU one) updates would be lost or
// fetched values repeated. Checked on a word of PE 0 and of the last PE:
//  - fetch_inc: every value 0..N-1 fetched exactly once over all PEs (the
//    mapped PEs keep at it until the fabric-road PEs are done, so the two
//    roads overlap in time);
//  - add / inc / xor / 32-bit fetch_add from every PE: exact totals;
//  - a spin lock made of compare_swap + swap guarding a non-atomic
//    read-increment-write of a counter: no increment lost;
//  - shmem_set_lock / shmem_clear_lock guarding the same kind of counter.
// The test first checks, with shmem_ptr, that the mix of roads it asks for
// is really in force (listed PEs see no peer's heap, the others see all).
//
// argv[1]: fetch_incs per PE (default 1500); argv[2]: lock rounds (default 150);
// argv[3] == "globals": the words are a static struct (.bss), not a heap block.
#include <stdlib.h>

#include "amo_check.h"

// Is pe in "1,3-5"? (the test's own reading of SHMEM_DIRECT_NOMAP)
static int listed(const char *list, int pe)
{
    while (list && *list) {
        char *end;
        long a = strtol(list, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (pe >= a && pe <= b)
            return 1;
        list = *end == ',' ? end + 1 : end + strlen(end);
    }
    return 0;
}

// Returns how many PEs take the fabric road when the mix is in force, else 0.
static int check_roads(long *word, int *me_listed_p)
{
    const char *nomap = getenv("SHMEM_DIRECT_NOMAP");
    const char *direct = getenv("SHMEM_DIRECT");
    *me_listed_p = 0;
    if (nomap == NULL || *nomap == '\0' || (direct && strcmp(direct, "0") == 0))
        return 0;
    int me_listed = listed(nomap, pe_me_g), mixed = 0, nlisted = 0;
    for (int pe = 0; pe < pe_npes_g; pe++) {
        nlisted += listed(nomap, pe);
        if (pe == pe_me_g)
            continue;
        void *p = shmem_ptr(word, pe);
        if (me_listed)
            PE_EXPECT(p == NULL, "PE %d is in SHMEM_DIRECT_NOMAP='%s' but maps PE %d's memory",
                      pe_me_g, nomap, pe);
        else
            PE_EXPECT(p != NULL, "PE %d is not in SHMEM_DIRECT_NOMAP='%s' but does not map PE "
                      "%d's memory", pe_me_g, nomap, pe);
        mixed |= listed(nomap, pe) != me_listed;
    }
    PE_EXPECT(mixed, "SHMEM_DIRECT_NOMAP='%s' does not mix the roads in a job of %d PEs", nomap,
              pe_npes_g);
    *me_listed_p = me_listed;
    return mixed ? nlisted : 0;
}

typedef struct {
    long fetch_inc;  // fetch_inc target
    long add;        // add / inc from everyone
    unsigned long long xor_bits;
    int add32;       // 32-bit fetch_add from everyone
    long am_done;    // PEs of the fabric road done with their fetch_incs
    long lock;       // compare_swap spin lock: 0 free, else 1 + holder
    long guarded;    // counter under that lock (plain get/put)
    long mcs;        // shmem_set_lock
    long mcs_guarded;
} words_t;

static void spin_lock(long *lock, int home)
{
    while (shmem_long_atomic_compare_swap(lock, 0, pe_me_g + 1, home) != 0)
        ;
}

static void spin_unlock(long *lock, int home)
{
    shmem_quiet(); // the critical section's puts land first
    long was = shmem_long_atomic_swap(lock, 0, home);
    if (was != pe_me_g + 1)
        pe_fail("spin lock on PE %d held by %ld while PE %d released it", home, was - 1,
                pe_me_g);
}

// PE `home` gathered every PE's fetched values (counts[p] of them at
// seen + p * cap) and its uncounted incs (counts[npes + p]): the values must
// be distinct and in 0..total-1, and all increments add up to total.
static void check_unique(const long *seen, const long *counts, long cap, long total, int home)
{
    unsigned char *hit = calloc((size_t)total, 1);
    long bad = 0, got = 0;
    for (int p = 0; p < pe_npes_g; p++) {
        got += counts[p] + counts[pe_npes_g + p];
        for (long i = 0; i < counts[p]; i++) {
            long v = seen[p * cap + i];
            if (v < 0 || v >= total) { // total: the word's final value
                if (bad++ < 3)
                    pe_fail("fetch_inc on PE %d returned %ld to PE %d, outside 0..%ld", home, v,
                            p, total - 1);
            } else if (hit[v]++ && bad++ < 3) {
                pe_fail("fetch_inc on PE %d returned %ld twice (again to PE %d)", home, v, p);
            }
        }
    }
    PE_EXPECT_EQ(got, total, "increments counted by the PEs vs the word on PE %d", home);
    PE_EXPECT(bad == 0, "%ld of %ld fetched values on PE %d repeated or out of range", bad, total,
              home);
    free(hit);
}

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("amo_origins");
    const long iters = argc > 1 ? atol(argv[1]) : 1500;
    const long rounds = argc > 2 ? atol(argv[2]) : 150;
    const long n = pe_npes_g;
    const int homes[2] = {0, pe_npes_g - 1};
    // While the fabric-road PEs do their fetch_incs, the others keep going
    // (up to cap each), so that both roads hit the word at the same time.
    const long cap = iters * 64;

    static words_t g_words;
    const int globals = argc > 3 && strcmp(argv[3], "globals") == 0;
    words_t *w = globals ? &g_words : shmem_calloc(1, sizeof(words_t));
    long *seen = shmem_calloc((size_t)(cap * n), sizeof(long)); // gathered at the home
    long *counts = shmem_calloc((size_t)(2 * n), sizeof(long)); // fetched, then extra incs
    long *mine = malloc((size_t)cap * sizeof(long));
    int me_listed;
    const int nlisted = check_roads(&w->add, &me_listed);
    shmem_barrier_all();

    for (int h = 0; h < 2; h++) {
        const int home = homes[h];
        pe_step("fetch_inc on PE %d's word (%s road)", home, me_listed ? "fabric" : "mapped");
        long cnt = 0, extra = 0;
        if (nlisted > 0 && !me_listed) {
            // Past cap, plain incs (counted, values not kept) until they are done.
            while (shmem_long_atomic_fetch(&w->am_done, home) < nlisted)
                for (int k = 0; k < 16; k++) {
                    if (cnt < cap)
                        mine[cnt++] = shmem_long_atomic_fetch_inc(&w->fetch_inc, home);
                    else {
                        shmem_long_atomic_inc(&w->fetch_inc, home);
                        extra++;
                    }
                }
        } else {
            for (; cnt < iters; cnt++)
                mine[cnt] = shmem_long_atomic_fetch_inc(&w->fetch_inc, home);
            if (me_listed)
                shmem_long_atomic_inc(&w->am_done, home);
        }
        shmem_long_put(seen + pe_me_g * cap, mine, (size_t)cnt, home);
        shmem_long_p(counts + pe_me_g, cnt, home);
        shmem_long_p(counts + n + pe_me_g, extra, home);

        pe_step("add/inc/xor/int fetch_add x %ld on PE %d's words", iters, home);
        for (long i = 0; i < iters; i++) {
            if (i & 1)
                shmem_long_atomic_add(&w->add, pe_me_g + 1, home);
            else
                shmem_long_atomic_inc(&w->add, home);
            shmem_ulonglong_atomic_xor(&w->xor_bits, 1ull << ((pe_me_g + i) % 64), home);
            (void)shmem_int_atomic_fetch_add(&w->add32, 2, home);
        }
        shmem_quiet();
        shmem_barrier_all();

        pe_step("compare_swap spin lock x %ld on PE %d", rounds, home);
        for (long r = 0; r < rounds; r++) {
            spin_lock(&w->lock, home);
            long v = shmem_long_g(&w->guarded, home);
            shmem_long_p(&w->guarded, v + 1, home);
            spin_unlock(&w->lock, home);
        }
        pe_step("shmem_set_lock x %ld", rounds);
        for (long r = 0; r < rounds; r++) {
            shmem_set_lock(&w->mcs);
            long v = shmem_long_g(&w->mcs_guarded, home);
            shmem_long_p(&w->mcs_guarded, v + 1, home);
            shmem_clear_lock(&w->mcs);
        }
        shmem_quiet();
        pe_step("barrier before the totals on PE %d", home);
        shmem_barrier_all();

        if (pe_me_g == home) {
            check_unique(seen, counts, cap, w->fetch_inc, home);
            long add = 0;
            unsigned long long xr = 0;
            for (int p = 0; p < n; p++) {
                add += (iters / 2) * (p + 1) + (iters - iters / 2);
                for (long i = 0; i < iters; i++)
                    xr ^= 1ull << ((p + i) % 64);
            }
            PE_EXPECT_EQ(w->add, add, "add/inc word on PE %d", home);
            PE_EXPECT_EQ(w->xor_bits, xr, "xor word on PE %d", home);
            PE_EXPECT_EQ(w->add32, (int)(2 * iters * n), "32-bit fetch_add word on PE %d", home);
            PE_EXPECT_EQ(w->lock, 0L, "spin lock on PE %d after the last release", home);
            PE_EXPECT_EQ(w->guarded, rounds * n, "counter under the compare_swap lock on PE %d",
                         home);
            PE_EXPECT_EQ(w->mcs_guarded, rounds * n, "counter under shmem_set_lock on PE %d",
                         home);
        }
        shmem_barrier_all();
        memset(w, 0, sizeof(*w)); // the next home starts from zero
        shmem_barrier_all();
    }
    free(mine);
    shmem_free(counts);
    shmem_free(seen);
    if (!globals)
        shmem_free(w);
    shmem_finalize();
    return pe_end();
}
