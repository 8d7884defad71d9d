// SPDX-License-Identifier: BSD-3-Clause
//
// Tiny helpers shared by the multi-PE tests (header-only, public API only).
//
// A test calls pe_begin() right after shmem_init*(), names what it is doing
// with pe_step() before anything that may block, reports wrong values with
// pe_fail() (or the PE_EXPECT* macros) and ends with `return pe_end();`.
// A failure line always names the PE, what was checked, expected and got:
//     PE 1: put_nbi long[3] at offset 5: expected 42 got 0
// A PE that is stuck longer than the watchdog allows prints the step it was
// in and exits with status 3, so a hang is reported as precisely as a wrong
// value instead of as a bare ctest timeout.
#ifndef PE_CHECK_H
#define PE_CHECK_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>

#define PE_MAX_REPORTS 20 // failure lines printed per PE; the rest are counted

static int pe_me_g = -1;
static int pe_npes_g = 0;
static long pe_errors_g = 0;
static long pe_checks_g = 0;
static const char *pe_test_name_g = "?";
static char pe_step_g[256] = "start";
static unsigned pe_watchdog_s_g;

static void pe_watchdog_fire(int sig)
{
    (void)sig;
    // Only async-signal-safe calls here. The limit is on the whole test, so a
    // slow run (oversubscribed, loaded machine) ends here just like a hang.
    char buf[400];
    int n = snprintf(buf, sizeof buf,
                     "PE %d: %s: watchdog: not done after %u s (PE_WATCHDOG_S), in step: %s\n",
                     pe_me_g, pe_test_name_g, pe_watchdog_s_g, pe_step_g);
    if (n > 0)
        (void)!write(STDERR_FILENO, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    _exit(3);
}

// Arms a watchdog of `seconds` (PE_WATCHDOG_S in the environment overrides it).
static inline void pe_watchdog(unsigned seconds)
{
    const char *s = getenv("PE_WATCHDOG_S");
    if (s && *s)
        seconds = (unsigned)strtoul(s, NULL, 10);
    pe_watchdog_s_g = seconds;
    signal(SIGALRM, pe_watchdog_fire);
    alarm(seconds);
}

static inline void pe_begin(const char *name)
{
    pe_test_name_g = name;
    pe_me_g = shmem_my_pe();
    pe_npes_g = shmem_n_pes();
    setvbuf(stdout, NULL, _IOLBF, 0);
    pe_watchdog(50);
}

static inline void pe_step(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void pe_step(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pe_step_g, sizeof pe_step_g, fmt, ap);
    va_end(ap);
}

static inline void pe_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void pe_fail(const char *fmt, ...)
{
    if (++pe_errors_g > PE_MAX_REPORTS)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "PE %d: %s\n", pe_me_g, line);
    if (pe_errors_g == PE_MAX_REPORTS)
        fprintf(stderr, "PE %d: (further failures counted, not printed)\n", pe_me_g);
}

// Any scalar type: values are shown as long double (exact for 64-bit ints).
#define PE_EXPECT_EQ(got, exp, ...)                                                          \
    do {                                                                                     \
        __typeof__(exp) pe_e_ = (exp);                                                       \
        __typeof__(exp) pe_g_ = (got);                                                       \
        pe_checks_g++;                                                                       \
        if (!(pe_g_ == pe_e_)) {                                                             \
            char pe_w_[300];                                                                 \
            snprintf(pe_w_, sizeof pe_w_, __VA_ARGS__);                                      \
            pe_fail("%s: expected %.21Lg got %.21Lg", pe_w_, (long double)pe_e_,             \
                    (long double)pe_g_);                                                     \
        }                                                                                    \
    } while (0)

// A condition; the message says what was expected.
#define PE_EXPECT(cond, ...)                                                                 \
    do {                                                                                     \
        pe_checks_g++;                                                                       \
        if (!(cond))                                                                         \
            pe_fail(__VA_ARGS__);                                                            \
    } while (0)

// Ends the test: prints a one-line summary on PE 0 (or per failing PE) and
// returns the exit status for main(). Call after shmem_finalize().
static inline int pe_end(void)
{
    // The watchdog stays armed: exit-time work (start_pes programs finalize
    // from an atexit handler) is still covered.
    pe_step("exiting");
    if (pe_errors_g) {
        fprintf(stderr, "PE %d: %s: FAILED: %ld of %ld checks wrong\n", pe_me_g, pe_test_name_g,
                pe_errors_g, pe_checks_g);
        return 1;
    }
    if (pe_me_g == 0)
        printf("PE 0: %s: passed (%ld checks on PE 0, %d PEs)\n", pe_test_name_g, pe_checks_g,
               pe_npes_g);
    return 0;
}

static inline int pe_right(void) { return (pe_me_g + 1) % pe_npes_g; }
static inline int pe_left(void) { return (pe_me_g + pe_npes_g - 1) % pe_npes_g; }

// ---- byte patterns -------------------------------------------------------
// A byte that depends on who wrote it (pe), which buffer/case (tag) and the
// position, so a shifted, swapped or stale copy never matches by accident.
static inline uint8_t pe_pattern(int pe, uint32_t tag, uint64_t pos)
{
    uint64_t h = (uint64_t)(pe + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)tag * 0xC2B2AE3D27D4EB4FULL ^
                 pos * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (uint8_t)h;
}

