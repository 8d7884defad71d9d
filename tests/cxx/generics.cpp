// SPDX-License-Identifier: BSD-3-Clause
//
// The OpenSHMEM generic names from C++ (<ofishmem/cxx_generics.h>): every
// family, with and without a context where the spec has both, over several
// types each. The calls are made from function templates, so each one is
// resolved for a concrete T exactly as in a user's code; every result is
// checked (a wrong overload gives a value only the wrong type could give,
// or a value of the wrong size). Runs on 2 or more PEs; each PE works on its
// right neighbour, so every variable has exactly one remote writer.
//
// A failure prints "PE n: <family> <type> ...: expected X got Y" and the
// program exits 1. A watchdog (PE_WATCHDOG_S, default 50 s) names the step a
// PE is stuck in.
#include <shmem.h>
#include <shmemx.h>

#include <climits>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {

int me, npes, right, left;
long errors, checks;
char step[256] = "start";
shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;

void watchdog_fire(int)
{
    char buf[400];
    int n = snprintf(buf, sizeof buf, "PE %d: cxx generics: watchdog fired in step: %s\n", me,
                     step);
    if (n > 0 && write(STDERR_FILENO, buf, (size_t)n) < 0)
        _exit(4);
    _exit(3);
}

void set_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void set_step(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(step, sizeof step, fmt, ap);
    va_end(ap);
}

template <class T> void expect_eq(T got, T exp, const char *what, const char *tname, long idx = -1)
{
    checks++;
    if (got == exp)
        return;
    if (++errors <= 30) {
        fprintf(stderr, "PE %d: %s %s", me, what, tname);
        if (idx >= 0)
            fprintf(stderr, " [%ld]", idx);
        fprintf(stderr, ": expected %.21Lg got %.21Lg\n", (long double)exp, (long double)got);
    }
}

void expect(bool ok, const char *what, const char *tname)
{
    checks++;
    if (!ok && ++errors <= 30)
        fprintf(stderr, "PE %d: %s %s: check failed\n", me, what, tname);
}

// A value that depends on the writing PE, the position and a tag, and that
// fits every type used here (0..120).
template <class T> T val(int pe, long i, int tag)
{
    return static_cast<T>((pe * 37 + i * 5 + tag * 11) % 121);
}

template <class T> T *sym(size_t n)
{
    T *p = static_cast<T *>(shmem_calloc(n, sizeof(T)));
    if (!p) {
        fprintf(stderr, "PE %d: shmem_calloc(%zu, %zu) failed\n", me, n, sizeof(T));
        shmem_global_exit(2);
    }
    return p;
}

