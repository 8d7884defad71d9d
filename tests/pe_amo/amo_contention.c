// SPDX-License-Identifier: BSD-3-Clause
//
// Contention: every PE does thousands of fetch-incs (and fetch-adds, incs)
// on one word of PE 0 (heap) and of the last PE (.bss), PE 0 and the last
// PE included on their own word. The totals must be exact and each PE's
// fetched values strictly increasing (a lost or repeated update shows as a
// wrong total or a repeated value). Also run with more PEs than cores:
// waiting PEs must yield and drive progress for the job to finish.
//
// argv[1]: fetch-incs per PE (default 2000).
#include "amo_check.h"

static long bss_word_g;

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("amo_contention");
    const long iters = argc > 1 ? atol(argv[1]) : 2000;
    const int last = pe_npes_g - 1;
    long *heap_word = shmem_calloc(1, sizeof(long));
    unsigned int *uword = shmem_calloc(1, sizeof(unsigned int));

    pe_step("fetch_inc x %ld on PE 0's heap word and PE %d's .bss word", iters, last);
    long prev_h = -1, prev_b = -1;
    int bad_h = 0, bad_b = 0;
    for (long i = 0; i < iters; i++) {
        long h = shmem_long_atomic_fetch_inc(heap_word, 0);
        long b = shmem_ctx_long_atomic_fetch_add(SHMEM_CTX_DEFAULT, &bss_word_g, 1, last);
        if (h <= prev_h && bad_h++ < 3)
            pe_fail("fetch_inc on PE 0: value %ld after %ld (iteration %ld): not increasing", h,
                    prev_h, i);
        if (b <= prev_b && bad_b++ < 3)
            pe_fail("fetch_add on PE %d .bss: value %ld after %ld (iteration %ld)", last, b,
                    prev_b, i);
        prev_h = h;
        prev_b = b;
    }
    PE_EXPECT(prev_h < iters * pe_npes_g, "last fetch_inc value %ld below the total %ld", prev_h,
              iters * pe_npes_g);

    pe_step("non-fetching inc/add x %ld on PE 0's uint word", iters);
    for (long i = 0; i < iters; i++) {
        if (i & 1)
            shmem_uint_atomic_inc(uword, 0);
        else
            shmem_uint_atomic_add(uword, 2u, 0);
    }
    shmem_quiet();
    pe_step("barrier before the totals");
    shmem_barrier_all();
    const long n = pe_npes_g;
    if (pe_me_g == 0) {
        PE_EXPECT_EQ(*heap_word, iters * n, "heap word on PE 0 after %ld fetch_inc from %ld PEs",
                     iters, n);
        PE_EXPECT_EQ(*uword, (unsigned)((iters / 2) * 3 + (iters & 1) * 2) * (unsigned)n,
                     "uint word on PE 0 after inc/add");
    }
    if (pe_me_g == last)
        PE_EXPECT_EQ(bss_word_g, iters * n, ".bss word on PE %d after %ld fetch_add from %ld PEs",
                     last, iters, n);
    // Everyone also fetches the totals remotely (fetch through the network).
    PE_EXPECT_EQ(shmem_long_atomic_fetch(heap_word, 0), iters * n, "atomic_fetch of PE 0's total");
    PE_EXPECT_EQ(shmem_long_atomic_fetch(&bss_word_g, last), iters * n,
                 "atomic_fetch of PE %d's total", last);
    shmem_barrier_all();
    shmem_free(uword);
    shmem_free(heap_word);
    shmem_finalize();
    return pe_end();
}
