// SPDX-License-Identifier: BSD-3-Clause
//
// The symmetric heap allocator: a sequence of shmem_malloc / calloc / align /
// realloc / free / malloc_with_hints (various sizes and alignments, frees in
// odd order) must give the same offsets (relative to a first allocation) on
// every PE, which is checked by reading every other PE's list with getmem.
// Also: calloc returns zeros (even on reused memory), align honours the
// alignment, realloc keeps the contents, every block is usable remotely,
// an allocation larger than the heap returns NULL on every PE without harm,
// and shmem_malloc(0) returns NULL.
#include <stdint.h>

#include "pe_check.h"

#define MAXREC 64

// Offsets of each allocation relative to `base`, in call order (symmetric,
// read by the other PEs). -1: NULL returned.
static long offs[MAXREC];
static int nrec;
static char *base;

static void record(const char *what, void *p)
{
    if (nrec >= MAXREC) {
        pe_fail("test bug: more than %d records", MAXREC);
        return;
    }
    offs[nrec++] = p ? (long)((char *)p - base) : -1;
    (void)what;
}

static void expect_aligned(void *p, size_t align, const char *what)
{
    PE_EXPECT(p != NULL, "%s returned NULL", what);
    PE_EXPECT(((uintptr_t)p % align) == 0, "%s: address %p not aligned to %zu", what, p, align);
}

static void expect_zero(const void *p, size_t n, const char *what)
{
    if (p)
        pe_check_byte(p, n, 0, what);
}

// Writes a pattern into `p` on the right PE and reads the left PE's back:
// the block must be symmetric and usable on every PE.
static void remote_use(void *p, size_t n, uint32_t tag, const char *what)
{
    if (!p)
        return;
    const int right = pe_right(), left = pe_left();
    uint8_t *src = malloc(n), *back = malloc(n);
    pe_fill(src, n, pe_me_g, tag, 0);
    pe_step("remote use of %s", what);
    shmem_putmem(p, src, n, right);
    shmem_barrier_all();
    char w[160];
    snprintf(w, sizeof w, "%s: data put by PE %d", what, left);
    pe_check_fill(p, n, left, tag, 0, w);
    shmem_getmem(back, p, n, right); // right holds my data
    snprintf(w, sizeof w, "%s: getmem from PE %d of the data I put", what, right);
    pe_check_fill(back, n, pe_me_g, tag, 0, w);
    shmem_barrier_all();
    free(src);
    free(back);
}

