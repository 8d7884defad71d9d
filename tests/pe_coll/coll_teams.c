// SPDX-License-Identifier: BSD-3-Clause
//
// Team management: predefined teams, queries, translation, splits (valid
// and invalid triplets, negative and zero strides, 2-D with a ragged last
// row), team_ptr, SHMEM_TEAM_INVALID, thousands of create/destroy cycles,
// the SHMEM_TEAMS_MAX limit (set to 6 here), and two disjoint teams whose
// collectives interleave with the world's.
#include <malloc.h>
#include <shmemx.h>

#include "coll_test.h"

#define TEAMS_MAX 6

static long word;
static long sum_src[4], sum_dst[4];

static void check_team(shmem_team_t t, const int *pes, int n, const char *what)
{
    int me = shmem_my_pe(), rank = -1;
    for (int i = 0; i < n; i++)
        if (pes[i] == me)
            rank = i;
    if (rank < 0) {
        PE_EXPECT(t == SHMEM_TEAM_INVALID, "%s: a non-member got a team handle", what);
        return;
    }
    PE_EXPECT(t != SHMEM_TEAM_INVALID, "%s: a member got SHMEM_TEAM_INVALID", what);
    if (t == SHMEM_TEAM_INVALID)
        return;
    PE_EXPECT_EQ(shmem_team_n_pes(t), n, "%s: team_n_pes", what);
    PE_EXPECT_EQ(shmem_team_my_pe(t), rank, "%s: team_my_pe", what);
    for (int i = 0; i < n; i++) {
        PE_EXPECT_EQ(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD), pes[i],
                     "%s: translate rank %d to world", what, i);
        PE_EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, pes[i], t), i,
                     "%s: translate world %d to team", what, pes[i]);
    }
    PE_EXPECT_EQ(shmem_team_translate_pe(t, n, SHMEM_TEAM_WORLD), -1, "%s: translate rank n", what);
    PE_EXPECT_EQ(shmem_team_translate_pe(t, -1, SHMEM_TEAM_WORLD), -1, "%s: translate rank -1",
                 what);
    // A reduction over the team: sum of world PE numbers + 1.
    long e = 0;
    for (int i = 0; i < n; i++)
        e += pes[i] + 1;
    sum_src[0] = me + 1;
    shmem_long_sum_reduce(t, sum_dst, sum_src, 1);
    PE_EXPECT_EQ(sum_dst[0], e, "%s: sum over the team", what);
    shmem_team_sync(t);
}

static void test_predefined(void)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    pe_step("predefined teams");
    PE_EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_WORLD), me, "team_my_pe(WORLD)");
    PE_EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_WORLD), n, "team_n_pes(WORLD)");
    PE_EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_INVALID), -1, "team_my_pe(INVALID)");
    PE_EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_INVALID), -1, "team_n_pes(INVALID)");
    PE_EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD), -1,
                 "translate from INVALID");
    PE_EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID), -1,
                 "translate to INVALID");
    // oshrun starts every PE on this host: SHARED is the world here.
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    PE_EXPECT_EQ(sn, n, "team_n_pes(SHARED) with every PE on one host");
    PE_EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_SHARED, shmem_team_my_pe(SHMEM_TEAM_SHARED),
                                         SHMEM_TEAM_WORLD),
                 me, "SHARED rank of this PE translates to this PE");
    shmem_team_config_t cfg = {.num_contexts = 99};
    PE_EXPECT_EQ(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &cfg), 0,
                 "team_get_config(WORLD)");
    PE_EXPECT_EQ(cfg.num_contexts, 0, "WORLD's num_contexts");
    PE_EXPECT(shmem_team_get_config(SHMEM_TEAM_INVALID, 0, &cfg) != 0,
              "team_get_config(INVALID) returns nonzero");
    PE_EXPECT(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "team_sync(INVALID) returns nonzero");
    // team_ptr: only where shmem_ptr would give an address.
    for (int p = 0; p < n; p++) {
        void *a = shmem_team_ptr(SHMEM_TEAM_WORLD, &word, p), *b = shmem_ptr(&word, p);
        PE_EXPECT(a == b, "team_ptr(WORLD, pe %d) = %p, shmem_ptr = %p", p, a, b);
    }
    // A heap object: peers on this host may be reachable by load/store.
    long *hw = shmem_malloc(sizeof(long));
    for (int p = 0; p < n; p++) {
        void *a = shmem_team_ptr(SHMEM_TEAM_WORLD, hw, p), *b = shmem_ptr(hw, p);
        PE_EXPECT(a == b, "team_ptr(WORLD, heap, pe %d) = %p, shmem_ptr = %p", p, a, b);
        int sr = shmem_team_translate_pe(SHMEM_TEAM_WORLD, p, SHMEM_TEAM_SHARED);
        if (sr >= 0)
            PE_EXPECT(shmem_team_ptr(SHMEM_TEAM_SHARED, hw, sr) == b,
                      "team_ptr(SHARED, heap, rank %d) differs from shmem_ptr", sr);
    }
    PE_EXPECT(shmem_team_ptr(SHMEM_TEAM_WORLD, hw, me) == hw, "team_ptr to this PE");
    shmem_free(hw);
    PE_EXPECT(shmem_team_ptr(SHMEM_TEAM_INVALID, &word, 0) == NULL, "team_ptr(INVALID)");
    PE_EXPECT(shmem_team_ptr(SHMEM_TEAM_WORLD, &word, n) == NULL, "team_ptr(WORLD, n)");
    int wp[64];
    for (int i = 0; i < n; i++)
        wp[i] = i;
    check_team(SHMEM_TEAM_WORLD, wp, n, "WORLD");
    check_team(SHMEM_TEAM_SHARED, wp, n, "SHARED");
    shmem_team_t t = SHMEM_TEAM_WORLD;
    PE_EXPECT(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &t) != 0,
              "split of INVALID returns nonzero");
    PE_EXPECT(t == SHMEM_TEAM_INVALID, "split of INVALID gives SHMEM_TEAM_INVALID");
    shmem_team_destroy(SHMEM_TEAM_INVALID); // no-op
}

