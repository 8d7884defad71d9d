// SPDX-License-Identifier: BSD-3-Clause
//
// Every RMA form with a count of zero has no effect, whatever its pointers
// (spec Annex "Undefined Behavior": "len is 0, pointer is null: supported"):
// typed, sized and mem put/get, their _nbi and context forms, the strided
// iput/iget (nelems 0) and ibput/ibget (nblocks 0 or bsize 0), the C11
// generic names, and put-with-signal (typed, sized, mem, blocking and nbi).
// Pointers are NULL, a garbage address that is mapped nowhere, and a private
// (non-symmetric) stack buffer; a real symmetric destination keeps its canary.
//
// A zero-length put-with-signal still delivers its signal (the signal-only
// put the spec's shmem_signal_set/add were modelled on): every call here adds
// 1 or sets a value on the right neighbour's signal word, which is checked.
// The wait/test set forms on zero variables and pe_quiet on zero PEs return
// at once. Run also with SHMEM_DEBUG=1 (every argument check on).
#include "pe_check.h"

#define GARBAGE ((void *)(uintptr_t)0x10) // in the never-mapped first page

static long canary[16];  // symmetric: a zero-length transfer must not touch it
static uint64_t sig;     // the right neighbour's zero-length signals land here
static uint64_t sig_set; // ... and the SHMEM_SIGNAL_SET ones here

static const uint64_t CANARY = 0x5a5a5a5a5a5a5a5aULL;

// One pointer under test: the destination/source of every zero-length call.
typedef struct {
    void *p;
    const char *name;
} ptr_t;

static uint64_t adds; // signal adds this PE sent to its right neighbour

static void check_canaries(const char *after)
{
    for (int i = 0; i < 16; i++)
        PE_EXPECT_EQ((uint64_t)canary[i], CANARY, "canary[%d] after %s", i, after);
}

// Typed forms: dest/source are the pointer under test, cast to T*.
#define ZERO_TYPED(T, N)                                                                     \
    static void zero_##N(void *vp, int pe, shmem_ctx_t ctx)                                  \
    {                                                                                        \
        T *p = (T *)vp;                                                                      \
        shmem_##N##_put(p, p, 0, pe);                                                        \
        shmem_##N##_get(p, p, 0, pe);                                                        \
        shmem_##N##_put_nbi(p, p, 0, pe);                                                    \
        shmem_##N##_get_nbi(p, p, 0, pe);                                                    \
        shmem_ctx_##N##_put(ctx, p, p, 0, pe);                                               \
        shmem_ctx_##N##_get(ctx, p, p, 0, pe);                                               \
        shmem_ctx_##N##_put_nbi(ctx, p, p, 0, pe);                                           \
        shmem_ctx_##N##_get_nbi(ctx, p, p, 0, pe);                                           \
        shmem_##N##_iput(p, p, 1, 1, 0, pe);                                                 \
        shmem_##N##_iget(p, p, 1, 1, 0, pe);                                                 \
        shmem_ctx_##N##_iput(ctx, p, p, 2, 3, 0, pe);                                        \
        shmem_ctx_##N##_iget(ctx, p, p, 2, 3, 0, pe);                                        \
        shmem_##N##_ibput(p, p, 4, 4, 2, 0, pe);                                             \
        shmem_##N##_ibget(p, p, 4, 4, 2, 0, pe);                                             \
        shmem_##N##_ibput(p, p, 4, 4, 0, 3, pe);                                             \
        shmem_##N##_ibget(p, p, 4, 4, 0, 3, pe);                                             \
        shmem_ctx_##N##_ibput(ctx, p, p, 4, 4, 0, 0, pe);                                    \
        shmem_ctx_##N##_ibget(ctx, p, p, 4, 4, 0, 0, pe);                                    \
        shmem_##N##_put_signal(p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);                      \
        shmem_##N##_put_signal_nbi(p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);                  \
        shmem_ctx_##N##_put_signal(ctx, p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);             \
        shmem_ctx_##N##_put_signal_nbi(ctx, p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);         \
        adds += 4;                                                                           \
    }
PE_RMA_TYPES(ZERO_TYPED)

#define CALL_TYPED(T, N) zero_##N(p, pe, ctx);

