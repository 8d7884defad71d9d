// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_init_thread at each level (argv[1]: single, funneled, serialized or
// multiple): it returns 0, provides the level asked for (the library
// supports all four), and shmem_query_thread -- from the main thread and
// from another thread -- says the same. Then some work within the rules of
// that level, checked:
//   single      the main thread alone: put, quiet, get, fetch_inc;
//   funneled    THR_N threads compute while only the main thread calls the
//               library (the same work);
//   serialized  THR_N threads call the library in turn, one at a time
//               (a pthread mutex), on the default context and on a
//               SHMEM_CTX_SERIALIZED one: put, quiet, get, fetch_inc;
//   multiple    THR_N threads at once, the same work (the second context
//               made with options 0: shared by the threads).
// Every PE's ticket counter must end at the number of fetch_incs made on it,
// and every ticket must have been handed out once.
#include "thread_check.h"

#define ROUNDS 20
#define SEEN_MAX (THR_MAX_PES * THR_N * ROUNDS)

static long *dst_g, *ticket_g, *seen_g;
static shmem_ctx_t extra_ctx_g = SHMEM_CTX_INVALID;
static int level_g;
static pthread_mutex_t turn_g = PTHREAD_MUTEX_INITIALIZER;

// One round of thread t: a value to every PE and back, a ticket from each.
static void work(int t, long r)
{
    const int me = pe_me_g, n = pe_npes_g;
    shmem_ctx_t ctx = (r % 2 && extra_ctx_g != SHMEM_CTX_INVALID) ? extra_ctx_g : SHMEM_CTX_DEFAULT;
    long *slot = &dst_g[me * THR_N + t];
    for (int j = 0; j < n; j++) {
        int k = (j + t + me) % n;
        long v = ((long)me << 40) | ((long)t << 32) | r;
        shmem_ctx_long_p(ctx, slot, v, k);
        shmem_ctx_quiet(ctx);
        THR_EXPECT_EQ(shmem_ctx_long_g(ctx, slot, k), v, "thread %d round %ld: value on PE %d", t,
                      r, k);
        long tk = shmem_ctx_long_atomic_fetch_inc(ctx, ticket_g, k);
        if (tk < 0 || tk >= SEEN_MAX)
            THR_EXPECT(0, "thread %d: ticket %ld from PE %d out of range", t, tk, k);
        else
            shmem_ctx_long_atomic_inc(ctx, &seen_g[tk], k);
    }
    shmem_ctx_quiet(ctx);
}

static void *query_thread(void *arg)
{
    int *q = arg;
    shmem_query_thread(q);
    return NULL;
}

static void *serialized_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    thr_go();
    for (long r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&turn_g);
        work(t, r);
        pthread_mutex_unlock(&turn_g);
        sched_yield(); // let the others have a turn
    }
    return NULL;
}

static void *multiple_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    thr_go();
    for (long r = 0; r < ROUNDS; r++)
        work(t, r);
    return NULL;
}

static int compute_stop_g;