static void test_splits(void)
{
    int n = shmem_n_pes();
    struct {
        int start, stride, size, valid;
    } cases[] = {
        {0, 1, n, 1},           {0, 2, (n + 1) / 2, 1}, {n - 1, -1, n, 1},
        {n - 1, -2, (n + 1) / 2, 1}, {n / 2, 0, 1, 1},  {n - 1, 1, 1, 1},
        {0, 1, n + 1, 0},       {1, 1, n, 0},           {0, 0, 2, 0},
        {0, 1, 0, 0},           {-1, 1, 1, 0},          {0, -1, 2, 0},
        {0, 3, n / 3 + 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int st = cases[c].start, sd = cases[c].stride, sz = cases[c].size;
        int valid = cases[c].valid;
        if (sd == 0 && sz == 2 && n < 2)
            continue;
        if (st == 0 && sd == 3)
            valid = (sz - 1) * 3 < n;
        char what[96];
        snprintf(what, sizeof what, "split_strided(%d, %d, %d)", st, sd, sz);
        pe_step("%s", what);
        shmem_team_t t;
        shmem_team_config_t cfg = {.num_contexts = 3};
        int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, st, sd, sz, &cfg,
                                          SHMEM_TEAM_NUM_CONTEXTS, &t);
        if (!valid) {
            PE_EXPECT(rc != 0, "%s: invalid triplet accepted", what);
            PE_EXPECT(t == SHMEM_TEAM_INVALID, "%s: invalid triplet gave a team", what);
            continue;
        }
        PE_EXPECT_EQ(rc, 0, "%s: return code", what);
        int pes[64];
        for (int i = 0; i < sz; i++)
            pes[i] = st + i * sd;
        check_team(t, pes, sz, what);
        if (t != SHMEM_TEAM_INVALID) {
            shmem_team_config_t got = {0};
            PE_EXPECT_EQ(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got), 0,
                         "%s: get_config", what);
            PE_EXPECT_EQ(got.num_contexts, 3, "%s: num_contexts", what);
            // A split of the split: every other member, from the last one down.
            shmem_team_t u;
            int usz = (sz + 1) / 2;
            rc = shmem_team_split_strided(t, sz - 1, -2, usz, NULL, 0, &u);
            PE_EXPECT_EQ(rc, 0, "%s: nested split", what);
            int upes[64];
            for (int i = 0; i < usz; i++)
                upes[i] = pes[sz - 1 - 2 * i];
            // Only t's members call: check_team's reduction runs on u's members.
            check_team(u, upes, usz, "nested split");
            if (u != SHMEM_TEAM_INVALID)
                shmem_team_destroy(u);
            shmem_team_destroy(t);
        }
        shmem_barrier_all();
    }
}

static void test_split_2d(void)
{
    int n = shmem_n_pes(), me = shmem_my_pe();
    for (int xr = 1; xr <= n + 1; xr++) {
        char what[64];
        snprintf(what, sizeof what, "split_2d(xrange %d)", xr);
        pe_step("%s", what);
        shmem_team_t x, y;
        int rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &x, NULL, 0, &y);
        PE_EXPECT_EQ(rc, 0, "%s: return code", what);
        int xe = xr > n ? n : xr;
        int row = me / xe, col = me % xe;
        int xp[64], yp[64], xn = 0, yn = 0;
        for (int p = row * xe; p < n && p < (row + 1) * xe; p++)
            xp[xn++] = p;
        for (int p = col; p < n; p += xe)
            yp[yn++] = p;
        check_team(x, xp, xn, "2d x team");
        check_team(y, yp, yn, "2d y team");
        PE_EXPECT_EQ(shmem_team_my_pe(x), col, "%s: x rank is the x coordinate", what);
        PE_EXPECT_EQ(shmem_team_my_pe(y), row, "%s: y rank is the y coordinate", what);
        shmem_team_destroy(x);
        shmem_team_destroy(y);
        shmem_barrier_all();
    }
    shmem_team_t x = SHMEM_TEAM_WORLD, y = SHMEM_TEAM_WORLD;
    PE_EXPECT(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &x, NULL, 0, &y) != 0,
              "split_2d(xrange 0) fails");
    PE_EXPECT(x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID,
              "split_2d(xrange 0) gives SHMEM_TEAM_INVALID");
}

