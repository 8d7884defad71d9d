// SPDX-License-Identifier: BSD-3-Clause
//
// Transfers past the 32-bit sizes (2 GiB, 4 GiB), each in one call:
// shmem_putmem, shmem_getmem, shmem_putmem_nbi + quiet and a typed
// shmem_long_put whose byte count is past 4 GiB while its element count is
// not. PE 0 sends, PE 1 receives into the same symmetric buffer; every
// 8-byte word is checked (its value names the writer, the step and the
// word's index, so a wrapped, truncated or shifted copy never passes).
//   huge_xfer <MiB>   (default 2100; needs SHMEM_SYMMETRIC_SIZE above it)
#include "pe_check.h"

static uint64_t word(uint64_t step, uint64_t i) { return (step << 56) ^ (i * 0x9E3779B97F4A7C15ULL); }

static void fill(uint64_t *w, size_t n, uint64_t step)
{
    for (size_t i = 0; i < n; i++)
        w[i] = word(step, i);
}

static void check(const uint64_t *w, size_t n, uint64_t step, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (w[i] != word(step, i) && bad++ == 0)
            first = i;
    if (bad)
        pe_fail("%s: %zu of %zu words wrong, first at byte %zu", what, bad, n, first * 8);
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 2100;
    size_t bytes = mib << 20, n = bytes / 8;
    shmem_init();
    pe_begin("huge_xfer");
    const int me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        pe_fail("needs 2 PEs");
        shmem_global_exit(1);
    }
    uint64_t *buf = shmem_malloc(bytes);
    if (buf == NULL) {
        pe_fail("shmem_malloc(%zu MiB) failed: raise SHMEM_SYMMETRIC_SIZE", mib);
        shmem_global_exit(1);
    }

    pe_step("shmem_putmem of %zu MiB", mib);
    if (me == 0) {
        fill(buf, n, 1);
        shmem_putmem(buf, buf, bytes, 1);
    }
    shmem_barrier_all();
    if (me == 1)
        check(buf, n, 1, "putmem");

    pe_step("shmem_getmem of %zu MiB", mib);
    if (me == 0)
        fill(buf, n, 2);
    shmem_barrier_all();
    if (me == 1) {
        memset(buf, 0, bytes);
        shmem_getmem(buf, buf, bytes, 0);
        check(buf, n, 2, "getmem");
    }
    shmem_barrier_all();

    pe_step("shmem_putmem_nbi of %zu MiB + quiet", mib);
    if (me == 0) {
        fill(buf, n, 3);
        shmem_putmem_nbi(buf, buf, bytes, 1);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == 1)
        check(buf, n, 3, "putmem_nbi");

    pe_step("shmem_long_put of %zu elements", n);
    if (me == 0) {
        fill(buf, n, 4);
        shmem_long_put((long *)buf, (const long *)buf, n, 1);
    }
    shmem_barrier_all();
    if (me == 1)
        check(buf, n, 4, "long_put");
    shmem_barrier_all();

    shmem_free(buf);
    shmem_finalize();
    return pe_end();
}
