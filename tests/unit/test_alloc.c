// SPDX-License-Identifier: BSD-3-Clause
//
// Unit tests for the symmetric-heap allocator (src/heap/alloc.c).
// Link with -Wl,--wrap=calloc: the wrapper below makes chosen metadata allocations fail.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heap/alloc.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* ---- metadata allocation failure injection ---- */

void *__real_calloc(size_t n, size_t sz);
void *__wrap_calloc(size_t n, size_t sz);

/* -1: never fail; k >= 0: the call after k more successful ones fails (once). */
static int calloc_fail_in_g = -1;

void *__wrap_calloc(size_t n, size_t sz)
{
    if (calloc_fail_in_g == 0) {
        calloc_fail_in_g = -1;
        return NULL;
    }
    if (calloc_fail_in_g > 0)
        calloc_fail_in_g--;
    return __real_calloc(n, sz);
}

/* ---- helpers ---- */

static uint64_t rng_next(uint64_t *s_p)
{
    /* splitmix64: fixed seeds make every run identical */
    uint64_t z = (*s_p += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_range(uint64_t *s_p, size_t lo, size_t hi) /* inclusive */
{
    return lo + (size_t)(rng_next(s_p) % (hi - lo + 1));
}

static shm_alloc_stats_t get_stats(const shm_alloc_t *a)
{
    shm_alloc_stats_t st;

    memset(&st, 0xa5, sizeof(st));
    shm_alloc_stats(a, &st);
    return st;
}

static void assert_stats(const shm_alloc_t *a, size_t used, size_t largest, size_t nlive,
                         size_t nfree)
{
    shm_alloc_stats_t st = get_stats(a);

    assert_int_equal(st.used, used);
    assert_int_equal(st.free_total, st.size - used);
    assert_int_equal(st.largest_free, largest);
    assert_int_equal(st.nblocks_live, nlive);
    assert_int_equal(st.nblocks_free, nfree);
    assert_int_equal(shm_alloc_check(a), 0);
}

static void assert_stats_equal(const shm_alloc_stats_t *x, const shm_alloc_stats_t *y)
{
    assert_int_equal(x->size, y->size);
    assert_int_equal(x->used, y->used);
    assert_int_equal(x->free_total, y->free_total);
    assert_int_equal(x->largest_free, y->largest_free);
    assert_int_equal(x->nblocks_live, y->nblocks_live);
    assert_int_equal(x->nblocks_free, y->nblocks_free);
}

/* ---- tests ---- */

static void test_create_args(void **state)
{
    shm_alloc_t *a;

    (void)state;
    assert_null(shm_alloc_create(MIB, 0));
    assert_null(shm_alloc_create(MIB, 8));
    assert_null(shm_alloc_create(MIB, 24));
    assert_null(shm_alloc_create(0, 16));
    assert_null(shm_alloc_create(15, 16));

    a = shm_alloc_create(1000, 16); /* rounded down to a multiple of min_align */
    assert_non_null(a);
    assert_int_equal(get_stats(a).size, 992);
    assert_stats(a, 0, 992, 0, 1);
    shm_alloc_destroy(a);
    shm_alloc_destroy(NULL);
}

static void test_basic(void **state)
{
    shm_alloc_t *a = shm_alloc_create(MIB, 16);
    size_t x, y, z;

    (void)state;
    assert_non_null(a);
    assert_stats(a, 0, MIB, 0, 1);

    x = shm_alloc_alloc(a, 100, 0);
    assert_int_equal(x, 0);
    assert_int_equal(shm_alloc_block_size(a, x), 112);
    y = shm_alloc_alloc(a, 1, 0);
    assert_int_equal(y, 112);
    assert_int_equal(shm_alloc_block_size(a, y), 16);
    z = shm_alloc_alloc(a, 16, 8); /* power of two below min_align: min_align wins */
    assert_int_equal(z, 128);
    assert_stats(a, 144, MIB - 144, 3, 1);

    assert_int_equal(shm_alloc_free(a, y), 0);
    assert_int_equal(shm_alloc_block_size(a, y), 0);
    assert_stats(a, 128, MIB - 144, 2, 2);
    /* first fit: the hole at 112 is reused */
    assert_int_equal(shm_alloc_alloc(a, 10, 0), 112);
    assert_int_equal(shm_alloc_free(a, 112), 0);

    assert_int_equal(shm_alloc_free(a, x), 0);
    assert_int_equal(shm_alloc_free(a, z), 0);
    assert_stats(a, 0, MIB, 0, 1);
    shm_alloc_destroy(a);
}

static void test_alignment(void **state)
{
    shm_alloc_t *a = shm_alloc_create(16 * MIB, 16);
    size_t align, off, small;

    (void)state;
    assert_non_null(a);
    for (align = 16; align <= MIB; align <<= 1) {
        /* misalign the frontier first so the leading gap is non-trivial */
        small = shm_alloc_alloc(a, 16, 0);
        assert_int_not_equal(small, SHM_ALLOC_FAIL);
        off = shm_alloc_alloc(a, 24, align);
        assert_int_not_equal(off, SHM_ALLOC_FAIL);
        assert_int_equal(off % align, 0);
        assert_int_equal(shm_alloc_block_size(a, off), 32);
        assert_int_equal(shm_alloc_check(a), 0);
    }
    shm_alloc_destroy(a);

    /* the leading gap is a free block that later allocations can use */
    a = shm_alloc_create(MIB, 16);
    assert_int_equal(shm_alloc_alloc(a, 16, 0), 0);
    assert_int_equal(shm_alloc_alloc(a, 16, 4096), 4096);
    assert_stats(a, 32, MIB - 4096 - 16, 2, 2);
    assert_int_equal(shm_alloc_alloc(a, 4096 - 16, 0), 16); /* fills the gap exactly */
    assert_stats(a, 4096 + 16, MIB - 4096 - 16, 3, 1);
    /* alignment larger than the remaining heap cannot be met */
    assert_int_equal(shm_alloc_alloc(a, 16, 2 * MIB), SHM_ALLOC_FAIL);
    /* a free block with len >= need that is too short once aligned is skipped */
    assert_int_equal(shm_alloc_free(a, 16), 0);
    assert_int_equal(shm_alloc_alloc(a, 2048, 2048), 2048); /* gap + block fill [16, 4096) */
    assert_int_equal(shm_alloc_alloc(a, 64, 4096), 8192);   /* [16, 2048) too short aligned */
    assert_int_equal(shm_alloc_alloc(a, 2032, 0), 16);
    assert_stats(a, 4096 + 16 + 64, MIB - 8192 - 64, 5, 2); /* [4112, 8192) + tail */
    assert_int_equal(shm_alloc_check(a), 0);
    shm_alloc_destroy(a);
}

static void test_exhaustion(void **state)
{
    shm_alloc_t *a = shm_alloc_create(64 * KIB, 16);
    size_t i;

    (void)state;
    for (i = 0; i < 64; i++)
        assert_int_equal(shm_alloc_alloc(a, KIB, 0), i * KIB);
    assert_stats(a, 64 * KIB, 0, 64, 0);
    assert_int_equal(shm_alloc_alloc(a, 16, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_free(a, 10 * KIB), 0);
    assert_stats(a, 63 * KIB, KIB, 63, 1);
    assert_int_equal(shm_alloc_alloc(a, KIB + 1, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, KIB, 0), 10 * KIB);
    assert_int_equal(shm_alloc_alloc(a, 1, 0), SHM_ALLOC_FAIL);
    assert_stats(a, 64 * KIB, 0, 64, 0);
    shm_alloc_destroy(a);
}

/* Three adjacent blocks freed in all 6 orders; with_tail leaves free space after them. */
static void coalesce_case(int with_tail)
{
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const size_t heap = 3 * KIB + (with_tail ? KIB : 0);
    int p, k, i;

    for (p = 0; p < 6; p++) {
        shm_alloc_t *a = shm_alloc_create(heap, 16);
        size_t off[3];
        int is_free[4] = {0, 0, 0, with_tail};

        for (i = 0; i < 3; i++) {
            off[i] = shm_alloc_alloc(a, KIB, 0);
            assert_int_equal(off[i], (size_t)i * KIB);
        }
        for (k = 0; k < 3; k++) {
            size_t runs = 0, largest = 0, cur = 0, nlive = 0;

            assert_int_equal(shm_alloc_free(a, off[perms[p][k]]), 0);
            is_free[perms[p][k]] = 1;
            /* expected: one free block per maximal run of free segments */
            for (i = 0; i < 4; i++) {
                if (i < 3 && !is_free[i])
                    nlive++;
                if (is_free[i]) {
                    cur += KIB;
                    if (cur == KIB)
                        runs++;
                    if (cur > largest)
                        largest = cur;
                } else {
                    cur = 0;
                }
            }
            assert_stats(a, nlive * KIB, largest, nlive, runs);
        }
        assert_stats(a, 0, heap, 0, 1);
        shm_alloc_destroy(a);
    }
}

static void test_coalesce(void **state)
{
    (void)state;
    coalesce_case(0);
    coalesce_case(1);
}

static void test_fragmentation(void **state)
{
    shm_alloc_t *a = shm_alloc_create(MIB, 16);
    size_t i;

    (void)state;
    for (i = 0; i < 1024; i++)
        assert_int_equal(shm_alloc_alloc(a, KIB, 0), i * KIB);
    for (i = 0; i < 1024; i += 2)
        assert_int_equal(shm_alloc_free(a, i * KIB), 0);
    assert_stats(a, 512 * KIB, KIB, 512, 512);
    assert_int_equal(shm_alloc_alloc(a, 2 * KIB, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, KIB + 16, 0), SHM_ALLOC_FAIL);
    for (i = 1; i < 1024; i += 2)
        assert_int_equal(shm_alloc_free(a, i * KIB), 0);
    assert_stats(a, 0, MIB, 0, 1);
    assert_int_equal(shm_alloc_alloc(a, 2 * KIB, 0), 0);
    assert_int_equal(shm_alloc_alloc(a, MIB - 2 * KIB, 0), 2 * KIB);
    assert_stats(a, MIB, 0, 2, 0);
    shm_alloc_destroy(a);
}

static void test_bad_free(void **state)
{
    shm_alloc_t *a = shm_alloc_create(MIB, 16);
    shm_alloc_stats_t before, after;
    size_t x, y;

    (void)state;
    x = shm_alloc_alloc(a, 256, 0);
    y = shm_alloc_alloc(a, 256, 0);
    assert_int_equal(shm_alloc_free(a, x), 0);
    before = get_stats(a);

    assert_int_equal(shm_alloc_free(a, x), -1);      /* double free */
    assert_int_equal(shm_alloc_free(a, y + 16), -1); /* interior pointer */
    assert_int_equal(shm_alloc_free(a, y + 1), -1);
    assert_int_equal(shm_alloc_free(a, 512), -1);    /* start of the free tail */
    assert_int_equal(shm_alloc_free(a, MIB), -1);
    assert_int_equal(shm_alloc_free(a, SIZE_MAX), -1);
    assert_int_equal(shm_alloc_free(NULL, 0), -1);
    assert_int_equal(shm_alloc_block_size(a, x), 0);
    assert_int_equal(shm_alloc_block_size(a, y + 16), 0);
    assert_int_equal(shm_alloc_block_size(a, y), 256);

    after = get_stats(a);
    assert_stats_equal(&before, &after);
    assert_int_equal(shm_alloc_check(a), 0);
    assert_int_equal(shm_alloc_free(a, y), 0);
    assert_int_equal(shm_alloc_free(a, y), -1);
    assert_stats(a, 0, MIB, 0, 1);
    shm_alloc_destroy(a);
}

static void test_resize(void **state)
{
    shm_alloc_t *a = shm_alloc_create(4 * KIB, 16);
    shm_alloc_stats_t before, after;
    size_t x, y, z;

    (void)state;
    x = shm_alloc_alloc(a, 256, 0);
    y = shm_alloc_alloc(a, 256, 0);
    z = shm_alloc_alloc(a, 256, 0);
    assert_int_equal(z, 512);

    /* shrink with a live right neighbour: a new free block appears */
    assert_int_equal(shm_alloc_resize(a, x, 100), x);
    assert_int_equal(shm_alloc_block_size(a, x), 112);
    assert_stats(a, 112 + 512, 4 * KIB - 768, 3, 2);
    /* same size is a no-op */
    assert_int_equal(shm_alloc_resize(a, x, 112), x);
    /* grow back into the space just freed; the free block disappears */
    assert_int_equal(shm_alloc_resize(a, x, 256), x);
    assert_stats(a, 768, 4 * KIB - 768, 3, 1);

    /* grow fails: right neighbour is live; nothing changes */
    before = get_stats(a);
    assert_int_equal(shm_alloc_resize(a, x, 257), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_block_size(a, x), 256);
    after = get_stats(a);
    assert_stats_equal(&before, &after);

    /* grow partially into a free neighbour, then shrink so the neighbour slides back */
    assert_int_equal(shm_alloc_free(a, y), 0);
    assert_int_equal(shm_alloc_resize(a, x, 384), x);
    assert_int_equal(shm_alloc_block_size(a, x), 384);
    assert_stats(a, 384 + 256, 4 * KIB - 768, 2, 2);
    assert_int_equal(shm_alloc_alloc(a, 128, 0), 384); /* the remaining 128 bytes */
    assert_int_equal(shm_alloc_free(a, 384), 0);
    assert_int_equal(shm_alloc_resize(a, x, 128), x);
    assert_stats(a, 128 + 256, 4 * KIB - 768, 2, 2);
    /* grow to exactly fill the gap up to z */
    assert_int_equal(shm_alloc_resize(a, x, 512), x);
    assert_stats(a, 768, 4 * KIB - 768, 2, 1);
    /* grow fails when the free neighbour is too small */
    assert_int_equal(shm_alloc_resize(a, z, 4 * KIB - 512 + 16), SHM_ALLOC_FAIL);
    /* the last block grows into the tail to exactly the heap end */
    assert_int_equal(shm_alloc_resize(a, z, 4 * KIB - 512), z);
    assert_stats(a, 4 * KIB, 0, 2, 0);
    /* shrink at the heap end */
    assert_int_equal(shm_alloc_resize(a, z, 16), z);
    assert_stats(a, 512 + 16, 4 * KIB - 528, 2, 1);

    /* bad args */
    assert_int_equal(shm_alloc_resize(a, x, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_resize(a, x, SIZE_MAX), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_resize(a, x + 16, 32), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_resize(a, 528, 32), SHM_ALLOC_FAIL);  /* a free block */
    assert_int_equal(shm_alloc_resize(a, 1024, 32), SHM_ALLOC_FAIL); /* inside one */
    assert_int_equal(shm_alloc_block_size(a, x), 512);
    assert_int_equal(shm_alloc_check(a), 0);
    shm_alloc_destroy(a);
}

static void test_bad_args(void **state)
{
    shm_alloc_t *a = shm_alloc_create(MIB, 16);
    shm_alloc_stats_t before, after;

    (void)state;
    before = get_stats(a);
    assert_int_equal(shm_alloc_alloc(a, 0, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 0, 64), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 16, 3), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 16, 24), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 16, 48), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 16, SIZE_MAX), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(NULL, 16, 0), SHM_ALLOC_FAIL);
    after = get_stats(a);
    assert_stats_equal(&before, &after);
    assert_int_equal(shm_alloc_check(a), 0);
    shm_alloc_destroy(a);
}

