// SPDX-License-Identifier: BSD-3-Clause
//
// Every C11 generic name accepts every type its spec table allows (current
// and deprecated) and picks that type's function: RMA (put, get, p, g,
// their _nbi, strided and context forms), put-with-signal, the standard,
// extended and bitwise AMOs (and the deprecated shmem_add, shmem_fetch,
// ...), wait_until/test and their _all/_any/_some(_vector) forms (with the
// deprecated short and unsigned short, which Sandia OpenSHMEM takes too), and the team collectives:
// broadcast, collect, fcollect, alltoall(s) and every reduction and scan;
// and shmem_sync with one argument (team) and with four (active set).
// The type lists below are written from the spec's tables, independently
// of the library's, so a type missing from a generic fails to compile and a
// wrong association gives a wrong value. Each PE works with its right
// neighbour; results are exact in every type.
#include "coll_test.h"

#define AMO_STD_TYPES(X)                                                                     \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)                   \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)               \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)                \
    X(ptrdiff_t, ptrdiff)
#define AMO_EXT_TYPES(X) X(float, float) X(double, double) AMO_STD_TYPES(X)
#define AMO_BITWISE_TYPES(X)                                                                 \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)           \
    X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)

static int me, npes, right, left;
static char *sym;             // 4 KiB of symmetric heap, reused by every case
static uint64_t sigw;         // put-with-signal counter (adds of 1)
static uint64_t sig_expect;   // what sigw must reach

static void reset(void)
{
    shmem_barrier_all();
    memset(sym, 0, 4096);
    shmem_barrier_all();
}

