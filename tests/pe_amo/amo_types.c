// SPDX-License-Identifier: BSD-3-Clause
//
// Every AMO of the spec's tables, for every type of its table, checked
// against a sequential model: typed, context, nbi, deprecated and C11
// generic forms. Each PE works on its own word (slot me) so the model is
// exact, on four targets: the symmetric heap and .bss, of the PE to its
// right and of itself (AMOs on oneself go through the network too). At the
// end the target compares the word in its memory with the origin's model.
// Non-fetching AMOs are followed by a quiet before the next dependent one:
// without it OpenSHMEM does not order them.
//
// Also run with SHMEM_AMO_NATIVE=cswap: the library then emulates every AMO
// but compare-and-swap (tests/pe_amo/CMakeLists.txt).
#include "amo_check.h"

#define MAXPE 64
#define Q() shmem_quiet()
#define CTXQ() shmem_ctx_quiet(SHMEM_CTX_DEFAULT)
#define EQ(got, want, what) PE_EXPECT_EQ(got, want, "%s: %s", where, what)

// A value near 2^(bits-2), distinct per PE: sums stay far from overflow.
#define BIG(T) ((T)(((uint64_t)1 << (sizeof(T) * 8 - 2)) + 1000u * (uint64_t)pe_me_g + 7u))

