// SPDX-License-Identifier: BSD-3-Clause
//
// Every AMO kind on PEs that compute without calling the library (issue 30
// item 4): PE 1..n-1 spin in arithmetic on private memory, reading a done
// word of their own now and then, while PE 0 runs a sequence of atomics on
// each of them, for every type of the spec's tables, on a heap word and on
// a .bss word: set, fetch, add, inc, fetch_add, fetch_inc, compare_swap
// (failing and succeeding), swap, the bitwise and/or/xor and their fetching
// forms, the nbi fetching forms and a context form. Only the target's
// progress thread can serve them. PE 0 checks every fetched value against a
// sequential model and puts the model's final values to the target; once
// released, the target compares its words with them.
//   ARGS: rounds (default 3)
#include "amo_check.h"

#define EQ(got, want, what) PE_EXPECT_EQ(got, want, "%s on computing PE %d (%s): %s", #what, tgt, where, what)

// One word of each type per target, and the values they should end with.
typedef struct {
#define FIELD(T, N) T w_##N;
    PE_AMO_STD_TYPES(FIELD)
    float w_float;
    double w_double;
#undef FIELD
} words_t;

static words_t bss_words;         // .bss: the data segment's road
static words_t *heap_words;       // symmetric heap
static words_t *expect_heap, *expect_bss; // the model's final values, put by PE 0
static long *done;