// ---- RMA: put, get, nbi, p, g, iput, iget, ibput, ibget -------------------
template <class T> void rma(const char *tn)
{
    const long N = 12;
    T *src = sym<T>(N), *dst = sym<T>(N);
    for (long i = 0; i < N; i++)
        src[i] = val<T>(me, i, 1);
    shmem_barrier_all();

    for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
        set_step("rma %s ctx=%d put/get", tn, with_ctx);
        std::memset(static_cast<void *>(dst), 0, N * sizeof(T));
        shmem_barrier_all();
        if (with_ctx) {
            shmem_put(ctx, dst, src, 5, right);
            shmem_put_nbi(ctx, dst + 5, src + 5, 5, right);
            shmem_p(ctx, dst + 10, val<T>(me, 10, 7), right);
            shmem_ctx_quiet(ctx);
        } else {
            shmem_put(dst, src, 5, right);
            shmem_put_nbi(dst + 5, src + 5, 5, right);
            shmem_p(dst + 10, val<T>(me, 10, 7), right);
            shmem_quiet();
        }
        shmem_barrier_all();
        for (long i = 0; i < 10; i++)
            expect_eq(dst[i], val<T>(left, i, 1), with_ctx ? "ctx put/put_nbi" : "put/put_nbi", tn,
                      i);
        expect_eq(dst[10], val<T>(left, 10, 7), with_ctx ? "ctx p" : "p", tn);

        T got[N] = {};
        T g;
        if (with_ctx) {
            shmem_get(ctx, got, src, 4, right);
            shmem_get_nbi(ctx, got + 4, src + 4, 4, right);
            shmem_ctx_quiet(ctx);
            g = shmem_g(ctx, src + 9, right);
        } else {
            shmem_get(got, src, 4, right);
            shmem_get_nbi(got + 4, src + 4, 4, right);
            shmem_quiet();
            g = shmem_g(static_cast<const T *>(src + 9), right);
        }
        for (long i = 0; i < 8; i++)
            expect_eq(got[i], val<T>(right, i, 1), with_ctx ? "ctx get/get_nbi" : "get/get_nbi",
                      tn, i);
        expect_eq(g, val<T>(right, 9, 1), with_ctx ? "ctx g" : "g", tn);

        // Strided: every 2nd source element to every 3rd destination slot,
        // then blocks of 2 with strides 3 (dest) and 4 (source).
        set_step("rma %s ctx=%d iput/iget/ibput/ibget", tn, with_ctx);
        std::memset(static_cast<void *>(dst), 0, N * sizeof(T));
        shmem_barrier_all();
        if (with_ctx)
            shmem_iput(ctx, dst, src, 3, 2, 4, right);
        else
            shmem_iput(dst, src, 3, 2, 4, right);
        // shmem_barrier_all completes the default context only.
        if (with_ctx)
            shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        for (long i = 0; i < 4; i++)
            expect_eq(dst[3 * i], val<T>(left, 2 * i, 1), with_ctx ? "ctx iput" : "iput", tn, i);
        expect_eq(dst[1], T(0), "iput left gaps untouched", tn);
        std::memset(static_cast<void *>(got), 0, sizeof got);
        if (with_ctx)
            shmem_iget(ctx, got, src, 2, 3, 4, right);
        else
            shmem_iget(got, src, 2, 3, 4, right);
        for (long i = 0; i < 4; i++)
            expect_eq(got[2 * i], val<T>(right, 3 * i, 1), with_ctx ? "ctx iget" : "iget", tn, i);

        std::memset(static_cast<void *>(dst), 0, N * sizeof(T));
        shmem_barrier_all();
        if (with_ctx)
            shmem_ibput(ctx, dst, src, 3, 4, 2, 3, right);
        else
            shmem_ibput(dst, src, 3, 4, 2, 3, right);
        if (with_ctx)
            shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        for (long b = 0; b < 3; b++)
            for (long k = 0; k < 2; k++)
                expect_eq(dst[3 * b + k], val<T>(left, 4 * b + k, 1),
                          with_ctx ? "ctx ibput" : "ibput", tn, 3 * b + k);
        std::memset(static_cast<void *>(got), 0, sizeof got);
        if (with_ctx)
            shmem_ibget(ctx, got, src, 4, 3, 2, 3, right);
        else
            shmem_ibget(got, src, 4, 3, 2, 3, right);
        for (long b = 0; b < 3; b++)
            for (long k = 0; k < 2; k++)
                expect_eq(got[4 * b + k], val<T>(right, 3 * b + k, 1),
                          with_ctx ? "ctx ibget" : "ibget", tn, 4 * b + k);
        shmem_barrier_all();
    }
    shmem_free(dst);
    shmem_free(src);
}

