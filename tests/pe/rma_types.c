// SPDX-License-Identifier: BSD-3-Clause
//
// Every typed RMA routine for every type of the spec's RMA type table:
// put, get, p, g, iput, iget, put_nbi, get_nbi, each in its plain form, its
// shmem_ctx_ form on SHMEM_CTX_DEFAULT and its C11 generic form (with and
// without a context); then the sized (8/16/32/64/128) and mem forms.
//
// Each PE puts to its right neighbour and gets from its left one. Every case
// uses its own region of REG elements, so a value written by the wrong call,
// to the wrong place or with the wrong element size shows up; values depend on
// the writing PE, the type, the case and the index (PE_VAL with the type
// number folded into the case). Elements a strided call
// must skip are checked to still hold 0.
#include "pe_check.h"

#define N 17        // elements per call
#define REG (4 * N) // elements per case region (room for strides up to 4)

typedef struct rma_case {
    const char *name;
    int is_get;   // 1: lands in the local buffer (data of the left PE)
    ptrdiff_t ds; // destination stride
    ptrdiff_t ss; // source stride
} rma_case_t;

// Cases of the typed test, in the order the calls are made below.
static const rma_case_t typed_cases[] = {
    {"put", 0, 1, 1},                        //  0
    {"ctx_put", 0, 1, 1},                    //  1
    {"put_nbi", 0, 1, 1},                    //  2
    {"ctx_put_nbi", 0, 1, 1},                //  3
    {"p", 0, 1, 1},                          //  4
    {"ctx_p", 0, 1, 1},                      //  5
    {"iput(dst 2, src 3)", 0, 2, 3},         //  6
    {"ctx_iput(dst 3, src 1)", 0, 3, 1},     //  7
    {"generic put", 0, 1, 1},                //  8
    {"generic ctx put", 0, 1, 1},            //  9
    {"generic put_nbi", 0, 1, 1},            // 10
    {"generic ctx put_nbi", 0, 1, 1},        // 11
    {"generic p", 0, 1, 1},                  // 12
    {"generic ctx p", 0, 1, 1},              // 13
    {"generic iput(dst 1, src 2)", 0, 1, 2}, // 14
    {"generic ctx iput(dst 2, src 1)", 0, 2, 1}, // 15
    {"get", 1, 1, 1},                        // 16
    {"ctx_get", 1, 1, 1},                    // 17
    {"get_nbi", 1, 1, 1},                    // 18
    {"ctx_get_nbi", 1, 1, 1},                // 19
    {"g", 1, 1, 1},                          // 20
    {"ctx_g", 1, 1, 1},                      // 21
    {"iget(dst 3, src 2)", 1, 3, 2},         // 22
    {"ctx_iget(dst 1, src 3)", 1, 1, 3},     // 23
    {"generic get", 1, 1, 1},                // 24
    {"generic ctx get", 1, 1, 1},            // 25
    {"generic get_nbi", 1, 1, 1},            // 26
    {"generic ctx get_nbi", 1, 1, 1},        // 27
    {"generic g", 1, 1, 1},                  // 28
    {"generic ctx g", 1, 1, 1},              // 29
    {"generic iget(dst 2, src 1)", 1, 2, 1}, // 30
    {"generic ctx iget(dst 1, src 2)", 1, 1, 2}, // 31
};
#define NTYPED (int)(sizeof typed_cases / sizeof typed_cases[0])

// Is destination index j written by case c, and from which source index?
static int case_src_index(const rma_case_t *c, int j, int *src_idx)
{
    if (j % c->ds != 0 || j / c->ds >= N)
        return 0;
    *src_idx = (int)(j / c->ds * c->ss);
    return 1;
}

#define DST(k) (dst + (k) * REG)
#define SRC(k) (src + (k) * REG)
#define LOC(k) (loc + (k) * REG)
#define SYM(k) (sym + (k) * REG)
#define CTX SHMEM_CTX_DEFAULT