static void test_overflow(void **state)
{
    shm_alloc_t *a = shm_alloc_create(MIB, 16);
    const size_t top_bit = SIZE_MAX / 2 + 1;
    size_t big;

    (void)state;
    assert_int_equal(shm_alloc_alloc(a, SIZE_MAX, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, SIZE_MAX - 15, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, SIZE_MAX - 16, 16), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, MIB + 1, 0), SHM_ALLOC_FAIL);
    /* offset 0 meets any alignment, so occupy it first */
    assert_int_equal(shm_alloc_alloc(a, 16, 0), 0);
    assert_int_equal(shm_alloc_alloc(a, 16, top_bit), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 16, 2 * MIB), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_free(a, 0), 0);
    assert_stats(a, 0, MIB, 0, 1);
    assert_int_equal(shm_alloc_alloc(a, MIB, 0), 0);
    shm_alloc_destroy(a);

    /* a heap spanning nearly the whole size_t range: rounding and aligning must not wrap */
    a = shm_alloc_create(SIZE_MAX, 16);
    assert_non_null(a);
    big = get_stats(a).size;
    assert_int_equal(big, SIZE_MAX - 15);
    assert_int_equal(shm_alloc_alloc(a, SIZE_MAX, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, SIZE_MAX - 14, 0), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_alloc(a, 16, 0), 0);
    assert_int_equal(shm_alloc_alloc(a, 16, top_bit), top_bit);
    assert_int_equal(shm_alloc_alloc(a, top_bit, top_bit), SHM_ALLOC_FAIL);
    /* 2^63 - 32 bytes: the tail is 16 bytes short, the leading gap [16, 2^63) fits */
    assert_int_equal(shm_alloc_alloc(a, big - top_bit - 16, 0), 16);
    assert_int_equal(shm_alloc_resize(a, 0, SIZE_MAX - 15), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_resize(a, 0, SIZE_MAX), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_free(a, 16), 0);
    assert_int_equal(shm_alloc_free(a, top_bit), 0);
    assert_int_equal(shm_alloc_resize(a, 0, big), 0);
    assert_stats(a, big, 0, 1, 0);
    shm_alloc_destroy(a);
}

