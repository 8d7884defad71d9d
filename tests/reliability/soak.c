// SPDX-License-Identifier: BSD-3-Clause
//
// soak SECONDS: a mixed workload for SECONDS — puts and gets of many sizes
// (checked byte for byte), atomics (a job-wide counter whose final value is
// known), reductions, broadcasts, fcollects, and a context and a team made
// and destroyed every round — while each PE samples its resident memory.
// After a warm-up (the first quarter), RSS must stay flat: at most
// SOAK_RSS_SLACK_KB (default 4096) above the warm-up sample.
#include <shmemx.h>

#include "pe_check.h"

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    const char *slack_s = getenv("SOAK_RSS_SLACK_KB");
    long slack = slack_s ? atol(slack_s) : 4096;
    enum { MAXB = 1 << 20 };

    shmem_init();
    pe_begin("soak");
    // The run is long on purpose: the watchdog is re-armed every round, so
    // a stuck round still names its step.
    unsigned char *sym = shmem_malloc(MAXB);
    unsigned char *src = malloc(MAXB), *back = malloc(MAXB);
    static long counter, red_in[64], red_out[64], bc[64], fc[64 * 64];
    if (sym == NULL || src == NULL || back == NULL) {
        pe_fail("allocation failed");
        return 1;
    }
    // Touch every page now: first-touch growth is not a leak.
    memset(src, 0, MAXB);
    memset(back, 0, MAXB);
    memset(sym, 0, MAXB);
    shmem_barrier_all();
    double t0 = shmemx_wtime(), next_sample = 0;
    long rss_base = -1, rss_max = 0, rounds = 0;
    static long go, go_root;
    for (;;) {
        // One PE decides when to stop, so every PE runs the same rounds.
        if (pe_me_g == 0)
            go_root = go = shmemx_wtime() - t0 < seconds;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, &go, &go_root, 1, 0);
        if (!go)
            break;
        alarm(60);
        size_t len = (size_t)1 << (rounds % 21); // 1 B .. 1 MiB
        pe_step("round %ld: %zu-byte put/get, atomics, collectives", rounds, len);
        pe_fill(src, len, pe_me_g, (uint32_t)rounds, 0);
        shmem_putmem(sym, src, len, pe_right());
        shmem_barrier_all();
        pe_check_fill(sym, len, pe_left(), (uint32_t)rounds, 0, "soak put");
        shmem_getmem(back, sym, len, pe_right());
        pe_check_fill(back, len, pe_me_g, (uint32_t)rounds, 0, "soak get");
        pe_step("round %ld: atomics", rounds);
        shmem_long_atomic_add(&counter, 1, 0);
        shmem_long_atomic_fetch_add(&counter, 0, (int)(rounds % pe_npes_g));
        pe_step("round %ld: reduce, broadcast, fcollect", rounds);
        for (int i = 0; i < 64; i++)
            red_in[i] = pe_me_g + i + rounds;
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, red_out, red_in, 64);
        PE_EXPECT_EQ(red_out[63], (long)pe_npes_g * (63 + rounds) + (long)pe_npes_g * (pe_npes_g - 1) / 2,
                     "soak reduce round %ld", rounds);
        bc[0] = rounds * 7;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, bc, bc, 64, (int)(rounds % pe_npes_g));
        PE_EXPECT_EQ(bc[0], rounds * 7, "soak broadcast round %ld", rounds);
        shmem_long_fcollect(SHMEM_TEAM_WORLD, fc, red_in, 64);
        PE_EXPECT_EQ(fc[(pe_npes_g - 1) * 64], (long)(pe_npes_g - 1) + rounds, "soak fcollect");
        // Resources made and destroyed every round must not accumulate.
        pe_step("round %ld: context create/destroy", rounds);
        shmem_ctx_t ctx;
        if (shmem_ctx_create(0, &ctx) == 0) {
            shmem_ctx_long_atomic_inc(ctx, &counter, 0);
            shmem_ctx_destroy(ctx);
        } else {
            pe_fail("round %ld: shmem_ctx_create failed", rounds);
        }
        pe_step("round %ld: team split/sync/destroy", rounds);
        shmem_team_t t;
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, pe_npes_g, NULL, 0, &t) == 0) {
            shmem_team_sync(t);
            shmem_team_destroy(t);
        } else {
            pe_fail("round %ld: team split failed", rounds);
        }
        pe_step("round %ld: end-of-round barrier", rounds);
        shmem_barrier_all();
        rounds++;
        double now = shmemx_wtime() - t0;
        if (now >= next_sample) {
            long kb = rss_kb();
            // Baseline after a quarter of the time and one full cycle of sizes.
            if (rss_base < 0 && now >= seconds / 4 && rounds > 21)
                rss_base = kb;
            if (rss_base >= 0 && kb > rss_max)
                rss_max = kb;
            next_sample = now + 1;
        }
    }
    shmem_barrier_all();
    // Every PE added 2 per round to PE 0's counter (add + ctx inc).
    if (pe_me_g == 0)
        PE_EXPECT_EQ(counter, 2L * pe_npes_g * rounds, "soak counter after %ld rounds", rounds);
    PE_EXPECT(rss_base >= 0, "only %ld rounds in %.0f s: too few for a memory baseline", rounds,
              seconds);
    if (rss_base >= 0) {
        PE_EXPECT(rss_max - rss_base <= slack, "RSS grew from %ld kB to %ld kB (slack %ld kB)",
                  rss_base, rss_max, slack);
        printf("PE %d: soak: %ld rounds in %.0f s, RSS %ld kB after warm-up, max %ld kB\n",
               pe_me_g, rounds, seconds, rss_base, rss_max);
    }
    free(src);
    free(back);
    shmem_free(sym);
    shmem_finalize();
    return pe_end();
}