static inline void pe_fill(void *buf, size_t len, int pe, uint32_t tag, uint64_t pos0)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pe_pattern(pe, tag, pos0 + i);
}

// Checks buf[0..len) == pattern(pe, tag, pos0 + i); reports the first wrong
// byte and how many are wrong. Returns the number of wrong bytes.
static inline size_t pe_check_fill(const void *buf, size_t len, int pe, uint32_t tag,
                                   uint64_t pos0, const char *what)
{
    const uint8_t *p = buf;
    size_t bad = 0, first = 0;
    pe_checks_g++;
    for (size_t i = 0; i < len; i++) {
        if (p[i] != pe_pattern(pe, tag, pos0 + i)) {
            if (!bad)
                first = i;
            bad++;
        }
    }
    if (bad)
        pe_fail("%s: byte %zu of %zu: expected 0x%02x got 0x%02x (%zu bytes wrong)", what, first,
                len, pe_pattern(pe, tag, pos0 + first), p[first], bad);
    return bad;
}

// Checks that buf[0..len) are all `val` (guard bytes, untouched gaps).
static inline size_t pe_check_byte(const void *buf, size_t len, uint8_t val, const char *what)
{
    const uint8_t *p = buf;
    size_t bad = 0, first = 0;
    pe_checks_g++;
    for (size_t i = 0; i < len; i++) {
        if (p[i] != val) {
            if (!bad)
                first = i;
            bad++;
        }
    }
    if (bad)
        pe_fail("%s: byte %zu of %zu: expected 0x%02x got 0x%02x (%zu bytes wrong)", what, first,
                len, val, p[first], bad);
    return bad;
}

static inline void pe_usleep(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

// ---- type lists (from the spec's tables) -------------------------------
// Standard RMA types (Table "Standard RMA Types and Names"): X(TYPE, TYPENAME)
#define PE_RMA_TYPES(X)                                                                      \
    X(float, float)                                                                          \
    X(double, double)                                                                        \
    X(long double, longdouble)                                                               \
    X(char, char)                                                                            \
    X(signed char, schar)                                                                    \
    X(short, short)                                                                          \
    X(int, int)                                                                              \
    X(long, long)                                                                            \
    X(long long, longlong)                                                                   \
    X(unsigned char, uchar)                                                                  \
    X(unsigned short, ushort)                                                                \
    X(unsigned int, uint)                                                                    \
    X(unsigned long, ulong)                                                                  \
    X(unsigned long long, ulonglong)                                                         \
    X(int8_t, int8)                                                                          \
    X(int16_t, int16)                                                                        \
    X(int32_t, int32)                                                                        \
    X(int64_t, int64)                                                                        \
    X(uint8_t, uint8)                                                                        \
    X(uint16_t, uint16)                                                                      \
    X(uint32_t, uint32)                                                                      \
    X(uint64_t, uint64)                                                                      \
    X(size_t, size)                                                                          \
    X(ptrdiff_t, ptrdiff)

// Point-to-point synchronization types (wait_until / test): X(TYPE, TYPENAME)
#define PE_P2P_TYPES(X)                                                                      \
    X(int, int)                                                                              \
    X(long, long)                                                                            \
    X(long long, longlong)                                                                   \
    X(unsigned int, uint)                                                                    \
    X(unsigned long, ulong)                                                                  \
    X(unsigned long long, ulonglong)                                                         \
    X(int32_t, int32)                                                                        \
    X(int64_t, int64)                                                                        \
    X(uint32_t, uint32)                                                                      \
    X(uint64_t, uint64)                                                                      \
    X(size_t, size)                                                                          \
    X(ptrdiff_t, ptrdiff)

// Deprecated point-to-point types: short and unsigned short, still valid for
// shmem_wait_until, shmem_test and shmem_wait (1.5 deprecated them); the
// library also takes them in the _all/_any/_some(_vector) forms, as Sandia
// OpenSHMEM does.
#define PE_P2P_DEPRECATED_TYPES(X)                                                           \
    X(short, short)                                                                          \
    X(unsigned short, ushort)

// A typed value that depends on the writing PE (< 64), the case k (< 1024;
// fold a type number into it to make values differ per type) and the index
// j (< 128); never 0 (0 is what untouched memory holds in the tests). Exact
// in every type: floats get code + 0.5 (code < 2^23), narrow integers are
// folded.
#define PE_CODE(pe, k, j) ((uint64_t)1 + (uint64_t)(j) + 128u * (uint64_t)(k) + 131072u * (uint64_t)(pe))
#define PE_VAL(T, pe, k, j)                                                                  \
    ((T)0.5 != 0      ? (T)((double)PE_CODE(pe, k, j) + 0.5)                                 \
     : sizeof(T) == 1 ? (T)(PE_CODE(pe, k, j) % 120 + 1)                                     \
     : sizeof(T) == 2 ? (T)(PE_CODE(pe, k, j) % 30011 + 1)                                   \
                      : (T)(PE_CODE(pe, k, j) * 0x100000001ULL))

#endif