static void test_meta_enomem(void **state)
{
    shm_alloc_t *a;
    shm_alloc_stats_t before, after;

    (void)state;
    calloc_fail_in_g = 0; /* the allocator struct */
    assert_null(shm_alloc_create(MIB, 16));
    calloc_fail_in_g = 1; /* the first node */
    assert_null(shm_alloc_create(MIB, 16));
    assert_int_equal(calloc_fail_in_g, -1);

    a = shm_alloc_create(MIB, 16);
    assert_int_equal(shm_alloc_alloc(a, 16, 0), 0);
    before = get_stats(a);

    /* aligned alloc needs two nodes (block + tail): fail either one */
    calloc_fail_in_g = 0;
    assert_int_equal(shm_alloc_alloc(a, 16, 4096), SHM_ALLOC_FAIL);
    calloc_fail_in_g = 1;
    assert_int_equal(shm_alloc_alloc(a, 16, 4096), SHM_ALLOC_FAIL);
    assert_int_equal(calloc_fail_in_g, -1);
    after = get_stats(a);
    assert_stats_equal(&before, &after);
    assert_int_equal(shm_alloc_check(a), 0);

    /* plain alloc needs a tail node */
    calloc_fail_in_g = 0;
    assert_int_equal(shm_alloc_alloc(a, 32, 0), SHM_ALLOC_FAIL);
    after = get_stats(a);
    assert_stats_equal(&before, &after);

    /* shrink with a live right neighbour needs a node */
    assert_int_equal(shm_alloc_alloc(a, 256, 0), 16);
    assert_int_equal(shm_alloc_alloc(a, 16, 0), 272);
    before = get_stats(a);
    calloc_fail_in_g = 0;
    assert_int_equal(shm_alloc_resize(a, 16, 32), SHM_ALLOC_FAIL);
    assert_int_equal(shm_alloc_block_size(a, 16), 256);
    after = get_stats(a);
    assert_stats_equal(&before, &after);
    assert_int_equal(shm_alloc_check(a), 0);

    /* once memory is back everything works */
    assert_int_equal(shm_alloc_resize(a, 16, 32), 16);
    assert_int_equal(shm_alloc_alloc(a, 16, 4096), 4096);
    assert_int_equal(shm_alloc_check(a), 0);
    shm_alloc_destroy(a);
}

