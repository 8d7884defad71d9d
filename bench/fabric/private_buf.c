/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * private_buf: put + quiet and blocking get between PE 0's PRIVATE memory
 * (malloc, not symmetric, so never registered by the library) and PE 1's
 * heap, per size. Under a provider that wants a descriptor for every local
 * buffer (FI_MR_LOCAL) such a buffer goes through a registered bounce
 * buffer or is registered for the transfer (docs/PROVIDERS.md);
 * bench/fabric/contract_cost.sh --lmr runs it with SHMEM_BOUNCE_SIZE large
 * (bounce every size it can) and 0 (register every transfer) to find where
 * one beats the other. Rows: put_priv/get_priv, lat_us.
 */
#include <stdlib.h>

#include "osu_common.h"

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 8, 1u << 22);
    int rc = osu_start(&a, argc, argv, 2, NULL, NULL, NULL);
    if (rc)
        return rc;
    int me = shmem_my_pe();
    char *remote = osu_malloc(a.max_size);
    char *priv = malloc(a.max_size);
    if (priv == NULL)
        osu_fail("malloc of %zu bytes", a.max_size);

    if (me == 0)
        bench_print_header("private buffer: put + quiet / get", "Size", "put (us)   get (us)");
    for (size_t size = a.min_size; size <= a.max_size; size *= 2) {
        long iters = bench_iters(&a, size), warm = bench_warmup(&a, size);
        double vp[BENCH_MAX_REPS], vg[BENCH_MAX_REPS];
        for (int rep = 0; rep < a.reps; rep++) {
            unsigned seed = osu_seed(size, rep);
            shmem_barrier_all();
            if (me == 0) {
                bench_fill(priv, size, seed);
                for (long i = 0; i < warm; i++) {
                    shmem_putmem(remote, priv, size, 1);
                    shmem_quiet();
                }
                double t0 = bench_now_us();
                for (long i = 0; i < iters; i++) {
                    shmem_putmem(remote, priv, size, 1);
                    shmem_quiet();
                }
                vp[rep] = (bench_now_us() - t0) / (double)iters;
            }
            shmem_barrier_all();
            if (me == 1)
                osu_check(remote, size, seed, "put_priv", size);
            shmem_barrier_all();
            if (me == 0) {
                for (long i = 0; i < warm; i++)
                    shmem_getmem(priv, remote, size, 1);
                double t0 = bench_now_us();
                for (long i = 0; i < iters; i++)
                    shmem_getmem(priv, remote, size, 1);
                vg[rep] = (bench_now_us() - t0) / (double)iters;
                osu_check(priv, size, seed, "get_priv", size);
            }
        }
        if (me == 0) {
            bench_report(&a, "put_priv", size, "lat_us", bench_median(vp, a.reps));
            bench_report(&a, "get_priv", size, "lat_us", bench_median(vg, a.reps));
        }
    }
    shmem_barrier_all();
    free(priv);
    osu_free(remote);
    shmem_finalize();
    return 0;
}
