// SPDX-License-Identifier: BSD-3-Clause
//
// The deprecated active-set collectives on three active sets (all PEs, the
// even PEs with logPE_stride 1, the odd ones): shmem_barrier, shmem_sync,
// broadcast32/64 (the root's dest is left alone), collect32/64,
// fcollect32/64, alltoall32/64, alltoalls32/64, and every *_to_all of the
// active-set reduction table (in place too, and a count large enough to
// take several pieces). pSync must come back holding SHMEM_SYNC_VALUE.
// Last, overlapping active sets back to back with different pSyncs.
#include "coll_test.h"

#define BIGN 40000

static long pSync[4][SHMEM_REDUCE_SYNC_SIZE];
static long slots[64];
static char src[BIGN * 16], dst[BIGN * 16 + 64];
static long long pWrk[BIGN / 2 + SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];

typedef struct {
    int start, logs, size;
    const char *name;
} aset_t;

static int in_set(const aset_t *a, int pe)
{
    int d = pe - a->start, s = 1 << a->logs;
    return d >= 0 && d % s == 0 && d / s < a->size;
}

static int set_pe(const aset_t *a, int r)
{
    return a->start + r * (1 << a->logs);
}

static void check_psync(const char *what)
{
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            if (pSync[k][i] != SHMEM_SYNC_VALUE) {
                pe_fail("%s: pSync[%d][%d] = %ld, not SHMEM_SYNC_VALUE", what, k, i, pSync[k][i]);
                return;
            }
}

/* Active-set "barrier" for the test's own resets: sync on the set with pSync[3]. */
static void set_sync(const aset_t *a)
{
    shmem_sync(a->start, a->logs, a->size, pSync[3]);
}

static void test_barrier(const aset_t *a)
{
    int me = shmem_my_pe();
    for (long it = 1; it <= 50; it++) {
        pe_step("%s: shmem_barrier %ld", a->name, it);
        for (int r = 0; r < a->size; r++)
            if (set_pe(a, r) != me)
                shmem_long_p(&slots[me], it, set_pe(a, r));
        if (it % 2)
            shmem_barrier(a->start, a->logs, a->size, pSync[0]);
        else {
            shmem_quiet();
            shmem_sync(a->start, a->logs, a->size, pSync[0]);
        }
        for (int r = 0; r < a->size; r++)
            if (set_pe(a, r) != me)
                PE_EXPECT_EQ(slots[set_pe(a, r)], it, "%s: barrier %ld: word of PE %d", a->name,
                             it, set_pe(a, r));
        shmem_barrier(a->start, a->logs, a->size, pSync[0]);
    }
    check_psync("shmem_barrier");
}

static void test_data(const aset_t *a)
{
    int me = shmem_my_pe(), n = a->size, r_me = 0;
    for (int r = 0; r < n; r++)
        if (set_pe(a, r) == me)
            r_me = r;
    for (int bits = 32; bits <= 64; bits += 32) {
        size_t es = (size_t)bits / 8, ne = 37;
        for (int root = 0; root < n; root++) {
            uint32_t tag = (uint32_t)(bits * 100 + root);
            pe_fill(src, ne * es, me, tag, 0);
            memset(dst, 0xEE, ne * es);
            set_sync(a);
            pe_step("%s: broadcast%d root %d", a->name, bits, root);
            if (bits == 32)
                shmem_broadcast32(dst, src, ne, root, a->start, a->logs, a->size, pSync[0]);
            else
                shmem_broadcast64(dst, src, ne, root, a->start, a->logs, a->size, pSync[0]);
            if (r_me == root)
                pe_check_byte(dst, ne * es, 0xEE, "broadcast: the root's dest is untouched");
            else
                pe_check_fill(dst, ne * es, set_pe(a, root), tag, 0, "broadcast dest");
            set_sync(a);
        }
        // fcollect, collect (ragged), alltoall, alltoalls
        uint32_t tag = (uint32_t)(bits * 1000);
        pe_fill(src, ne * es * (size_t)n, me, tag, 0);
        set_sync(a);
        pe_step("%s: fcollect%d", a->name, bits);
        (bits == 32 ? shmem_fcollect32 : shmem_fcollect64)(dst, src, ne, a->start, a->logs,
                                                           a->size, pSync[1]);
        for (int r = 0; r < n; r++)
            pe_check_fill(dst + (size_t)r * ne * es, ne * es, set_pe(a, r), tag, 0,
                          "fcollect block");
        set_sync(a);
        pe_step("%s: collect%d", a->name, bits);
        (bits == 32 ? shmem_collect32 : shmem_collect64)(dst, src, (size_t)(r_me % 3), a->start,
                                                         a->logs, a->size, pSync[2]);
        size_t off = 0;
        for (int r = 0; r < n; r++) {
            pe_check_fill(dst + off, (size_t)(r % 3) * es, set_pe(a, r), tag, 0, "collect block");
            off += (size_t)(r % 3) * es;
        }
        set_sync(a);
        pe_step("%s: alltoall%d", a->name, bits);
        (bits == 32 ? shmem_alltoall32 : shmem_alltoall64)(dst, src, ne, a->start, a->logs,
                                                           a->size, pSync[0]);
        for (int r = 0; r < n; r++)
            pe_check_fill(dst + (size_t)r * ne * es, ne * es, set_pe(a, r), tag,
                          (uint64_t)r_me * ne * es, "alltoall block");
        memset(dst, 0, (size_t)n * 3 * 2 * es);
        set_sync(a);
        pe_step("%s: alltoalls%d", a->name, bits);
        (bits == 32 ? shmem_alltoalls32 : shmem_alltoalls64)(dst, src, 2, 1, 3, a->start, a->logs,
                                                             a->size, pSync[1]);
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < 3; i++)
                pe_check_fill(dst + ((size_t)r * 3 + i) * 2 * es, es, set_pe(a, r), tag,
                              ((size_t)r_me * 3 + i) * es, "alltoalls element");
        set_sync(a);
    }
    check_psync("data collectives");
}

