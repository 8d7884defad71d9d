/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_atomic_lat: latency of the OpenSHMEM atomics on int and long, PE 0
 * targeting a word on PE 1 (other PEs wait in the barrier).
 *
 * Fetching atomics are timed as they are (they complete on return).
 * Non-fetching ones (add, inc, set) are each followed by shmem_quiet, so
 * they are measured to remote completion like raw_fi add_lat
 * (FI_DELIVERY_COMPLETE); OSU's osu_oshm_atomics omits the quiet and so
 * measures the issue rate instead.
 *
 * Check: the target is set to 0 before each operation's runs; every
 * operation is chained so the final value is the number of operations done
 * (compare_swap(i -> i+1), swap/set to i+1), or 0 for fetch.
 * CSV rows: bench atomic_lat, size = sizeof(type), metric <type>_<op>.
 *
 * -t int|long|int,long picks the types, -o LIST the operations (names as
 * printed, comma-separated): e.g. to leave out a peer library's broken op
 * (Open MPI 4.1's shmem_int_atomic_compare_swap smashes its stack).
 */
#include "osu_common.h"

#define AMO_OPS(X)                                                           \
    X(FETCH_ADD, "fetch_add")                                                \
    X(FETCH_INC, "fetch_inc")                                                \
    X(ADD, "add")                                                            \
    X(INC, "inc")                                                            \
    X(COMPARE_SWAP, "compare_swap")                                          \
    X(SWAP, "swap")                                                          \
    X(FETCH, "fetch")                                                        \
    X(SET, "set")

#define AMO_ENUM(id, name) AMO_##id,
typedef enum { AMO_OPS(AMO_ENUM) AMO_NOPS } amo_op_t;
#undef AMO_ENUM

static const char *const amo_names[] = {
#define AMO_NAME(id, name) name,
    AMO_OPS(AMO_NAME)
#undef AMO_NAME
};

/*
 * amo_run_<TN>: n operations of one kind; base is the number already done
 * on this word since it was zeroed. Returns the xor of fetched values so
 * the calls cannot be considered dead.
 */
#define DEFINE_AMO_RUN(T, TN)                                                \
    static T amo_run_##TN(T *dst, amo_op_t op, long n, long base, int pe)   \
    {                                                                        \
        T sink = 0;                                                          \
        switch (op) {                                                        \
        case AMO_FETCH_ADD:                                                  \
            for (long i = 0; i < n; i++)                                     \
                sink ^= shmem_##TN##_atomic_fetch_add(dst, (T)1, pe);        \
            break;                                                           \
        case AMO_FETCH_INC:                                                  \
            for (long i = 0; i < n; i++)                                     \
                sink ^= shmem_##TN##_atomic_fetch_inc(dst, pe);              \
            break;                                                           \
        case AMO_ADD:                                                        \
            for (long i = 0; i < n; i++) {                                   \
                shmem_##TN##_atomic_add(dst, (T)1, pe);                      \
                shmem_quiet();                                               \
            }                                                                \
            break;                                                           \
        case AMO_INC:                                                        \
            for (long i = 0; i < n; i++) {                                   \
                shmem_##TN##_atomic_inc(dst, pe);                            \
                shmem_quiet();                                               \
            }                                                                \
            break;                                                           \
        case AMO_COMPARE_SWAP:                                               \
            for (long i = 0; i < n; i++)                                     \
                sink ^= shmem_##TN##_atomic_compare_swap(                    \
                    dst, (T)(base + i), (T)(base + i + 1), pe);              \
            break;                                                           \
        case AMO_SWAP:                                                       \
            for (long i = 0; i < n; i++)                                     \
                sink ^= shmem_##TN##_atomic_swap(dst, (T)(base + i + 1), pe);\
            break;                                                           \
        case AMO_FETCH:                                                      \
            for (long i = 0; i < n; i++)                                     \
                sink ^= shmem_##TN##_atomic_fetch(dst, pe);                  \
            break;                                                           \
        case AMO_SET:                                                        \
            for (long i = 0; i < n; i++) {                                   \
                shmem_##TN##_atomic_set(dst, (T)(base + i + 1), pe);         \
                shmem_quiet();                                               \
            }                                                                \
            break;                                                           \
        default:                                                             \
            break;                                                           \
        }                                                                    \
        return sink;                                                         \
    }

typedef struct {
    unsigned ops;   /* bit per amo_op_t */
    unsigned types; /* bit 0 int, bit 1 long */
} amo_pick_t;

