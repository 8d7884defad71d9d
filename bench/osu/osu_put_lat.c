/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_put_lat: like OSU's osu_oshm_put. PE 0 does shmem_putmem + shmem_quiet
 * per iteration into PE 1; PE 1 (and any other PE) waits in the barrier at
 * the end, then PE 1 checks the data of the last put.
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
        bench_print_header("put latency: shmem_putmem + shmem_quiet", "Size",
                           "Latency (us)");
    for (size_t size = a.min_size; size <= a.max_size; size *= 2) {
        long iters = bench_iters(&a, size), warm = bench_warmup(&a, size);
        double v[BENCH_MAX_REPS];

        for (int rep = 0; rep < a.reps; rep++) {
            unsigned seed = osu_seed(size, rep);
            if (me == 0)
                bench_fill(s_buf, size, seed);
            shmem_barrier_all();
            if (me == 0) {
                for (long i = 0; i < warm; i++) {
                    shmem_putmem(r_buf, s_buf, size, 1);
                    shmem_quiet();
                }
                double t0 = bench_now_us();
                for (long i = 0; i < iters; i++) {
                    shmem_putmem(r_buf, s_buf, size, 1);
                    shmem_quiet();
                }
                v[rep] = (bench_now_us() - t0) / (double)iters;
            }
            shmem_barrier_all();
            if (me == 1)
                osu_check(r_buf, size, seed, "put_lat", size);
        }
        if (me == 0)
            bench_report(&a, "put_lat", size, "lat_us",
                         bench_median(v, a.reps));
    }

    shmem_barrier_all();
    osu_free(r_buf);
    osu_free(s_buf);
    shmem_finalize();
    return 0;
}