#define STD_SEQ(T, N)                                                                        \
    static T seq_##N(T *d, int tgt, const char *where)                                       \
    {                                                                                        \
        T m = (T)(11 + tgt), r1 = 0;                                                         \
        shmem_##N##_atomic_set(d, m, tgt);                                                   \
        shmem_quiet();                                                                       \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_set, quiet, atomic_fetch");          \
        shmem_##N##_atomic_add(d, (T)5, tgt);                                                \
        shmem_quiet();                                                                       \
        m = (T)(m + 5);                                                                      \
        EQ(shmem_##N##_atomic_fetch_add(d, (T)3, tgt), m, "atomic_fetch_add returns");       \
        m = (T)(m + 3);                                                                      \
        shmem_##N##_atomic_inc(d, tgt);                                                      \
        shmem_quiet();                                                                       \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_##N##_atomic_fetch_inc(d, tgt), m, "atomic_inc, then atomic_fetch_inc");    \
        m = (T)(m + 1);                                                                      \
        EQ(shmem_##N##_atomic_compare_swap(d, (T)(m + 1), (T)99, tgt), m,                    \
           "atomic_compare_swap with a wrong cond returns");                                 \
        EQ(shmem_##N##_atomic_compare_swap(d, m, (T)99, tgt), m, "atomic_compare_swap");     \
        m = (T)99;                                                                           \
        EQ(shmem_##N##_atomic_swap(d, (T)123, tgt), m, "atomic_swap returns");               \
        m = (T)123;                                                                          \
        shmem_##N##_atomic_fetch_add_nbi(&r1, d, (T)2, tgt);                                 \
        shmem_quiet();                                                                       \
        EQ(r1, m, "atomic_fetch_add_nbi, quiet");                                            \
        m = (T)(m + 2);                                                                      \
        shmem_##N##_atomic_compare_swap_nbi(&r1, d, m, (T)(m + 30), tgt);                    \
        shmem_quiet();                                                                       \
        EQ(r1, m, "atomic_compare_swap_nbi, quiet");                                         \
        m = (T)(m + 30);                                                                     \
        shmem_ctx_##N##_atomic_add(SHMEM_CTX_DEFAULT, d, (T)4, tgt);                         \
        shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                  \
        m = (T)(m + 4);                                                                      \
        EQ(shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, d, tgt), m, "ctx atomic_add, fetch"); \
        return m;                                                                            \
    }
PE_AMO_STD_TYPES(STD_SEQ)

#define BIT_SEQ(T, N)                                                                        \
    static T bits_##N(T *d, T m, int tgt, const char *where)                                 \
    {                                                                                        \
        shmem_##N##_atomic_and(d, (T)0xf0f0, tgt);                                           \
        shmem_quiet();                                                                       \
        m = (T)(m & (T)0xf0f0);                                                              \
        shmem_##N##_atomic_or(d, (T)0x0103, tgt);                                            \
        shmem_quiet();                                                                       \
        m = (T)(m | (T)0x0103);                                                              \
        shmem_##N##_atomic_xor(d, (T)0x5555, tgt);                                           \
        shmem_quiet();                                                                       \
        m = (T)(m ^ (T)0x5555);                                                              \
        EQ(shmem_##N##_atomic_fetch_and(d, (T)0x7ff3, tgt), m, "and/or/xor, atomic_fetch_and"); \
        m = (T)(m & (T)0x7ff3);                                                              \
        EQ(shmem_##N##_atomic_fetch_or(d, (T)0x8000, tgt), m, "atomic_fetch_or returns");    \
        m = (T)(m | (T)0x8000);                                                              \
        EQ(shmem_##N##_atomic_fetch_xor(d, (T)0x00ff, tgt), m, "atomic_fetch_xor returns");  \
        m = (T)(m ^ (T)0x00ff);                                                              \
        T r = 0;                                                                             \
        shmem_##N##_atomic_fetch_xor_nbi(&r, d, (T)0x0f00, tgt);                             \
        shmem_quiet();                                                                       \
        EQ(r, m, "atomic_fetch_xor_nbi, quiet");                                             \
        return (T)(m ^ (T)0x0f00);                                                           \
    }
PE_AMO_BITWISE_TYPES(BIT_SEQ)

#define EXT_SEQ(T, N)                                                                        \
    static T ext_##N(T *d, int tgt, const char *where)                                       \
    {                                                                                        \
        T m = (T)(2.5 + tgt);                                                                \
        shmem_##N##_atomic_set(d, m, tgt);                                                   \
        shmem_quiet();                                                                       \
        EQ(shmem_##N##_atomic_fetch(d, tgt), m, "atomic_set, quiet, atomic_fetch");          \
        EQ(shmem_##N##_atomic_swap(d, (T)-7.25, tgt), m, "atomic_swap returns");             \
        m = (T)-7.25;                                                                        \
        T r = 0;                                                                             \
        shmem_##N##_atomic_swap_nbi(&r, d, (T)0.125, tgt);                                   \
        shmem_quiet();                                                                       \
        EQ(r, m, "atomic_swap_nbi, quiet");                                                  \
        return (T)0.125;                                                                     \
    }
EXT_SEQ(float, float)
EXT_SEQ(double, double)

// All sequences on the words w of tgt; the model's final values into e.
static void run_target(words_t *w, words_t *e, int tgt, const char *where)
{
#define DO_STD(T, N) e->w_##N = seq_##N(&w->w_##N, tgt, where);
    PE_AMO_STD_TYPES(DO_STD)
#undef DO_STD
    // Bitwise types are the std ones of the same name here, after their sequence.
    e->w_uint = bits_uint(&w->w_uint, e->w_uint, tgt, where);
    e->w_ulong = bits_ulong(&w->w_ulong, e->w_ulong, tgt, where);
    e->w_ulonglong = bits_ulonglong(&w->w_ulonglong, e->w_ulonglong, tgt, where);
    e->w_int32 = bits_int32(&w->w_int32, e->w_int32, tgt, where);
    e->w_int64 = bits_int64(&w->w_int64, e->w_int64, tgt, where);
    e->w_uint32 = bits_uint32(&w->w_uint32, e->w_uint32, tgt, where);
    e->w_uint64 = bits_uint64(&w->w_uint64, e->w_uint64, tgt, where);
    e->w_float = ext_float(&w->w_float, tgt, where);
    e->w_double = ext_double(&w->w_double, tgt, where);
}

static void check_words(const words_t *got, const words_t *want, const char *where)
{
#define CHK(T, N) PE_EXPECT_EQ(got->w_##N, want->w_##N, "PE %d's %s word (" #T ") after PE 0's atomics", pe_me_g, where);
    PE_AMO_STD_TYPES(CHK)
    CHK(float, float)
    CHK(double, double)
#undef CHK
}

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("amo_busy_target");
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    heap_words = shmem_calloc(1, sizeof(words_t));
    expect_heap = shmem_calloc(1, sizeof(words_t));
    expect_bss = shmem_calloc(1, sizeof(words_t));
    done = shmem_calloc(1, sizeof(long));
    if (!heap_words || !expect_heap || !expect_bss || !done) {
        pe_fail("shmem_calloc failed");
        shmem_global_exit(1);
    }
    for (int r = 0; r < rounds; r++) {
        *done = 0;
        shmem_barrier_all();
        if (pe_me_g == 0) {
            for (int t = 1; t < pe_npes_g; t++) {
                words_t e;
                pe_step("round %d: atomics on computing PE %d's heap", r, t);
                run_target(heap_words, &e, t, "heap");
                shmem_putmem(expect_heap, &e, sizeof(e), t);
                pe_step("round %d: atomics on computing PE %d's .bss", r, t);
                run_target(&bss_words, &e, t, ".bss");
                shmem_putmem(expect_bss, &e, sizeof(e), t);
                shmem_quiet();
                shmem_long_atomic_set(done, 1, t); // releases it
            }
            shmem_quiet();
        } else {
            pe_step("round %d: computing until PE 0 is done", r);
            volatile long *dn = done;
            volatile double x = 1.0;
            while (*dn == 0) // no library call in here
                for (int i = 0; i < 1000; i++)
                    x = x * 1.0000001 + 1e-9;
        }
        shmem_barrier_all();
        if (pe_me_g != 0) {
            check_words(heap_words, expect_heap, "heap");
            check_words(&bss_words, expect_bss, ".bss");
        }
        shmem_barrier_all();
    }
    pe_step("finalize");
    shmem_free(done);
    shmem_free(expect_bss);
    shmem_free(expect_heap);
    shmem_free(heap_words);
    shmem_finalize();
    return pe_end();
}