/* Bit k set for each names[k] that is an item of the comma-separated list. */
static unsigned amo_pick_list(const char *val, const char *const *names, int n)
{
    unsigned mask = 0;
    for (int k = 0; k < n; k++) {
        size_t len = strlen(names[k]);
        for (const char *p = val; (p = strstr(p, names[k])) != NULL; p += len)
            if ((p == val || p[-1] == ',') && (p[len] == '\0' || p[len] == ','))
                mask |= 1u << k;
    }
    return mask;
}

static int amo_opt(const char *opt, const char *val, void *ctx)
{
    static const char *const type_names[] = {"int", "long"};
    amo_pick_t *pick = ctx;
    if (!val)
        return -1;
    if (!strcmp(opt, "-o"))
        pick->ops = amo_pick_list(val, amo_names, AMO_NOPS);
    else if (!strcmp(opt, "-t"))
        pick->types = amo_pick_list(val, type_names, 2);
    else
        return -1;
    if ((!strcmp(opt, "-o") && !pick->ops) || (!strcmp(opt, "-t") && !pick->types)) {
        fprintf(stderr, "%s %s: nothing known in the list\n", opt, val);
        return -1;
    }
    return 2;
}

#define DEFINE_AMO_BENCH(T, TN)                                              \
    DEFINE_AMO_RUN(T, TN)                                                    \
    static void amo_bench_##TN(const bench_args_t *a, T *dst, int me,       \
                               unsigned ops)                                 \
    {                                                                        \
        long iters = bench_iters(a, sizeof(T));                              \
        long warm = bench_warmup(a, sizeof(T));                              \
        for (int op = 0; op < AMO_NOPS; op++) {                              \
            if (!(ops & (1u << op)))                                         \
                continue;                                                    \
            double v[BENCH_MAX_REPS];                                        \
            long done = 0;                                                   \
            if (me == 0) {                                                   \
                shmem_##TN##_atomic_set(dst, (T)0, 1);                       \
                shmem_quiet();                                               \
            }                                                                \
            shmem_barrier_all();                                             \
            if (me == 0) {                                                   \
                for (int rep = 0; rep < a->reps; rep++) {                    \
                    amo_run_##TN(dst, (amo_op_t)op, warm, done, 1);          \
                    done += warm;                                            \
                    double t0 = bench_now_us();                              \
                    amo_run_##TN(dst, (amo_op_t)op, iters, done, 1);         \
                    v[rep] = (bench_now_us() - t0) / (double)iters;          \
                    done += iters;                                           \
                }                                                            \
                T got = shmem_##TN##_atomic_fetch(dst, 1);                   \
                T want = op == AMO_FETCH ? (T)0 : (T)done;                   \
                if (got != want)                                             \
                    osu_fail("%s_%s: target holds %lld, expected %lld", #TN, \
                             amo_names[op], (long long)got, (long long)want); \
                char metric[64], fn[96];                                     \
                snprintf(metric, sizeof(metric), "%s_%s", #TN,               \
                         amo_names[op]);                                     \
                snprintf(fn, sizeof(fn), "shmem_%s_atomic_%s", #TN,          \
                         amo_names[op]);                                     \
                double med = bench_median(v, a->reps);                       \
                printf("%-36s%12.2f\n", fn, med);                           \
                fflush(stdout);                                              \
                bench_csv(a, "atomic_lat", sizeof(T), metric, med);          \
            }                                                                \
            shmem_barrier_all();                                             \
        }                                                                    \
    }

DEFINE_AMO_BENCH(int, int)
DEFINE_AMO_BENCH(long, long)

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 8, 8);
    amo_pick_t pick = {.ops = (1u << AMO_NOPS) - 1, .types = 3};
    static const char extra_help[] =
        "  -t LIST       types: int,long (default both)\n"
        "  -o LIST       operations, comma-separated (default all): fetch_add,\n"
        "                fetch_inc,add,inc,compare_swap,swap,fetch,set\n";
    int rc = osu_start(&a, argc, argv, 2, amo_opt, &pick, extra_help);
    if (rc)
        return rc;

    int me = shmem_my_pe();
    int *ival = osu_malloc(sizeof(int));
    long *lval = osu_malloc(sizeof(long));

    if (me == 0) {
        printf("# OSU-style atomic latency, PE 0 -> PE 1 (non-fetching ops + "
               "shmem_quiet)\n%-36s%12s\n", "Operation", "Latency (us)");
        fflush(stdout);
    }
    if (pick.types & 1)
        amo_bench_int(&a, ival, me, pick.ops);
    if (pick.types & 2)
        amo_bench_long(&a, lval, me, pick.ops);

    shmem_barrier_all();
    osu_free(lval);
    osu_free(ival);
    shmem_finalize();
    return 0;
}