#define ZERO_SIZED(BITS)                                                                     \
    do {                                                                                     \
        shmem_put##BITS(p, p, 0, pe);                                                        \
        shmem_get##BITS(p, p, 0, pe);                                                        \
        shmem_put##BITS##_nbi(p, p, 0, pe);                                                  \
        shmem_get##BITS##_nbi(p, p, 0, pe);                                                  \
        shmem_ctx_put##BITS(ctx, p, p, 0, pe);                                               \
        shmem_ctx_get##BITS(ctx, p, p, 0, pe);                                               \
        shmem_ctx_put##BITS##_nbi(ctx, p, p, 0, pe);                                         \
        shmem_ctx_get##BITS##_nbi(ctx, p, p, 0, pe);                                         \
        shmem_iput##BITS(p, p, 1, 1, 0, pe);                                                 \
        shmem_iget##BITS(p, p, 1, 1, 0, pe);                                                 \
        shmem_ctx_iput##BITS(ctx, p, p, 1, 1, 0, pe);                                        \
        shmem_ctx_iget##BITS(ctx, p, p, 1, 1, 0, pe);                                        \
        shmem_ibput##BITS(p, p, 2, 2, 1, 0, pe);                                             \
        shmem_ibget##BITS(p, p, 2, 2, 0, 1, pe);                                             \
        shmem_ctx_ibput##BITS(ctx, p, p, 2, 2, 0, 1, pe);                                    \
        shmem_ctx_ibget##BITS(ctx, p, p, 2, 2, 1, 0, pe);                                    \
        shmem_put##BITS##_signal(p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);                    \
        shmem_put##BITS##_signal_nbi(p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);                \
        shmem_ctx_put##BITS##_signal(ctx, p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);           \
        shmem_ctx_put##BITS##_signal_nbi(ctx, p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);       \
        adds += 4;                                                                           \
    } while (0)