// ---- put-with-signal --------------------------------------------------------
template <class T> void put_signal(const char *tn)
{
    const long N = 6;
    T *src = sym<T>(N), *dst = sym<T>(2 * N);
    uint64_t *sig = sym<uint64_t>(1);
    for (long i = 0; i < N; i++)
        src[i] = val<T>(me, i, 3);
    shmem_barrier_all();
    set_step("put_signal %s", tn);
    // SET 5, then ADD 2 twice (nbi, through the context): the receiver waits for 9.
    shmem_put_signal(dst, src, N, sig, 5, SHMEM_SIGNAL_SET, right);
    shmem_fence(); // the SET lands before the ADDs
    shmem_put_signal_nbi(dst + N, src, N, sig, 2, SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    shmem_put_signal(ctx, dst, src, N, sig, 0, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal_nbi(ctx, dst + N, src, N, sig, 2, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_quiet(ctx);
    uint64_t s = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 9);
    expect_eq(s, uint64_t(9), "put_signal signal value", tn);
    for (long i = 0; i < 2 * N; i++)
        expect_eq(dst[i], val<T>(left, i % N, 3), "put_signal data", tn, i);
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(dst);
    shmem_free(src);
}

// ---- AMOs: standard ---------------------------------------------------------
template <class T> void amo_std(const char *tn)
{
    T *x = sym<T>(2);
    T f = 0;
    shmem_barrier_all();
    set_step("amo std %s", tn);
    shmem_atomic_add(x, T(5), right);                                   // 5
    shmem_atomic_inc(x, right);                                         // 6
    shmem_fence(); // non-fetching AMOs are ordered with later ones only by a fence
    expect_eq(shmem_atomic_fetch_add(x, T(10), right), T(6), "fetch_add", tn);  // 16
    expect_eq(shmem_atomic_fetch_inc(x, right), T(16), "fetch_inc", tn);        // 17
    expect_eq(shmem_atomic_compare_swap(x, T(17), T(100), right), T(17), "compare_swap", tn);
    expect_eq(shmem_atomic_compare_swap(x, T(5), T(1), right), T(100), "compare_swap (no swap)",
              tn);
    shmem_atomic_fetch_add_nbi(&f, x, T(1), right); // 101
    shmem_quiet();
    expect_eq(f, T(100), "fetch_add_nbi", tn);
    shmem_atomic_fetch_inc_nbi(&f, x, right); // 102
    shmem_quiet();
    expect_eq(f, T(101), "fetch_inc_nbi", tn);
    shmem_atomic_compare_swap_nbi(&f, x, T(102), T(7), right); // 7
    shmem_quiet();
    expect_eq(f, T(102), "compare_swap_nbi", tn);

    // Context forms on x[1].
    shmem_atomic_add(ctx, x + 1, T(3), right);                                   // 3
    shmem_atomic_inc(ctx, x + 1, right);                                         // 4
    shmem_ctx_fence(ctx);
    expect_eq(shmem_atomic_fetch_add(ctx, x + 1, T(2), right), T(4), "ctx fetch_add", tn);  // 6
    expect_eq(shmem_atomic_fetch_inc(ctx, x + 1, right), T(6), "ctx fetch_inc", tn);        // 7
    expect_eq(shmem_atomic_compare_swap(ctx, x + 1, T(7), T(40), right), T(7), "ctx compare_swap",
              tn); // 40
    shmem_atomic_fetch_add_nbi(ctx, &f, x + 1, T(2), right); // 42
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(40), "ctx fetch_add_nbi", tn);
    shmem_atomic_fetch_inc_nbi(ctx, &f, x + 1, right); // 43
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(42), "ctx fetch_inc_nbi", tn);
    shmem_atomic_compare_swap_nbi(ctx, &f, x + 1, T(43), T(50), right); // 50
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(43), "ctx compare_swap_nbi", tn);

    // Deprecated 1.4 generic names on x[0] (7).
    shmem_add(x, T(3), right);                                         // 10
    shmem_inc(x, right);                                               // 11
    shmem_fence();
    expect_eq(shmem_fadd(x, T(1), right), T(11), "fadd", tn);          // 12
    expect_eq(shmem_finc(x, right), T(12), "finc", tn);                // 13
    expect_eq(shmem_cswap(x, T(13), T(20), right), T(13), "cswap", tn); // 20
    shmem_quiet();
    shmem_barrier_all();
    expect_eq(x[0], T(20), "standard AMOs final value", tn);
    expect_eq(x[1], T(50), "ctx standard AMOs final value", tn);
    shmem_barrier_all();
    shmem_free(x);
}

