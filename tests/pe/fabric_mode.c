// SPDX-License-Identifier: BSD-3-Clause
//
// Whether a job opened a fabric (SHMEM_FABRIC, issue 16): a job whose PEs
// all reach each other through mapped memory (one PE; all PEs on one host
// with the direct path on, the default) must not even load libfabric, the
// others must, and both must work.
//   fabric_mode none|loaded
// Checks, on every PE:
//  - libfabric is mapped into this process (/proc/self/maps) exactly when
//    expected ("loaded"), and stays unmapped through the traffic below
//    when not ("none");
//  - shmemx_provider_name() is "none" exactly when no fabric was opened;
//  - put, get, atomics (heap and globals, fetching and not, nbi), a
//    context of its own, a team split and its collectives, and barriers
//    work between every pair of PEs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmemx.h>

#include "pe_check.h"

#define MAXPES 64

static long inbox[MAXPES];  // globals: inbox[p] written by PE p
static long g_counter;      // fetch-add target on PE 0 (globals)
static long sum_src[4], sum_dst[4];

static int libfabric_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, "/libfabric.so") != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "none") != 0 && strcmp(argv[1], "loaded") != 0)) {
        fprintf(stderr, "usage: fabric_mode none|loaded\n");
        return 2;
    }
    int want_loaded = strcmp(argv[1], "loaded") == 0;
    shmem_init();
    pe_begin("fabric_mode");
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > MAXPES) {
        pe_fail("at most %d PEs", MAXPES);
        shmem_global_exit(1);
    }

    pe_step("after shmem_init");
    PE_EXPECT_EQ(libfabric_mapped(), want_loaded, "libfabric mapped after shmem_init");
    const char *prov = shmemx_provider_name();
    PE_EXPECT(prov != NULL && (strcmp(prov, "none") == 0) == !want_loaded,
              "shmemx_provider_name() is '%s' (expected %s)", prov ? prov : "(null)",
              want_loaded ? "a provider" : "'none'");

    pe_step("put and get, globals and heap");
    long *heap = shmem_calloc(MAXPES, sizeof(long));
    PE_EXPECT(heap != NULL, "shmem_calloc");
    long v = 1000L * me + 7;
    for (int p = 0; p < npes; p++) {
        shmem_long_put(&inbox[me], &v, 1, p);
        shmem_long_put_nbi(&heap[me], &v, 1, p);
    }
    shmem_quiet();
    shmem_barrier_all();
    for (int p = 0; p < npes; p++) {
        PE_EXPECT_EQ(inbox[p], 1000L * p + 7, "inbox[%d] written by PE %d", p, p);
        PE_EXPECT_EQ(heap[p], 1000L * p + 7, "heap[%d] written by PE %d", p, p);
        long got = 0;
        shmem_long_get(&got, &heap[p], 1, (me + 1) % npes);
        PE_EXPECT_EQ(got, 1000L * p + 7, "get of heap[%d] from PE %d", p, (me + 1) % npes);
    }

    pe_step("atomics");
    long before = shmem_long_atomic_fetch_add(&g_counter, 1, 0);
    PE_EXPECT(before >= 0 && before < npes, "fetch_add on PE 0 returned %ld", before);
    for (int p = 0; p < npes; p++)
        shmem_long_atomic_add(&heap[MAXPES - 1], 2, p);
    long cmp = 0;
    shmem_long_atomic_fetch_nbi(&cmp, &heap[MAXPES - 1], (me + 1) % npes);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 0)
        PE_EXPECT_EQ(g_counter, (long)npes, "counter on PE 0 after one fetch_add per PE");
    PE_EXPECT_EQ(shmem_long_atomic_fetch(&heap[MAXPES - 1], me), 2L * npes,
                 "heap word after one add of 2 per PE");
    PE_EXPECT(cmp >= 0 && cmp <= 2L * npes, "fetch_nbi returned %ld", cmp);

    pe_step("a context of its own");
    shmem_ctx_t ctx;
    PE_EXPECT_EQ(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx), 0, "shmem_ctx_create");
    long w = -me;
    shmem_ctx_long_put(ctx, &heap[me], &w, 1, (me + 1) % npes);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    PE_EXPECT_EQ(heap[(me + npes - 1) % npes], -(long)((me + npes - 1) % npes),
                 "word put on a context by PE %d", (me + npes - 1) % npes);

    pe_step("a team and its reduction");
    shmem_team_t half;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &half);
    PE_EXPECT_EQ(rc, 0, "shmem_team_split_strided");
    for (int i = 0; i < 4; i++)
        sum_src[i] = me + i;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sum_dst, sum_src, 4);
    for (int i = 0; i < 4; i++)
        PE_EXPECT_EQ(sum_dst[i], (long)npes * (npes - 1) / 2 + (long)npes * i, "sum[%d]", i);
    if (half != SHMEM_TEAM_INVALID) {
        shmem_team_sync(half);
        shmem_team_destroy(half);
    }
    shmem_barrier_all();

    pe_step("after the traffic");
    PE_EXPECT_EQ(libfabric_mapped(), want_loaded, "libfabric mapped after the traffic");
    shmem_free(heap);
    shmem_finalize();
    return pe_end();
}
