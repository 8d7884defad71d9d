/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void bench_args_init(bench_args_t *a, size_t min_size, size_t max_size)
{
    *a = (bench_args_t){
        .iters = 0,
        .warmup = -1,
        .min_size = min_size,
        .max_size = max_size,
        .reps = 1,
        .csv = NULL,
        .label = NULL,
    };
}

static int is_pow2(size_t v) { return v && !(v & (v - 1)); }

/* "64", "4k", "1M": the size suffix is a multiplier of 1024. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_range(const char *s, size_t *lo, size_t *hi)
{
    char buf[64];
    if (strlen(s) >= sizeof(buf))
        return -1;
    strcpy(buf, s);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        if (parse_size(buf, lo) || parse_size(colon + 1, hi))
            return -1;
    } else {
        if (parse_size(buf, lo))
            return -1;
        *hi = *lo;
    }
    return (is_pow2(*lo) && is_pow2(*hi) && *lo <= *hi) ? 0 : -1;
}

static void print_usage(const char *prog, const char *usage,
                        const char *extra_help)
{
    printf("usage: %s %s\n"
           "  -i N          timed iterations per size (default 1000, 100 above %d B;\n"
           "                bandwidth tests: windows of %d ops, default 100, 20)\n"
           "  -w N          warm-up iterations per size (default 10, 0 above %d B)\n"
           "  -m MIN:MAX    message sizes, powers of two, k/M suffixes (or one size)\n"
           "  -r N          repeat each size N times, report the median (max %d)\n"
           "  --csv FILE    append rows bench,provider_or_lib,size,metric,value\n"
           "  --label NAME  provider_or_lib column of the CSV rows\n"
           "%s",
           prog, usage ? usage : "[options]", BENCH_LARGE_MSG, BENCH_WINDOW,
           BENCH_LARGE_MSG,
           BENCH_MAX_REPS, extra_help ? extra_help : "");
}

int bench_args_parse(bench_args_t *a, int argc, char **argv, int first,
                     bench_opt_fn extra, void *ctx, const char *usage,
                     const char *extra_help)
{
    for (int i = first; i < argc; i++) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;

        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            print_usage(argv[0], usage, extra_help);
            return 1;
        } else if (!strcmp(opt, "-i")) {
            bad = !val || parse_long(val, &a->iters) || a->iters <= 0;
            i++;
        } else if (!strcmp(opt, "-w")) {
            bad = !val || parse_long(val, &a->warmup) || a->warmup < 0;
            i++;
        } else if (!strcmp(opt, "-m")) {
            bad = !val || parse_range(val, &a->min_size, &a->max_size);
            i++;
        } else if (!strcmp(opt, "-r")) {
            long r = 0;
            bad = !val || parse_long(val, &r) || r < 1 || r > BENCH_MAX_REPS;
            a->reps = (int)r;
            i++;
        } else if (!strcmp(opt, "--csv")) {
            bad = !val;
            a->csv = val;
            i++;
        } else if (!strcmp(opt, "--label")) {
            bad = !val;
            a->label = val;
            i++;
        } else {
            int used = extra ? extra(opt, val, ctx) : -1;
            if (used < 1) {
                fprintf(stderr, "%s: unknown option or bad value: '%s' (-h for help)\n",
                        argv[0], opt);
                return -1;
            }
            i += used - 1;
            continue;
        }
        if (bad) {
            fprintf(stderr, "%s: bad or missing value for %s%s%s\n", argv[0],
                    opt, val ? ": " : "", val ? val : "");
            return -1;
        }
    }
    return 0;
}

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

long bench_iters(const bench_args_t *a, size_t size)
{
    if (a->iters > 0)
        return a->iters;
    return size > BENCH_LARGE_MSG ? 100 : 1000;
}

long bench_warmup(const bench_args_t *a, size_t size)
{
    if (a->warmup >= 0)
        return a->warmup;
    /* One warm-up round even for large sizes: it takes first-touch page
     * faults and connection setup out of the first timed repetition. */
    return size > BENCH_LARGE_MSG ? 2 : 10;
}

long bench_windows(const bench_args_t *a, size_t size)
{
    if (a->iters > 0)
        return a->iters;
    return size > BENCH_LARGE_MSG ? 20 : 100;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n & 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline unsigned char pattern_byte(size_t i, unsigned seed)
{
    /* Varies within 256 bytes and across pages, so a shifted or stale
     * copy is caught. */
    return (unsigned char)((i * 131u) ^ (i >> 8) ^ (seed * 29u + 7u));
}

void bench_fill(void *buf, size_t len, unsigned seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pattern_byte(i, seed);
}

long bench_check(const void *buf, size_t len, unsigned seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != pattern_byte(i, seed))
            return (long)i;
    return -1;
}

void bench_print_header(const char *title, const char *col1, const char *col2)
{
    printf("# OSU-style %s\n", title);
    printf("%-12s%16s\n", col1, col2);
    fflush(stdout);
}

void bench_csv(const bench_args_t *a, const char *bench, size_t size,
               const char *metric, double value)
{
    if (!a->csv)
        return;
    FILE *f = fopen(a->csv, "a");
    if (!f) {
        perror(a->csv);
        return;
    }
    fprintf(f, "%s,%s,%zu,%s,%.4f\n", bench, a->label ? a->label : "unknown",
            size, metric, value);
    fclose(f);
}

void bench_report(const bench_args_t *a, const char *bench, size_t size,
                  const char *metric, double value)
{
    printf("%-12zu%16.2f\n", size, value);
    fflush(stdout);
    bench_csv(a, bench, size, metric, value);
}