// ---- AMOs: extended (fetch, set, swap) ------------------------------------------
template <class T> void amo_ext(const char *tn)
{
    T *x = sym<T>(2);
    T f = 0;
    shmem_barrier_all();
    set_step("amo ext %s", tn);
    shmem_atomic_set(x, T(11), right);
    shmem_fence();
    expect_eq(shmem_atomic_fetch(x, right), T(11), "atomic_fetch", tn);
    expect_eq(shmem_atomic_fetch(static_cast<const T *>(x), right), T(11), "atomic_fetch const",
              tn);
    expect_eq(shmem_atomic_swap(x, T(12), right), T(11), "atomic_swap", tn);
    shmem_atomic_swap_nbi(&f, x, T(13), right);
    shmem_quiet();
    expect_eq(f, T(12), "atomic_swap_nbi", tn);
    shmem_atomic_fetch_nbi(&f, x, right);
    shmem_quiet();
    expect_eq(f, T(13), "atomic_fetch_nbi", tn);

    shmem_atomic_set(ctx, x + 1, T(21), right);
    shmem_ctx_fence(ctx);
    expect_eq(shmem_atomic_fetch(ctx, x + 1, right), T(21), "ctx atomic_fetch", tn);
    expect_eq(shmem_atomic_swap(ctx, x + 1, T(22), right), T(21), "ctx atomic_swap", tn);
    shmem_atomic_swap_nbi(ctx, &f, x + 1, T(23), right);
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(22), "ctx atomic_swap_nbi", tn);
    shmem_atomic_fetch_nbi(ctx, &f, x + 1, right);
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(23), "ctx atomic_fetch_nbi", tn);

    shmem_set(x, T(14), right);
    shmem_fence();
    expect_eq(shmem_fetch(x, right), T(14), "fetch (deprecated)", tn);
    expect_eq(shmem_swap(x, T(15), right), T(14), "swap (deprecated)", tn);
    shmem_quiet();
    shmem_barrier_all();
    expect_eq(x[0], T(15), "extended AMOs final value", tn);
    expect_eq(x[1], T(23), "ctx extended AMOs final value", tn);
    shmem_barrier_all();
    shmem_free(x);
}

// ---- AMOs: bitwise ----------------------------------------------------------
template <class T> void amo_bitwise(const char *tn)
{
    T *x = sym<T>(2);
    T f = 0;
    x[0] = x[1] = T(0xF0F0);
    shmem_barrier_all();
    set_step("amo bitwise %s", tn);
    shmem_atomic_or(x, T(0x000F), right); // F0FF
    shmem_fence();
    shmem_atomic_and(x, T(0x0FFF), right); // 00FF
    shmem_fence();
    shmem_atomic_xor(x, T(0x0101), right); // 01FE
    shmem_fence();
    expect_eq(shmem_atomic_fetch_or(x, T(0x1000), right), T(0x01FE), "fetch_or", tn);  // 11FE
    expect_eq(shmem_atomic_fetch_and(x, T(0x10FF), right), T(0x11FE), "fetch_and", tn); // 10FE
    expect_eq(shmem_atomic_fetch_xor(x, T(0x00FF), right), T(0x10FE), "fetch_xor", tn); // 1001
    shmem_atomic_fetch_or_nbi(&f, x, T(0x0110), right); // 1111
    shmem_quiet();
    expect_eq(f, T(0x1001), "fetch_or_nbi", tn);
    shmem_atomic_fetch_and_nbi(&f, x, T(0x0FF0), right); // 0110
    shmem_quiet();
    expect_eq(f, T(0x1111), "fetch_and_nbi", tn);
    shmem_atomic_fetch_xor_nbi(&f, x, T(0x0011), right); // 0101
    shmem_quiet();
    expect_eq(f, T(0x0110), "fetch_xor_nbi", tn);

    shmem_atomic_or(ctx, x + 1, T(0x0F00), right); // FFF0
    shmem_ctx_fence(ctx);
    shmem_atomic_and(ctx, x + 1, T(0x3F3F), right); // 3F30
    shmem_ctx_fence(ctx);
    shmem_atomic_xor(ctx, x + 1, T(0x0030), right); // 3F00
    shmem_ctx_fence(ctx);
    expect_eq(shmem_atomic_fetch_or(ctx, x + 1, T(0x0001), right), T(0x3F00), "ctx fetch_or", tn);
    expect_eq(shmem_atomic_fetch_and(ctx, x + 1, T(0x0F01), right), T(0x3F01), "ctx fetch_and",
              tn); // 0F01
    expect_eq(shmem_atomic_fetch_xor(ctx, x + 1, T(0x0F00), right), T(0x0F01), "ctx fetch_xor",
              tn); // 0001
    shmem_atomic_fetch_or_nbi(ctx, &f, x + 1, T(0x0002), right); // 0003
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(0x0001), "ctx fetch_or_nbi", tn);
    shmem_atomic_fetch_and_nbi(ctx, &f, x + 1, T(0x0002), right); // 0002
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(0x0003), "ctx fetch_and_nbi", tn);
    shmem_atomic_fetch_xor_nbi(ctx, &f, x + 1, T(0x0006), right); // 0004
    shmem_ctx_quiet(ctx);
    expect_eq(f, T(0x0002), "ctx fetch_xor_nbi", tn);
    shmem_barrier_all();
    expect_eq(x[0], T(0x0101), "bitwise AMOs final value", tn);
    expect_eq(x[1], T(0x0004), "ctx bitwise AMOs final value", tn);
    shmem_barrier_all();
    shmem_free(x);
}

