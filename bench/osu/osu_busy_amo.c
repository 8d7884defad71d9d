/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_busy_amo: operations on a PE that computes without calling the
 * library, against the same operations on a PE that waits in
 * shmem_long_wait_until (issue 30 item 4).
 *
 * PE 0 times -i operations on a word of PE 1, one at a time, while PE 1
 *   wait  sits in shmem_long_wait_until(done, SHMEM_CMP_NE, 0), or
 *   busy  computes (arithmetic on a private array, no library call) and
 *         reads the done word from its own memory now and then,
 * until PE 0 sets done. The two modes alternate within the run (wait first
 * in odd repetitions, busy first in even ones), -r repetitions each.
 *
 * Operations (-o LIST, comma-separated; default fetch_add,add,get):
 *   fetch_add  shmem_long_atomic_fetch_add
 *   add        shmem_long_atomic_add + shmem_quiet
 *   cswap      shmem_long_atomic_compare_swap
 *   get        shmem_long_g
 *   put        shmem_long_p + shmem_quiet
 * -g US spaces the operations by US microseconds of PE 0's own compute
 * (default 0: back to back), which lets a target's progress machinery cool
 * down between them.
 *
 * Each row: bench busy_amo, size 8, metrics <op>_wait_us, <op>_busy_us
 * (median over repetitions of the mean per operation) and <op>_busy_ratio
 * (median over repetitions of busy / wait, the pair of that repetition).
 * A busy target that never lets the operations through ends its compute
 * after 120 s: the operations then show how long they waited.
 * Checks: the word holds exactly what the operations put there.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "osu_common.h"

#define OPS(X) X(FETCH_ADD, "fetch_add") X(ADD, "add") X(CSWAP, "cswap") X(GET, "get") X(PUT, "put")
#define OP_ENUM(id, name) OP_##id,
typedef enum { OPS(OP_ENUM) NOPS } op_t;
static const char *const op_names[] = {
#define OP_NAME(id, name) name,
    OPS(OP_NAME)
};

typedef struct {
    unsigned ops;
    double gap_us;
} opts_t;

