/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_get_lat: like OSU's osu_oshm_get. PE 0 does one blocking shmem_getmem
 * from PE 1 per iteration; PE 1 waits in the barrier. PE 0 checks the data.
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
        bench_print_header("get latency: shmem_getmem", "Size",
                           "Latency (us)");
    for (size_t size = a.min_size; size <= a.max_size; size *= 2) {
        long iters = bench_iters(&a, size), warm = bench_warmup(&a, size);
        double v[BENCH_MAX_REPS];

        for (int rep = 0; rep < a.reps; rep++) {
            unsigned seed = osu_seed(size, rep);
            if (me == 1)
                bench_fill(s_buf, size, seed);
            if (me == 0)
                memset(r_buf, 0, size);
            shmem_barrier_all();
            if (me == 0) {
                for (long i = 0; i < warm; i++)
                    shmem_getmem(r_buf, s_buf, size, 1);
                double t0 = bench_now_us();
                for (long i = 0; i < iters; i++)
                    shmem_getmem(r_buf, s_buf, size, 1);
                v[rep] = (bench_now_us() - t0) / (double)iters;
                osu_check(r_buf, size, seed, "get_lat", size);
            }
            shmem_barrier_all();
        }
        if (me == 0)
            bench_report(&a, "get_lat", size, "lat_us",
                         bench_median(v, a.reps));
    }

    shmem_barrier_all();
    osu_free(r_buf);
    osu_free(s_buf);
    shmem_finalize();
    return 0;
}