// ---- wait_until / test on short and unsigned short (deprecated, as in C; the
// set forms take them too, as in Sandia OpenSHMEM: wait_test below) ---------------
// The comparison value is a plain int literal, as C programs write it: the
// overload for T must still be chosen (T * decides, the int converts).
template <class T> void wait_test_deprecated(const char *tn)
{
    T *iv = sym<T>(1);
    shmem_barrier_all();
    set_step("wait/test (deprecated type) %s", tn);
    expect_eq(shmem_test(iv, SHMEM_CMP_NE, 0), 0, "test (not yet)", tn);
    shmem_barrier_all();
    shmem_p(iv, T(me + 1), right);
    shmem_wait_until(iv, SHMEM_CMP_NE, 0);
    expect_eq(*iv, T(left + 1), "wait_until value", tn);
    expect_eq(shmem_test(iv, SHMEM_CMP_EQ, left + 1), 1, "test", tn);
    shmem_barrier_all();
    shmem_free(iv);
}

// ---- wait / test, single and on sets ------------------------------------------
template <class T> void wait_test(const char *tn)
{
    const size_t N = 4;
    T *iv = sym<T>(N + 1);
    volatile T *viv = iv;
    T cmpv[N];
    size_t idx[N];
    for (size_t i = 0; i < N; i++)
        cmpv[i] = T(20 + i);
    shmem_barrier_all();
    set_step("wait/test %s before", tn);
    // Nobody writes before the next barrier: nothing is satisfied yet.
    expect_eq(shmem_test(iv + N, SHMEM_CMP_EQ, T(9)), 0, "test (not yet)", tn);
    expect_eq(shmem_test_all(iv, N, nullptr, SHMEM_CMP_EQ, T(7)), 0, "test_all (not yet)", tn);
    expect_eq(shmem_test_any(viv, N, nullptr, SHMEM_CMP_EQ, T(7)), SIZE_MAX, "test_any (not yet)",
              tn);
    expect_eq(shmem_test_some(iv, N, idx, nullptr, SHMEM_CMP_EQ, T(7)), size_t(0),
              "test_some (not yet)", tn);
    expect_eq(shmem_test_all_vector(iv, N, nullptr, SHMEM_CMP_EQ, cmpv), 0,
              "test_all_vector (not yet)", tn);
    expect_eq(shmem_test_any_vector(iv, N, nullptr, SHMEM_CMP_EQ, cmpv), SIZE_MAX,
              "test_any_vector (not yet)", tn);
    expect_eq(shmem_test_some_vector(viv, N, idx, nullptr, SHMEM_CMP_EQ, cmpv), size_t(0),
              "test_some_vector (not yet)", tn);
    shmem_barrier_all();

    set_step("wait/test %s: wait_until on single and sets", tn);
    usleep(2000);
    for (size_t i = 0; i < N; i++)
        shmem_p(iv + i, T(7), right);
    shmem_fence();
    shmem_p(iv + N, T(9), right);
    shmem_quiet();
    shmem_wait_until(viv + N, SHMEM_CMP_EQ, T(9));
    shmem_wait_until(iv + N, SHMEM_CMP_GE, T(9));
    expect_eq(shmem_test(viv + N, SHMEM_CMP_EQ, T(9)), 1, "test", tn);
    shmem_wait_until_all(iv, N, nullptr, SHMEM_CMP_EQ, T(7));
    size_t a = shmem_wait_until_any(viv, N, nullptr, SHMEM_CMP_EQ, T(7));
    expect(a < N, "wait_until_any index", tn);
    int status[N] = {1, 0, 1, 0}; // skip elements 0 and 2
    size_t k = shmem_wait_until_some(iv, N, idx, status, SHMEM_CMP_EQ, T(7));
    expect_eq(k, size_t(2), "wait_until_some count", tn);
    expect(k == 2 && idx[0] == 1 && idx[1] == 3, "wait_until_some indices (status mask)", tn);
    expect_eq(shmem_test_all(viv, N, nullptr, SHMEM_CMP_EQ, T(7)), 1, "test_all", tn);
    a = shmem_test_any(iv, N, status, SHMEM_CMP_EQ, T(7));
    expect(a == 1 || a == 3, "test_any index (status mask)", tn);
    expect_eq(shmem_test_some(iv, N, idx, nullptr, SHMEM_CMP_EQ, T(7)), N, "test_some", tn);
    shmem_barrier_all();

    set_step("wait/test %s: vector forms", tn);
    for (size_t i = 0; i < N; i++)
        shmem_p(iv + i, cmpv[i], right);
    shmem_quiet();
    shmem_wait_until_all_vector(iv, N, nullptr, SHMEM_CMP_EQ, cmpv);
    a = shmem_wait_until_any_vector(viv, N, nullptr, SHMEM_CMP_EQ, cmpv);
    expect(a < N, "wait_until_any_vector index", tn);
    k = shmem_wait_until_some_vector(iv, N, idx, nullptr, SHMEM_CMP_GE, cmpv);
    expect_eq(k, N, "wait_until_some_vector count", tn);
    expect_eq(shmem_test_all_vector(viv, N, nullptr, SHMEM_CMP_EQ, cmpv), 1, "test_all_vector",
              tn);
    a = shmem_test_any_vector(iv, N, nullptr, SHMEM_CMP_LE, cmpv);
    expect(a < N, "test_any_vector index", tn);
    expect_eq(shmem_test_some_vector(iv, N, idx, status, SHMEM_CMP_EQ, cmpv), size_t(2),
              "test_some_vector count (status mask)", tn);
    for (size_t i = 0; i < N; i++)
        expect_eq(iv[i], cmpv[i], "wait set final value", tn, (long)i);
    shmem_barrier_all();
    shmem_free(iv);
}

