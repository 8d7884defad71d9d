// SPDX-License-Identifier: BSD-3-Clause
//
// wait_until_{all,any,some} and test_{all,any,some}, scalar and _vector,
// for every point-to-point type, honouring status masks. Each PE owns an
// array of N variables; its left neighbour sets them one at a time (with
// atomic sets, a delay between) and the owner checks what each routine
// reports at each stage: masked elements never count, empty sets give the
// spec's answers, _any eventually returns every satisfied index, _some
// returns exactly the satisfied ones. The owner acks each stage before the
// next element comes. Also C11 generic forms.
#include "amo_check.h"

#define N 6
#define DELAY_US 300

static const int mask[N] = {0, 1, 0, 0, 1, 0}; // elements 1 and 4 excluded
static const int none_masked[N] = {0};
static const int all_masked[N] = {1, 1, 1, 1, 1, 1};
static uint64_t ack_g;    // stages checked by the right neighbour (.bss)
static uint64_t ack_base; // acks of the types done

#define DEFINE_WAIT(T, NAME)                                                                 \
    static void test_##NAME(void)                                                            \
    {                                                                                        \
        T *iv = shmem_calloc(N, sizeof(T));                                                  \
        T cmpv[N];                                                                           \
        size_t idx[N];                                                                       \
        const int to = pe_right();                                                           \
        const char *tn = #NAME;                                                              \
        for (int i = 0; i < N; i++)                                                          \
            cmpv[i] = (T)(10 + i);                                                           \
        shmem_barrier_all();                                                                 \
        /* Nothing set yet: tests say no, empty sets give their answers. */                  \
        PE_EXPECT_EQ(shmem_##NAME##_test_all(iv, N, NULL, SHMEM_CMP_EQ, (T)7), 0,            \
                     "%s_test_all before any set", tn);                                      \
        PE_EXPECT_EQ(shmem_##NAME##_test_any(iv, N, mask, SHMEM_CMP_EQ, (T)7), SIZE_MAX,     \
                     "%s_test_any before any set", tn);                                      \
        PE_EXPECT_EQ(shmem_##NAME##_test_some(iv, N, idx, NULL, SHMEM_CMP_NE, (T)0), 0,      \
                     "%s_test_some before any set", tn);                                     \
        PE_EXPECT_EQ(shmem_##NAME##_test_all(iv, N, all_masked, SHMEM_CMP_EQ, (T)7), 1,      \
                     "%s_test_all on an empty set", tn);                                     \
        PE_EXPECT_EQ(shmem_##NAME##_test_all(iv, 0, NULL, SHMEM_CMP_EQ, (T)7), 1,            \
                     "%s_test_all with nelems 0", tn);                                       \
        PE_EXPECT_EQ(shmem_##NAME##_test_any(iv, N, all_masked, SHMEM_CMP_EQ, (T)0),         \
                     SIZE_MAX, "%s_test_any on an empty set", tn);                           \
        PE_EXPECT_EQ(shmem_##NAME##_wait_until_any(iv, N, all_masked, SHMEM_CMP_EQ, (T)0),   \
                     SIZE_MAX, "%s_wait_until_any on an empty set", tn);                     \
        PE_EXPECT_EQ(shmem_##NAME##_wait_until_some(iv, 0, idx, NULL, SHMEM_CMP_EQ, (T)0),   \
                     0, "%s_wait_until_some with nelems 0", tn);                             \
        shmem_##NAME##_wait_until_all(iv, N, all_masked, SHMEM_CMP_EQ, (T)7);                \
        shmem_barrier_all();                                                                 \
        /* The left neighbour sets the masked elements first (must not count), then the    \
         * others one at a time; the owner waits for each stage. */                          \
        int order[N] = {1, 4, 3, 0, 5, 2};                                                   \
        shmem_barrier_all();                                                                 \
        for (int k = 0; k < N; k++) {                                                        \
            const int e = order[k];                                                          \
            /* The right neighbour has checked stage k-1 before element k comes. */          \
            shmem_uint64_wait_until(&ack_g, SHMEM_CMP_GE, ack_base + (uint64_t)k);           \
            pe_usleep(DELAY_US);                                                             \
            shmem_##NAME##_atomic_set(&iv[e], (T)7, to);                                     \
            shmem_quiet();                                                                   \
            pe_step("%s: stage %d: waiting for element %d", tn, k, e);                       \
            if (k < 2) {                                                                     \
                /* Only masked elements are 7: with the mask, nothing counts. */             \
                /* A spin on test's true result: test must drive progress too. */           \
                while (shmem_##NAME##_test(&iv[e], SHMEM_CMP_NE, (T)7))                      \
                    ;                                                                        \
                PE_EXPECT_EQ(shmem_##NAME##_test_any(iv, N, mask, SHMEM_CMP_EQ, (T)7),       \
                             SIZE_MAX, "%s_test_any with only masked elements set", tn);     \
                PE_EXPECT_EQ(shmem_##NAME##_test_some(iv, N, idx, mask, SHMEM_CMP_EQ, (T)7), \
                             0, "%s_test_some with only masked elements set", tn);           \
                shmem_uint64_atomic_inc(&ack_g, pe_left());                                  \
                continue;                                                                    \
            }                                                                                \
            size_t got = shmem_##NAME##_wait_until_any(iv, N, mask, SHMEM_CMP_EQ, (T)7);     \
            PE_EXPECT(got < N && !mask[got] && iv[got] == (T)7,                              \
                      "%s_wait_until_any returned %zu (stage %d)", tn, got, k);              \
            shmem_##NAME##_wait_until_all(&iv[e], 1, NULL, SHMEM_CMP_EQ, (T)7);              \
            /* _some must return exactly the unmasked elements set so far. */                \
            size_t n = shmem_##NAME##_wait_until_some(iv, N, idx, mask, SHMEM_CMP_EQ, (T)7); \
            PE_EXPECT_EQ(n, (size_t)(k - 1), "%s_wait_until_some count at stage %d", tn, k); \
            int seen[N] = {0};                                                               \
            for (size_t j = 0; j < n; j++)                                                   \
                if (idx[j] < N)                                                              \
                    seen[idx[j]]++;                                                          \
            for (int j = 2; j <= k; j++)                                                     \
                PE_EXPECT(seen[order[j]] == 1, "%s_wait_until_some stage %d: index %d %s",  \
                          tn, k, order[j], seen[order[j]] ? "repeated" : "missing");         \
            PE_EXPECT_EQ(shmem_##NAME##_test_some(iv, N, idx, mask, SHMEM_CMP_EQ, (T)7), n,  \
                         "%s_test_some count at stage %d", tn, k);                           \
            PE_EXPECT_EQ(shmem_##NAME##_test_all(iv, N, mask, SHMEM_CMP_EQ, (T)7),           \
                         k == N - 1, "%s_test_all with mask at stage %d", tn, k);            \
            shmem_uint64_atomic_inc(&ack_g, pe_left());                                      \
        }                                                                                    \
        ack_base += N;                                                                       \
        /* Everything is 7 now: all forms agree, and _any visits every index. */            \
        shmem_##NAME##_wait_until_all(iv, N, none_masked, SHMEM_CMP_EQ, (T)7);               \
        PE_EXPECT_EQ(shmem_##NAME##_test_all(iv, N, NULL, SHMEM_CMP_GE, (T)7), 1,            \
                     "%s_test_all at the end", tn);                                          \
        int hit[N] = {0};                                                                    \
        for (int k = 0; k < 3 * N; k++) {                                                    \
            size_t a = shmem_##NAME##_test_any(iv, N, mask, SHMEM_CMP_EQ, (T)7);             \
            if (a < N)                                                                       \
                hit[a]++;                                                                    \
        }                                                                                    \
        for (int i = 0; i < N; i++)                                                          \
            PE_EXPECT(mask[i] ? hit[i] == 0 : hit[i] > 0,                                    \
                      "%s_test_any over %d calls returned index %d %d times", tn, 3 * N, i,   \
                      hit[i]);                                                               \
        /* _vector forms: element i compared with 10+i. */                                   \
        shmem_barrier_all();                                                                 \
        for (int i = 0; i < N; i++)                                                          \
            shmem_##NAME##_atomic_set(&iv[i], (T)(10 + i - (i % 2)), to); /* odd: below */    \
        shmem_quiet();                                                                       \
        shmem_barrier_all();                                                                 \
        PE_EXPECT_EQ(shmem_##NAME##_test_all_vector(iv, N, NULL, SHMEM_CMP_EQ, cmpv), 0,     \
                     "%s_test_all_vector (odd elements differ)", tn);                        \
        int evens[N] = {0, 1, 0, 1, 0, 1};                                                   \
        PE_EXPECT_EQ(shmem_##NAME##_test_all_vector(iv, N, evens, SHMEM_CMP_EQ, cmpv), 1,    \
                     "%s_test_all_vector on the even elements", tn);                         \
        shmem_##NAME##_wait_until_all_vector(iv, N, evens, SHMEM_CMP_EQ, cmpv);              \
        size_t a = shmem_##NAME##_wait_until_any_vector(iv, N, NULL, SHMEM_CMP_LT, cmpv);    \
        PE_EXPECT(a < N && a % 2 == 1, "%s_wait_until_any_vector LT returned %zu", tn, a);   \
        a = shmem_##NAME##_test_any_vector(iv, N, evens, SHMEM_CMP_LT, cmpv);                \
        PE_EXPECT_EQ(a, SIZE_MAX, "%s_test_any_vector LT on the even elements", tn);         \
        size_t n = shmem_##NAME##_wait_until_some_vector(iv, N, idx, NULL, SHMEM_CMP_GE, cmpv); \
        PE_EXPECT_EQ(n, (size_t)(N / 2), "%s_wait_until_some_vector GE count", tn);          \
        n = shmem_##NAME##_test_some_vector(iv, N, idx, NULL, SHMEM_CMP_NE, cmpv);           \
        PE_EXPECT_EQ(n, (size_t)(N / 2), "%s_test_some_vector NE count", tn);                \
        for (size_t j = 0; j < n; j++)                                                       \
            PE_EXPECT(idx[j] % 2 == 1, "%s_test_some_vector NE returned index %zu", tn, idx[j]); \
        /* C11 generics. */                                                                  \
        PE_EXPECT_EQ(shmem_test_all(iv, N, evens, SHMEM_CMP_EQ, (T)10), 0, "generic test_all"); \
        shmem_wait_until_all_vector(iv, N, evens, SHMEM_CMP_EQ, cmpv);                       \
        PE_EXPECT_EQ(shmem_test_any(iv, N, NULL, SHMEM_CMP_EQ, (T)10) / 2, (size_t)0,        \
                     "generic test_any (index 0 or 1)");                                     \
        PE_EXPECT_EQ(shmem_wait_until_any(iv, N, NULL, SHMEM_CMP_EQ, (T)10) / 2, (size_t)0,  \
                     "generic wait_until_any (index 0 or 1)");                               \
        PE_EXPECT_EQ(shmem_wait_until_some(iv, N, idx, NULL, SHMEM_CMP_LE, (T)11), (size_t)2, \
                     "generic wait_until_some (values 10, 10, 12, 12, 14, 14)");             \
        PE_EXPECT_EQ(shmem_test_some(iv, N, idx, NULL, SHMEM_CMP_GT, (T)100), (size_t)0,     \
                     "generic test_some");                                                   \
        PE_EXPECT_EQ(shmem_test_all_vector(iv, N, NULL, SHMEM_CMP_LE, cmpv), 1,              \
                     "generic test_all_vector");                                             \
        PE_EXPECT_EQ(shmem_test_any_vector(iv, N, evens, SHMEM_CMP_NE, cmpv), SIZE_MAX,      \
                     "generic test_any_vector");                                             \
        PE_EXPECT_EQ(shmem_wait_until_any_vector(iv, N, NULL, SHMEM_CMP_EQ, cmpv) % 2, (size_t)0, \
                     "generic wait_until_any_vector");                                       \
        PE_EXPECT_EQ(shmem_test_some_vector(iv, N, idx, NULL, SHMEM_CMP_EQ, cmpv), (size_t)3, \
                     "generic test_some_vector");                                            \
        PE_EXPECT_EQ(shmem_wait_until_some_vector(iv, N, idx, evens, SHMEM_CMP_EQ, cmpv),    \
                     (size_t)3, "generic wait_until_some_vector");                           \
        shmem_barrier_all();                                                                 \
        shmem_free(iv);                                                                      \
    }
PE_P2P_TYPES(DEFINE_WAIT)

#define CALL(T, NAME) test_##NAME();

int main(void)
{
    shmem_init();
    pe_begin("amo_wait");
    PE_P2P_TYPES(CALL)
    shmem_finalize();
    return pe_end();
}