static int opt_fn(const char *opt, const char *val, void *ctx)
{
    opts_t *o = ctx;
    if (!val)
        return -1;
    if (!strcmp(opt, "-o")) {
        o->ops = 0;
        for (int k = 0; k < NOPS; k++) {
            size_t len = strlen(op_names[k]);
            for (const char *p = val; (p = strstr(p, op_names[k])) != NULL; p += len)
                if ((p == val || p[-1] == ',') && (p[len] == '\0' || p[len] == ','))
                    o->ops |= 1u << k;
        }
        if (!o->ops) {
            fprintf(stderr, "-o %s: no known operation\n", val);
            return -1;
        }
        return 2;
    }
    if (!strcmp(opt, "-g")) {
        o->gap_us = atof(val);
        return o->gap_us >= 0 ? 2 : -1;
    }
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The target's compute: a private array, no library call, the done word
 * read from its own memory every few microseconds. Returns a value so the
 * work is not dead. */
static double compute_until(volatile long *done)
{
    static double w[512];
    double acc = 0;
    double t_end = now_s() + 120.0;
    for (unsigned long n = 0; !*done; n++) {
        for (int i = 0; i < 512; i++) {
            w[i] = w[i] * 0.999 + (double)i;
            acc += w[i];
        }
        if ((n & 1023) == 0 && now_s() > t_end)
            break;
    }
    return acc;
}

/* PE 0's own compute between two operations (-g). */
static void spin_us(double us)
{
    if (us <= 0)
        return;
    double t = now_s() + us * 1e-6;
    while (now_s() < t)
        ;
}

/* n operations of kind op on *word of pe; returns the fetched values' xor. */
static long run_ops(op_t op, long *word, long n, long base, int pe, double gap_us)
{
    long sink = 0;
    for (long i = 0; i < n; i++) {
        switch (op) {
        case OP_FETCH_ADD: sink ^= shmem_long_atomic_fetch_add(word, 1, pe); break;
        case OP_ADD:
            shmem_long_atomic_add(word, 1, pe);
            shmem_quiet();
            break;
        case OP_CSWAP:
            sink ^= shmem_long_atomic_compare_swap(word, base + i, base + i + 1, pe);
            break;
        case OP_GET: sink ^= shmem_long_g(word, pe); break;
        case OP_PUT:
            shmem_long_p(word, base + i + 1, pe);
            shmem_quiet();
            break;
        default: break;
        }
        spin_us(gap_us);
    }
    return sink;
}

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 8, 8);
    opts_t o = {.ops = (1u << OP_FETCH_ADD) | (1u << OP_ADD) | (1u << OP_GET), .gap_us = 0};
    static const char help[] =
        "  -o LIST       operations: fetch_add,add,cswap,get,put (default fetch_add,add,get)\n"
        "  -g US         PE 0 computes US microseconds between operations (default 0)\n";
    int rc = osu_start(&a, argc, argv, 2, opt_fn, &o, help);
    if (rc)
        return rc;
    int me = shmem_my_pe();
    long *word = osu_malloc(sizeof(long));
    long *done = osu_malloc(sizeof(long));
    long iters = a.iters > 0 ? a.iters : 300;
    long warm = a.warmup >= 0 ? a.warmup : 10;
    double sink = 0;

    if (me == 0) {
        printf("# OSU-style operations on a computing PE vs a waiting one (PE 0 -> PE 1)%s\n"
               "%-12s%14s%14s%10s\n",
               o.gap_us > 0 ? ", spaced" : "", "Operation", "wait (us)", "busy (us)", "ratio");
        fflush(stdout);
    }
    for (int op = 0; op < NOPS; op++) {
        if (!(o.ops & (1u << op)))
            continue;
        double v[2][BENCH_MAX_REPS], ratio[BENCH_MAX_REPS];
        for (int rep = 0; rep < a.reps; rep++) {
            for (int k = 0; k < 2; k++) {
                int busy = (rep % 2 == 0) ? k : 1 - k; /* wait first in odd reps */
                *word = 0;
                *done = 0;
                shmem_barrier_all();
                if (me == 1) {
                    if (busy)
                        sink += compute_until(done);
                    else
                        shmem_long_wait_until(done, SHMEM_CMP_NE, 0);
                } else if (me == 0) {
                    /* Let the target settle into its loop (and a progress
                     * machinery that follows traffic cool down). */
                    spin_us(2000);
                    run_ops((op_t)op, word, warm, 0, 1, o.gap_us);
                    double t0 = bench_now_us();
                    run_ops((op_t)op, word, iters, warm, 1, o.gap_us);
                    v[busy][rep] = (bench_now_us() - t0) / (double)iters;
                    long got = shmem_long_g(word, 1);
                    long want = op == OP_GET ? 0 : warm + iters;
                    if (got != want)
                        osu_fail("%s (%s target): PE 1's word holds %ld, expected %ld",
                                 op_names[op], busy ? "busy" : "waiting", got, want);
                    shmem_long_atomic_set(done, 1, 1);
                    shmem_quiet();
                }
                shmem_barrier_all();
            }
            if (me == 0)
                ratio[rep] = v[1][rep] / v[0][rep];
        }
        if (me == 0) {
            double w = bench_median(v[0], a.reps), b = bench_median(v[1], a.reps);
            double r = bench_median(ratio, a.reps);
            char m[64];
            printf("%-12s%14.2f%14.2f%10.2f\n", op_names[op], w, b, r);
            fflush(stdout);
            snprintf(m, sizeof(m), "%s_wait_us", op_names[op]);
            bench_csv(&a, "busy_amo", 8, m, w);
            snprintf(m, sizeof(m), "%s_busy_us", op_names[op]);
            bench_csv(&a, "busy_amo", 8, m, b);
            snprintf(m, sizeof(m), "%s_busy_ratio", op_names[op]);
            bench_csv(&a, "busy_amo", 8, m, r);
        }
    }
    if (me == 1 && sink == 1.0)
        printf("%g\n", sink);
    shmem_barrier_all();
    osu_free(done);
    osu_free(word);
    shmem_finalize();
    return 0;
}