// ---- collectives on a team ------------------------------------------------------
template <class T> void coll_rma(const char *tn)
{
    shmem_team_t W = SHMEM_TEAM_WORLD;
    const long K = 3;
    T *src = sym<T>(K * npes), *dst = sym<T>(K * npes * npes);
    for (long i = 0; i < K * npes; i++)
        src[i] = val<T>(me, i, 5);
    shmem_barrier_all();
    set_step("collectives %s", tn);
    const int root = npes - 1;
    expect_eq(shmem_broadcast(W, dst, src, K, root), 0, "broadcast returns", tn);
    for (long i = 0; i < K; i++)
        expect_eq(dst[i], val<T>(root, i, 5), "broadcast", tn, i);
    shmem_barrier_all(); // dst is checked before anyone writes it again
    expect_eq(shmem_fcollect(W, dst, src, K), 0, "fcollect returns", tn);
    for (long i = 0; i < K * npes; i++)
        expect_eq(dst[i], val<T>((int)(i / K), i % K, 5), "fcollect", tn, i);
    // collect: PE p contributes p+1 elements.
    shmem_barrier_all();
    expect_eq(shmem_collect(W, dst, src, (size_t)me + 1), 0, "collect returns", tn);
    for (int p = 0, at = 0; p < npes; at += ++p)
        for (int i = 0; i <= p; i++)
            expect_eq(dst[at + i], val<T>(p, i, 5), "collect", tn, at + i);
    shmem_barrier_all();
    expect_eq(shmem_alltoall(W, dst, src, K), 0, "alltoall returns", tn);
    for (int p = 0; p < npes; p++)
        for (long i = 0; i < K; i++)
            expect_eq(dst[p * K + i], val<T>(p, me * K + i, 5), "alltoall", tn, p * K + i);
    // alltoalls with dest stride 2 and source stride 1, one element per PE.
    std::memset(static_cast<void *>(dst), 0, sizeof(T) * K * npes * npes);
    shmem_barrier_all();
    expect_eq(shmem_alltoalls(W, dst, src, 2, 1, 1), 0, "alltoalls returns", tn);
    for (int p = 0; p < npes; p++)
        expect_eq(dst[2 * p], val<T>(p, me, 5), "alltoalls", tn, 2 * p);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

template <class T> void reduce_bitwise(const char *tn)
{
    shmem_team_t W = SHMEM_TEAM_WORLD;
    T *src = sym<T>(2), *dst = sym<T>(2);
    src[0] = T(1u << (me % 8)) | T(0x80);
    src[1] = T(0x0F ^ me);
    shmem_barrier_all();
    set_step("bitwise reductions %s", tn);
    T a = T(0x80), o = T(0x80), xo0 = 0, a1 = T(0x0F), o1 = 0, xo1 = 0;
    for (int p = 0; p < npes; p++) {
        a = T(a & (T(1u << (p % 8)) | T(0x80)));
        o = T(o | T(1u << (p % 8)));
        xo0 = T(xo0 ^ (T(1u << (p % 8)) | T(0x80)));
        a1 = T(a1 & T(0x0F ^ p));
        o1 = T(o1 | T(0x0F ^ p));
        xo1 = T(xo1 ^ T(0x0F ^ p));
    }
    expect_eq(shmem_and_reduce(W, dst, src, 2), 0, "and_reduce returns", tn);
    expect_eq(dst[0], a, "and_reduce", tn, 0);
    expect_eq(dst[1], a1, "and_reduce", tn, 1);
    shmem_barrier_all();
    shmem_or_reduce(W, dst, src, 2);
    expect_eq(dst[0], o, "or_reduce", tn, 0);
    expect_eq(dst[1], o1, "or_reduce", tn, 1);
    shmem_barrier_all();
    shmem_xor_reduce(W, dst, src, 2);
    expect_eq(dst[0], xo0, "xor_reduce", tn, 0);
    expect_eq(dst[1], xo1, "xor_reduce", tn, 1);
    shmem_free(dst);
    shmem_free(src);
}

template <class T> void reduce_minmax(const char *tn)
{
    shmem_team_t W = SHMEM_TEAM_WORLD;
    T *src = sym<T>(2), *dst = sym<T>(2);
    src[0] = T(10 + 7 * me);
    src[1] = T(100 - 3 * me);
    shmem_barrier_all();
    set_step("min/max reductions %s", tn);
    expect_eq(shmem_max_reduce(W, dst, src, 2), 0, "max_reduce returns", tn);
    expect_eq(dst[0], T(10 + 7 * (npes - 1)), "max_reduce", tn, 0);
    expect_eq(dst[1], T(100), "max_reduce", tn, 1);
    shmem_barrier_all();
    shmem_min_reduce(W, dst, src, 2);
    expect_eq(dst[0], T(10), "min_reduce", tn, 0);
    expect_eq(dst[1], T(100 - 3 * (npes - 1)), "min_reduce", tn, 1);
    shmem_free(dst);
    shmem_free(src);
}

template <class T> void reduce_arith(const char *tn)
{
    shmem_team_t W = SHMEM_TEAM_WORLD;
    T *src = sym<T>(2), *dst = sym<T>(2);
    src[0] = T(me + 1);
    src[1] = T(2);
    shmem_barrier_all();
    set_step("sum/prod/scan %s", tn);
    expect_eq(shmem_sum_reduce(W, dst, src, 2), 0, "sum_reduce returns", tn);
    expect_eq(dst[0], T(npes * (npes + 1) / 2), "sum_reduce", tn, 0);
    expect_eq(dst[1], T(2 * npes), "sum_reduce", tn, 1);
    shmem_barrier_all();
    shmem_prod_reduce(W, dst, src, 2);
    T fact = 1;
    for (int p = 1; p <= npes; p++)
        fact = T(fact * p);
    expect_eq(dst[0], fact, "prod_reduce", tn, 0);
    expect_eq(dst[1], T(1 << npes), "prod_reduce", tn, 1);
    shmem_barrier_all();
    expect_eq(shmem_sum_inscan(W, dst, src, 2), 0, "sum_inscan returns", tn);
    expect_eq(dst[0], T((me + 1) * (me + 2) / 2), "sum_inscan", tn, 0);
    expect_eq(dst[1], T(2 * (me + 1)), "sum_inscan", tn, 1);
    shmem_barrier_all();
    expect_eq(shmem_sum_exscan(W, dst, src, 2), 0, "sum_exscan returns", tn);
    if (me > 0) { // PE 0's exscan result is undefined
        expect_eq(dst[0], T(me * (me + 1) / 2), "sum_exscan", tn, 0);
        expect_eq(dst[1], T(2 * me), "sum_exscan", tn, 1);
    }
    shmem_free(dst);
    shmem_free(src);
}

// shmem_sync(team) (C11 name of shmem_team_sync) next to the deprecated
// active-set shmem_sync and shmem_wait_until(long *, ...), both C functions.
void sync_team()
{
    long *x = sym<long>(1);
    static long psync[SHMEM_SYNC_SIZE];
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    set_step("shmem_sync(team)");
    shmem_p(x, long(me + 1000), right);
    shmem_quiet();
    expect_eq(shmem_sync(SHMEM_TEAM_WORLD), 0, "shmem_sync(team) returns", "team");
    expect_eq(*x, long(left + 1000), "value visible after quiet + shmem_sync(team)", "long");
    shmem_sync(0, 0, npes, psync);
    shmem_wait_until(x, SHMEM_CMP_EQ, long(left + 1000)); // the C function
    shmem_barrier_all();
    shmem_free(x);
}

} // namespace

