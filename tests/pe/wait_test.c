// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_TYPE_wait_until and shmem_TYPE_test for every point-to-point type (and
// the deprecated short and unsigned short) and
// every SHMEM_CMP_* operator. PEs work in pairs (0,1), (2,3): one waits on its
// variable while the other, after a delay, first writes a value that does
// NOT satisfy the condition, fences, waits again and then writes one that
// does. The waiter must return, with the final value visible. Values are
// chosen so that a signed/unsigned mix-up or a comparison on too few bytes
// either returns early (caught: the value seen is not the final one) or never
// returns (caught by the watchdog, which names the type and operator).
#include <limits.h>

#include "pe_check.h"

#define DELAY_US 1000

static const struct {
    int op;
    const char *name;
} cmps[] = {
    {SHMEM_CMP_EQ, "SHMEM_CMP_EQ"}, {SHMEM_CMP_NE, "SHMEM_CMP_NE"},
    {SHMEM_CMP_GT, "SHMEM_CMP_GT"}, {SHMEM_CMP_GE, "SHMEM_CMP_GE"},
    {SHMEM_CMP_LT, "SHMEM_CMP_LT"}, {SHMEM_CMP_LE, "SHMEM_CMP_LE"},
};
#define NCMPS (int)(sizeof cmps / sizeof cmps[0])

// init: the waiter's starting value; mid: written first, must not satisfy;
// fin: written last, satisfies; cmp: the comparison value.
#define PICK_VALUES(T, op, init, mid, fin, cmp)                                              \
    do {                                                                                     \
        const int sgn = !((T)-1 / 2 < (T)-1); /* no -Wtype-limits noise */                   \
        const T tmax = sgn ? (T)(((unsigned long long)1 << (sizeof(T) * 8 - 1)) - 1)         \
                           : (T)~(unsigned long long)0;                                      \
        switch (op) {                                                                        \
        case SHMEM_CMP_EQ: /* mid differs from cmp only above bit 31 where possible */       \
            cmp = sizeof(T) >= 8 ? (T)0x1234567800000009ULL : (T)9;                          \
            mid = sizeof(T) >= 8 ? (T)0x1234567900000009ULL : (T)2;                          \
            init = 1;                                                                        \
            fin = cmp;                                                                       \
            break;                                                                           \
        case SHMEM_CMP_NE:                                                                   \
            init = mid = cmp = 5;                                                            \
            fin = sgn ? (T)-6 : (T)6;                                                        \
            break;                                                                           \
        case SHMEM_CMP_GT:                                                                   \
            init = sgn ? (T)-20 : (T)3;                                                      \
            cmp = sgn ? (T)-10 : (T)10;                                                      \
            mid = cmp;                                                                       \
            fin = sgn ? (T)-9 : tmax;                                                        \
            break;                                                                           \
        case SHMEM_CMP_GE:                                                                   \
            init = sgn ? (T)-20 : (T)3;                                                      \
            cmp = sgn ? (T)-10 : (T)10;                                                      \
            mid = cmp - 1;                                                                   \
            fin = sgn ? cmp : tmax;                                                          \
            break;                                                                           \
        case SHMEM_CMP_LT:                                                                   \
            init = sgn ? (T)50 : tmax;                                                       \
            cmp = 10;                                                                        \
            mid = cmp;                                                                       \
            fin = sgn ? (T)-5 : (T)9;                                                        \
            break;                                                                           \
        default: /* SHMEM_CMP_LE */                                                          \
            init = sgn ? (T)50 : tmax;                                                       \
            cmp = 10;                                                                        \
            mid = 11;                                                                        \
            fin = sgn ? (T)-5 : cmp;                                                         \
            break;                                                                           \
        }                                                                                    \
    } while (0)

#define DEFINE_WAIT_TEST(T, NAME)                                                             \
    static void test_##NAME(void)                                                            \
    {                                                                                        \
        T *var = shmem_malloc(sizeof(T));                                                    \
        const int me = pe_me_g;                                                              \
        const int partner = me ^ 1;                                                          \
        const int paired = partner < pe_npes_g;                                              \
        for (int c = 0; c < NCMPS; c++) {                                                    \
            for (int variant = 0; variant < 2; variant++) {                                  \
                for (int parity = 0; parity < 2; parity++) {                                 \
                    const int op = cmps[c].op;                                               \
                    const char *vname = variant ? "test" : "wait_until";                    \
                    T init, mid, fin, cmp;                                                   \
                    PICK_VALUES(T, op, init, mid, fin, cmp);                                 \
                    const int waiter = paired && (me & 1) == parity;                         \
                    const int writer = paired && !waiter;                                    \
                    if (waiter) {                                                            \
                        *var = init;                                                         \
                        int r = shmem_##NAME##_test(var, op, cmp);                           \
                        PE_EXPECT_EQ(r, 0, "shmem_%s_test(%s) on the initial value %.21Lg",  \
                                     #NAME, cmps[c].name, (long double)init);                \
                    }                                                                        \
                    pe_step("shmem_%s_%s %s: barrier", #NAME, vname, cmps[c].name);          \
                    shmem_barrier_all();                                                     \
                    if (writer) {                                                            \
                        pe_usleep(DELAY_US);                                                 \
                        shmem_##NAME##_p(var, mid, partner);                                 \
                        shmem_fence();                                                       \
                        pe_usleep(DELAY_US);                                                 \
                        shmem_##NAME##_p(var, fin, partner);                                 \
                        shmem_quiet();                                                       \
                    } else if (waiter) {                                                     \
                        pe_step("shmem_%s_%s(var, %s, %.21Lg): waiting for PE %d to write "  \
                                "%.21Lg (value now %.21Lg)",                                 \
                                #NAME, vname, cmps[c].name, (long double)cmp, partner,       \
                                (long double)fin, (long double)*var);                        \
                        if (variant == 0) {                                                  \
                            shmem_##NAME##_wait_until(var, op, cmp);                         \
                        } else {                                                             \
                            int r;                                                           \
                            while ((r = shmem_##NAME##_test(var, op, cmp)) == 0)             \
                                ;                                                            \
                            PE_EXPECT_EQ(r, 1, "shmem_%s_test(%s) return value when true",   \
                                         #NAME, cmps[c].name);                               \
                        }                                                                    \
                        PE_EXPECT_EQ(*var, fin,                                              \
                                     "value after shmem_%s_%s(%s, %.21Lg) returned (written " \
                                     "by PE %d; %.21Lg does not satisfy it)",                \
                                     #NAME, vname, cmps[c].name, (long double)cmp, partner,  \
                                     (long double)mid);                                      \
                    }                                                                        \
                    shmem_barrier_all();                                                     \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        shmem_free(var);                                                                     \
    }

PE_P2P_TYPES(DEFINE_WAIT_TEST)
PE_P2P_DEPRECATED_TYPES(DEFINE_WAIT_TEST)

#define CALL_WAIT_TEST(T, NAME) test_##NAME();

int main(void)
{
    shmem_init();
    pe_begin("wait_test");
    PE_P2P_TYPES(CALL_WAIT_TEST)
    PE_P2P_DEPRECATED_TYPES(CALL_WAIT_TEST)
    shmem_finalize();
    return pe_end();
}
