/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_get_bw: PE 0 issues windows of BENCH_WINDOW shmem_getmem_nbi from PE 1,
 * each window closed by shmem_quiet. MB/s = 1e6 bytes per second.
 */
#include "osu_common.h"

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 1, 1u << 20);
    int rc = osu_start(&a, argc, argv, 2, NULL, NULL, NULL);
    if (rc)
        return rc;

    int me = shmem_my_pe();
    char *s_buf = osu_malloc(a.max_size);
    char *r_buf = osu_malloc(a.max_size);

    if (me == 0)
        bench_print_header("get bandwidth: 64 x shmem_getmem_nbi + shmem_quiet",
                           "Size", "Bandwidth (MB/s)");
    for (size_t size = a.min_size; size <= a.max_size; size *= 2) {
        long windows = bench_windows(&a, size), warm = bench_warmup(&a, size);
        double v[BENCH_MAX_REPS];

        for (int rep = 0; rep < a.reps; rep++) {
            unsigned seed = osu_seed(size, rep);
            if (me == 1)
                bench_fill(s_buf, size, seed);
            if (me == 0)
                memset(r_buf, 0, size);
            shmem_barrier_all();
            if (me == 0) {
                for (long w = 0; w < warm; w++) {
                    for (int j = 0; j < BENCH_WINDOW; j++)
                        shmem_getmem_nbi(r_buf, s_buf, size, 1);
                    shmem_quiet();
                }
                double t0 = bench_now_us();
                for (long w = 0; w < windows; w++) {
                    for (int j = 0; j < BENCH_WINDOW; j++)
                        shmem_getmem_nbi(r_buf, s_buf, size, 1);
                    shmem_quiet();
                }
                double us = bench_now_us() - t0;
                v[rep] = (double)windows * BENCH_WINDOW * (double)size / us;
                osu_check(r_buf, size, seed, "get_bw", size);
            }
            shmem_barrier_all();
        }
        if (me == 0)
            bench_report(&a, "get_bw", size, "bw_MBps",
                         bench_median(v, a.reps));
    }

    shmem_barrier_all();
    osu_free(r_buf);
    osu_free(s_buf);
    shmem_finalize();
    return 0;
}
