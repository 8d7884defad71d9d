// SPDX-License-Identifier: BSD-3-Clause
//
// exhaustion MODE: running out of a resource gives a clear error or
// back-pressure, never a crash, a hang or silent loss.
//   heap   SHMEM_SYMMETRIC_SIZE is small: shmem_malloc returns NULL on every PE
//          at the same block, the blocks it gave are usable, freeing makes room
//          again; absurd sizes (SIZE_MAX/2, calloc count*size overflow) are NULL.
//   teams  SHMEM_TEAMS_MAX teams can exist; one more split returns nonzero with
//          SHMEM_TEAM_INVALID on every PE; after a destroy a split works again.
//   ctx    SHMEM_CTX_MAX contexts can exist; one more shmem_ctx_create returns
//          nonzero and SHMEM_CTX_INVALID; every context made carries data; after
//          a destroy a create works again.
//   nbi    thousands of outstanding put_nbi (small and medium) to the right
//          neighbour with no quiet in between: the provider runs out of queue
//          space (EAGAIN) and the library must apply back-pressure. After one
//          quiet and a barrier every byte must have arrived.
#include <shmemx.h>

#include "pe_check.h"

static int heap_mode(void)
{
    enum { BLOCK = 256 * 1024, MAXB = 1024 };
    static char *blocks[MAXB];
    int n = 0;
    pe_step("allocating %d-byte blocks until the heap is full", BLOCK);
    while (n < MAXB && (blocks[n] = shmem_malloc(BLOCK)) != NULL)
        n++;
    PE_EXPECT(n > 0 && n < MAXB, "heap of %zu bytes gave %d blocks of %d", shmemx_heap_size(), n,
              BLOCK);
    // Every PE ran out at the same block (the heap stays symmetric).
    static int cnt, cmin, cmax;
    cnt = n;
    shmem_int_min_reduce(SHMEM_TEAM_WORLD, &cmin, &cnt, 1);
    shmem_int_max_reduce(SHMEM_TEAM_WORLD, &cmax, &cnt, 1);
    PE_EXPECT_EQ(cmin, cmax, "blocks before NULL: min over PEs vs max");
    // The blocks are usable: fill the right neighbour's, check ours.
    static unsigned char tmp[BLOCK];
    for (int b = 0; b < n; b++) {
        pe_fill(tmp, BLOCK, pe_me_g, (uint32_t)b, 0);
        shmem_putmem(blocks[b], tmp, BLOCK, pe_right()); // tmp is refilled next round
    }
    shmem_barrier_all();
    for (int b = 0; b < n; b++)
        pe_check_fill(blocks[b], BLOCK, pe_left(), (uint32_t)b, 0, "heap block after fill");
    // Absurd sizes: NULL, no crash.
    PE_EXPECT(shmem_malloc(SIZE_MAX / 2) == NULL, "shmem_malloc(SIZE_MAX/2) returned a block");
    PE_EXPECT(shmem_calloc(SIZE_MAX / 4, 8) == NULL, "shmem_calloc(SIZE_MAX/4, 8) returned a block");
    // Freeing makes room again.
    shmem_free(blocks[n - 1]);
    shmem_free(blocks[n / 2]);
    char *again = shmem_malloc(BLOCK);
    PE_EXPECT(again != NULL, "shmem_malloc after two frees returned NULL");
    for (int b = 0; b < n; b++)
        if (b != n - 1 && b != n / 2)
            shmem_free(blocks[b]);
    shmem_free(again);
    char *big = shmem_malloc((size_t)(n / 2) * BLOCK);
    PE_EXPECT(big != NULL, "after freeing everything, %d blocks' worth is NULL", n / 2);
    shmem_free(big);
    if (pe_me_g == 0)
        printf("heap: %d blocks of %d bytes fit in %zu bytes; then NULL on every PE\n", n, BLOCK,
               shmemx_heap_size());
    return 0;
}

static int teams_mode(int max)
{
    shmem_team_t t[64];
    int made = 0;
    pe_step("splitting SHMEM_TEAM_WORLD until SHMEM_TEAMS_MAX=%d is reached", max);
    for (int i = 0; i < max + 1 && i < 64; i++) {
        shmem_team_t nt = SHMEM_TEAM_WORLD; // must be overwritten
        int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, pe_npes_g, NULL, 0, &nt);
        if (i < max) {
            PE_EXPECT(rc == 0 && nt != SHMEM_TEAM_INVALID, "split %d of %d failed (rc %d)", i + 1,
                      max, rc);
            if (rc == 0)
                t[made++] = nt;
        } else {
            PE_EXPECT(rc != 0, "split %d beyond SHMEM_TEAMS_MAX=%d returned 0", i + 1, max);
            PE_EXPECT(nt == SHMEM_TEAM_INVALID, "failed split did not set SHMEM_TEAM_INVALID");
        }
    }
    // The teams made work; a destroy frees a workspace for the next split.
    for (int i = 0; i < made; i++)
        PE_EXPECT(shmem_team_sync(t[i]) == 0, "shmem_team_sync on team %d", i);
    shmem_team_destroy(t[0]);
    shmem_team_t nt;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, pe_npes_g, NULL, 0, &nt);
    PE_EXPECT(rc == 0 && nt != SHMEM_TEAM_INVALID, "split after a destroy failed (rc %d)", rc);
    if (rc == 0) {
        static long v, s;
        v = pe_me_g + 1;
        shmem_long_sum_reduce(nt, &s, &v, 1);
        PE_EXPECT_EQ(s, (long)pe_npes_g * (pe_npes_g + 1) / 2, "sum over the new team");
        shmem_team_destroy(nt);
    }
    for (int i = 1; i < made; i++)
        shmem_team_destroy(t[i]);
    return 0;
}

