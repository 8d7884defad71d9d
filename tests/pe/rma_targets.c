// SPDX-License-Identifier: BSD-3-Clause
//
// RMA to and from every kind of symmetric object: the symmetric heap, an
// initialised global (.data), a zero-initialised global (.bss) and `static`
// arrays inside a function (one zero-initialised, one initialised). For
// each: long_put, long_p, an unaligned putmem, long_get and long_g, to the
// right neighbour / from the left one. The initial values of the data-segment
// objects are first read remotely, before anyone writes them.
#include "pe_check.h"

#define NL 64

long g_data[NL] = {[0 ... NL - 1] = -7}; // .data
long g_bss[NL];                          // .bss

static long *func_static_bss(void)
{
    static long arr[NL];
    return arr;
}

static long *func_static_data(void)
{
    static long arr[NL] = {[0 ... NL - 1] = -9};
    return arr;
}

typedef struct target {
    const char *name;
    long *base;
    int has_initial; // data segment object with a known initial value
    long initial;
} target_t;

// Layout of each NL-long target:
//   [8,24)  long_put from the left PE      [30]     long_p from the left PE
//   [32,35) bytes 3..15 by putmem (13 bytes at an odd address)
//   [40,51) get/g source owned by this PE  [60,64)  initial value, read remotely
//   everything else stays 0.
enum { PUT_AT = 8, PUT_N = 16, P_AT = 30, MEM_AT = 32, MEM_OFF = 3, MEM_N = 13, GET_AT = 40,
       GET_N = 8, G_AT = 50, INIT_AT = 60 };

static long expected_after(const target_t *t, int t_id, int i, int left, int me)
{
    if (i >= PUT_AT && i < PUT_AT + PUT_N)
        return PE_VAL(long, left, t_id, i);
    if (i == P_AT)
        return PE_VAL(long, left, t_id, i);
    if (i >= GET_AT && i <= G_AT)
        return PE_VAL(long, me, t_id, i);
    if (i >= INIT_AT && t->has_initial)
        return t->initial;
    return 0;
}

int main(void)
{
    shmem_init();
    pe_begin("rma_targets");
    const int right = pe_right(), left = pe_left(), me = pe_me_g;

    long *heap = shmem_malloc(NL * sizeof(long));
    if (!heap) {
        pe_fail("shmem_malloc(%zu) returned NULL", NL * sizeof(long));
        shmem_global_exit(1);
    }
    memset(heap, 0, NL * sizeof(long));
    target_t targets[] = {
        {"symmetric heap", heap, 0, 0},
        {"global initialised (.data)", g_data, 1, -7},
        {"global zero-initialised (.bss)", g_bss, 1, 0},
        {"function static zero-initialised", func_static_bss(), 1, 0},
        {"function static initialised", func_static_data(), 1, -9},
    };
    const int nt = (int)(sizeof targets / sizeof targets[0]);
    shmem_barrier_all();

    // 1. Initial values of data-segment objects, read remotely (get and g)
    //    before anybody writes them.
    for (int t = 0; t < nt; t++) {
        if (!targets[t].has_initial)
            continue;
        long got[NL - INIT_AT];
        pe_step("initial get from %s", targets[t].name);
        shmem_long_get(got, targets[t].base + INIT_AT, NL - INIT_AT, left);
        for (int i = 0; i < NL - INIT_AT; i++)
            PE_EXPECT_EQ(got[i], targets[t].initial, "get initial %s[%d] of PE %d",
                         targets[t].name, INIT_AT + i, left);
        PE_EXPECT_EQ(shmem_long_g(targets[t].base + 0, left), targets[t].initial,
                     "g initial %s[0] of PE %d", targets[t].name, left);
    }
    // Everyone has read [0] and [60,64) before anyone changes [0,60).
    shmem_barrier_all();

    // 2. Prepare: 0 everywhere below INIT_AT, get sources owned by this PE.
    for (int t = 0; t < nt; t++) {
        long *b = targets[t].base;
        for (int i = 0; i < INIT_AT; i++)
            b[i] = (i >= GET_AT && i <= G_AT) ? PE_VAL(long, me, t, i) : 0;
    }
    shmem_barrier_all();

    // 3. All operations, to the right neighbour and from the left one.
    long gets[8][GET_N];
    long gs[8];
    for (int t = 0; t < nt; t++) {
        long *b = targets[t].base;
        long src[PUT_N];
        uint8_t bytes[MEM_N];
        for (int i = 0; i < PUT_N; i++)
            src[i] = PE_VAL(long, me, t, PUT_AT + i);
        pe_fill(bytes, MEM_N, me, (uint32_t)t, 0);
        pe_step("operations on %s", targets[t].name);
        shmem_long_put(b + PUT_AT, src, PUT_N, right);
        shmem_long_p(b + P_AT, PE_VAL(long, me, t, P_AT), right);
        shmem_putmem((char *)(b + MEM_AT) + MEM_OFF, bytes, MEM_N, right);
        shmem_long_get(gets[t], b + GET_AT, GET_N, left);
        gs[t] = shmem_long_g(b + G_AT, left);
    }
    shmem_quiet();
    pe_step("barrier after operations");
    shmem_barrier_all();

    // 4. Check.
    for (int t = 0; t < nt; t++) {
        const target_t *tg = &targets[t];
        const long *b = tg->base;
        for (int i = 0; i < NL; i++) {
            if (i >= MEM_AT && i < MEM_AT + 3)
                continue; // bytes checked below
            PE_EXPECT_EQ(b[i], expected_after(tg, t, i, left, me), "%s[%d] after put/p from PE %d",
                         tg->name, i, left);
        }
        const uint8_t *m = (const uint8_t *)(b + MEM_AT);
        char what[160];
        snprintf(what, sizeof what, "%s putmem of %d bytes at byte %d of [%d], data of PE %d",
                 tg->name, MEM_N, MEM_OFF, MEM_AT, left);
        pe_check_byte(m, MEM_OFF, 0, "putmem: bytes before the destination");
        pe_check_fill(m + MEM_OFF, MEM_N, left, (uint32_t)t, 0, what);
        pe_check_byte(m + MEM_OFF + MEM_N, 3 * sizeof(long) - MEM_OFF - MEM_N, 0,
                      "putmem: bytes after the destination");
        for (int i = 0; i < GET_N; i++)
            PE_EXPECT_EQ(gets[t][i], PE_VAL(long, left, t, GET_AT + i), "long_get %s[%d] of PE %d",
                         tg->name, GET_AT + i, left);
        PE_EXPECT_EQ(gs[t], PE_VAL(long, left, t, G_AT), "long_g %s[%d] of PE %d", tg->name, G_AT,
                     left);
    }

    pe_step("finalize");
    shmem_barrier_all();
    shmem_free(heap);
    shmem_finalize();
    return pe_end();
}
