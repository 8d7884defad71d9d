// SPDX-License-Identifier: BSD-3-Clause
/* Address translation (local address -> segment, offset) and the put plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "conduit/ofi/ofi_plan.h"
#include "heap/heap.h"

shm_seg_t shm_seg_g[SHM_NSEGS];

static char heap[4096];
static char data[1024];

static int setup(void **state)
{
    (void)state;
    shm_seg_g[SHM_SEG_HEAP] = (shm_seg_t){(uintptr_t)heap, sizeof(heap)};
    shm_seg_g[SHM_SEG_DATA] = (shm_seg_t){(uintptr_t)data, sizeof(data)};
    return 0;
}

static void test_xlate_inside(void **state)
{
    (void)state;
    size_t off = 12345;
    assert_int_equal(shm_heap_xlate(heap, 8, &off), SHM_SEG_HEAP);
    assert_int_equal(off, 0);
    assert_int_equal(shm_heap_xlate(heap + 100, 50, &off), SHM_SEG_HEAP);
    assert_int_equal(off, 100);
    assert_int_equal(shm_heap_xlate(heap + 4095, 1, &off), SHM_SEG_HEAP);
    assert_int_equal(off, 4095);
    assert_int_equal(shm_heap_xlate(heap, sizeof(heap), &off), SHM_SEG_HEAP);
    assert_int_equal(shm_heap_xlate(data + 7, 3, &off), SHM_SEG_DATA);
    assert_int_equal(off, 7);
}

static void test_xlate_outside(void **state)
{
    (void)state;
    size_t off = 999;
    char local[16];
    assert_int_equal(shm_heap_xlate(local, 1, &off), -1);
    assert_int_equal(off, 999);                              /* untouched */
    assert_int_equal(shm_heap_xlate(heap + 4090, 7, &off), -1); /* runs off the end */
    assert_int_equal(shm_heap_xlate(heap + 1, sizeof(heap), &off), -1);
    assert_int_equal(shm_heap_xlate((char *)((uintptr_t)heap - 1), 2, &off), -1);
    assert_int_equal(shm_heap_xlate(data + 1000, SIZE_MAX, &off), -1); /* no wrap-around */
    assert_int_equal(shm_heap_xlate(NULL, 1, &off), -1);
}

static void test_xlate_zero_length(void **state)
{
    (void)state;
    size_t off;
    assert_int_equal(shm_heap_xlate(heap + 10, 0, &off), SHM_SEG_HEAP);
    assert_int_equal(off, 10);
    assert_int_equal(shm_heap_xlate(heap + sizeof(heap), 0, &off), SHM_SEG_HEAP);
    assert_int_equal(off, sizeof(heap));
}

static void test_plan_paths(void **state)
{
    (void)state;
    /* shm-like: inject 4096, bounce 16 KiB x 64 */
    assert_int_equal(cdt_plan_put(1, 4096, 16384, 64), CDT_PATH_INJECT);
    assert_int_equal(cdt_plan_put(4096, 4096, 16384, 64), CDT_PATH_INJECT);
    assert_int_equal(cdt_plan_put(4097, 4096, 16384, 64), CDT_PATH_BOUNCE);
    assert_int_equal(cdt_plan_put(16384, 4096, 16384, 64), CDT_PATH_BOUNCE);
    assert_int_equal(cdt_plan_put(16385, 4096, 16384, 64), CDT_PATH_FRAGMENT);
    /* no bounce buffers (shared context): medium goes straight out */
    assert_int_equal(cdt_plan_put(8192, 4096, 16384, 0), CDT_PATH_FRAGMENT);
    /* rxm-like: injects disabled */
    assert_int_equal(cdt_plan_put(8, 0, 16384, 64), CDT_PATH_BOUNCE);
}

static void test_plan_sizes(void **state)
{
    (void)state;
    assert_int_equal(cdt_plan_nfrags(1, 1 << 20), 1);
    assert_int_equal(cdt_plan_nfrags(1 << 20, 1 << 20), 1);
    assert_int_equal(cdt_plan_nfrags((1 << 20) + 1, 1 << 20), 2);
    assert_int_equal(cdt_plan_nfrags(5 << 20, 1 << 20), 5);
    /* inject size: provider's, lowered by the user, none where not delivery-complete */
    assert_int_equal(cdt_plan_inject_size(4096, 0, 0, 0), 4096);
    assert_int_equal(cdt_plan_inject_size(4096, 256, 0, 0), 256);
    assert_int_equal(cdt_plan_inject_size(4096, 1 << 20, 0, 0), 4096);
    assert_int_equal(cdt_plan_inject_size(64, 0, 1, 0), 0);
    assert_int_equal(cdt_plan_inject_size(64, 0, 1, 1), 64);
    /* fragment size: default 1 MiB, capped by max_msg_size */
    assert_int_equal(cdt_plan_frag_size(0, SIZE_MAX), 1 << 20);
    assert_int_equal(cdt_plan_frag_size(65536, SIZE_MAX), 65536);
    assert_int_equal(cdt_plan_frag_size(1 << 20, 8192), 8192);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_xlate_inside, setup),
        cmocka_unit_test_setup(test_xlate_outside, setup),
        cmocka_unit_test_setup(test_xlate_zero_length, setup),
        cmocka_unit_test(test_plan_paths),
        cmocka_unit_test(test_plan_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
