// SPDX-License-Identifier: BSD-3-Clause
//
// The deprecated point-to-point family, still required by 1.6:
//   shmem_TYPE_wait(ivar, v)   returns once *ivar != v, for every type of the
//                              1.4 table (short, ushort and the standard AMO
//                              types), and the long-typed shmem_wait;
//   shmem_wait_until(long *, cmp, v), the long-typed C/C++ function (called
//                              through its address: the C11 generic macro
//                              of the same name shadows it);
//   the C11 generics shmem_wait_until / shmem_test on short and unsigned
//                              short objects (deprecated types).
// PEs work in pairs (0,1), (2,3): the writer first rewrites the value the
// waiter already holds (which must not release it), fences, then writes a
// new one; the waiter must return with the new value visible.
#include "pe_check.h"

#define DELAY_US 1000

// 1.4 point-to-point table, from the spec.
#define P2P14_TYPES(X)                                                                       \
    PE_P2P_DEPRECATED_TYPES(X)                                                               \
    PE_P2P_TYPES(X)

static int me, partner, paired;

// Without -Wtype-limits noise on unsigned types.
#define IS_SIGNED(T) (!((T)-1 / 2 < (T)-1))

// Writer side: same value (no change), fence, then fin; completes with quiet.
#define WRITE_TWICE(N, var, same, fin)                                                       \
    do {                                                                                     \
        pe_usleep(DELAY_US);                                                                 \
        shmem_##N##_p(var, same, partner);                                                   \
        shmem_fence();                                                                       \
        pe_usleep(DELAY_US);                                                                 \
        shmem_##N##_p(var, fin, partner);                                                    \
        shmem_quiet();                                                                       \
    } while (0)

#define DEFINE_WAIT(T, N)                                                                    \
    static void wait_##N(void)                                                               \
    {                                                                                        \
        T *var = shmem_malloc(sizeof(T));                                                    \
        for (int parity = 0; parity < 2; parity++) {                                         \
            const int waiter = paired && (me & 1) == parity, writer = paired && !waiter;     \
            const T init = (T)7, fin = (T)(IS_SIGNED(T) ? -3 : 9);                           \
            *var = init;                                                                     \
            pe_step("shmem_%s_wait: barrier", #N);                                           \
            shmem_barrier_all();                                                             \
            if (writer) {                                                                    \
                WRITE_TWICE(N, var, init, fin);                                              \
            } else if (waiter) {                                                             \
                pe_step("shmem_%s_wait(var, %d): waiting for PE %d to write %.21Lg", #N,     \
                        (int)init, partner, (long double)fin);                               \
                shmem_##N##_wait(var, init);                                                 \
                PE_EXPECT_EQ(*var, fin, "value after shmem_%s_wait returned (PE %d wrote it)", \
                             #N, partner);                                                   \
            }                                                                                \
            shmem_barrier_all();                                                             \
        }                                                                                    \
        shmem_free(var);                                                                     \
    }
P2P14_TYPES(DEFINE_WAIT)
#define CALL_WAIT(T, N) wait_##N();

static long lvar;

static void wait_long_untyped(void)
{
    // shmem_wait_until as a function: the generic macro is not in the way of
    // a call through a pointer, which binds the exported symbol.
    void (*const wait_until_fn)(long *, int, long) = &(shmem_wait_until);
    for (int variant = 0; variant < 2; variant++) {
        const int waiter = paired && (me & 1) == 0, writer = paired && !waiter;
        lvar = 100;
        pe_step("shmem_wait / shmem_wait_until (long) variant %d: barrier", variant);
        shmem_barrier_all();
        if (writer) {
            WRITE_TWICE(long, &lvar, 100L, 100L + 23 * (variant + 1));
        } else if (waiter) {
            pe_step("%s on a long: waiting for PE %d",
                    variant ? "shmem_wait_until(SHMEM_CMP_GT)" : "shmem_wait", partner);
            if (variant == 0)
                shmem_wait(&lvar, 100);
            else
                wait_until_fn(&lvar, SHMEM_CMP_GT, 100);
            PE_EXPECT_EQ(lvar, 100L + 23 * (variant + 1), "value after %s returned",
                         variant ? "shmem_wait_until" : "shmem_wait");
        }
        shmem_barrier_all();
    }
}

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
static short svar;
static unsigned short usvar;

static void generic_short(void)
{
    const int waiter = paired && (me & 1) == 1, writer = paired && !waiter;
    svar = 1;
    usvar = 1;
    pe_step("C11 shmem_wait_until / shmem_test on short and unsigned short: barrier");
    shmem_barrier_all();
    if (waiter) {
        PE_EXPECT_EQ(shmem_test(&svar, SHMEM_CMP_LT, (short)0), 0,
                     "generic shmem_test(short, LT, 0) on 1");
        PE_EXPECT_EQ(shmem_test(&usvar, SHMEM_CMP_GE, (unsigned short)1), 1,
                     "generic shmem_test(unsigned short, GE, 1) on 1");
    }
    shmem_barrier_all();
    if (writer) {
        WRITE_TWICE(short, &svar, (short)1, (short)-300);
        WRITE_TWICE(ushort, &usvar, (unsigned short)1, (unsigned short)65000);
    } else if (waiter) {
        pe_step("generic shmem_wait_until(short *, SHMEM_CMP_LT, 0): waiting for PE %d", partner);
        shmem_wait_until(&svar, SHMEM_CMP_LT, (short)0);
        PE_EXPECT_EQ(svar, (short)-300, "short after the generic shmem_wait_until");
        pe_step("generic shmem_test(unsigned short *, SHMEM_CMP_GT, 60000): polling for PE %d",
                partner);
        while (!shmem_test(&usvar, SHMEM_CMP_GT, (unsigned short)60000))
            ;
        PE_EXPECT_EQ(usvar, (unsigned short)65000, "unsigned short after the generic shmem_test");
    }
    shmem_barrier_all();
}
#endif

int main(void)
{
    shmem_init();
    pe_begin("wait_deprecated");
    me = shmem_my_pe();
    partner = me ^ 1;
    paired = partner < shmem_n_pes();
    P2P14_TYPES(CALL_WAIT)
    wait_long_untyped();
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
    generic_short();
#endif
    shmem_finalize();
    return pe_end();
}
