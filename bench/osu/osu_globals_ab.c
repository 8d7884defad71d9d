/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_globals_ab: the same operations on a heap buffer and on a static
 * (.bss) buffer, interleaved in one process: heap, globals, heap, ... for
 * -r repetitions, median of each. On a loaded machine this is a fairer
 * side-by-side than two separate runs. PE 0 targets PE 1:
 *   put_lat   shmem_putmem + shmem_quiet            (us)
 *   get_lat   shmem_getmem                          (us)
 *   put_bw    64 x shmem_putmem_nbi + shmem_quiet   (MB/s)
 *   get_bw    64 x shmem_getmem_nbi + shmem_quiet   (MB/s)
 *   fadd      shmem_long_atomic_fetch_add           (us, size 8)
 * CSV rows are labelled <label>:heap and <label>:globals; the printed table
 * adds the ratio globals / heap (latency: lower is better; bandwidth: higher).
 */
#include "osu_common.h"

#define AB_MAX (1u << 20)

/* Room to place the buffers at the heap blocks' offsets within a page. */
static char g_src_room[AB_MAX + 4096] __attribute__((aligned(4096)));
static char g_dst_room[AB_MAX + 4096] __attribute__((aligned(4096)));
static long g_word __attribute__((aligned(64)));

enum { T_PUT_LAT, T_GET_LAT, T_PUT_BW, T_GET_BW, T_FADD, NT };
static const char *const t_name[NT] = {"put_lat", "get_lat", "put_bw", "get_bw", "fadd"};
static const char *const t_metric[NT] = {"lat_us", "lat_us", "bw_MBps", "bw_MBps", "lat_us"};

/* One timed measurement of test t at size on (src, dst, word). */
static double one(int t, size_t size, char *src, char *dst, long *word, long iters)
{
    double t0 = bench_now_us(), us;
    switch (t) {
    case T_PUT_LAT:
        for (long i = 0; i < iters; i++) {
            shmem_putmem(dst, src, size, 1);
            shmem_quiet();
        }
        return (bench_now_us() - t0) / (double)iters;
    case T_GET_LAT:
        for (long i = 0; i < iters; i++)
            shmem_getmem(src, dst, size, 1);
        return (bench_now_us() - t0) / (double)iters;
    case T_PUT_BW:
    case T_GET_BW:
        for (long w = 0; w < iters; w++) {
            for (int j = 0; j < BENCH_WINDOW; j++) {
                if (t == T_PUT_BW)
                    shmem_putmem_nbi(dst, src, size, 1);
                else
                    shmem_getmem_nbi(src, dst, size, 1);
            }
            shmem_quiet();
        }
        us = bench_now_us() - t0;
        return (double)iters * BENCH_WINDOW * (double)size / us;
    default:
        for (long i = 0; i < iters; i++)
            (void)shmem_long_atomic_fetch_add(word, 1, 1);
        return (bench_now_us() - t0) / (double)iters;
    }
}

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 8, AB_MAX);
    a.reps = 15;
    int rc = osu_start(&a, argc, argv, 2, NULL, NULL, NULL);
    if (rc)
        return rc;
    if (a.max_size > AB_MAX)
        a.max_size = AB_MAX;
    int me = shmem_my_pe();
    char *h_src = osu_malloc(AB_MAX), *h_dst = osu_malloc(AB_MAX);
    long *h_word = osu_malloc(sizeof(long));
    /*
     * The static buffers sit at the same offsets within a page as the heap
     * ones, so that only the road differs: with src and dst both
     * page-aligned, x86 memcpy hits a 4 KiB-aliasing slow case at some sizes.
     */
    char *g_src = g_src_room + ((uintptr_t)h_src & 4095);
    char *g_dst = g_dst_room + ((uintptr_t)h_dst & 4095);
    char label[160];
    const char *base = a.label;

    if (me == 0)
        bench_print_header("heap vs globals, interleaved (median of -r)", "Size",
                           "heap / globals / ratio");
    for (int t = 0; t < NT; t++) {
        for (size_t size = t == T_FADD ? 8 : a.min_size; size <= (t == T_FADD ? 8 : a.max_size);
             size *= 2) {
            int bw = t == T_PUT_BW || t == T_GET_BW;
            /* Many more than OSU's defaults: a direct-path op takes nanoseconds. */
            long iters = a.iters > 0 ? a.iters
                         : bw        ? (size <= 8192 ? 400 : 40)
                         : t == T_FADD ? 100000
                                       : (size <= 4096 ? 20000 : size <= 65536 ? 2000 : 200);
            double vh[BENCH_MAX_REPS], vg[BENCH_MAX_REPS];
            for (int rep = 0; rep < a.reps; rep++) {
                shmem_barrier_all();
                if (me == 0) {
                    /* Alternate which goes first, so neither always follows the other. */
                    for (int k = 0; k < 2; k++) {
                        int glob = (k + rep) & 1;
                        char *s = glob ? g_src : h_src, *d = glob ? g_dst : h_dst;
                        long *w = glob ? &g_word : h_word;
                        (void)one(t, size, s, d, w, iters / 10 + 1); /* warm-up */
                        (glob ? vg : vh)[rep] = one(t, size, s, d, w, iters);
                    }
                }
                shmem_barrier_all();
            }
            if (me == 0) {
                double mh = bench_median(vh, a.reps), mg = bench_median(vg, a.reps);
                snprintf(label, sizeof(label), "%s:heap", base);
                a.label = label;
                bench_csv(&a, t_name[t], size, t_metric[t], mh);
                snprintf(label, sizeof(label), "%s:globals", base);
                bench_csv(&a, t_name[t], size, t_metric[t], mg);
                a.label = base;
                printf("%-8s %8zu %12.4f %12.4f %7.2f\n", t_name[t], size, mh, mg, mg / mh);
            }
        }
    }
    shmem_barrier_all();
    osu_free(h_word);
    osu_free(h_dst);
    osu_free(h_src);
    shmem_finalize();
    return 0;
}