// One function per type: all calls into separate regions, one barrier, then
// every element of every region is checked.
#define DEFINE_TYPED_TEST(T, NAME)                                                            \
    static void test_##NAME(int tid)                                                         \
    {                                                                                        \
        const int right = pe_right(), left = pe_left();                                      \
        const int kt = tid * NTYPED; /* case number offset of this type */                   \
        T *dst = shmem_calloc(NTYPED * REG, sizeof(T));                                      \
        T *sym = shmem_malloc(NTYPED * REG * sizeof(T));                                     \
        T *src = malloc(NTYPED * REG * sizeof(T));                                           \
        T *loc = calloc(NTYPED * REG, sizeof(T));                                            \
        if (!dst || !sym || !src || !loc) {                                                  \
            pe_fail("%s: allocation failed", #NAME);                                         \
            shmem_global_exit(1);                                                            \
        }                                                                                    \
        for (int k = 0; k < NTYPED; k++)                                                     \
            for (int j = 0; j < REG; j++)                                                    \
                SRC(k)[j] = SYM(k)[j] = PE_VAL(T, pe_me_g, kt + k, j);                       \
        pe_step("%s: barrier before calls", #NAME);                                          \
        shmem_barrier_all();                                                                 \
        pe_step("%s: calls", #NAME);                                                         \
        shmem_##NAME##_put(DST(0), SRC(0), N, right);                                        \
        shmem_ctx_##NAME##_put(CTX, DST(1), SRC(1), N, right);                               \
        shmem_##NAME##_put_nbi(DST(2), SRC(2), N, right);                                    \
        shmem_ctx_##NAME##_put_nbi(CTX, DST(3), SRC(3), N, right);                           \
        for (int i = 0; i < N; i++)                                                          \
            shmem_##NAME##_p(DST(4) + i, SRC(4)[i], right);                                  \
        for (int i = 0; i < N; i++)                                                          \
            shmem_ctx_##NAME##_p(CTX, DST(5) + i, SRC(5)[i], right);                         \
        shmem_##NAME##_iput(DST(6), SRC(6), 2, 3, N, right);                                 \
        shmem_ctx_##NAME##_iput(CTX, DST(7), SRC(7), 3, 1, N, right);                        \
        shmem_put(DST(8), SRC(8), N, right);                                                 \
        shmem_put(CTX, DST(9), SRC(9), N, right);                                            \
        shmem_put_nbi(DST(10), SRC(10), N, right);                                           \
        shmem_put_nbi(CTX, DST(11), SRC(11), N, right);                                      \
        for (int i = 0; i < N; i++)                                                          \
            shmem_p(DST(12) + i, SRC(12)[i], right);                                         \
        for (int i = 0; i < N; i++)                                                          \
            shmem_p(CTX, DST(13) + i, SRC(13)[i], right);                                    \
        shmem_iput(DST(14), SRC(14), 1, 2, N, right);                                        \
        shmem_iput(CTX, DST(15), SRC(15), 2, 1, N, right);                                   \
        shmem_##NAME##_get(LOC(16), SYM(16), N, left);                                       \
        shmem_ctx_##NAME##_get(CTX, LOC(17), SYM(17), N, left);                              \
        shmem_##NAME##_get_nbi(LOC(18), SYM(18), N, left);                                   \
        shmem_ctx_##NAME##_get_nbi(CTX, LOC(19), SYM(19), N, left);                          \
        for (int i = 0; i < N; i++)                                                          \
            LOC(20)[i] = shmem_##NAME##_g(SYM(20) + i, left);                                \
        for (int i = 0; i < N; i++)                                                          \
            LOC(21)[i] = shmem_ctx_##NAME##_g(CTX, SYM(21) + i, left);                       \
        shmem_##NAME##_iget(LOC(22), SYM(22), 3, 2, N, left);                                \
        shmem_ctx_##NAME##_iget(CTX, LOC(23), SYM(23), 1, 3, N, left);                       \
        shmem_get(LOC(24), SYM(24), N, left);                                                \
        shmem_get(CTX, LOC(25), SYM(25), N, left);                                           \
        shmem_get_nbi(LOC(26), SYM(26), N, left);                                            \
        shmem_get_nbi(CTX, LOC(27), SYM(27), N, left);                                       \
        for (int i = 0; i < N; i++)                                                          \
            LOC(28)[i] = shmem_g(SYM(28) + i, left);                                         \
        for (int i = 0; i < N; i++)                                                          \
            LOC(29)[i] = shmem_g(CTX, SYM(29) + i, left);                                    \
        shmem_iget(LOC(30), SYM(30), 2, 1, N, left);                                         \
        shmem_iget(CTX, LOC(31), SYM(31), 1, 2, N, left);                                    \
        shmem_ctx_quiet(CTX); /* get_nbi results, put_nbi completion */                      \
        shmem_quiet();                                                                       \
        pe_step("%s: barrier after calls", #NAME);                                           \
        shmem_barrier_all();                                                                 \
        for (int k = 0; k < NTYPED; k++) {                                                   \
            const rma_case_t *c = &typed_cases[k];                                           \
            const T *b = c->is_get ? LOC(k) : DST(k);                                        \
            for (int j = 0; j < REG; j++) {                                                  \
                int si = 0;                                                                  \
                int in = case_src_index(c, j, &si);                                          \
                T exp = in ? PE_VAL(T, left, kt + k, si) : (T)0;                             \
                PE_EXPECT_EQ(b[j], exp, "%s %s[%d]%s, data of PE %d", c->name, #NAME, j,     \
                             in ? "" : " (must stay untouched)", left);                      \
            }                                                                                \
        }                                                                                    \
        /* Nobody may write the get sources. */                                              \
        for (int k = 0; k < NTYPED; k++)                                                     \
            for (int j = 0; j < REG; j++)                                                    \
                PE_EXPECT_EQ(SYM(k)[j], PE_VAL(T, pe_me_g, kt + k, j),                       \
                             "%s get source %s[%d] changed", typed_cases[k].name, #NAME, j); \
        shmem_barrier_all(); /* neighbours are done reading sym */                           \
        shmem_free(sym);                                                                     \
        shmem_free(dst);                                                                     \
        free(src);                                                                           \
        free(loc);                                                                           \
    }

PE_RMA_TYPES(DEFINE_TYPED_TEST)

// ---- sized and mem forms: byte patterns, element size es -----------------
static const rma_case_t sized_cases[] = {
    {"put", 0, 1, 1},                    //  0
    {"ctx_put", 0, 1, 1},                //  1
    {"put_nbi", 0, 1, 1},                //  2
    {"ctx_put_nbi", 0, 1, 1},            //  3
    {"iput(dst 2, src 3)", 0, 2, 3},     //  4
    {"ctx_iput(dst 3, src 1)", 0, 3, 1}, //  5
    {"get", 1, 1, 1},                    //  6
    {"ctx_get", 1, 1, 1},                //  7
    {"get_nbi", 1, 1, 1},                //  8
    {"ctx_get_nbi", 1, 1, 1},            //  9
    {"iget(dst 3, src 2)", 1, 3, 2},     // 10
    {"ctx_iget(dst 1, src 3)", 1, 1, 3}, // 11
};
#define NSIZED (int)(sizeof sized_cases / sizeof sized_cases[0])

static void check_sized(const char *form, size_t es, const uint8_t *dst, const uint8_t *loc,
                        int ncases)
{
    const int left = pe_left();
    for (int k = 0; k < ncases; k++) {
        const rma_case_t *c = &sized_cases[k];
        const uint8_t *b = (c->is_get ? loc : dst) + (size_t)k * REG * es;
        for (int j = 0; j < REG; j++) {
            char what[160];
            int si = 0;
            if (case_src_index(c, j, &si)) {
                snprintf(what, sizeof what, "%s %s element %d (%zu bytes), data of PE %d", form,
                         c->name, j, es, left);
                pe_check_fill(b + j * es, es, left, (uint32_t)k, (uint64_t)si * es, what);
            } else {
                snprintf(what, sizeof what, "%s %s element %d (must stay untouched)", form,
                         c->name, j);
                pe_check_byte(b + j * es, es, 0, what);
            }
        }
    }
}

#define SDST(k) (dst + (size_t)(k) * REG * ES)
#define SSRC(k) (src + (size_t)(k) * REG * ES)
#define SLOC(k) (loc + (size_t)(k) * REG * ES)
#define SSYM(k) (sym + (size_t)(k) * REG * ES)

#define SIZED_SETUP(ES)                                                                       \
    const int right = pe_right(), left = pe_left();                                          \
    uint8_t *dst = shmem_calloc((size_t)NSIZED * REG, ES);                                   \
    uint8_t *sym = shmem_malloc((size_t)NSIZED * REG * ES);                                  \
    uint8_t *src = malloc((size_t)NSIZED * REG * ES);                                        \
    uint8_t *loc = calloc((size_t)NSIZED * REG, ES);                                         \
    if (!dst || !sym || !src || !loc) {                                                      \
        pe_fail("sized %d: allocation failed", (int)(ES));                                   \
        shmem_global_exit(1);                                                                \
    }                                                                                        \
    for (int k = 0; k < NSIZED; k++) {                                                       \
        pe_fill(SSRC(k), (size_t)REG * ES, pe_me_g, (uint32_t)k, 0);                         \
        pe_fill(SSYM(k), (size_t)REG * ES, pe_me_g, (uint32_t)k, 0);                         \
    }                                                                                        \
    shmem_barrier_all();

#define SIZED_TEARDOWN(FORM, ES, NCASES)                                                      \
    shmem_quiet();                                                                           \
    shmem_barrier_all();                                                                     \
    check_sized(FORM, ES, dst, loc, NCASES);                                                 \
    shmem_barrier_all();                                                                     \
    shmem_free(sym);                                                                         \
    shmem_free(dst);                                                                         \
    free(src);                                                                               \
    free(loc);

#define DEFINE_SIZED_TEST(BITS)                                                               \
    static void test_sized_##BITS(void)                                                      \
    {                                                                                        \
        enum { ES = BITS / 8 };                                                              \
        SIZED_SETUP(ES)                                                                      \
        pe_step("sized %d: calls", BITS);                                                    \
        shmem_put##BITS(SDST(0), SSRC(0), N, right);                                         \
        shmem_ctx_put##BITS(CTX, SDST(1), SSRC(1), N, right);                                \
        shmem_put##BITS##_nbi(SDST(2), SSRC(2), N, right);                                   \
        shmem_ctx_put##BITS##_nbi(CTX, SDST(3), SSRC(3), N, right);                          \
        shmem_iput##BITS(SDST(4), SSRC(4), 2, 3, N, right);                                  \
        shmem_ctx_iput##BITS(CTX, SDST(5), SSRC(5), 3, 1, N, right);                         \
        shmem_get##BITS(SLOC(6), SSYM(6), N, left);                                          \
        shmem_ctx_get##BITS(CTX, SLOC(7), SSYM(7), N, left);                                 \
        shmem_get##BITS##_nbi(SLOC(8), SSYM(8), N, left);                                    \
        shmem_ctx_get##BITS##_nbi(CTX, SLOC(9), SSYM(9), N, left);                           \
        shmem_iget##BITS(SLOC(10), SSYM(10), 3, 2, N, left);                                 \
        shmem_ctx_iget##BITS(CTX, SLOC(11), SSYM(11), 1, 3, N, left);                        \
        pe_step("sized %d: barrier after calls", BITS);                                      \
        SIZED_TEARDOWN("put" #BITS "/get" #BITS, ES, NSIZED)                                 \
    }

DEFINE_SIZED_TEST(8)
DEFINE_SIZED_TEST(16)
DEFINE_SIZED_TEST(32)
DEFINE_SIZED_TEST(64)
DEFINE_SIZED_TEST(128)

// putmem/getmem: nelems counts bytes; no strided form. The case table is
// the sized one with the strided cases skipped (their regions stay 0).
static void test_mem(void)
{
    enum { ES = 1 };
    SIZED_SETUP(ES)
    pe_step("mem: calls");
    shmem_putmem(SDST(0), SSRC(0), N, right);
    shmem_ctx_putmem(CTX, SDST(1), SSRC(1), N, right);
    shmem_putmem_nbi(SDST(2), SSRC(2), N, right);
    shmem_ctx_putmem_nbi(CTX, SDST(3), SSRC(3), N, right);
    shmem_getmem(SLOC(6), SSYM(6), N, left);
    shmem_ctx_getmem(CTX, SLOC(7), SSYM(7), N, left);
    shmem_getmem_nbi(SLOC(8), SSYM(8), N, left);
    shmem_ctx_getmem_nbi(CTX, SLOC(9), SSYM(9), N, left);
    pe_step("mem: barrier after calls");
    shmem_quiet();
    shmem_barrier_all();
    static const int used[] = {0, 1, 2, 3, 6, 7, 8, 9};
    for (size_t u = 0; u < sizeof used / sizeof used[0]; u++) {
        const int k = used[u];
        const rma_case_t *c = &sized_cases[k];
        const uint8_t *b = c->is_get ? SLOC(k) : SDST(k);
        char what[128];
        snprintf(what, sizeof what, "%s (mem form) data of PE %d", c->name, left);
        pe_check_fill(b, N, left, (uint32_t)k, 0, what);
        snprintf(what, sizeof what, "%s (mem form) bytes after the %d written", c->name, N);
        pe_check_byte(b + N, REG - N, 0, what);
    }
    shmem_barrier_all();
    shmem_free(sym);
    shmem_free(dst);
    free(src);
    free(loc);
}

#define CALL_TYPED_TEST(T, NAME) test_##NAME(tid++);

int main(void)
{
    shmem_init();
    pe_begin("rma_types");
    int tid = 0;
    PE_RMA_TYPES(CALL_TYPED_TEST)
    test_sized_8();
    test_sized_16();
    test_sized_32();
    test_sized_64();
    test_sized_128();
    test_mem();
    pe_step("finalize");
    shmem_finalize();
    return pe_end();
}
