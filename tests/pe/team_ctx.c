// SPDX-License-Identifier: BSD-3-Clause
//
// Team contexts (shmem_team_create_ctx) as the spec defines them:
//   - creating one is not collective: the odd PEs make and destroy contexts
//     from SHMEM_TEAM_WORLD while the even PEs are already in a barrier; PE 0
//     makes one from SHMEM_TEAM_SHARED while the others make theirs from
//     SHMEM_TEAM_WORLD (a collective creation would hang in both);
//   - point-to-point calls on a team context number PEs within the team:
//     on the team of the odd world PEs (and on the team of PEs n-1, n-2, ..,
//     0, reversed), put, p, get, g, iput, iget, the AMOs (fetching, non
//     fetching, nbi) and put-with-signal to team PE k reach world PE
//     translate(k), and ctx_pe_quiet takes team PEs too.
// With argument "badpe": a team PE number past the team's size ends the job
// with a message that says so.
#include "pe_check.h"

static long box[64];
static long counter;
static long data[4], strided[8], got_back[4];
static long amo_word, amo_fetch_word;
static uint64_t sig;

// Every point-to-point form on a context of team t towards the team's next
// PE, named by its team number; the checks read what world PE
// translate(next) and this PE hold.
static void team_traffic(shmem_team_t t, const char *name)
{
    const int tme = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
    const int next = (tme + 1) % tn, prev = (tme + tn - 1) % tn;
    const int wprev = shmem_team_translate_pe(t, prev, SHMEM_TEAM_WORLD);
    const int me = shmem_my_pe();
    shmem_ctx_t c;
    PE_EXPECT_EQ(shmem_team_create_ctx(t, 0, &c), 0, "team_create_ctx(%s)", name);
    if (c == SHMEM_CTX_INVALID)
        return;
    memset(data, 0, sizeof(data));
    memset(strided, 0, sizeof(strided));
    amo_word = 0;
    amo_fetch_word = 0;
    sig = 0;
    shmem_team_sync(t);

    long src[4] = {me * 10 + 1, me * 10 + 2, me * 10 + 3, me * 10 + 4};
    shmem_ctx_long_put(c, data, src, 2, next);
    shmem_ctx_long_p(c, &data[2], me * 10 + 3, next);
    shmem_ctx_long_iput(c, strided, src, 2, 1, 4, next);
    shmem_ctx_long_atomic_add(c, &amo_word, me + 1, next);
    long old = shmem_ctx_long_atomic_fetch_add(c, &amo_fetch_word, me + 1, next);
    PE_EXPECT_EQ(old, 0, "%s: fetch_add's old value on team PE %d", name, next);
    long nbi_old = -1;
    shmem_ctx_long_atomic_fetch_inc_nbi(c, &nbi_old, &amo_fetch_word, next);
    shmem_ctx_putmem_signal(c, &data[3], &src[3], sizeof(long), &sig, (uint64_t)me + 1,
                            SHMEM_SIGNAL_SET, next);
    int quiet_pes[1] = {next};
    shmem_ctx_pe_quiet(c, quiet_pes, 1);
    shmem_ctx_quiet(c);
    PE_EXPECT_EQ(nbi_old, (long)me + 1, "%s: fetch_inc_nbi's old value on team PE %d", name, next);
    shmem_team_sync(t);

    const long w = wprev;
    for (int i = 0; i < 4; i++)
        PE_EXPECT_EQ(data[i], w * 10 + 1 + i, "%s: data[%d] from team PE %d (world %d)", name, i,
                     prev, wprev);
    for (int i = 0; i < 4; i++)
        PE_EXPECT_EQ(strided[2 * i], w * 10 + 1 + i, "%s: iput element %d", name, i);
    PE_EXPECT_EQ(amo_word, w + 1, "%s: atomic_add from team PE %d", name, prev);
    PE_EXPECT_EQ(amo_fetch_word, w + 2, "%s: fetch_add + fetch_inc_nbi from team PE %d", name,
                 prev);
    PE_EXPECT_EQ(sig, (uint64_t)w + 1, "%s: signal from team PE %d", name, prev);
    shmem_team_sync(t);

    // Reads: get, g and iget name the next PE by its team number too.
    const long wnext = shmem_team_translate_pe(t, next, SHMEM_TEAM_WORLD);
    memset(got_back, 0, sizeof(got_back));
    shmem_ctx_long_get(c, got_back, data, 2, next);
    PE_EXPECT_EQ(got_back[0], (long)me * 10 + 1, "%s: get from team PE %d (world %ld)", name,
                 next, wnext);
    PE_EXPECT_EQ(shmem_ctx_long_g(c, &data[2], next), (long)me * 10 + 3, "%s: g from team PE %d",
                 name, next);
    long back[2] = {0, 0};
    shmem_ctx_long_iget(c, back, strided, 1, 2, 2, next);
    PE_EXPECT_EQ(back[1], (long)me * 10 + 2, "%s: iget from team PE %d", name, next);
    shmem_ctx_destroy(c);
    shmem_team_sync(t);
}

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("team_ctx");
    const int me = shmem_my_pe(), n = shmem_n_pes();

    if (argc > 1 && strcmp(argv[1], "badpe") == 0) {
        // PE n-1 exists in the world but not in the team of PEs 0..n-2: a
        // put to team PE n-1 on that team's context must end the job.
        shmem_team_t head;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n - 1, NULL, 0, &head);
        if (me == 0) {
            shmem_ctx_t c;
            shmem_team_create_ctx(head, 0, &c);
            pe_step("put to team PE %d on a team of %d", n - 1, n - 1);
            shmem_ctx_long_p(c, &box[0], 1, n - 1);
            pe_fail("the put to team PE %d of %d returned", n - 1, n - 1);
        }
        shmem_barrier_all();
        shmem_finalize();
        return pe_end();
    }

    pe_step("odd PEs make contexts from SHMEM_TEAM_WORLD, even PEs wait in a barrier");
    if (me % 2 == 1) {
        for (int i = 0; i < 3; i++) {
            shmem_ctx_t c;
            PE_EXPECT_EQ(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &c), 0,
                         "team_create_ctx(WORLD) %d on an odd PE alone", i);
            if (c != SHMEM_CTX_INVALID) {
                shmem_ctx_long_atomic_inc(c, &counter, 0);
                shmem_ctx_quiet(c);
                shmem_ctx_destroy(c);
            }
        }
    }
    shmem_barrier_all();
    if (me == 0)
        PE_EXPECT_EQ(counter, (long)(n / 2) * 3, "increments through the odd PEs' contexts");
    shmem_barrier_all();

    pe_step("PE 0 from SHMEM_TEAM_SHARED, the others from SHMEM_TEAM_WORLD");
    shmem_team_t from = me == 0 ? SHMEM_TEAM_SHARED : SHMEM_TEAM_WORLD;
    shmem_ctx_t ctx;
    PE_EXPECT_EQ(shmem_team_create_ctx(from, 0, &ctx), 0, "team_create_ctx(%s)",
                 me == 0 ? "SHARED" : "WORLD");
    shmem_team_t got = SHMEM_TEAM_INVALID;
    PE_EXPECT_EQ(shmem_ctx_get_team(ctx, &got), 0, "ctx_get_team");
    PE_EXPECT(got == from, "the context belongs to the team it was made from");
    // WORLD PE 0 as this context numbers it (SHARED holds it here: one host).
    int zero = shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, from);
    PE_EXPECT_EQ(zero, 0, "world PE 0 in the context's team");
    if (me < 64) // a slot per PE, so that no two PEs put to one word
        shmem_ctx_long_p(ctx, &box[me], me + 100, zero);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    if (me == 0)
        for (int p = 0; p < n && p < 64; p++)
            PE_EXPECT_EQ(box[p], (long)p + 100, "put from PE %d through its team context", p);

    pe_step("team-relative numbering on the team of the odd PEs");
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    if (n >= 2)
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd);
    if (odd != SHMEM_TEAM_INVALID)
        team_traffic(odd, "odd");
    shmem_barrier_all();
    if (odd != SHMEM_TEAM_INVALID)
        shmem_team_destroy(odd);

    pe_step("team-relative numbering on the reversed team (stride -1)");
    shmem_team_t rev = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev);
    PE_EXPECT(rev != SHMEM_TEAM_INVALID, "reversed team made");
    if (rev != SHMEM_TEAM_INVALID) {
        team_traffic(rev, "reversed");
        shmem_team_destroy(rev);
    }

    shmem_finalize();
    return pe_end();
}
