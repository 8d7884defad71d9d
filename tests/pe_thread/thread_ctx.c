// SPDX-License-Identifier: BSD-3-Clause
//
// Communication contexts under SHMEM_THREAD_MULTIPLE. THR_N threads per PE:
//   - each thread creates its own contexts, concurrently with the others
//     (SHMEM_CTX_PRIVATE or SHMEM_CTX_SERIALIZED), several times over
//     (create/destroy churn), and on each one: putmem or putmem_nbi of a
//     pattern to its region on every PE, ctx_quiet, getmem back and compare;
//     fetch_inc tickets on every PE, marked on the target (each handed out
//     once);
//   - one shared context (options 0), created by the main thread, that all
//     threads use at once, the same way;
//   - one SHMEM_CTX_SERIALIZED context per thread made by the main thread
//     with shmem_team_create_ctx on SHMEM_TEAM_WORLD and used by that
//     thread only.
// At the end each PE checks its ticket counter and marks.
//
// argv[1]: rounds per context (default 12); argv[2]: contexts per thread,
// created and destroyed one after the other (default 3).
#include "thread_check.h"

#define SLOT 4096
#define SEEN_MAX 8192

static char *dst_g;             // heap: [writer PE][thread][2 (own, shared)] slots
static long *ticket_g, *seen_g; // fetch_inc tickets on every kind of context
static shmem_ctx_t shared_ctx_g, team_ctx_g[THR_N];
static long rounds_g, nctx_g, ntickets_g;

// One round on ctx: a round trip of len bytes to every PE, a ticket from each.
static void ctx_round(shmem_ctx_t ctx, int t, long r, int which, const char *kind, char *src,
                      char *back)
{
    const int me = pe_me_g, n = pe_npes_g;
    size_t len = (size_t[]){8, 600, SLOT}[r % 3];
    char *dest = dst_g + ((size_t)(me * THR_N + t) * 2 + (size_t)which) * SLOT;
    uint32_t tag = (uint32_t)(r * 8 + which * 4 + t);
    pe_fill(src, len, me, tag, 0);
    for (int j = 0; j < n; j++) {
        int k = (j + t + me) % n;
        memset(back, 0xee, len);
        if (r % 2)
            shmem_ctx_putmem_nbi(ctx, dest, src, len, k);
        else
            shmem_ctx_putmem(ctx, dest, src, len, k);
        shmem_ctx_quiet(ctx);
        shmem_ctx_getmem(ctx, back, dest, len, k);
        THR_EXPECT(memcmp(back, src, len) == 0,
                   "thread %d, %s context, round %ld: %zu B to PE %d read back wrong", t, kind, r,
                   len, k);
        long tk = shmem_ctx_long_atomic_fetch_inc(ctx, ticket_g, k);
        if (tk < 0 || tk >= ntickets_g)
            THR_EXPECT(0, "thread %d, %s context: ticket %ld from PE %d not in [0, %ld)", t,
                       kind, tk, k, ntickets_g);
        else
            shmem_ctx_long_atomic_inc(ctx, &seen_g[tk], k);
    }
    shmem_ctx_quiet(ctx); // the marks are applied
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char *src = malloc(SLOT), *back = malloc(SLOT);
    if (src == NULL || back == NULL)
        abort();
    static const struct {
        long options;
        const char *name;
    } kinds[] = {{SHMEM_CTX_PRIVATE, "private"}, {SHMEM_CTX_SERIALIZED, "serialized"}};
    thr_go();
    for (long c = 0; c < nctx_g; c++) {
        int kind = (int)((c + t) % 2);
        shmem_ctx_t ctx = SHMEM_CTX_INVALID;
        int rc = shmem_ctx_create(kinds[kind].options, &ctx);
        THR_EXPECT(rc == 0 && ctx != SHMEM_CTX_INVALID,
                   "thread %d: creating %s context %ld returned %d", t, kinds[kind].name, c, rc);
        if (rc != 0)
            continue;
        for (long r = 0; r < rounds_g; r++) {
            ctx_round(ctx, t, r, 0, kinds[kind].name, src, back);
            ctx_round(shared_ctx_g, t, r, 1, "shared", src, back);
        }
        shmem_ctx_destroy(ctx);
    }
    free(back);
    free(src);
    return NULL;
}

static void *team_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char *src = malloc(SLOT), *back = malloc(SLOT);
    if (src == NULL || back == NULL)
        abort();
    thr_go();
    for (long r = 0; r < rounds_g; r++)
        ctx_round(team_ctx_g[t], t, r, 0, "team world", src, back);
    free(back);
    free(src);
    return NULL;
}

int main(int argc, char **argv)
{
    thr_init("thread_ctx");
    rounds_g = argc > 1 ? atol(argv[1]) : 12;
    nctx_g = argc > 2 ? atol(argv[2]) : 3;
    const int n = pe_npes_g;
    // Each thread of each PE takes one ticket from every PE per round, on
    // its own contexts, the shared one and its team context.
    ntickets_g = (long)n * THR_N * rounds_g * (nctx_g * 2 + 1);
    if (ntickets_g > SEEN_MAX) {
        fprintf(stderr, "PE %d: too many rounds for the ticket table\n", pe_me_g);
        shmem_global_exit(2);
    }
    dst_g = shmem_calloc((size_t)n * THR_N * 2, SLOT);
    ticket_g = shmem_calloc(1, sizeof(long));
    seen_g = shmem_calloc((size_t)ntickets_g, sizeof(long));
    PE_EXPECT_EQ(shmem_ctx_create(0, &shared_ctx_g), 0, "creating the shared context");
    shmem_barrier_all();

    pe_step("%d threads x %ld contexts x %ld rounds", THR_N, nctx_g, rounds_g);
    thr_run(worker);

    // Made after the threads' contexts are destroyed: they take their
    // endpoints (a new endpoint costs a second on a loaded tcp;ofi_rxm).
    pe_step("team contexts");
    for (int t = 0; t < THR_N; t++) {
        PE_EXPECT_EQ(shmem_team_create_ctx(SHMEM_TEAM_WORLD, SHMEM_CTX_SERIALIZED, &team_ctx_g[t]),
                     0, "shmem_team_create_ctx %d", t);
        shmem_team_t team = SHMEM_TEAM_INVALID;
        PE_EXPECT(shmem_ctx_get_team(team_ctx_g[t], &team) == 0 && team == SHMEM_TEAM_WORLD,
                  "shmem_ctx_get_team of team context %d", t);
    }
    pe_step("%d threads x %ld rounds on their team contexts", THR_N, rounds_g);
    thr_run(team_worker);
    pe_step("checking");
    shmem_ctx_quiet(shared_ctx_g);
    shmem_barrier_all();

    PE_EXPECT_EQ(*ticket_g, ntickets_g, "ticket counter (fetch_inc on every context)");
    long dup = 0, missing = 0;
    for (long i = 0; i < ntickets_g; i++) {
        dup += seen_g[i] > 1;
        missing += seen_g[i] == 0;
    }
    PE_EXPECT(dup == 0 && missing == 0,
              "tickets: %ld handed out twice or more, %ld never (of %ld)", dup, missing,
              ntickets_g);

    shmem_barrier_all();
    for (int t = 0; t < THR_N; t++)
        shmem_ctx_destroy(team_ctx_g[t]);
    shmem_ctx_destroy(shared_ctx_g);
    shmem_free(seen_g);
    shmem_free(ticket_g);
    shmem_free(dst_g);
    shmem_finalize();
    return pe_end();
}