#define STD_TEST(T, N)                                                                       \
    static T std_##N(T *d, int tgt, const char *where)                                       \
    {                                                                                        \
        const T big = BIG(T);                                                                \
        T m, fa = 0, fb = 0, fc = 0, fd = 0, fe = 0;                                         \
        shmem_##N##_atomic_set(d, big, tgt);                                                 \
        Q();                                                                                 \
        m = big;                                                                             \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_set, quiet, atomic_fetch");          \
        shmem_##N##_atomic_add(d, (T)3, tgt);                                                \
        Q();                                                                                 \
        m = (T)(m + 3);                                                                      \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_add 3");                             \
        EQ(shmem_##N##_atomic_fetch_add(d, (T)5, tgt), m, "atomic_fetch_add 5 returns");     \
        m = (T)(m + 5);                                                                      \
        shmem_##N##_atomic_inc(d, tgt);                                                      \
        Q();                                                                                 \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_##N##_atomic_fetch_inc(d, tgt), m, "atomic_inc, then atomic_fetch_inc returns"); \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_##N##_atomic_compare_swap(d, (T)(m + 1), (T)42, tgt), m,                    \
           "atomic_compare_swap with a wrong cond returns");                                 \
        EQ(shmem_##N##_atomic_compare_swap(d, m, (T)(big - 9), tgt), m,                      \
           "atomic_compare_swap (wrong cond left it) returns");                              \
        m = (T)(big - 9);                                                                    \
        EQ(shmem_##N##_atomic_swap(d, (T)(big + 11), tgt), m, "atomic_swap returns");        \
        m = (T)(big + 11);                                                                   \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_fetch after swap");                  \
        /* Below zero (signed) or through the wrap (unsigned). */                            \
        if (PE_IS_UNSIGNED(T)) {                                                             \
            shmem_##N##_atomic_set(d, (T)-2, tgt);                                           \
            Q();                                                                             \
            shmem_##N##_atomic_add(d, (T)3, tgt);                                            \
            Q();                                                                             \
            m = (T)1;                                                                        \
            EQ(shmem_##N##_atomic_fetch(d, tgt), m, "unsigned add through the wrap");        \
        } else {                                                                             \
            shmem_##N##_atomic_set(d, (T)-5, tgt);                                           \
            Q();                                                                             \
            EQ(shmem_##N##_atomic_fetch_add(d, (T)3, tgt), (T)-5, "fetch_add on -5");        \
            m = (T)-2;                                                                       \
            EQ(shmem_##N##_atomic_compare_swap(d, (T)-2, big, tgt), m, "cswap on -2");       \
            m = big;                                                                         \
        }                                                                                    \
        /* Non-blocking fetching forms: results by the quiet. */                             \
        shmem_##N##_atomic_fetch_add_nbi(&fa, d, (T)7, tgt);                                 \
        Q();                                                                                 \
        EQ(fa, m, "atomic_fetch_add_nbi");                                                   \
        m = (T)(m + 7);                                                                      \
        shmem_##N##_atomic_fetch_inc_nbi(&fb, d, tgt);                                       \
        Q();                                                                                 \
        EQ(fb, m, "atomic_fetch_inc_nbi");                                                   \
        m = (T)(m + 1);                                                                      \
        shmem_##N##_atomic_compare_swap_nbi(&fc, d, m, big, tgt);                            \
        Q();                                                                                 \
        EQ(fc, m, "atomic_compare_swap_nbi");                                                \
        m = big;                                                                             \
        shmem_##N##_atomic_swap_nbi(&fd, d, (T)(big + 1), tgt);                              \
        Q();                                                                                 \
        EQ(fd, m, "atomic_swap_nbi");                                                        \
        m = (T)(big + 1);                                                                    \
        shmem_##N##_atomic_fetch_nbi(&fe, d, tgt);                                           \
        Q();                                                                                 \
        EQ(fe, m, "atomic_fetch_nbi");                                                       \
        /* Context forms. */                                                                 \
        shmem_ctx_##N##_atomic_add(SHMEM_CTX_DEFAULT, d, (T)2, tgt);                         \
        CTXQ();                                                                              \
        m = (T)(m + 2);                                                                      \
        EQ(shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, d, (T)4, tgt), m,             \
           "ctx atomic_add, ctx atomic_fetch_add");                                          \
        m = (T)(m + 4);                                                                      \
        shmem_ctx_##N##_atomic_inc(SHMEM_CTX_DEFAULT, d, tgt);                               \
        CTXQ();                                                                              \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_ctx_##N##_atomic_fetch_inc(SHMEM_CTX_DEFAULT, d, tgt), m,                   \
           "ctx atomic_inc, ctx atomic_fetch_inc");                                          \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, d, m, (T)(big + 100), tgt), \
           m, "ctx atomic_compare_swap");                                                    \
        m = (T)(big + 100);                                                                  \
        shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, d, (T)(big + 200), tgt);               \
        CTXQ();                                                                              \
        m = (T)(big + 200);                                                                  \
        EQ(shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, d, tgt), m, "ctx atomic_set, fetch"); \
        EQ(shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, d, (T)(big + 300), tgt), m,        \
           "ctx atomic_swap");                                                               \
        m = (T)(big + 300);                                                                  \
        shmem_ctx_##N##_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &fa, d, (T)1, tgt);          \
        CTXQ();                                                                              \
        EQ(fa, m, "ctx atomic_fetch_add_nbi");                                               \
        m = (T)(m + 1);                                                                      \
        shmem_ctx_##N##_atomic_fetch_inc_nbi(SHMEM_CTX_DEFAULT, &fb, d, tgt);                \
        CTXQ();                                                                              \
        EQ(fb, m, "ctx atomic_fetch_inc_nbi");                                               \
        m = (T)(m + 1);                                                                      \
        shmem_ctx_##N##_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, &fc, d, m, (T)(big + 400), \
                                                tgt);                                        \
        CTXQ();                                                                              \
        EQ(fc, m, "ctx atomic_compare_swap_nbi");                                            \
        m = (T)(big + 400);                                                                  \
        shmem_ctx_##N##_atomic_swap_nbi(SHMEM_CTX_DEFAULT, &fd, d, (T)(big + 500), tgt);     \
        CTXQ();                                                                              \
        EQ(fd, m, "ctx atomic_swap_nbi");                                                    \
        m = (T)(big + 500);                                                                  \
        shmem_ctx_##N##_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &fe, d, tgt);                    \
        CTXQ();                                                                              \
        EQ(fe, m, "ctx atomic_fetch_nbi");                                                   \
        /* Deprecated names. */                                                              \
        shmem_##N##_add(d, (T)6, tgt);                                                       \
        Q();                                                                                 \
        m = (T)(m + 6);                                                                      \
        shmem_##N##_inc(d, tgt);                                                             \
        Q();                                                                                 \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_##N##_fetch(d, tgt), m, "deprecated add, inc, fetch");                      \
        EQ(shmem_##N##_fadd(d, (T)8, tgt), m, "deprecated fadd");                            \
        m = (T)(m + 8);                                                                      \
        EQ(shmem_##N##_finc(d, tgt), m, "deprecated finc");                                  \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_##N##_cswap(d, m, (T)(big + 600), tgt), m, "deprecated cswap");             \
        m = (T)(big + 600);                                                                  \
        shmem_##N##_set(d, (T)(big + 700), tgt);                                             \
        Q();                                                                                 \
        m = (T)(big + 700);                                                                  \
        EQ(shmem_##N##_swap(d, (T)(big + 800), tgt), m, "deprecated set, swap");             \
        m = (T)(big + 800);                                                                  \
        /* C11 generics, with and without a context. */                                      \
        shmem_atomic_add(d, (T)1, tgt);                                                      \
        Q();                                                                                 \
        m = (T)(m + 1);                                                                      \
        shmem_atomic_inc(SHMEM_CTX_DEFAULT, d, tgt);                                         \
        Q();                                                                                 \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_atomic_fetch_add(d, (T)2, tgt), m, "generic atomic_add, inc, fetch_add");   \
        m = (T)(m + 2);                                                                      \
        EQ(shmem_atomic_fetch_inc(SHMEM_CTX_DEFAULT, d, tgt), m, "generic ctx fetch_inc");   \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_atomic_compare_swap(d, m, (T)(big + 900), tgt), m, "generic compare_swap"); \
        m = (T)(big + 900);                                                                  \
        shmem_atomic_set(d, (T)(big + 901), tgt);                                            \
        Q();                                                                                 \
        m = (T)(big + 901);                                                                  \
        EQ(shmem_atomic_swap(d, (T)(big + 902), tgt), m, "generic set, swap");               \
        m = (T)(big + 902);                                                                  \
        EQ(shmem_atomic_fetch((const T *)d, tgt), m, "generic fetch (const T *)");           \
        shmem_atomic_fetch_add_nbi(&fa, d, (T)3, tgt);                                       \
        Q();                                                                                 \
        EQ(fa, m, "generic fetch_add_nbi");                                                  \
        m = (T)(m + 3);                                                                      \
        shmem_atomic_fetch_inc_nbi(SHMEM_CTX_DEFAULT, &fb, d, tgt);                          \
        Q();                                                                                 \
        EQ(fb, m, "generic ctx fetch_inc_nbi");                                              \
        m = (T)(m + 1);                                                                      \
        shmem_atomic_compare_swap_nbi(&fc, d, m, (T)(big + 903), tgt);                       \
        Q();                                                                                 \
        EQ(fc, m, "generic compare_swap_nbi");                                               \
        m = (T)(big + 903);                                                                  \
        EQ(shmem_fadd(d, (T)1, tgt), m, "deprecated generic shmem_fadd");                    \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_finc(d, tgt), m, "deprecated generic shmem_finc");                          \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_cswap(d, m, (T)(big + 904), tgt), m, "deprecated generic shmem_cswap");     \
        m = (T)(big + 904);                                                                  \
        shmem_add(d, (T)2, tgt);                                                             \
        shmem_quiet();                                                                       \
        shmem_inc(d, tgt);                                                                   \
        shmem_quiet();                                                                       \
        m = (T)(m + 3);                                                                      \
        EQ(shmem_fetch(d, tgt), m, "deprecated generic shmem_add, shmem_inc, shmem_fetch");  \
        return m;                                                                            \
    }
PE_AMO_STD_TYPES(STD_TEST)

// float and double: only the extended operations.
#define EXT_FLOAT_TEST(T, N)                                                                 \
    static T ext_##N(T *d, int tgt, const char *where)                                       \
    {                                                                                        \
        T m = (T)(1.5 + pe_me_g), f1 = 0, f2 = 0;                                            \
        shmem_##N##_atomic_set(d, m, tgt);                                                   \
        Q();                                                                                 \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_set, fetch");                        \
        EQ(shmem_##N##_atomic_swap(d, (T)-2.25, tgt), m, "atomic_swap");                     \
        m = (T)-2.25;                                                                        \
        shmem_##N##_atomic_swap_nbi(&f1, d, (T)1e30, tgt);                                   \
        Q();                                                                                 \
        EQ(f1, m, "atomic_swap_nbi");                                                        \
        m = (T)1e30;                                                                         \
        shmem_##N##_atomic_fetch_nbi(&f2, d, tgt);                                           \
        Q();                                                                                 \
        EQ(f2, m, "atomic_fetch_nbi");                                                       \
        shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, d, (T)0.125, tgt);                     \
        CTXQ();                                                                              \
        m = (T)0.125;                                                                        \
        EQ(shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, d, tgt), m, "ctx set, fetch");    \
        EQ(shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, d, (T)3.5, tgt), m, "ctx swap");   \
        m = (T)3.5;                                                                          \
        shmem_ctx_##N##_atomic_swap_nbi(SHMEM_CTX_DEFAULT, &f1, d, (T)4.5, tgt);             \
        CTXQ();                                                                              \
        EQ(f1, m, "ctx swap_nbi");                                                           \
        m = (T)4.5;                                                                          \
        shmem_ctx_##N##_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &f2, d, tgt);                    \
        CTXQ();                                                                              \
        EQ(f2, m, "ctx fetch_nbi");                                                          \
        shmem_##N##_set(d, (T)-7.75, tgt);                                                   \
        Q();                                                                                 \
        m = (T)-7.75;                                                                        \
        EQ(shmem_##N##_fetch(d, tgt), m, "deprecated set, fetch");                           \
        EQ(shmem_##N##_swap(d, (T)8.25, tgt), m, "deprecated swap");                         \
        m = (T)8.25;                                                                         \
        shmem_atomic_set(SHMEM_CTX_DEFAULT, d, (T)9.5, tgt);                                 \
        Q();                                                                                 \
        m = (T)9.5;                                                                          \
        EQ(shmem_atomic_fetch(d, tgt), m, "generic ctx set, generic fetch");                 \
        EQ(shmem_atomic_swap(d, (T)10.5, tgt), m, "generic swap");                           \
        m = (T)10.5;                                                                         \
        shmem_atomic_swap_nbi(&f1, d, (T)11.5, tgt);                                         \
        Q();                                                                                 \
        EQ(f1, m, "generic swap_nbi");                                                       \
        m = (T)11.5;                                                                         \
        shmem_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &f2, d, tgt);                              \
        Q();                                                                                 \
        EQ(f2, m, "generic ctx fetch_nbi");                                                  \
        EQ(shmem_swap(d, (T)12.5, tgt), m, "deprecated generic shmem_swap");                 \
        m = (T)12.5;                                                                         \
        shmem_set(d, (T)13.5, tgt);                                                          \
        Q();                                                                                 \
        m = (T)13.5;                                                                         \
        EQ(shmem_fetch(d, tgt), m, "deprecated generic shmem_set, shmem_fetch");             \
        return m;                                                                            \
    }
EXT_FLOAT_TEST(float, float)
EXT_FLOAT_TEST(double, double)

// Bitwise: patterns with bits in both halves of 64-bit words.
#define PAT(T, x) ((T)(x##ULL))
#define BITWISE_TEST(T, N)                                                                   \
    static T bit_##N(T *d, int tgt, const char *where)                                       \
    {                                                                                        \
        T m = (T)(PAT(T, 0xA5A5A5A5C3C3C3C3) ^ (T)pe_me_g), fa = 0, fb = 0, fc = 0;          \
        shmem_##N##_atomic_set(d, m, tgt);                                                   \
        Q();                                                                                 \
        shmem_##N##_atomic_and(d, PAT(T, 0xFFFF0000FF00FF00), tgt);                          \
        Q();                                                                                 \
        m &= PAT(T, 0xFFFF0000FF00FF00);                                                     \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_and");                               \
        shmem_##N##_atomic_or(d, PAT(T, 0x0000F0F00000000F), tgt);                          \
        Q();                                                                                 \
        m |= PAT(T, 0x0000F0F00000000F);                                                     \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_or");                                \
        shmem_##N##_atomic_xor(d, PAT(T, 0x8001800180018001), tgt);                          \
        Q();                                                                                 \
        m ^= PAT(T, 0x8001800180018001);                                                     \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_xor");                               \
        EQ(shmem_##N##_atomic_fetch_and(d, PAT(T, 0x7FFFFFFF7FFFFFF0), tgt), m, "fetch_and"); \
        m &= PAT(T, 0x7FFFFFFF7FFFFFF0);                                                     \
        EQ(shmem_##N##_atomic_fetch_or(d, PAT(T, 0x1000000010000000), tgt), m, "fetch_or");  \
        m |= PAT(T, 0x1000000010000000);                                                     \
        EQ(shmem_##N##_atomic_fetch_xor(d, PAT(T, 0xFFFFFFFFFFFFFFFF), tgt), m, "fetch_xor"); \
        m ^= PAT(T, 0xFFFFFFFFFFFFFFFF);                                                     \
        shmem_##N##_atomic_fetch_and_nbi(&fa, d, PAT(T, 0xF0F0F0F0F0F0F0F0), tgt);           \
        Q();                                                                                 \
        EQ(fa, m, "fetch_and_nbi");                                                          \
        m &= PAT(T, 0xF0F0F0F0F0F0F0F0);                                                     \
        shmem_##N##_atomic_fetch_or_nbi(&fb, d, PAT(T, 0x0300000000000003), tgt);            \
        Q();                                                                                 \
        EQ(fb, m, "fetch_or_nbi");                                                           \
        m |= PAT(T, 0x0300000000000003);                                                     \
        shmem_##N##_atomic_fetch_xor_nbi(&fc, d, PAT(T, 0x00FF00FF00FF00FF), tgt);           \
        Q();                                                                                 \
        EQ(fc, m, "fetch_xor_nbi");                                                          \
        m ^= PAT(T, 0x00FF00FF00FF00FF);                                                     \
        shmem_ctx_##N##_atomic_and(SHMEM_CTX_DEFAULT, d, PAT(T, 0xFFFFFFFF0FFFFFFF), tgt);   \
        CTXQ();                                                                              \
        m &= PAT(T, 0xFFFFFFFF0FFFFFFF);                                                     \
        shmem_ctx_##N##_atomic_or(SHMEM_CTX_DEFAULT, d, PAT(T, 0x0000000100000100), tgt);    \
        CTXQ();                                                                              \
        m |= PAT(T, 0x0000000100000100);                                                     \
        shmem_ctx_##N##_atomic_xor(SHMEM_CTX_DEFAULT, d, PAT(T, 0x4000000040000000), tgt);   \
        CTXQ();                                                                              \
        m ^= PAT(T, 0x4000000040000000);                                                     \
        EQ(shmem_ctx_##N##_atomic_fetch_and(SHMEM_CTX_DEFAULT, d, PAT(T, 0xFFFFFFFFFFFF0FFF), \
                                            tgt),                                            \
           m, "ctx and, or, xor, fetch_and");                                                \
        m &= PAT(T, 0xFFFFFFFFFFFF0FFF);                                                     \
        EQ(shmem_ctx_##N##_atomic_fetch_or(SHMEM_CTX_DEFAULT, d, PAT(T, 0x20), tgt), m,      \
           "ctx fetch_or");                                                                  \
        m |= PAT(T, 0x20);                                                                   \
        EQ(shmem_ctx_##N##_atomic_fetch_xor(SHMEM_CTX_DEFAULT, d, PAT(T, 0x0102030405060708), \
                                            tgt),                                            \
           m, "ctx fetch_xor");                                                              \
        m ^= PAT(T, 0x0102030405060708);                                                     \
        shmem_ctx_##N##_atomic_fetch_and_nbi(SHMEM_CTX_DEFAULT, &fa, d, PAT(T, 0xFFFFFFFFFFFFFFFE), tgt); \
        shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                  \
        EQ(fa, m, "ctx fetch_and_nbi");                                                      \
        m &= PAT(T, 0xFFFFFFFFFFFFFFFE);                                                     \
        shmem_ctx_##N##_atomic_fetch_or_nbi(SHMEM_CTX_DEFAULT, &fb, d, PAT(T, 0x8000000000000000), tgt); \
        CTXQ();                                                                              \
        EQ(fb, m, "ctx fetch_or_nbi");                                                       \
        m |= PAT(T, 0x8000000000000000);                                                     \
        shmem_ctx_##N##_atomic_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &fc, d, PAT(T, 0x11), tgt);  \
        CTXQ();                                                                              \
        EQ(fc, m, "ctx fetch_xor_nbi");                                                      \
        m ^= PAT(T, 0x11);                                                                   \
        shmem_atomic_and(d, PAT(T, 0xFFFFFFFFFFFFFF7F), tgt);                                \
        Q();                                                                                 \
        m &= PAT(T, 0xFFFFFFFFFFFFFF7F);                                                     \
        shmem_atomic_or(SHMEM_CTX_DEFAULT, d, PAT(T, 0x4), tgt);                             \
        Q();                                                                                 \
        m |= PAT(T, 0x4);                                                                    \
        shmem_atomic_xor(d, PAT(T, 0x0F00000000000F00), tgt);                                \
        Q();                                                                                 \
        m ^= PAT(T, 0x0F00000000000F00);                                                     \
        EQ(shmem_atomic_fetch_and(d, PAT(T, 0xFFFFFFFFFFFFFFFF), tgt), m,                    \
           "generic and, or, xor, fetch_and");                                               \
        EQ(shmem_atomic_fetch_or(SHMEM_CTX_DEFAULT, d, PAT(T, 0x2), tgt), m,                 \
           "generic ctx fetch_or");                                                          \
        m |= PAT(T, 0x2);                                                                    \
        EQ(shmem_atomic_fetch_xor(d, PAT(T, 0x3), tgt), m, "generic fetch_xor");             \
        m ^= PAT(T, 0x3);                                                                    \
        shmem_atomic_fetch_and_nbi(&fa, d, PAT(T, 0x7FFFFFFFFFFFFFFF), tgt);                 \
        Q();                                                                                 \
        EQ(fa, m, "generic fetch_and_nbi");                                                  \
        m &= PAT(T, 0x7FFFFFFFFFFFFFFF);                                                     \
        shmem_atomic_fetch_or_nbi(&fb, d, PAT(T, 0x100), tgt);                               \
        Q();                                                                                 \
        EQ(fb, m, "generic fetch_or_nbi");                                                   \
        m |= PAT(T, 0x100);                                                                  \
        shmem_atomic_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &fc, d, PAT(T, 0x5555555555555555), tgt); \
        Q();                                                                                 \
        EQ(fc, m, "generic ctx fetch_xor_nbi");                                              \
        m ^= PAT(T, 0x5555555555555555);                                                     \
        return m;                                                                            \
    }
PE_AMO_BITWISE_TYPES(BITWISE_TEST)

// One family on one type, on the four targets; the target then checks the
// word in its own memory against the origin's model.
#define DRIVE(T, N, FAM)                                                                     \
    static void drive_##FAM##_##N(void)                                                      \
    {                                                                                        \
        static T bss[MAXPE], bss_exp[MAXPE];                                                 \
        T *heap = shmem_calloc(MAXPE, sizeof(T));                                            \
        T *heap_exp = shmem_calloc(MAXPE, sizeof(T));                                        \
        for (int k = 0; k < 4; k++) {                                                        \
            const int self = k & 1, in_bss = k & 2;                                          \
            const int tgt = self ? pe_me_g : pe_right();                                     \
            T *base = in_bss ? bss : heap, *exp = in_bss ? bss_exp : heap_exp;               \
            char where[128];                                                                 \
            snprintf(where, sizeof where, "%s %s word on PE %d", #N, in_bss ? ".bss" : "heap", \
                     tgt);                                                                   \
            pe_step("%s: %s", #FAM, where);                                                  \
            T m = FAM##_##N(&base[pe_me_g], tgt, where);                                     \
            shmem_##N##_p(&exp[pe_me_g], m, tgt);                                            \
            shmem_quiet();                                                                   \
            shmem_barrier_all();                                                             \
            const int o = self ? pe_me_g : pe_left();                                        \
            PE_EXPECT_EQ(base[o], exp[o], "%s %s: word of PE %d in this PE's %s after its AMOs", \
                         #FAM, #N, o, in_bss ? ".bss" : "heap");                             \
            shmem_barrier_all();                                                             \
        }                                                                                    \
        shmem_free(heap_exp);                                                                \
        shmem_free(heap);                                                                    \
    }
#define DRIVE_STD(T, N) DRIVE(T, N, std)
#define DRIVE_BIT(T, N) DRIVE(T, N, bit)
PE_AMO_STD_TYPES(DRIVE_STD)
PE_AMO_BITWISE_TYPES(DRIVE_BIT)
DRIVE(float, float, ext)
DRIVE(double, double, ext)

#define CALL_STD(T, N) drive_std_##N();
#define CALL_BIT(T, N) drive_bit_##N();

int main(void)
{
    shmem_init();
    pe_begin("amo_types");
    if (pe_npes_g > MAXPE) {
        pe_fail("this test handles at most %d PEs", MAXPE);
        shmem_finalize();
        return pe_end();
    }
    PE_AMO_STD_TYPES(CALL_STD)
    drive_ext_float();
    drive_ext_double();
    PE_AMO_BITWISE_TYPES(CALL_BIT)
    shmem_finalize();
    return pe_end();
}