/* One random op on a; returns its result so two allocators can be compared step by step. */
static size_t random_op(shm_alloc_t *a, uint64_t *rng_p, size_t *live, size_t *nlive_p, size_t cap)
{
    uint64_t r = rng_next(rng_p) % 100;
    size_t i, off;

    if (*nlive_p > 0 && (r < 35 || *nlive_p == cap)) {
        i = rng_range(rng_p, 0, *nlive_p - 1);
        off = live[i];
        live[i] = live[--*nlive_p];
        return (size_t)shm_alloc_free(a, off);
    }
    if (*nlive_p > 0 && r < 45) {
        i = rng_range(rng_p, 0, *nlive_p - 1);
        return shm_alloc_resize(a, live[i], rng_range(rng_p, 1, 8 * KIB));
    }
    off = shm_alloc_alloc(a, rng_range(rng_p, 1, 16 * KIB),
                          r < 60 ? 0 : (size_t)1 << rng_range(rng_p, 4, 14));
    if (off != SHM_ALLOC_FAIL)
        live[(*nlive_p)++] = off;
    return off;
}

static void test_determinism(void **state)
{
    enum { CAP = 512, NOPS = 20000 };
    shm_alloc_t *a = shm_alloc_create(2 * MIB, 16);
    shm_alloc_t *b;
    size_t *live_a = calloc(CAP, sizeof(size_t)), *live_b = calloc(CAP, sizeof(size_t));
    size_t nlive_a = 0, nlive_b = 0, nfail = 0, i;
    uint64_t rng_a = 42, rng_b = 42;
    void *noise[64];

    (void)state;
    /* perturb the malloc heap so metadata nodes of b sit at unrelated addresses */
    for (i = 0; i < 64; i++)
        noise[i] = malloc(24 + 8 * i);
    b = shm_alloc_create(2 * MIB, 16);
    assert_non_null(a);
    assert_non_null(b);
    for (i = 0; i < NOPS; i++) {
        size_t ra = random_op(a, &rng_a, live_a, &nlive_a, CAP);
        size_t rb = random_op(b, &rng_b, live_b, &nlive_b, CAP);

        assert_int_equal(ra, rb);
        nfail += ra == SHM_ALLOC_FAIL;
        if (i % 64 == 0) {
            free(noise[i / 64 % 64]);
            noise[i / 64 % 64] = malloc(1 + i % 977);
        }
    }
    assert_int_equal(nlive_a, nlive_b);
    assert_memory_equal(live_a, live_b, nlive_a * sizeof(size_t));
    assert_true(nfail > 0 && nfail < NOPS / 2); /* the sequence did exercise both paths */
    for (i = 0; i < 64; i++)
        free(noise[i]);
    free(live_a);
    free(live_b);
    shm_alloc_destroy(a);
    shm_alloc_destroy(b);
}