int main()
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *wd = getenv("PE_WATCHDOG_S");
    signal(SIGALRM, watchdog_fire);
    alarm(wd && *wd ? (unsigned)strtoul(wd, nullptr, 10) : 50u);
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;

    // Several types per family; int8_t, uint64_t, size_t, ptrdiff_t ... are
    // typedefs of these and resolve to the same overloads.
    rma<int>("int");
    rma<long>("long");
    rma<double>("double");
    rma<float>("float");
    rma<char>("char");
    rma<unsigned char>("unsigned char");
    rma<short>("short");
    rma<long double>("long double");
    rma<int8_t>("int8_t");
    rma<uint64_t>("uint64_t");
    rma<size_t>("size_t");

    put_signal<int>("int");
    put_signal<double>("double");
    put_signal<uint16_t>("uint16_t");

    amo_std<int>("int");
    amo_std<long>("long");
    amo_std<long long>("long long");
    amo_std<unsigned int>("unsigned int");
    amo_std<unsigned long long>("unsigned long long");
    amo_std<int64_t>("int64_t");
    amo_std<size_t>("size_t");
    amo_std<ptrdiff_t>("ptrdiff_t");

    amo_ext<float>("float");
    amo_ext<double>("double");
    amo_ext<int>("int");
    amo_ext<unsigned long>("unsigned long");
    amo_ext<int32_t>("int32_t");

    amo_bitwise<unsigned int>("unsigned int");
    amo_bitwise<unsigned long>("unsigned long");
    amo_bitwise<unsigned long long>("unsigned long long");
    amo_bitwise<int32_t>("int32_t");
    amo_bitwise<int64_t>("int64_t");
    amo_bitwise<uint64_t>("uint64_t");

    wait_test<int>("int");
    wait_test<long>("long");
    wait_test<unsigned long long>("unsigned long long");
    wait_test<int32_t>("int32_t");
    wait_test<uint64_t>("uint64_t");
    wait_test<size_t>("size_t");
    wait_test_deprecated<short>("short");
    wait_test_deprecated<unsigned short>("unsigned short");
    wait_test<short>("short");
    wait_test<unsigned short>("unsigned short");

    coll_rma<int>("int");
    coll_rma<double>("double");
    coll_rma<char>("char");
    coll_rma<long double>("long double");
    coll_rma<uint32_t>("uint32_t");

    reduce_bitwise<unsigned char>("unsigned char");
    reduce_bitwise<unsigned int>("unsigned int");
    reduce_bitwise<int64_t>("int64_t");
    reduce_bitwise<uint16_t>("uint16_t");
    reduce_minmax<char>("char");
    reduce_minmax<int>("int");
    reduce_minmax<double>("double");
    reduce_minmax<long double>("long double");
    reduce_minmax<uint64_t>("uint64_t");
    reduce_arith<int>("int");
    reduce_arith<long>("long");
    reduce_arith<float>("float");
    reduce_arith<double>("double");
    reduce_arith<unsigned short>("unsigned short");

    sync_team();

    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_finalize();
    if (errors) {
        fprintf(stderr, "PE %d: cxx generics (C++%ld): FAILED: %ld of %ld checks wrong\n", me,
                (long)__cplusplus, errors, checks);
        return 1;
    }
    if (me == 0)
        printf("PE 0: cxx generics (C++%ld): passed (%ld checks on PE 0, %d PEs)\n",
               (long)__cplusplus, checks, npes);
    return 0;
}