int main(void)
{
    shmem_init();
    pe_begin("heap_symmetry");

    pe_step("malloc(0)");
    void *z = shmem_malloc(0);
    PE_EXPECT(z == NULL, "shmem_malloc(0) returned %p, expected NULL", z);
    shmem_free(NULL); // no-op, must not hang or crash

    base = shmem_malloc(64);
    PE_EXPECT(base != NULL, "first shmem_malloc(64) returned NULL");
    if (!base)
        shmem_global_exit(1);
    record("base", base);

    pe_step("sequence");
    char *a = shmem_malloc(100);                    record("malloc(100)", a);
    char *b = shmem_align(4096, 1000);              record("align(4096,1000)", b);
    expect_aligned(b, 4096, "shmem_align(4096, 1000)");
    char *c = shmem_calloc(1000, 8);                record("calloc(1000,8)", c);
    expect_zero(c, 8000, "shmem_calloc(1000, 8) contents");
    char *d = shmem_malloc_with_hints(5000, SHMEM_MALLOC_ATOMICS_REMOTE);
    record("malloc_with_hints(5000, ATOMICS_REMOTE)", d);
    PE_EXPECT(d != NULL, "shmem_malloc_with_hints(5000, SHMEM_MALLOC_ATOMICS_REMOTE) NULL");
    char *e = shmem_align(64, 3);                   record("align(64,3)", e);
    expect_aligned(e, 64, "shmem_align(64, 3)");
    char *h0 = shmem_malloc_with_hints(777, 0);     record("malloc_with_hints(777, 0)", h0);
    PE_EXPECT(h0 != NULL, "shmem_malloc_with_hints(777, 0) returned NULL");
    char *h1 = shmem_malloc_with_hints(4096, SHMEM_MALLOC_SIGNAL_REMOTE);
    record("malloc_with_hints(4096, SIGNAL_REMOTE)", h1);
    PE_EXPECT(h1 != NULL, "shmem_malloc_with_hints(4096, SHMEM_MALLOC_SIGNAL_REMOTE) NULL");
    shmem_free(b);
    char *f = shmem_malloc(200);                    record("malloc(200) after free", f);
    shmem_free(a);

    // realloc keeps contents (grow, then shrink)
    for (int i = 0; i < 8000; i++)
        c[i] = (char)(i * 7 + pe_me_g);
    char *g = shmem_realloc(c, 20000);              record("realloc(c, 20000)", g);
    PE_EXPECT(g != NULL, "shmem_realloc(calloc block, 20000) returned NULL");
    if (g) {
        int bad = 0;
        for (int i = 0; i < 8000; i++)
            bad += g[i] != (char)(i * 7 + pe_me_g);
        PE_EXPECT(bad == 0, "shmem_realloc grow: %d of the first 8000 bytes changed", bad);
    }
    char *gs = shmem_realloc(g, 3000);              record("realloc(g, 3000)", gs);
    if (gs) {
        int bad = 0;
        for (int i = 0; i < 3000; i++)
            bad += gs[i] != (char)(i * 7 + pe_me_g);
        PE_EXPECT(bad == 0, "shmem_realloc shrink: %d of the first 3000 bytes changed", bad);
    }

    static const size_t aligns[] = {8, 16, 64, 256, 4096, 65536, 1u << 21};
    char *al[7];
    for (int i = 0; i < 7; i++) {
        char w[64];
        snprintf(w, sizeof w, "shmem_align(%zu, %d)", aligns[i], 100 + i * 33);
        al[i] = shmem_align(aligns[i], 100 + (size_t)i * 33);
        record(w, al[i]);
        expect_aligned(al[i], aligns[i], w);
    }
    shmem_free(al[3]);
    shmem_free(e);
    shmem_free(al[0]);
    shmem_free(al[6]);

    // calloc on reused memory must still be zero
    char *dirty = shmem_malloc(1 << 16);            record("malloc(64k) dirty", dirty);
    if (dirty)
        memset(dirty, 0xA7, 1 << 16);
    shmem_free(dirty);
    char *clean = shmem_calloc(8192, 8);            record("calloc(8192, 8) after dirty free", clean);
    PE_EXPECT(clean != NULL, "shmem_calloc(8192, 8) returned NULL");
    expect_zero(clean, 1 << 16, "shmem_calloc(8192, 8) over freed dirty memory");

    // realloc(NULL, n) behaves like malloc
    char *rn = shmem_realloc(NULL, 512);            record("realloc(NULL, 512)", rn);
    PE_EXPECT(rn != NULL, "shmem_realloc(NULL, 512) returned NULL");

    // Too large: NULL everywhere, nothing broken afterwards.
    pe_step("oversized allocations");
    void *huge = shmem_malloc((size_t)1 << 50);
    PE_EXPECT(huge == NULL, "shmem_malloc(1 PiB) returned %p, expected NULL", huge);
    record("malloc(1 PiB)", huge);
    void *huge2 = shmem_malloc(SIZE_MAX - 64);
    PE_EXPECT(huge2 == NULL, "shmem_malloc(SIZE_MAX - 64) returned %p, expected NULL", huge2);
    void *huge3 = shmem_calloc(SIZE_MAX / 4, 8); // count * size overflows
    PE_EXPECT(huge3 == NULL, "shmem_calloc(SIZE_MAX/4, 8) returned %p, expected NULL", huge3);
    void *huge4 = shmem_align(4096, (size_t)1 << 50);
    PE_EXPECT(huge4 == NULL, "shmem_align(4096, 1 PiB) returned %p, expected NULL", huge4);
    char *after = shmem_malloc(4096);               record("malloc(4096) after failures", after);
    PE_EXPECT(after != NULL, "shmem_malloc(4096) after failed allocations returned NULL");

    // Every block in use must be remotely usable.
    remote_use(d, 5000, 1, "malloc_with_hints block");
    remote_use(f, 200, 2, "malloc(200) block");
    remote_use(gs, 3000, 3, "realloc'd block");
    remote_use(al[5], 100 + 5 * 33, 4, "align(65536) block");
    remote_use(clean, 1 << 16, 5, "calloc block");
    remote_use(after, 4096, 6, "block after failed allocations");
    remote_use(h1, 4096, 7, "malloc_with_hints(SIGNAL_REMOTE) block");

    // Compare the offset lists of all PEs.
    pe_step("compare offsets");
    shmem_barrier_all();
    long theirs[MAXREC];
    int their_n = 0;
    for (int pe = 0; pe < pe_npes_g; pe++) {
        if (pe == pe_me_g)
            continue;
        shmem_getmem(theirs, offs, sizeof offs, pe);
        shmem_getmem(&their_n, &nrec, sizeof nrec, pe);
        PE_EXPECT_EQ(their_n, nrec, "number of allocations recorded on PE %d", pe);
        for (int i = 0; i < nrec && i < their_n; i++)
            PE_EXPECT_EQ(theirs[i], offs[i],
                         "offset from first allocation of allocation #%d on PE %d (mine)", i, pe);
    }
    // The same through shmem_long_g (a different path: .bss source, g).
    for (int pe = 0; pe < pe_npes_g; pe++)
        PE_EXPECT_EQ(shmem_long_g(&offs[nrec - 1], pe), offs[nrec - 1],
                     "shmem_long_g of the last offset on PE %d", pe);

    shmem_barrier_all();
    shmem_free(after);
    shmem_free(rn);
    shmem_free(clean);
    shmem_free(al[1]);
    shmem_free(al[2]);
    shmem_free(al[4]);
    shmem_free(al[5]);
    shmem_free(gs);
    shmem_free(h1);
    shmem_free(f);
    shmem_free(h0);
    shmem_free(d);
    shmem_free(base);

    // After freeing everything, allocating again must agree on every PE (no
    // per-PE drift in the free lists).
    pe_step("after free-all");
    char *again = shmem_malloc(64);
    char *again2 = shmem_align(4096, 1000);
    static long rel2;
    rel2 = (again && again2) ? (long)(again2 - again) : -1;
    shmem_barrier_all();
    for (int pe = 0; pe < pe_npes_g; pe++)
        PE_EXPECT_EQ(shmem_long_g(&rel2, pe), rel2,
                     "offset of align(4096) block from a malloc(64) after freeing all, PE %d vs "
                     "mine",
                     pe);
    shmem_free(again2);
    shmem_free(again);
    shmem_finalize();
    return pe_end();
}