/* ---- randomized stress against a shadow model ----
   The model is the sorted list of live ranges. Address-ordered first fit is fully specified, so
   the model predicts every result exactly: the lowest aligned offset whose window is free. */

typedef struct {
    size_t off, len;
} range_t;

typedef struct {
    range_t *r;
    size_t n, cap, size, min_align, used;
} model_t;

static size_t model_round(const model_t *m, size_t bytes)
{
    return (bytes + m->min_align - 1) & ~(m->min_align - 1);
}

/* index of the first range with off >= key */
static size_t model_lower(const model_t *m, size_t key)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (m->r[mid].off < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t model_alloc(const model_t *m, size_t bytes, size_t align)
{
    size_t need = model_round(m, bytes), cur = 0, i;

    if (align < m->min_align)
        align = m->min_align;
    for (i = 0; i <= m->n; i++) {
        size_t end = i < m->n ? m->r[i].off : m->size;
        size_t p = (cur + align - 1) & ~(align - 1);

        if (p < end && end - p >= need)
            return p;
        if (i < m->n)
            cur = m->r[i].off + m->r[i].len;
    }
    return SHM_ALLOC_FAIL;
}

static void model_insert(model_t *m, size_t off, size_t len)
{
    size_t i = model_lower(m, off);

    assert_true(m->n < m->cap);
    /* no overlap with neighbours, inside the heap */
    assert_true(off + len <= m->size);
    if (i > 0)
        assert_true(m->r[i - 1].off + m->r[i - 1].len <= off);
    if (i < m->n)
        assert_true(off + len <= m->r[i].off);
    memmove(&m->r[i + 1], &m->r[i], (m->n - i) * sizeof(range_t));
    m->r[i].off = off;
    m->r[i].len = len;
    m->n++;
    m->used += len;
}

static void model_remove(model_t *m, size_t i)
{
    m->used -= m->r[i].len;
    memmove(&m->r[i], &m->r[i + 1], (m->n - i - 1) * sizeof(range_t));
    m->n--;
}

static void model_check_stats(const model_t *m, const shm_alloc_t *a)
{
    shm_alloc_stats_t st = get_stats(a);
    size_t cur = 0, nfree = 0, largest = 0, i;

    for (i = 0; i <= m->n; i++) {
        size_t end = i < m->n ? m->r[i].off : m->size;

        if (end > cur) {
            nfree++;
            if (end - cur > largest)
                largest = end - cur;
        }
        if (i < m->n)
            cur = m->r[i].off + m->r[i].len;
    }
    assert_int_equal(st.size, m->size);
    assert_int_equal(st.used, m->used);
    assert_int_equal(st.free_total, m->size - m->used);
    assert_int_equal(st.nblocks_live, m->n);
    assert_int_equal(st.nblocks_free, nfree);
    assert_int_equal(st.largest_free, largest);
    assert_int_equal(shm_alloc_check(a), 0);
}

static size_t stress_size(uint64_t *rng_p)
{
    uint64_t r = rng_next(rng_p) % 100;

    if (r < 70)
        return rng_range(rng_p, 1, 256);
    if (r < 95)
        return rng_range(rng_p, 257, 16 * KIB);
    return rng_range(rng_p, 16 * KIB, 256 * KIB);
}

static void test_stress(void **state)
{
    enum { NOPS = 100000, CHECK_EVERY = 500 };
    model_t m = {.cap = 4096, .size = 8 * MIB, .min_align = 16};
    shm_alloc_t *a = shm_alloc_create(m.size, m.min_align);
    uint64_t rng = 0x5eed;
    size_t op, n_ok = 0, n_fail = 0, max_live = 0;

    (void)state;
    m.r = calloc(m.cap, sizeof(range_t));
    assert_non_null(a);
    assert_non_null(m.r);
    for (op = 0; op < NOPS; op++) {
        /* alternate alloc-heavy and free-heavy phases to visit both full and empty heaps */
        unsigned alloc_pct = (op / 10000) % 2 ? 35 : 65;
        uint64_t r = rng_next(&rng) % 100;

        if (r < alloc_pct && m.n < m.cap) {
            size_t bytes = stress_size(&rng);
            size_t align = rng_next(&rng) % 4 ? 0 : (size_t)1 << rng_range(&rng, 4, 20);
            size_t expect = model_alloc(&m, bytes, align);
            size_t off = shm_alloc_alloc(a, bytes, align);

            assert_int_equal(off, expect);
            if (off != SHM_ALLOC_FAIL) {
                assert_int_equal(off % (align ? align : m.min_align), 0);
                assert_int_equal(shm_alloc_block_size(a, off), model_round(&m, bytes));
                model_insert(&m, off, model_round(&m, bytes));
                n_ok++;
            } else {
                n_fail++;
            }
        } else if (r < 90 && m.n > 0) {
            size_t i = rng_range(&rng, 0, m.n - 1);

            assert_int_equal(shm_alloc_free(a, m.r[i].off), 0);
            model_remove(&m, i);
        } else if (r < 97 && m.n > 0) {
            size_t i = rng_range(&rng, 0, m.n - 1);
            size_t bytes = stress_size(&rng), need = model_round(&m, bytes);
            size_t limit = i + 1 < m.n ? m.r[i + 1].off : m.size;
            size_t expect = need <= limit - m.r[i].off ? m.r[i].off : SHM_ALLOC_FAIL;

            assert_int_equal(shm_alloc_resize(a, m.r[i].off, bytes), expect);
            if (expect != SHM_ALLOC_FAIL) {
                m.used = m.used - m.r[i].len + need;
                m.r[i].len = need;
            }
            assert_int_equal(shm_alloc_block_size(a, m.r[i].off), m.r[i].len);
        } else {
            /* bogus free: any offset that does not start a live block must be refused */
            size_t off = rng_range(&rng, 0, m.size + 64);
            size_t i = model_lower(&m, off);
            int live = i < m.n && m.r[i].off == off;

            if (!live) {
                assert_int_equal(shm_alloc_free(a, off), -1);
                assert_int_equal(shm_alloc_block_size(a, off), 0);
            }
        }
        if (m.n > max_live)
            max_live = m.n;
        if (op % CHECK_EVERY == 0)
            model_check_stats(&m, a);
    }
    model_check_stats(&m, a);
    /* the run really exercised a crowded heap and failures */
    assert_true(n_ok > 10000);
    assert_true(n_fail > 100);
    assert_true(max_live > 200);

    while (m.n > 0) {
        assert_int_equal(shm_alloc_free(a, m.r[m.n - 1].off), 0);
        model_remove(&m, m.n - 1);
    }
    assert_stats(a, 0, m.size, 0, 1);
    free(m.r);
    shm_alloc_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_args), cmocka_unit_test(test_basic),
        cmocka_unit_test(test_alignment),   cmocka_unit_test(test_exhaustion),
        cmocka_unit_test(test_coalesce),    cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_bad_free),    cmocka_unit_test(test_resize),
        cmocka_unit_test(test_bad_args),    cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_meta_enomem), cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_stress),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