static void zero_all(void *p, int pe, shmem_ctx_t ctx)
{
    PE_RMA_TYPES(CALL_TYPED)
    ZERO_SIZED(8);
    ZERO_SIZED(16);
    ZERO_SIZED(32);
    ZERO_SIZED(64);
    ZERO_SIZED(128);
    shmem_putmem(p, p, 0, pe);
    shmem_getmem(p, p, 0, pe);
    shmem_putmem_nbi(p, p, 0, pe);
    shmem_getmem_nbi(p, p, 0, pe);
    shmem_ctx_putmem(ctx, p, p, 0, pe);
    shmem_ctx_getmem(ctx, p, p, 0, pe);
    shmem_ctx_putmem_nbi(ctx, p, p, 0, pe);
    shmem_ctx_getmem_nbi(ctx, p, p, 0, pe);
    shmem_putmem_signal(p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_putmem_signal_nbi(p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_ctx_putmem_signal(ctx, p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_ctx_putmem_signal_nbi(ctx, p, p, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    adds += 4;
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
    // C11 generic names pick the typed function from the pointer's type.
    long *lp = p;
    short *sp = p;
    double *dp = p;
    shmem_put(lp, lp, 0, pe);
    shmem_get(sp, sp, 0, pe);
    shmem_put_nbi(dp, dp, 0, pe);
    shmem_get_nbi(ctx, lp, lp, 0, pe);
    shmem_iput(sp, sp, 1, 1, 0, pe);
    shmem_iget(ctx, dp, dp, 1, 1, 0, pe);
    shmem_ibput(lp, lp, 1, 1, 1, 0, pe);
    shmem_ibget(sp, sp, 1, 1, 0, 1, pe);
    shmem_put_signal(lp, lp, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_put_signal_nbi(ctx, dp, dp, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    adds += 2;
#endif
}

int main(void)
{
    shmem_init();
    pe_begin("zero_rma");
    const int me = shmem_my_pe(), right = pe_right(), left = pe_left();
    for (int i = 0; i < 16; i++)
        canary[i] = (long)CANARY;
    long priv[4] = {1, 2, 3, 4}; // private: not symmetric, not remotely accessible
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    shmem_barrier_all();

    const ptr_t ptrs[] = {{NULL, "NULL"}, {GARBAGE, "garbage 0x10"}, {priv, "a private buffer"},
                          {canary, "a symmetric object"}};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) {
        const int targets[] = {right, me};
        for (int t = 0; t < 2; t++) {
            pe_step("every zero-length form, pointers %s, target PE %d", ptrs[k].name, targets[t]);
            zero_all(ptrs[k].p, targets[t], ctx);
        }
        shmem_ctx_quiet(ctx);
        shmem_quiet();
    }
    PE_EXPECT_EQ(priv[0] + priv[1] + priv[2] + priv[3], 10L, "private buffer after it all");

    // Empty sets: wait/test on zero variables return at once, whatever the pointers.
    pe_step("point-to-point calls on empty sets (nelems 0, NULL pointers)");
    size_t idx[1] = {99};
    shmem_long_wait_until_all(NULL, 0, NULL, SHMEM_CMP_EQ, 1);
    shmem_int_wait_until_all_vector(NULL, 0, NULL, SHMEM_CMP_EQ, NULL);
    PE_EXPECT_EQ(shmem_long_wait_until_any(NULL, 0, NULL, SHMEM_CMP_EQ, 1), SIZE_MAX,
                 "wait_until_any on an empty set");
    PE_EXPECT_EQ(shmem_uint64_wait_until_any_vector(GARBAGE, 0, GARBAGE, SHMEM_CMP_NE, GARBAGE),
                 SIZE_MAX, "wait_until_any_vector on an empty set");
    PE_EXPECT_EQ(shmem_long_wait_until_some(NULL, 0, NULL, NULL, SHMEM_CMP_EQ, 1), (size_t)0,
                 "wait_until_some on an empty set");
    PE_EXPECT_EQ(shmem_size_wait_until_some_vector(NULL, 0, idx, NULL, SHMEM_CMP_EQ, NULL),
                 (size_t)0, "wait_until_some_vector on an empty set");
    PE_EXPECT_EQ(shmem_long_test_all(NULL, 0, NULL, SHMEM_CMP_EQ, 1), 1, "test_all on an empty set");
    PE_EXPECT_EQ(shmem_int_test_any(NULL, 0, NULL, SHMEM_CMP_EQ, 1), SIZE_MAX,
                 "test_any on an empty set");
    PE_EXPECT_EQ(shmem_long_test_some_vector(NULL, 0, NULL, NULL, SHMEM_CMP_EQ, NULL), (size_t)0,
                 "test_some_vector on an empty set");
    PE_EXPECT_EQ(idx[0], (size_t)99, "indices untouched by an empty wait_until_some_vector");
    shmem_pe_quiet(NULL, 0);
    shmem_ctx_pe_quiet(ctx, GARBAGE, 0);

    // Signals: half of this PE's `adds` went to its right neighbour, half to
    // itself; the left neighbour made the same calls, so my word got `adds`
    // (also with one PE, where right == me).
    pe_step("barrier before checking the signals");
    shmem_barrier_all();
    PE_EXPECT_EQ(shmem_signal_fetch(&sig), adds,
                 "signal word after the zero-length put-with-signal calls of PE %d and PE %d",
                 left, me);
    check_canaries("every zero-length form");

    // SHMEM_SIGNAL_SET with no data: the value arrives, the destination is untouched.
    pe_step("zero-length putmem_signal SET to PE %d", right);
    shmem_putmem_signal(NULL, NULL, 0, &sig_set, 1000 + (uint64_t)me, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(&sig_set, SHMEM_CMP_EQ, 1000 + (uint64_t)left);
    PE_EXPECT_EQ(sig_set, 1000 + (uint64_t)left, "signal set by PE %d's zero-length put", left);
    shmem_barrier_all();
    pe_step("zero-length long_put_signal_nbi SET to PE %d", right);
    shmem_long_put_signal_nbi(canary, NULL, 0, &sig_set, 2000 + (uint64_t)me, SHMEM_SIGNAL_SET,
                              right);
    shmem_signal_wait_until(&sig_set, SHMEM_CMP_EQ, 2000 + (uint64_t)left);
    shmem_barrier_all();
    check_canaries("zero-length put-with-signal SET");

    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_finalize();
    return pe_end();
}
