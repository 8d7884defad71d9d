/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_coll_lat: latency of collectives on SHMEM_TEAM_WORLD, OSU style: each
 * call is timed alone and followed by an untimed shmem_barrier_all; the
 * per-PE average is averaged over all PEs (OSU's "Avg Latency").
 *
 *   barrier    shmem_barrier_all (no size; reported as size 0)
 *   bcast      shmem_broadcastmem, root 0, size bytes
 *   reduce     shmem_long_sum_reduce, size/8 longs (sizes below 8 skipped)
 *   fcollect   shmem_fcollectmem, size bytes from each PE
 *   collect    shmem_collectmem, size bytes from each PE (sizes exchanged too)
 *   alltoall   shmem_alltoallmem, size bytes to each PE
 *
 * -c LIST picks some of them (comma-separated). Results of the last call of
 * each size are checked on every PE.
 *
 * Portable: against an OpenSHMEM older than 1.5 (no teams; Open MPI 4.1's
 * OSHMEM is 1.4) the same collectives are called in their active-set form
 * (shmem_broadcast64, shmem_long_sum_to_all, shmem_fcollect64, ...) on all
 * PEs, with sizes that are not a multiple of 8 bytes skipped; the root's
 * dest of such a broadcast is not written (1.4 semantics), so it is not
 * checked there.
 */
#include "osu_common.h"

#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105
#define OSU_TEAMS 1
#else
#define OSU_TEAMS 0
/* Active-set work arrays, one pSync per kind of collective so that one kind
 * never reuses another's before the barrier that follows every call. */
static long osu_psync_bcast[SHMEM_BCAST_SYNC_SIZE];
static long osu_psync_reduce[SHMEM_REDUCE_SYNC_SIZE];
static long osu_psync_collect[SHMEM_COLLECT_SYNC_SIZE];
static long osu_psync_alltoall[SHMEM_ALLTOALL_SYNC_SIZE];
static long osu_pwrk_long[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double osu_pwrk_double[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long *osu_pwrk_big; /* symmetric, for reductions above the minimum */

static void osu_psync_init(size_t max_size)
{
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        osu_psync_bcast[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        osu_psync_reduce[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        osu_psync_collect[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_ALLTOALL_SYNC_SIZE; i++)
        osu_psync_alltoall[i] = SHMEM_SYNC_VALUE;
    /* pWrk: max(nreduce/2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE) elements. */
    osu_pwrk_big = osu_malloc((max_size / sizeof(long) / 2 + 1) * sizeof(long) +
                              SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(long));
    shmem_barrier_all();
}
#endif

#define COLLS(X)                                                             \
    X(BARRIER, "barrier")                                                    \
    X(BCAST, "bcast")                                                        \
    X(REDUCE, "reduce")                                                      \
    X(FCOLLECT, "fcollect")                                                  \
    X(COLLECT, "collect")                                                    \
    X(ALLTOALL, "alltoall")

#define COLL_ENUM(id, name) COLL_##id,
typedef enum { COLLS(COLL_ENUM) COLL_N } coll_t;
#undef COLL_ENUM

static const char *const coll_names[] = {
#define COLL_NAME(id, name) name,
    COLLS(COLL_NAME)
#undef COLL_NAME
};

typedef struct coll_ctx {
    int me, npes;
    char *src, *dst; /* npes * max_size bytes each */
    double *t_local, *t_sum; /* symmetric, for the cross-PE average */
} coll_ctx_t;

static int pick_opt(const char *opt, const char *val, void *ctx)
{
    unsigned *mask = ctx;
    if (strcmp(opt, "-c") || !val)
        return -1;
    *mask = 0;
    for (int c = 0; c < COLL_N; c++) {
        const char *p = val;
        size_t n = strlen(coll_names[c]);
        while ((p = strstr(p, coll_names[c]))) {
            if ((p == val || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
                *mask |= 1u << c;
            p += n;
        }
    }
    if (!*mask) {
        fprintf(stderr, "-c %s: no known collective in the list\n", val);
        return -1;
    }
    return 2;
}

static void coll_prepare(coll_ctx_t *c, coll_t k, size_t size, unsigned seed)
{
    switch (k) {
    case COLL_BCAST:
        if (c->me == 0)
            bench_fill(c->src, size, seed);
        memset(c->dst, 0, size);
        break;
    case COLL_REDUCE: {
        long *s = (long *)c->src;
        for (size_t j = 0; j < size / sizeof(long); j++)
            s[j] = (long)c->me + (long)j;
        memset(c->dst, 0, size);
        break;
    }
    case COLL_FCOLLECT:
    case COLL_COLLECT:
        bench_fill(c->src, size, seed + (unsigned)c->me);
        memset(c->dst, 0, size * (size_t)c->npes);
        break;
    case COLL_ALLTOALL:
        for (int p = 0; p < c->npes; p++)
            bench_fill(c->src + (size_t)p * size, size,
                       seed + (unsigned)(c->me * c->npes + p));
        memset(c->dst, 0, size * (size_t)c->npes);
        break;
    default:
        break;
    }
}

#if !OSU_TEAMS
static int coll_call_legacy(coll_ctx_t *c, coll_t k, size_t size)
{
    size_t n64 = size / 8;
    int np = c->npes;
    switch (k) {
    case COLL_BARRIER:
        shmem_barrier_all();
        return 0;
    case COLL_BCAST:
        shmem_broadcast64(c->dst, c->src, n64, 0, 0, 0, np, osu_psync_bcast);
        return 0;
    case COLL_REDUCE: {
        size_t n = size / sizeof(long);
        long *wrk = n / 2 + 1 > SHMEM_REDUCE_MIN_WRKDATA_SIZE ? osu_pwrk_big : osu_pwrk_long;
        shmem_long_sum_to_all((long *)c->dst, (long *)c->src, (int)n, 0, 0, np, wrk,
                              osu_psync_reduce);
        return 0;
    }
    case COLL_FCOLLECT:
        shmem_fcollect64(c->dst, c->src, n64, 0, 0, np, osu_psync_collect);
        return 0;
    case COLL_COLLECT:
        shmem_collect64(c->dst, c->src, n64, 0, 0, np, osu_psync_collect);
        return 0;
    case COLL_ALLTOALL:
        shmem_alltoall64(c->dst, c->src, n64, 0, 0, np, osu_psync_alltoall);
        return 0;
    default:
        return -1;
    }
}
#endif

static int coll_call(coll_ctx_t *c, coll_t k, size_t size)
{
#if !OSU_TEAMS
    return coll_call_legacy(c, k, size);
#endif
    switch (k) {
    case COLL_BARRIER:
        shmem_barrier_all();
        return 0;
#if OSU_TEAMS
    case COLL_BCAST:
        return shmem_broadcastmem(SHMEM_TEAM_WORLD, c->dst, c->src, size, 0);
    case COLL_REDUCE:
        return shmem_long_sum_reduce(SHMEM_TEAM_WORLD, (long *)c->dst,
                                     (const long *)c->src,
                                     size / sizeof(long));
    case COLL_FCOLLECT:
        return shmem_fcollectmem(SHMEM_TEAM_WORLD, c->dst, c->src, size);
    case COLL_COLLECT:
        return shmem_collectmem(SHMEM_TEAM_WORLD, c->dst, c->src, size);
    case COLL_ALLTOALL:
        return shmem_alltoallmem(SHMEM_TEAM_WORLD, c->dst, c->src, size);
#endif
    default:
        return -1;
    }
}

static void coll_verify(coll_ctx_t *c, coll_t k, size_t size, unsigned seed)
{
    switch (k) {
    case COLL_BCAST:
        if (OSU_TEAMS || c->me != 0) /* 1.4: the root's dest is not written */
            osu_check(c->dst, size, seed, "broadcastmem", size);
        break;
    case COLL_REDUCE: {
        const long *d = (const long *)c->dst;
        long base = (long)c->npes * (c->npes - 1) / 2;
        for (size_t j = 0; j < size / sizeof(long); j++)
            if (d[j] != base + (long)c->npes * (long)j)
                osu_fail("long_sum_reduce size %zu: dest[%zu] = %ld, "
                         "expected %ld", size, j, d[j],
                         base + (long)c->npes * (long)j);
        break;
    }
    case COLL_FCOLLECT:
    case COLL_COLLECT:
        for (int p = 0; p < c->npes; p++)
            osu_check(c->dst + (size_t)p * size, size, seed + (unsigned)p,
                      k == COLL_FCOLLECT ? "fcollectmem" : "collectmem", size);
        break;
    case COLL_ALLTOALL:
        for (int p = 0; p < c->npes; p++)
            osu_check(c->dst + (size_t)p * size, size,
                      seed + (unsigned)(p * c->npes + c->me), "alltoallmem",
                      size);
        break;
    default:
        break;
    }
}

/* Average over PEs of each PE's mean time per call, in us. */
static double coll_run(const bench_args_t *a, coll_ctx_t *c, coll_t k,
                       size_t size, int rep)
{
    long iters = bench_iters(a, size), warm = bench_warmup(a, size);
    unsigned seed = osu_seed(size, rep);
    double total = 0.0;

    coll_prepare(c, k, size, seed);
    shmem_barrier_all();
    for (long i = 0; i < warm + iters; i++) {
        double t0 = bench_now_us();
        if (coll_call(c, k, size))
            osu_fail("%s size %zu returned nonzero", coll_names[k], size);
        double dt = bench_now_us() - t0;
        if (i >= warm)
            total += dt;
        shmem_barrier_all();
    }
    coll_verify(c, k, size, seed);

    *c->t_local = total / (double)iters;
    shmem_barrier_all();
#if OSU_TEAMS
    if (shmem_double_sum_reduce(SHMEM_TEAM_WORLD, c->t_sum, c->t_local, 1))
        osu_fail("double_sum_reduce returned nonzero");
#else
    shmem_double_sum_to_all(c->t_sum, c->t_local, 1, 0, 0, c->npes, osu_pwrk_double,
                            osu_psync_reduce);
#endif
    return *c->t_sum / (double)c->npes;
}

int main(int argc, char **argv)
{
    static const char extra_help[] =
        "  -c LIST       collectives to run, comma-separated, from\n"
        "                barrier,bcast,reduce,fcollect,collect,alltoall\n"
        "                (default all)\n";
    unsigned mask = (1u << COLL_N) - 1;
    bench_args_t a;
    bench_args_init(&a, 8, 1u << 20);
    int rc = osu_start(&a, argc, argv, 1, pick_opt, &mask, extra_help);
    if (rc)
        return rc;

    coll_ctx_t c = {.me = shmem_my_pe(), .npes = shmem_n_pes()};
    c.src = osu_malloc(a.max_size * (size_t)c.npes);
    c.dst = osu_malloc(a.max_size * (size_t)c.npes);
    c.t_local = osu_malloc(sizeof(double));
    c.t_sum = osu_malloc(sizeof(double));
#if !OSU_TEAMS
    osu_psync_init(a.max_size);
#endif

    for (int k = 0; k < COLL_N; k++) {
        if (!(mask & (1u << k)))
            continue;
        char title[96];
        snprintf(title, sizeof(title), "collective latency: %s, %d PEs",
                 coll_names[k], c.npes);
        if (c.me == 0)
            bench_print_header(title, "Size", "Avg Latency (us)");
        size_t lo = a.min_size, hi = a.max_size;
        if (k == COLL_BARRIER)
            lo = hi = 0;
        for (size_t size = lo; size <= hi; size = size ? size * 2 : 1) {
            if (k == COLL_REDUCE && size < sizeof(long))
                continue;
            if (!OSU_TEAMS && k != COLL_BARRIER && size % 8 != 0)
                continue; /* the 1.4 forms move 64-bit elements */
            double v[BENCH_MAX_REPS];
            for (int rep = 0; rep < a.reps; rep++)
                v[rep] = coll_run(&a, &c, (coll_t)k, size, rep);
            char bench[32];
            snprintf(bench, sizeof(bench), "coll_%s", coll_names[k]);
            if (c.me == 0)
                bench_report(&a, bench, size, "lat_us",
                             bench_median(v, a.reps));
            if (k == COLL_BARRIER)
                break;
        }
    }

    shmem_barrier_all();
    osu_free(c.t_sum);
    osu_free(c.t_local);
    osu_free(c.dst);
    osu_free(c.src);
    shmem_finalize();
    return 0;
}
