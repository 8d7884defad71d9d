/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Benchmark harness shared by bench/raw_fi and bench/osu: argument parsing,
 * monotonic timing, medians, data patterns, OSU-style and CSV output.
 * Nothing here knows about libfabric or OpenSHMEM.
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_LARGE_MSG 8192 /* OSU's LARGE_MESSAGE_SIZE */
#define BENCH_MAX_REPS 64
#define BENCH_WINDOW 64 /* operations between two waits in bw/rate tests */

typedef struct bench_args {
    long iters;        /* -i; <= 0: default by size (see bench_iters) */
    long warmup;       /* -w; <  0: default by size (see bench_warmup) */
    size_t min_size;   /* -m min:max, powers of two */
    size_t max_size;
    int reps;          /* -r: repeat each size, report the median */
    const char *csv;   /* --csv FILE: append rows, NULL for none */
    const char *label; /* --label NAME: provider_or_lib column */
} bench_args_t;

/*
 * Called for an option the harness does not know. Return the number of
 * argv entries consumed (1 or 2), or -1 to reject the option.
 */
typedef int (*bench_opt_fn)(const char *opt, const char *val, void *ctx);

/* Defaults for a program; call before bench_args_parse. */
void bench_args_init(bench_args_t *a, size_t min_size, size_t max_size);

/*
 * Parse argv[first..argc). Returns 0 on success, 1 when help was printed,
 * -1 on a bad argument (message already printed). extra_help is printed
 * with the usage text; extra may be NULL.
 */
int bench_args_parse(bench_args_t *a, int argc, char **argv, int first,
                     bench_opt_fn extra, void *ctx, const char *usage,
                     const char *extra_help);

/* Timed iterations (latency tests) and warm-up iterations per size. */
long bench_iters(const bench_args_t *a, size_t size);
long bench_warmup(const bench_args_t *a, size_t size);
/* Timed windows of BENCH_WINDOW operations (bandwidth tests). */
long bench_windows(const bench_args_t *a, size_t size);

/* CLOCK_MONOTONIC in microseconds. Out of line so that this header needs
 * no POSIX feature macros in the programs that include it. */
double bench_now_us(void);

/* Median of v[0..n); reorders v. */
double bench_median(double *v, int n);

/* Deterministic byte pattern per (size, seed); check returns the first bad
 * index or -1. */
void bench_fill(void *buf, size_t len, unsigned seed);
long bench_check(const void *buf, size_t len, unsigned seed);

/* "# OSU-style <title>" followed by a column header line. */
void bench_print_header(const char *title, const char *col1, const char *col2);
/* One "size  value" row on stdout (and one CSV row when --csv was given). */
void bench_report(const bench_args_t *a, const char *bench, size_t size,
                  const char *metric, double value);
/* CSV row only. */
void bench_csv(const bench_args_t *a, const char *bench, size_t size,
               const char *metric, double value);

#endif
