/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcpy_bw: the single-core memcpy yardstick of the same-host direct path.
 * One process, one thread copies size bytes from one buffer to another with
 * memcpy, as a direct-path put does into a mapped peer heap. For each size:
 *   memcpy_lat  us per copy (the floor of a put latency),
 *   memcpy_bw   MB/s (1e6 bytes/s) over windows of BENCH_WINDOW copies.
 * The copy is checked once per size so it cannot be optimised away.
 * Output and CSV rows as in the OSU-style programs (bench/common/harness.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Out of line and through a volatile pointer: the compiler must copy. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 8, 1u << 20);
    int prc = bench_args_parse(&a, argc, argv, 1, NULL, NULL, "[options]", NULL);
    if (prc)
        return prc > 0 ? 0 : 2;
    if (!a.label)
        a.label = "memcpy";

    char *src = aligned_alloc(4096, a.max_size);
    char *dst = aligned_alloc(4096, a.max_size);
    if (!src || !dst) {
        fprintf(stderr, "memcpy_bw: cannot allocate 2 x %zu bytes\n", a.max_size);
        return 1;
    }
    memset(dst, 0, a.max_size);

    bench_print_header("single-core memcpy: latency per copy", "Size", "Latency (us)");
    for (size_t size = a.min_size; size <= a.max_size; size *= 2) {
        long iters = bench_iters(&a, size), warm = bench_warmup(&a, size);
        double v[BENCH_MAX_REPS];
        bench_fill(src, size, (unsigned)size);
        for (int rep = 0; rep < a.reps; rep++) {
            for (long i = 0; i < warm; i++)
                copy_fn(dst, src, size);
            double t0 = bench_now_us();
            for (long i = 0; i < iters; i++)
                copy_fn(dst, src, size);
            v[rep] = (bench_now_us() - t0) / (double)iters;
        }
        if (bench_check(dst, size, (unsigned)size) >= 0) {
            fprintf(stderr, "memcpy_bw: size %zu: copy is wrong\n", size);
            return 1;
        }
        bench_report(&a, "memcpy_lat", size, "lat_us", bench_median(v, a.reps));
    }

    bench_print_header("single-core memcpy: bandwidth", "Size", "Bandwidth (MB/s)");
    for (size_t size = a.min_size; size <= a.max_size; size *= 2) {
        long windows = bench_windows(&a, size), warm = bench_warmup(&a, size);
        double v[BENCH_MAX_REPS];
        for (int rep = 0; rep < a.reps; rep++) {
            for (long i = 0; i < warm * BENCH_WINDOW; i++)
                copy_fn(dst, src, size);
            double t0 = bench_now_us();
            for (long w = 0; w < windows; w++)
                for (int i = 0; i < BENCH_WINDOW; i++)
                    copy_fn(dst, src, size);
            double us = bench_now_us() - t0;
            v[rep] = (double)windows * BENCH_WINDOW * (double)size / us;
        }
        bench_report(&a, "memcpy_bw", size, "bw_MBps", bench_median(v, a.reps));
    }
    free(dst);
    free(src);
    return 0;
}