#define TOALL_CASE(T, N, OP, VAL, EXPR, CNT, INPLACE)                                        \
    do {                                                                                     \
        T *s_ = (T *)src, *d_ = INPLACE ? (T *)src : (T *)dst;                               \
        for (int i = 0; i < (CNT); i++)                                                      \
            s_[i] = VAL(T, r_me, i % 97);                                                    \
        set_sync(a);                                                                         \
        pe_step("%s: " #N "_" #OP "_to_all %d%s", a->name, (CNT), INPLACE ? " in place" : ""); \
        shmem_##N##_##OP##_to_all(d_, s_, (CNT), a->start, a->logs, a->size, (T *)pWrk,      \
                                  pSync[(CNT) % 3]);                                         \
        int bad_ = 0;                                                                        \
        for (int i = 0; i < (CNT) && bad_ < 1; i++) {                                        \
            T e_ = VAL(T, 0, i % 97);                                                        \
            for (int r = 1; r < n; r++) {                                                    \
                T x = e_, y = VAL(T, r, i % 97);                                             \
                e_ = (EXPR);                                                                 \
            }                                                                                \
            if (!(d_[i] == e_))                                                              \
                bad_++, pe_fail("%s: " #N "_" #OP "_to_all %d: [%d] wrong", a->name, (CNT), i); \
        }                                                                                    \
        pe_checks_g++;                                                                       \
        set_sync(a);                                                                         \
    } while (0);
#define TOALL_ALL(T, N, OP, VAL, EXPR)                                                       \
    TOALL_CASE(T, N, OP, VAL, EXPR, 1, 0) TOALL_CASE(T, N, OP, VAL, EXPR, 9, 1)
#define TOALL_BITWISE(T, N)                                                                  \
    TOALL_ALL(T, N, and, CT_VAL, x & y) TOALL_ALL(T, N, or, CT_VAL, x | y)                   \
    TOALL_ALL(T, N, xor, CT_VAL, x ^ y)
#define TOALL_MINMAX(T, N)                                                                   \
    TOALL_ALL(T, N, max, CT_VAL, x > y ? x : y) TOALL_ALL(T, N, min, CT_VAL, x < y ? x : y)
#define TOALL_ARITH(T, N) TOALL_ALL(T, N, sum, CT_VAL, x + y) TOALL_ALL(T, N, prod, CT_PVAL, x * y)
// 1.6 "Reduction Types, Names and Supporting Operations for Active-Set-Based Reductions"
#define AS_BITWISE_TYPES(X) X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define AS_MINMAX_TYPES(X) AS_BITWISE_TYPES(X) CT_REAL_TYPES(X)
#define AS_ARITH_TYPES(X) AS_MINMAX_TYPES(X) CT_COMPLEX_TYPES(X)

static void test_to_all(const aset_t *a)
{
    int me = shmem_my_pe(), n = a->size, r_me = 0;
    for (int r = 0; r < n; r++)
        if (set_pe(a, r) == me)
            r_me = r;
    AS_BITWISE_TYPES(TOALL_BITWISE)
    AS_MINMAX_TYPES(TOALL_MINMAX)
    AS_ARITH_TYPES(TOALL_ARITH)
    TOALL_CASE(long, long, sum, CT_VAL, x + y, BIGN, 0)
    TOALL_CASE(double, double, sum, CT_VAL, x + y, BIGN, 1)
    check_psync("to_all");
}

// Overlapping active sets, back to back, each with its own pSync (no syncs between).
static void test_overlap(const aset_t *all, const aset_t *even)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    static long s[1], out[3][8];
    s[0] = me + 1;
    memset(out, 0, sizeof out);
    shmem_barrier_all();
    pe_step("overlapping active sets");
    shmem_long_sum_to_all(out[0], s, 1, all->start, all->logs, all->size, (long *)pWrk, pSync[0]);
    if (in_set(even, me))
        shmem_long_sum_to_all(out[1], s, 1, even->start, even->logs, even->size, (long *)pWrk,
                              pSync[1]);
    shmem_long_max_to_all(out[2], s, 1, all->start, all->logs, all->size, (long *)pWrk, pSync[2]);
    long e_all = (long)n * (n + 1) / 2, e_even = 0;
    for (int p = 0; p < n; p += 2)
        e_even += p + 1;
    PE_EXPECT_EQ(out[0][0], e_all, "overlap: sum over all");
    if (in_set(even, me))
        PE_EXPECT_EQ(out[1][0], e_even, "overlap: sum over the even PEs");
    PE_EXPECT_EQ(out[2][0], (long)n, "overlap: max over all");
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    pe_begin("coll_deprecated");
    pe_watchdog(110);
    int n = shmem_n_pes(), me = shmem_my_pe();
    if (n > 64) {
        pe_fail("more than 64 PEs");
        shmem_global_exit(1);
    }
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            pSync[k][i] = SHMEM_SYNC_VALUE;
    aset_t sets[] = {{0, 0, n, "all"}, {0, 1, (n + 1) / 2, "even"}, {1, 1, n / 2, "odd"}};
    shmem_barrier_all();
    for (int k = 0; k < 3; k++) {
        if (sets[k].size < 1 || !in_set(&sets[k], me)) {
            shmem_barrier_all();
            continue;
        }
        test_barrier(&sets[k]);
        test_data(&sets[k]);
        test_to_all(&sets[k]);
        shmem_barrier_all();
    }
    test_overlap(&sets[0], &sets[1]);
    shmem_finalize();
    return pe_end();
}
