// SPDX-License-Identifier: BSD-3-Clause
//
// Contexts: shmem_ctx_create with each option, ctx_get_team (default,
// invalid, world and team contexts), team_create_ctx, sessions, and, under
// SHMEM_THREAD_MULTIPLE:
//   - threads each with a PRIVATE context putting to the right neighbour;
//   - threads sharing one context (no options) and one quiet;
//   - threads running collectives at the same time on different teams.
#include <pthread.h>

#include "coll_test.h"

#define NTHREADS 3
#define NPUT 300

static long box[NTHREADS][NPUT];
static long shared_box[NTHREADS][NPUT];
static long red_src[NTHREADS][4], red_dst[NTHREADS][64][4];
static shmem_ctx_t shared_ctx;
static shmem_team_t teams[NTHREADS];
static int errors_in_threads;

static void *private_puts(void *arg)
{
    int k = (int)(intptr_t)arg, me = shmem_my_pe();
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        __atomic_add_fetch(&errors_in_threads, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    for (int i = 0; i < NPUT; i++)
        shmem_ctx_long_p(ctx, &box[k][i], (long)me * 100000 + k * 1000 + i, pe_right());
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

static void *shared_puts(void *arg)
{
    int k = (int)(intptr_t)arg, me = shmem_my_pe();
    static long srcs[NTHREADS][NPUT]; // put_nbi sources live until the quiet
    for (int i = 0; i < NPUT; i++) {
        srcs[k][i] = (long)me * 100000 + k * 1000 + i;
        shmem_ctx_long_put_nbi(shared_ctx, &shared_box[k][i], &srcs[k][i], 1, pe_right());
    }
    return NULL;
}

static void *team_collectives(void *arg)
{
    int k = (int)(intptr_t)arg, me = shmem_my_pe(), n = shmem_n_pes();
    for (int it = 0; it < 64; it++) {
        red_src[k][0] = me + k + it;
        shmem_long_sum_reduce(teams[k], red_dst[k][it], red_src[k], 1);
        if (red_dst[k][it][0] != (long)n * (n - 1) / 2 + (long)n * (k + it))
            __atomic_add_fetch(&errors_in_threads, 1, __ATOMIC_RELAXED);
        shmem_team_sync(teams[k]);
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *))
{
    pthread_t th[NTHREADS];
    for (int k = 0; k < NTHREADS; k++)
        pthread_create(&th[k], NULL, fn, (void *)(intptr_t)k);
    for (int k = 0; k < NTHREADS; k++)
        pthread_join(th[k], NULL);
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    pe_begin("coll_ctx");
    pe_watchdog(110);
    int me = shmem_my_pe(), n = shmem_n_pes();
    PE_EXPECT_EQ(provided, SHMEM_THREAD_MULTIPLE, "thread level provided");

    pe_step("context options");
    long opts[] = {0, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE,
                   SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE};
    static long target[8];
    for (int i = 0; i < 5; i++) {
        shmem_ctx_t ctx = SHMEM_CTX_INVALID;
        PE_EXPECT_EQ(shmem_ctx_create(opts[i], &ctx), 0, "ctx_create(options %ld)", opts[i]);
        if (ctx == SHMEM_CTX_INVALID)
            continue;
        shmem_team_t t = SHMEM_TEAM_INVALID;
        PE_EXPECT_EQ(shmem_ctx_get_team(ctx, &t), 0, "ctx_get_team");
        PE_EXPECT(t == SHMEM_TEAM_WORLD, "ctx_create's context belongs to SHMEM_TEAM_WORLD");
        shmem_ctx_session_config_t cfg = {.total_ops = 10};
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
        shmem_ctx_long_p(ctx, &target[i], me + 10 * i, pe_right());
        shmem_ctx_session_stop(ctx);
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    for (int i = 0; i < 5; i++)
        PE_EXPECT_EQ(target[i], (long)pe_left() + 10 * i, "put through context %d", i);
    shmem_team_t t = SHMEM_TEAM_WORLD;
    PE_EXPECT_EQ(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t), 0, "ctx_get_team(DEFAULT)");
    PE_EXPECT(t == SHMEM_TEAM_WORLD, "SHMEM_CTX_DEFAULT belongs to SHMEM_TEAM_WORLD");
    PE_EXPECT(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0, "ctx_get_team(INVALID) fails");
    PE_EXPECT(t == SHMEM_TEAM_INVALID, "ctx_get_team(INVALID) gives SHMEM_TEAM_INVALID");
    shmem_ctx_destroy(SHMEM_CTX_INVALID); // no-op
    shmem_ctx_session_start(SHMEM_CTX_INVALID, 0, NULL, 0);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);

    pe_step("team contexts");
    shmem_team_t odd;
    shmem_team_config_t cfg = {.num_contexts = 2};
    shmem_team_split_strided(SHMEM_TEAM_WORLD, n > 1 ? 1 : 0, 2, n > 1 ? n / 2 : 1, &cfg,
                             SHMEM_TEAM_NUM_CONTEXTS, &odd);
    if (odd != SHMEM_TEAM_INVALID) {
        shmem_ctx_t c1, c2;
        PE_EXPECT_EQ(shmem_team_create_ctx(odd, 0, &c1), 0, "team_create_ctx 1");
        PE_EXPECT_EQ(shmem_team_create_ctx(odd, SHMEM_CTX_PRIVATE, &c2), 0, "team_create_ctx 2");
        shmem_team_t got;
        PE_EXPECT_EQ(shmem_ctx_get_team(c1, &got), 0, "ctx_get_team(team ctx)");
        PE_EXPECT(got == odd, "a team context belongs to its team");
        shmem_ctx_long_p(c2, &target[6], me, 0); // team-relative: the team's PE 0
        shmem_ctx_quiet(c2);
        shmem_ctx_destroy(c2);
        shmem_team_sync(odd);
        if (shmem_team_my_pe(odd) == 0) {
            long last = shmem_team_translate_pe(odd, shmem_team_n_pes(odd) - 1, SHMEM_TEAM_WORLD);
            PE_EXPECT(target[6] >= 0 && target[6] <= last, "team context put landed");
        }
        // c1 is left for shmem_team_destroy to take with the team.
        shmem_team_destroy(odd);
    }
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    PE_EXPECT(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0,
              "team_create_ctx(INVALID) fails");
    PE_EXPECT(bad == SHMEM_CTX_INVALID, "team_create_ctx(INVALID) gives SHMEM_CTX_INVALID");
    shmem_barrier_all();

    pe_step("threads with private contexts");
    run_threads(private_puts);
    shmem_barrier_all();
    for (int k = 0; k < NTHREADS; k++)
        for (int i = 0; i < NPUT; i++)
            PE_EXPECT_EQ(box[k][i], (long)pe_left() * 100000 + k * 1000 + i,
                         "private context of thread %d, put %d", k, i);

    pe_step("threads sharing a context");
    PE_EXPECT_EQ(shmem_ctx_create(0, &shared_ctx), 0, "shared ctx_create");
    run_threads(shared_puts);
    shmem_ctx_quiet(shared_ctx);
    shmem_barrier_all();
    for (int k = 0; k < NTHREADS; k++)
        for (int i = 0; i < NPUT; i++)
            PE_EXPECT_EQ(shared_box[k][i], (long)pe_left() * 100000 + k * 1000 + i,
                         "shared context, thread %d, put %d", k, i);
    shmem_ctx_destroy(shared_ctx);

    pe_step("threads running collectives on different teams");
    for (int k = 0; k < NTHREADS; k++)
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &teams[k]) != 0)
            pe_fail("split for thread %d failed", k);
    run_threads(team_collectives);
    PE_EXPECT_EQ(errors_in_threads, 0, "wrong results seen in threads");
    for (int k = 0; k < NTHREADS; k++)
        shmem_team_destroy(teams[k]);

    // A context left open is closed by shmem_finalize.
    shmem_ctx_t leftover;
    PE_EXPECT_EQ(shmem_ctx_create(0, &leftover), 0, "ctx_create (left open)");
    shmem_finalize();
    return pe_end();
}