static void test_churn(void)
{
    int n = shmem_n_pes(), me = shmem_my_pe();
    pe_step("create/destroy churn");
    size_t used0 = 0, heap0 = 0;
    for (int it = 0; it < 2000; it++) {
        shmem_team_t t;
        int sz = it % n + 1, st = (it / n) % (n - sz + 1);
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, st, 1, sz, NULL, 0, &t) != 0) {
            pe_fail("churn %d: split failed", it);
            break;
        }
        if (t != SHMEM_TEAM_INVALID) {
            if (it % 100 == 0) {
                sum_src[0] = 1;
                shmem_long_sum_reduce(t, sum_dst, sum_src, 1);
                PE_EXPECT_EQ(sum_dst[0], (long)sz, "churn %d: sum", it);
            }
            shmem_team_destroy(t);
        }
        if (it == 10) {
            used0 = shmemx_heap_used();
            heap0 = mallinfo2().uordblks;
        }
    }
    PE_EXPECT_EQ(shmemx_heap_used(), used0, "symmetric heap in use after 2000 teams");
    size_t heap1 = mallinfo2().uordblks;
    PE_EXPECT(heap1 <= heap0 + 4096, "malloc'd memory grew from %zu to %zu bytes over 2000 teams",
              heap0, heap1);
    (void)me;
    shmem_barrier_all();
}

static void test_limit(void)
{
    pe_step("SHMEM_TEAMS_MAX");
    shmem_team_t t[TEAMS_MAX + 1];
    int made = 0;
    for (int i = 0; i < TEAMS_MAX; i++) {
        int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &t[i]);
        PE_EXPECT_EQ(rc, 0, "team %d of SHMEM_TEAMS_MAX=%d", i, TEAMS_MAX);
        made += rc == 0;
    }
    if (shmem_my_pe() == 0)
        fprintf(stderr, "(an error about SHMEM_TEAMS_MAX is expected next)\n");
    shmem_team_t extra;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &extra);
    PE_EXPECT(rc != 0, "split beyond SHMEM_TEAMS_MAX fails");
    PE_EXPECT(extra == SHMEM_TEAM_INVALID, "split beyond SHMEM_TEAMS_MAX gives INVALID");
    // The teams still work, and their slots come back.
    for (int i = 0; i < made; i++) {
        sum_src[0] = i;
        shmem_long_sum_reduce(t[i], sum_dst, sum_src, 1);
        PE_EXPECT_EQ(sum_dst[0], (long)i * shmem_n_pes(), "team %d at the limit: sum", i);
    }
    for (int i = 0; i < made; i++)
        shmem_team_destroy(t[i]);
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &extra);
    PE_EXPECT_EQ(rc, 0, "split after destroying works again");
    if (extra != SHMEM_TEAM_INVALID)
        shmem_team_destroy(extra);
    shmem_barrier_all();
}

// Two disjoint teams (even / odd PEs) and the world, collectives interleaved.
static void test_interleaved(void)
{
    int n = shmem_n_pes(), me = shmem_my_pe();
    if (n < 2)
        return;
    pe_step("interleaved teams");
    shmem_team_t ev, od, mine;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &ev);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &od);
    mine = me % 2 ? od : ev;
    long e_team = 0, e_world = 0;
    for (int p = 0; p < n; p++) {
        e_world += p;
        if (p % 2 == me % 2)
            e_team += p;
    }
    static long a[200][2], w[200][2];
    for (int it = 0; it < 200; it++) {
        sum_src[0] = me;
        shmem_long_sum_reduce(mine, a[it], sum_src, 1);
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, w[it], sum_src, 1);
    }
    for (int it = 0; it < 200; it++) {
        PE_EXPECT_EQ(a[it][0], e_team, "interleaved %d: team sum", it);
        PE_EXPECT_EQ(w[it][0], e_world, "interleaved %d: world sum", it);
    }
    shmem_team_destroy(mine);
    shmem_barrier_all();
}

int main(void)
{
    char v[16];
    snprintf(v, sizeof v, "%d", TEAMS_MAX);
    setenv("SHMEM_TEAMS_MAX", v, 1);
    shmem_init();
    pe_begin("coll_teams");
    pe_watchdog(110);
    if (shmem_n_pes() > 64) {
        pe_fail("more than 64 PEs");
        shmem_global_exit(1);
    }
    test_predefined();
    shmem_barrier_all();
    test_splits();
    test_split_2d();
    test_churn();
    test_limit();
    test_interleaved();
    shmem_finalize();
    return pe_end();
}