static void *compute_worker(void *arg)
{
    volatile double x = (double)(intptr_t)arg;
    thr_go();
    while (!__atomic_load_n(&compute_stop_g, __ATOMIC_RELAXED))
        x = x * 1.0000001 + 1.0; // no library calls: FUNNELED
    return NULL;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int level;
    } levels[] = {{"single", SHMEM_THREAD_SINGLE},
                  {"funneled", SHMEM_THREAD_FUNNELED},
                  {"serialized", SHMEM_THREAD_SERIALIZED},
                  {"multiple", SHMEM_THREAD_MULTIPLE}};
    int li = -1;
    for (int i = 0; i < 4 && argc > 1; i++)
        if (strcmp(argv[1], levels[i].name) == 0)
            li = i;
    if (li < 0) {
        fprintf(stderr, "usage: %s single|funneled|serialized|multiple\n", argv[0]);
        return 2;
    }
    level_g = levels[li].level;
    int provided = -1;
    /* An unknown level is refused with a nonzero return, not a dead job. */
    int bad_rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE + 7, &provided);
    int bad_init = -1;
    shmem_query_initialized(&bad_init);
    int rc = shmem_init_thread(level_g, &provided);
    pe_begin("thread_levels");
    PE_EXPECT(bad_rc != 0, "shmem_init_thread(unknown level) returned 0");
    PE_EXPECT_EQ(bad_init, 0, "shmem_query_initialized after a refused shmem_init_thread");
    PE_EXPECT_EQ(rc, 0, "shmem_init_thread(%s) return value", levels[li].name);
    PE_EXPECT_EQ(provided, level_g, "shmem_init_thread(%s): provided", levels[li].name);
    int queried = -1;
    shmem_query_thread(&queried);
    PE_EXPECT_EQ(queried, level_g, "shmem_query_thread after init_thread(%s)", levels[li].name);
    if (level_g != SHMEM_THREAD_SINGLE) {
        // Any level but SINGLE allows other threads; FUNNELED asks that only
        // the main thread call the library, so ask from one only where
        // others may call in.
        if (level_g != SHMEM_THREAD_FUNNELED) {
            pthread_t tid;
            int q = -1;
            pthread_create(&tid, NULL, query_thread, &q);
            pthread_join(tid, NULL);
            PE_EXPECT_EQ(q, level_g, "shmem_query_thread from another thread");
        }
    }
    if (pe_npes_g > THR_MAX_PES)
        shmem_global_exit(2);

    dst_g = shmem_calloc((size_t)pe_npes_g * THR_N, sizeof(long));
    ticket_g = shmem_calloc(1, sizeof(long));
    seen_g = shmem_calloc(SEEN_MAX, sizeof(long));
    if (level_g >= SHMEM_THREAD_SERIALIZED) {
        long opts = level_g == SHMEM_THREAD_MULTIPLE ? 0 : SHMEM_CTX_SERIALIZED;
        PE_EXPECT_EQ(shmem_ctx_create(opts, &extra_ctx_g), 0, "shmem_ctx_create(%ld)", opts);
    }
    shmem_barrier_all();

    long per_pe; // fetch_incs each PE receives
    pe_step("work at level %s", levels[li].name);
    switch (level_g) {
    case SHMEM_THREAD_SINGLE:
        for (long r = 0; r < ROUNDS; r++)
            work(0, r);
        per_pe = (long)pe_npes_g * ROUNDS;
        break;
    case SHMEM_THREAD_FUNNELED: {
        pthread_t tid[THR_N];
        pthread_barrier_init(&thr_go_g, NULL, THR_N + 1);
        for (intptr_t t = 0; t < THR_N; t++)
            pthread_create(&tid[t], NULL, compute_worker, (void *)t);
        pthread_barrier_wait(&thr_go_g);
        for (long r = 0; r < ROUNDS; r++)
            work(0, r);
        __atomic_store_n(&compute_stop_g, 1, __ATOMIC_RELAXED);
        for (int t = 0; t < THR_N; t++)
            pthread_join(tid[t], NULL);
        pthread_barrier_destroy(&thr_go_g);
        per_pe = (long)pe_npes_g * ROUNDS;
        break;
    }
    case SHMEM_THREAD_SERIALIZED:
        thr_run(serialized_worker);
        per_pe = (long)pe_npes_g * THR_N * ROUNDS;
        break;
    default:
        thr_run(multiple_worker);
        per_pe = (long)pe_npes_g * THR_N * ROUNDS;
        break;
    }

    pe_step("checking");
    shmem_barrier_all();
    PE_EXPECT_EQ(*ticket_g, per_pe, "ticket counter");
    long dup = 0, missing = 0;
    for (long i = 0; i < SEEN_MAX; i++) {
        long want = i < per_pe;
        dup += seen_g[i] > want;
        missing += seen_g[i] < want;
    }
    PE_EXPECT(dup == 0 && missing == 0, "tickets: %ld handed out twice or more, %ld never (of %ld)",
              dup, missing, per_pe);
    shmem_barrier_all();
    if (extra_ctx_g != SHMEM_CTX_INVALID)
        shmem_ctx_destroy(extra_ctx_g);
    shmem_free(seen_g);
    shmem_free(ticket_g);
    shmem_free(dst_g);
    shmem_finalize();
    return pe_end();
}