static int ctx_mode(int max)
{
    shmem_ctx_t c[256];
    static long slots[256];
    int made = 0;
    pe_step("creating contexts until SHMEM_CTX_MAX=%d is reached", max);
    for (int i = 0; i < max + 1 && i < 256; i++) {
        shmem_ctx_t x = SHMEM_CTX_DEFAULT; // must be overwritten on failure
        int rc = shmem_ctx_create(SHMEM_CTX_PRIVATE, &x);
        if (i < max) {
            PE_EXPECT(rc == 0, "context %d of %d failed (rc %d)", i + 1, max, rc);
            if (rc == 0)
                c[made++] = x;
        } else {
            PE_EXPECT(rc != 0, "context %d beyond SHMEM_CTX_MAX=%d was created", i + 1, max);
            PE_EXPECT(x == SHMEM_CTX_INVALID, "failed shmem_ctx_create did not set SHMEM_CTX_INVALID");
        }
    }
    for (int i = 0; i < made; i++) {
        shmem_ctx_long_p(c[i], &slots[i], 1000L * pe_me_g + i, pe_right());
        shmem_ctx_quiet(c[i]);
    }
    shmem_barrier_all();
    for (int i = 0; i < made; i++)
        PE_EXPECT_EQ(slots[i], 1000L * pe_left() + i, "slot %d written through context %d", i, i);
    shmem_ctx_destroy(c[0]);
    PE_EXPECT(shmem_ctx_create(0, &c[0]) == 0, "shmem_ctx_create after a destroy failed");
    for (int i = 0; i < made; i++)
        shmem_ctx_destroy(c[i]);
    return 0;
}

// Contexts made and destroyed one after the other, each carrying a put and
// an atomic to every other PE: a job may churn through far more contexts
// over its life than may exist at once.
static int ctx_churn_mode(long n)
{
    static long slot, counter;
    for (long i = 0; i < n; i++) {
        pe_step("context %ld of %ld: create, put + atomic to every PE, destroy", i + 1, n);
        shmem_ctx_t c;
        if (shmem_ctx_create(0, &c) != 0) {
            pe_fail("shmem_ctx_create %ld failed", i + 1);
            break;
        }
        for (int p = 0; p < pe_npes_g; p++) {
            shmem_ctx_long_p(c, &slot, i, p);
            shmem_ctx_long_atomic_inc(c, &counter, p);
        }
        shmem_ctx_destroy(c); // completes what it issued
    }
    shmem_barrier_all();
    PE_EXPECT_EQ(counter, (long)pe_npes_g * n, "atomic increments through %ld contexts", n);
    PE_EXPECT_EQ(slot, n - 1, "last value put");
    return 0;
}

static int nbi_mode(long nsmall, long nmed)
{
    enum { SMALL = 64, MED = 8192 };
    size_t bytes = (size_t)nsmall * SMALL + (size_t)nmed * MED;
    unsigned char *dst = shmem_calloc(bytes, 1);
    unsigned char *src = malloc(bytes);
    if (dst == NULL || src == NULL) {
        pe_fail("cannot allocate %zu bytes", bytes);
        return 1;
    }
    pe_fill(src, bytes, pe_me_g, 7, 0);
    pe_step("%ld put_nbi of %d B and %ld of %d B in flight to PE %d", nsmall, SMALL, nmed, MED,
            pe_right());
    // Interleaved, so small and medium transfers are in flight together.
    size_t off = 0;
    long s = 0, m = 0;
    while (s < nsmall || m < nmed) {
        for (int k = 0; k < 10 && s < nsmall; k++, s++, off += SMALL)
            shmem_putmem_nbi(dst + off, src + off, SMALL, pe_right());
        if (m < nmed) {
            shmem_putmem_nbi(dst + off, src + off, MED, pe_right());
            m++;
            off += MED;
        }
    }
    shmem_quiet();
    shmem_barrier_all();
    pe_check_fill(dst, bytes, pe_left(), 7, 0, "bytes of the nbi storm");
    if (pe_me_g == 0)
        printf("nbi: %ld + %ld puts (%zu bytes) per PE arrived intact\n", nsmall, nmed, bytes);
    free(src);
    shmem_free(dst);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;
    shmem_init();
    pe_begin("exhaustion");
    int rc;
    if (strcmp(mode, "heap") == 0)
        rc = heap_mode();
    else if (strcmp(mode, "teams") == 0)
        rc = teams_mode((int)a);
    else if (strcmp(mode, "ctx") == 0)
        rc = ctx_mode((int)a);
    else if (strcmp(mode, "ctx_churn") == 0)
        rc = ctx_churn_mode(a);
    else if (strcmp(mode, "nbi") == 0)
        rc = nbi_mode(a, b);
    else {
        fprintf(stderr, "usage: %s heap | teams MAX | ctx MAX | ctx_churn N | nbi NSMALL NMED\n",
                argv[0]);
        return 2;
    }
    (void)rc;
    shmem_finalize();
    return pe_end();
}
