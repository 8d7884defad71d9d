// SPDX-License-Identifier: BSD-3-Clause
//
// Many contexts, as SOS's many-ctx and OpenMP codes make them: 64 private
// contexts per PE, each used for fetch-adds, puts and its own quiet towards
// every other PE, then destroyed and made again. A context costs a few MB at
// most (a user sizing a job counts on it): over tcp;ofi_rxm each one used to
// open an endpoint with a shared receive context, ~70 MB and ~0.9 s apiece,
// so 64 of them needed 4.5 GB per PE and did not start in time.
#include <stdio.h>
#include <string.h>

#include "pe_check.h"

#define NCTX 64
#define ROUNDS 4
#define WORDS 32

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(void)
{
    shmem_init();
    pe_begin("ctx_many");
    int me = shmem_my_pe(), np = shmem_n_pes();
    long *ctr = shmem_calloc(NCTX, sizeof(long));
    long *slot = shmem_calloc((size_t)NCTX * np * WORDS, sizeof(long));
    static shmem_ctx_t ctx[NCTX];
    for (int pass = 0; pass < 2; pass++) {
        memset(ctr, 0, NCTX * sizeof(long));
        shmem_barrier_all();
        pe_step("pass %d: create %d contexts", pass, NCTX);
        long before = rss_kb();
        for (int i = 0; i < NCTX; i++)
            if (shmem_ctx_create(i % 2 ? SHMEM_CTX_PRIVATE : 0, &ctx[i]) != 0) {
                pe_fail("pass %d: shmem_ctx_create #%d failed", pass, i);
                return pe_end();
            }
        long grown = rss_kb() - before;
        /* Generous: a context's endpoint, CQ, counters and bounce buffers. */
        PE_EXPECT(grown < NCTX * 8192L, "pass %d: %d contexts grew RSS by %ld kB (> 8 MB each)",
                  pass, NCTX, grown);
        pe_step("pass %d: traffic on every context", pass);
        for (int r = 0; r < ROUNDS; r++)
            for (int i = 0; i < NCTX; i++)
                for (int d = 1; d < np; d++) {
                    int pe = (me + d) % np;
                    long v[WORDS];
                    for (int w = 0; w < WORDS; w++)
                        v[w] = ((long)me << 40) | ((long)pass << 32) | ((long)i << 24) | ((long)r << 16) | w;
                    shmem_ctx_long_atomic_fetch_add(ctx[i], &ctr[i], 1, pe);
                    shmem_ctx_long_put_nbi(ctx[i], slot + ((size_t)i * np + me) * WORDS, v, WORDS,
                                           pe);
                    shmem_ctx_quiet(ctx[i]);
                }
        shmem_barrier_all();
        pe_step("pass %d: check", pass);
        for (int i = 0; i < NCTX; i++) {
            PE_EXPECT_EQ(ctr[i], (long)ROUNDS * (np - 1), "pass %d: counter of context %d", pass, i);
            for (int src = 0; src < np; src++) {
                if (src == me)
                    continue;
                for (int w = 0; w < WORDS; w++) {
                    long want = ((long)src << 40) | ((long)pass << 32) | ((long)i << 24) |
                                ((long)(ROUNDS - 1) << 16) | w;
                    PE_EXPECT_EQ(slot[((size_t)i * np + src) * WORDS + w], want,
                                 "pass %d: context %d word %d from PE %d", pass, i, w, src);
                }
            }
        }
        for (int i = 0; i < NCTX; i++)
            shmem_ctx_destroy(ctx[i]);
        shmem_barrier_all();
    }
    shmem_free(slot);
    shmem_free(ctr);
    return pe_end();
}