// ---- RMA and put-with-signal ---------------------------------------------
#define RMA_CASE(T, N)                                                                       \
    static void rma_##N(void)                                                                \
    {                                                                                        \
        T *d = (T *)sym, s[8], g[8];                                                         \
        for (int i = 0; i < 8; i++)                                                          \
            s[i] = PE_VAL(T, me, 1, i);                                                      \
        reset();                                                                             \
        pe_step("generic RMA on " #T);                                                       \
        shmem_put(d, s, 2, right);                                                           \
        shmem_put(SHMEM_CTX_DEFAULT, d + 2, s + 2, 2, right);                                \
        shmem_put_nbi(d + 4, s + 4, 1, right);                                               \
        shmem_put_nbi(SHMEM_CTX_DEFAULT, d + 5, s + 5, 1, right);                            \
        shmem_p(d + 6, s[6], right);                                                         \
        shmem_p(SHMEM_CTX_DEFAULT, d + 7, s[7], right);                                      \
        shmem_iput(d + 8, s, 2, 1, 4, right);   /* d[8], d[10], d[12], d[14] */             \
        shmem_ibput(d + 16, s, 4, 2, 2, 2, right); /* blocks at 16 and 20 */                \
        shmem_put_signal(d + 24, s, 1, &sigw, 1, SHMEM_SIGNAL_ADD, right);                   \
        shmem_put_signal_nbi(SHMEM_CTX_DEFAULT, d + 25, s + 1, 1, &sigw, 1, SHMEM_SIGNAL_ADD, \
                             right);                                                         \
        sig_expect += 2;                                                                     \
        shmem_quiet();                                                                       \
        shmem_barrier_all();                                                                 \
        for (int i = 0; i < 8; i++)                                                          \
            PE_EXPECT(d[i] == PE_VAL(T, left, 1, i), "generic put/p " #T " [%d]", i);        \
        for (int i = 0; i < 4; i++)                                                          \
            PE_EXPECT(d[8 + 2 * i] == PE_VAL(T, left, 1, i), "generic iput " #T " [%d]", i); \
        for (int i = 0; i < 4; i++)                                                          \
            PE_EXPECT(d[16 + (i / 2) * 4 + i % 2] == PE_VAL(T, left, 1, (i / 2) * 2 + i % 2), \
                      "generic ibput " #T " [%d]", i);                                       \
        PE_EXPECT(d[24] == PE_VAL(T, left, 1, 0) && d[25] == PE_VAL(T, left, 1, 1),          \
                  "generic put_signal(_nbi) " #T);                                           \
        /* gets: right's d holds my values */                                                \
        memset(g, 0, sizeof g);                                                              \
        shmem_get(g, d, 2, right);                                                           \
        shmem_get(SHMEM_CTX_DEFAULT, g + 2, d + 2, 2, right);                                \
        shmem_get_nbi(g + 4, d + 4, 1, right);                                               \
        shmem_get_nbi(SHMEM_CTX_DEFAULT, g + 5, d + 5, 1, right);                            \
        shmem_quiet();                                                                       \
        g[6] = shmem_g(d + 6, right);                                                        \
        g[7] = shmem_g(SHMEM_CTX_DEFAULT, (const T *)(d + 7), right);                        \
        for (int i = 0; i < 8; i++)                                                          \
            PE_EXPECT(g[i] == s[i], "generic get/g " #T " [%d]", i);                         \
        memset(g, 0, sizeof g);                                                              \
        shmem_iget(g, d + 8, 1, 2, 4, right);                                                \
        shmem_ibget(g + 4, d + 16, 2, 4, 2, 2, right);                                       \
        for (int i = 0; i < 4; i++)                                                          \
            PE_EXPECT(g[i] == s[i] && g[4 + (i / 2) * 2 + i % 2] == s[(i / 2) * 2 + i % 2],  \
                      "generic iget/ibget " #T " [%d]", i);                                  \
    }
PE_RMA_TYPES(RMA_CASE)

// ---- AMOs: every PE works on its right neighbour's word ----------------
#define AMO_STD_CASE(T, N)                                                                   \
    static void amo_std_##N(void)                                                            \
    {                                                                                        \
        T *w = (T *)sym, f = 0;                                                              \
        reset();                                                                             \
        pe_step("generic standard AMOs on " #T);                                             \
        shmem_atomic_add(w, (T)5, right);                                                    \
        shmem_fence();                                                                       \
        shmem_atomic_inc(SHMEM_CTX_DEFAULT, w, right);                                       \
        shmem_fence();                                                                       \
        PE_EXPECT(shmem_atomic_fetch_add(w, (T)10, right) == (T)6, "fetch_add " #T);         \
        PE_EXPECT(shmem_atomic_fetch_inc(w, right) == (T)16, "fetch_inc " #T);               \
        PE_EXPECT(shmem_atomic_compare_swap(w, (T)17, (T)40, right) == (T)17, "cswap " #T);  \
        shmem_atomic_fetch_add_nbi(&f, w, (T)1, right);                                      \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)40, "fetch_add_nbi " #T);                                          \
        shmem_atomic_fetch_inc_nbi(&f, w, right);                                            \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)41, "fetch_inc_nbi " #T);                                          \
        shmem_atomic_compare_swap_nbi(&f, w, (T)42, (T)50, right);                           \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)42, "compare_swap_nbi " #T);                                       \
        /* deprecated 1.4 generic names */                                                   \
        shmem_add(w, (T)2, right);                                                           \
        shmem_fence();                                                                       \
        shmem_inc(w, right);                                                                 \
        shmem_fence();                                                                       \
        PE_EXPECT(shmem_fadd(w, (T)1, right) == (T)53, "deprecated fadd " #T);               \
        PE_EXPECT(shmem_finc(w, right) == (T)54, "deprecated finc " #T);                     \
        PE_EXPECT(shmem_cswap(w, (T)55, (T)60, right) == (T)55, "deprecated cswap " #T);     \
        shmem_barrier_all();                                                                 \
        PE_EXPECT(*w == (T)60, "final value of standard AMOs " #T);                          \
    }
AMO_STD_TYPES(AMO_STD_CASE)

#define AMO_EXT_CASE(T, N)                                                                   \
    static void amo_ext_##N(void)                                                            \
    {                                                                                        \
        T *w = (T *)sym, f = 0;                                                              \
        reset();                                                                             \
        pe_step("generic extended AMOs on " #T);                                             \
        shmem_atomic_set(w, (T)3, right);                                                    \
        shmem_quiet();                                                                       \
        PE_EXPECT(shmem_atomic_fetch(w, right) == (T)3, "fetch " #T);                        \
        PE_EXPECT(shmem_atomic_fetch(SHMEM_CTX_DEFAULT, (const T *)w, right) == (T)3,        \
                  "ctx fetch " #T);                                                          \
        PE_EXPECT(shmem_atomic_swap(w, (T)4, right) == (T)3, "swap " #T);                    \
        shmem_atomic_swap_nbi(&f, w, (T)5, right);                                           \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)4, "swap_nbi " #T);                                                \
        shmem_atomic_fetch_nbi(&f, w, right);                                                \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)5, "fetch_nbi " #T);                                               \
        shmem_set(w, (T)6, right);                                                           \
        shmem_quiet();                                                                       \
        PE_EXPECT(shmem_swap(w, (T)7, right) == (T)6, "deprecated swap " #T);                \
        PE_EXPECT(shmem_fetch(w, right) == (T)7, "deprecated fetch " #T);                    \
        shmem_barrier_all();                                                                 \
        PE_EXPECT(*w == (T)7, "final value of extended AMOs " #T);                           \
    }
AMO_EXT_TYPES(AMO_EXT_CASE)

#define AMO_BIT_CASE(T, N)                                                                   \
    static void amo_bit_##N(void)                                                            \
    {                                                                                        \
        T *w = (T *)sym, f = 0;                                                              \
        reset();                                                                             \
        pe_step("generic bitwise AMOs on " #T);                                              \
        shmem_atomic_or(w, (T)0x0f, right);                                                  \
        shmem_fence();                                                                       \
        shmem_atomic_and(w, (T)0x3c, right);                                                 \
        shmem_fence();                                                                       \
        shmem_atomic_xor(SHMEM_CTX_DEFAULT, w, (T)0x01, right); /* 0x0d */                   \
        shmem_fence();                                                                       \
        PE_EXPECT(shmem_atomic_fetch_or(w, (T)0x30, right) == (T)0x0d, "fetch_or " #T);      \
        PE_EXPECT(shmem_atomic_fetch_and(w, (T)0x1f, right) == (T)0x3d, "fetch_and " #T);    \
        PE_EXPECT(shmem_atomic_fetch_xor(w, (T)0x03, right) == (T)0x1d, "fetch_xor " #T);    \
        shmem_atomic_fetch_or_nbi(&f, w, (T)0x40, right);                                    \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)0x1e, "fetch_or_nbi " #T);                                         \
        shmem_atomic_fetch_and_nbi(&f, w, (T)0x4f, right);                                   \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)0x5e, "fetch_and_nbi " #T);                                        \
        shmem_atomic_fetch_xor_nbi(&f, w, (T)0x4e, right);                                   \
        shmem_quiet();                                                                       \
        PE_EXPECT(f == (T)0x4e, "fetch_xor_nbi " #T);                                        \
        shmem_barrier_all();                                                                 \
        PE_EXPECT(*w == (T)0, "final value of bitwise AMOs " #T);                            \
    }
AMO_BITWISE_TYPES(AMO_BIT_CASE)

// ---- point-to-point: the left neighbour sets my words with a put + quiet ----
#define P2P_CASE(T, N)                                                                       \
    static void p2p_##N(void)                                                                \
    {                                                                                        \
        T *v = (T *)sym;                                                                     \
        reset();                                                                             \
        pe_step("generic wait_until / test on " #T);                                         \
        T one[4] = {(T)1, (T)1, (T)1, (T)1};                                                 \
        shmem_put(v, one, 4, right);                                                         \
        shmem_fence(); /* the flag v[4] after the data */                                    \
        shmem_p(v + 4, (T)1, right);                                                         \
        shmem_wait_until(v + 4, SHMEM_CMP_EQ, (T)1);                                         \
        PE_EXPECT(shmem_test(v + 1, SHMEM_CMP_NE, (T)0) == 1, "test " #T);                   \
        PE_EXPECT(shmem_test(v + 1, SHMEM_CMP_GT, (T)1) == 0, "test GT " #T);                \
    }
#define P2P_SET_CASE(T, N)                                                                   \
    P2P_CASE(T, N)                                                                           \
    static void p2p_set_##N(void)                                                            \
    {                                                                                        \
        p2p_##N();                                                                           \
        T *v = (T *)sym, cmp[4] = {(T)1, (T)1, (T)1, (T)1};                                  \
        size_t idx[4];                                                                       \
        const int st[4] = {0, 0, 0, 1};                                                      \
        pe_step("generic wait_until/test _all/_any/_some(_vector) on " #T);                  \
        shmem_wait_until_all(v, 4, NULL, SHMEM_CMP_EQ, (T)1);                                \
        shmem_wait_until_all_vector(v, 4, st, SHMEM_CMP_EQ, cmp);                            \
        PE_EXPECT(shmem_wait_until_any(v, 4, st, SHMEM_CMP_EQ, (T)1) < 3, "any " #T);        \
        PE_EXPECT(shmem_wait_until_any_vector(v, 4, NULL, SHMEM_CMP_EQ, cmp) < 4,            \
                  "any_vector " #T);                                                         \
        PE_EXPECT(shmem_wait_until_some(v, 4, idx, st, SHMEM_CMP_EQ, (T)1) == 3, "some " #T); \
        PE_EXPECT(shmem_wait_until_some_vector(v, 4, idx, NULL, SHMEM_CMP_EQ, cmp) == 4,     \
                  "some_vector " #T);                                                        \
        PE_EXPECT(shmem_test_all(v, 4, NULL, SHMEM_CMP_EQ, (T)1) == 1, "test_all " #T);      \
        PE_EXPECT(shmem_test_all_vector(v, 4, st, SHMEM_CMP_GT, cmp) == 0,                   \
                  "test_all_vector " #T);                                                    \
        PE_EXPECT(shmem_test_any(v, 4, st, SHMEM_CMP_NE, (T)1) == SIZE_MAX, "test_any " #T); \
        PE_EXPECT(shmem_test_any_vector(v, 4, NULL, SHMEM_CMP_EQ, cmp) < 4,                  \
                  "test_any_vector " #T);                                                    \
        PE_EXPECT(shmem_test_some(v, 4, idx, st, SHMEM_CMP_EQ, (T)1) == 3, "test_some " #T); \
        PE_EXPECT(shmem_test_some_vector(v, 4, idx, NULL, SHMEM_CMP_LT, cmp) == 0,           \
                  "test_some_vector " #T);                                                   \
    }
PE_P2P_TYPES(P2P_SET_CASE)
PE_P2P_DEPRECATED_TYPES(P2P_SET_CASE)

// ---- team collectives ------------------------------------------------------
#define COLL_CASE(T, N)                                                                      \
    static void coll_##N(void)                                                               \
    {                                                                                        \
        T *d = (T *)sym, *s = (T *)(sym + 2048);                                             \
        reset();                                                                             \
        pe_step("generic collectives on " #T);                                               \
        for (int r = 0; r < npes; r++)                                                       \
            s[r] = PE_VAL(T, me, 2, r);                                                      \
        shmem_barrier_all();                                                                 \
        PE_EXPECT(shmem_broadcast(SHMEM_TEAM_WORLD, d, s, 1, npes - 1) == 0, "bcast rc");    \
        PE_EXPECT(d[0] == PE_VAL(T, npes - 1, 2, 0), "generic broadcast " #T);               \
        shmem_barrier_all();                                                                 \
        shmem_fcollect(SHMEM_TEAM_WORLD, d, s, 1);                                           \
        for (int r = 0; r < npes; r++)                                                       \
            PE_EXPECT(d[r] == PE_VAL(T, r, 2, 0), "generic fcollect " #T " rank %d", r);     \
        shmem_barrier_all();                                                                 \
        shmem_collect(SHMEM_TEAM_WORLD, d, s, 1);                                            \
        for (int r = 0; r < npes; r++)                                                       \
            PE_EXPECT(d[r] == PE_VAL(T, r, 2, 0), "generic collect " #T " rank %d", r);      \
        shmem_barrier_all();                                                                 \
        shmem_alltoall(SHMEM_TEAM_WORLD, d, s, 1);                                           \
        for (int r = 0; r < npes; r++)                                                       \
            PE_EXPECT(d[r] == PE_VAL(T, r, 2, me), "generic alltoall " #T " rank %d", r);    \
        shmem_barrier_all();                                                                 \
        shmem_alltoalls(SHMEM_TEAM_WORLD, d, s, 1, 1, 1);                                    \
        for (int r = 0; r < npes; r++)                                                       \
            PE_EXPECT(d[r] == PE_VAL(T, r, 2, me), "generic alltoalls " #T " rank %d", r);   \
    }
PE_RMA_TYPES(COLL_CASE)

// Reduction OP of every rank's s[IDX] (s[0]: CT_VAL, s[1]: CT_PVAL) must give EXPECT.
#define RED_CASE(T, OP, IDX, EXPECT)                                                         \
    do {                                                                                     \
        T *d = (T *)sym, *s = (T *)(sym + 2048);                                             \
        reset();                                                                             \
        pe_step("generic " #OP " on " #T);                                                   \
        s[0] = CT_VAL(T, me, 0);                                                             \
        s[1] = CT_PVAL(T, me, 0);                                                            \
        shmem_barrier_all();                                                                 \
        PE_EXPECT(shmem_##OP(SHMEM_TEAM_WORLD, d, s + (IDX), 1) == 0, #OP " rc");            \
        T e_ = EXPECT;                                                                       \
        PE_EXPECT(d[0] == e_, "generic " #OP " " #T);                                        \
    } while (0)

#define BIT_RED(T, N)                                                                        \
    static void red_bit_##N(void)                                                            \
    {                                                                                        \
        T a = (T)~(T)0, o = 0, x = 0;                                                        \
        for (int r = 0; r < npes; r++)                                                       \
            a &= CT_VAL(T, r, 0), o |= CT_VAL(T, r, 0), x ^= CT_VAL(T, r, 0);                \
        RED_CASE(T, and_reduce, 0, a);                                                       \
        RED_CASE(T, or_reduce, 0, o);                                                        \
        RED_CASE(T, xor_reduce, 0, x);                                                       \
    }
#define MINMAX_RED(T, N)                                                                     \
    static void red_mm_##N(void)                                                             \
    {                                                                                        \
        T mx = CT_VAL(T, 0, 0), mn = mx;                                                     \
        for (int r = 1; r < npes; r++) {                                                     \
            T v = CT_VAL(T, r, 0);                                                           \
            mx = v > mx ? v : mx;                                                            \
            mn = v < mn ? v : mn;                                                            \
        }                                                                                    \
        RED_CASE(T, max_reduce, 0, mx);                                                      \
        RED_CASE(T, min_reduce, 0, mn);                                                      \
    }
#define ARITH_RED(T, N)                                                                      \
    static void red_ar_##N(void)                                                             \
    {                                                                                        \
        T sm = 0, pr = 1, in = 0, ex = 0;                                                    \
        for (int r = 0; r < npes; r++) {                                                     \
            sm += CT_VAL(T, r, 0);                                                           \
            pr *= CT_PVAL(T, r, 0);                                                          \
            if (r < me)                                                                      \
                ex += CT_VAL(T, r, 0);                                                       \
        }                                                                                    \
        in = ex + CT_VAL(T, me, 0);                                                          \
        RED_CASE(T, sum_reduce, 0, sm);                                                      \
        RED_CASE(T, prod_reduce, 1, pr);                                                     \
        RED_CASE(T, sum_inscan, 0, in);                                                      \
        RED_CASE(T, sum_exscan, 0, ex);                                                      \
    }
CT_BITWISE_TYPES(BIT_RED)
CT_MINMAX_TYPES(MINMAX_RED)
CT_ARITH_TYPES(ARITH_RED)

#define CALL_RMA(T, N) rma_##N(); coll_##N();
#define CALL_STD(T, N) amo_std_##N();
#define CALL_EXT(T, N) amo_ext_##N();
#define CALL_BIT(T, N) amo_bit_##N();
#define CALL_P2P_SET(T, N) p2p_set_##N();
#define CALL_RED_BIT(T, N) red_bit_##N();
#define CALL_RED_MM(T, N) red_mm_##N();
#define CALL_RED_AR(T, N) red_ar_##N();

int main(void)
{
    shmem_init();
    pe_begin("generic_types");
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    sym = shmem_malloc(4096);
    if (npes > 64) {
        pe_fail("this test runs on at most 64 PEs");
        shmem_finalize();
        return pe_end();
    }
    PE_RMA_TYPES(CALL_RMA)
    AMO_STD_TYPES(CALL_STD)
    AMO_EXT_TYPES(CALL_EXT)
    AMO_BITWISE_TYPES(CALL_BIT)
    PE_P2P_TYPES(CALL_P2P_SET)
    PE_P2P_DEPRECATED_TYPES(CALL_P2P_SET)
    CT_BITWISE_TYPES(CALL_RED_BIT)
    CT_MINMAX_TYPES(CALL_RED_MM)
    CT_ARITH_TYPES(CALL_RED_AR)
    // shmem_sync picks its form by the number of arguments.
    static long psync[SHMEM_BARRIER_SYNC_SIZE];
    static long token[2];
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (int k = 0; k < 2; k++) {
        pe_step("shmem_sync with %d argument(s)", k ? 4 : 1);
        shmem_long_p(&token[k], 100 + me, right);
        shmem_quiet();
        if (k == 0)
            PE_EXPECT_EQ(shmem_sync(SHMEM_TEAM_WORLD), 0, "shmem_sync(SHMEM_TEAM_WORLD)");
        else
            shmem_sync(0, 0, npes, psync);
        PE_EXPECT_EQ(token[k], 100L + left, "token from PE %d after shmem_sync (%d args)", left,
                     k ? 4 : 1);
    }
    pe_step("put-with-signal count");
    shmem_signal_wait_until(&sigw, SHMEM_CMP_EQ, sig_expect);
    PE_EXPECT_EQ(shmem_signal_fetch(&sigw), sig_expect, "signals of the generic put_signal calls");
    shmem_barrier_all();
    shmem_free(sym);
    shmem_finalize();
    return pe_end();
}
