/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_coll_count: ITERS calls of each collective named, and nothing else
 * (no barrier between calls, no timing reduction), so that a per-kind
 * traffic report (ofishmem: SHMEM_STATS) divided by ITERS is the traffic
 * of one call. bench/run_coll_hosts.sh runs it with ITERS and with 0 and
 * subtracts (init and finalize have barriers of their own).
 *
 *   osu_coll_count -c barrier,bcast,reduce,fcollect,collect,alltoall -s BYTES -i ITERS
 *
 * bcast: shmem_broadcastmem from root 0; reduce: shmem_long_sum_reduce of
 * BYTES/8 longs; fcollect, collect, alltoall: BYTES per PE. The last call's
 * result is checked on every PE.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, size_t at)
{
    fprintf(stderr, "[PE %d] osu_coll_count: %s wrong at byte %zu\n", shmem_my_pe(), what, at);
    shmem_global_exit(1);
}

static int named(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *list = "barrier,bcast,reduce,fcollect,collect,alltoall";
    size_t size = 8;
    long iters = 100;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-c"))
            list = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            size = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "-i"))
            iters = atol(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [-c LIST] [-s BYTES] [-i ITERS]\n", argv[0]);
            return 2;
        }
    }
    if (size < 8)
        size = 8;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    size_t cap = size * (size_t)n;
    unsigned char *src = shmem_malloc(cap), *dst = shmem_malloc(cap);
    if (!src || !dst) {
        fprintf(stderr, "[PE %d] osu_coll_count: shmem_malloc(%zu) failed\n", me, cap);
        shmem_global_exit(1);
    }
#define FILL()                                                                                     \
    for (size_t j = 0; j < cap; j++)                                                               \
    src[j] = (unsigned char)(me * 31 + j)
    FILL();
    shmem_barrier_all();
    const shmem_team_t w = SHMEM_TEAM_WORLD;

    if (named(list, "barrier"))
        for (long i = 0; i < iters; i++)
            shmem_barrier_all();
    if (named(list, "bcast") && iters > 0) {
        for (long i = 0; i < iters; i++)
            shmem_broadcastmem(w, dst, src, size, 0);
        for (size_t j = 0; j < size; j++)
            if (dst[j] != (unsigned char)(j))
                fail("broadcastmem", j);
    }
    if (named(list, "reduce") && iters > 0) {
        size_t cnt = size / sizeof(long);
        long *s = (long *)src, *d = (long *)dst;
        for (size_t j = 0; j < cnt; j++)
            s[j] = me + (long)j;
        for (long i = 0; i < iters; i++)
            shmem_long_sum_reduce(w, d, s, cnt);
        for (size_t j = 0; j < cnt; j++)
            if (d[j] != (long)n * (n - 1) / 2 + (long)n * (long)j)
                fail("long_sum_reduce", j * sizeof(long));
    }
    FILL(); /* the reduction wrote longs there */
    if (named(list, "fcollect") && iters > 0) {
        for (long i = 0; i < iters; i++)
            shmem_fcollectmem(w, dst, src, size);
        for (size_t j = 0; j < cap; j++)
            if (dst[j] != (unsigned char)((j / size) * 31 + j % size))
                fail("fcollectmem", j);
    }
    if (named(list, "collect") && iters > 0) {
        for (long i = 0; i < iters; i++)
            shmem_collectmem(w, dst, src, size);
        for (size_t j = 0; j < cap; j++)
            if (dst[j] != (unsigned char)((j / size) * 31 + j % size))
                fail("collectmem", j);
    }
    if (named(list, "alltoall") && iters > 0) {
        for (long i = 0; i < iters; i++)
            shmem_alltoallmem(w, dst, src, size);
        for (size_t j = 0; j < cap; j++)
            if (dst[j] != (unsigned char)((j / size) * 31 + (size_t)me * size + j % size))
                fail("alltoallmem", j);
    }
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
