// SPDX-License-Identifier: BSD-3-Clause
//
// Conformance sweep, the way SHMEM programs are written:
//  1. shmem_ptr loops over the symmetric heap: where shmem_ptr gives a
//     pointer to a peer's copy (same host, direct path) the PE writes the
//     peer's array with plain stores, else it falls back to shmem_put; after
//     shmem_barrier_all every PE checks its array and reads its right
//     neighbour's through shmem_ptr (or shmem_get). shmem_ptr of one's own
//     object is the object itself; of a private object, NULL.
//  2. A token ring over every point-to-point type, the deprecated short and
//     unsigned short included: PE 0 starts, each PE waits for the token from
//     its left neighbour with shmem_TYPE_wait_until (the C11 generic for the
//     deprecated types), adds one and passes it on with shmem_TYPE_p.
#include "pe_check.h"

#define N 4096

// The token counts hops: PE k gets lap * n + k (PE 0: lap * n, from lap 1 on)
// and passes one more to its right; PE 0 finally waits for 3n.
#define RING(T, NAME)                                                                        \
    static void ring_##NAME(T *tok, int me, int n, int right)                               \
    {                                                                                        \
        for (int lap = 0; lap <= 3; lap++) {                                                 \
            T want = (T)(lap * n + me);                                                      \
            if (lap == 3 && me != 0)                                                         \
                break;                                                                       \
            if (want != 0) {                                                                 \
                pe_step("token ring over " #T ": waiting for %d", (int)want);               \
                shmem_##NAME##_wait_until(tok, SHMEM_CMP_EQ, want);                          \
                PE_EXPECT(*tok == want, "token " #T " lap %d: %lld", lap, (long long)*tok);   \
            }                                                                                \
            if (lap < 3)                                                                     \
                shmem_##NAME##_p(tok, (T)(want + 1), right);                                 \
        }                                                                                    \
    }
PE_P2P_TYPES(RING)
PE_P2P_DEPRECATED_TYPES(RING)

int main(void)
{
    shmem_init();
    pe_begin("conf_ptr_wait");
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = pe_right();
    long *arr = shmem_malloc(N * sizeof(long) * (size_t)n); // slot p * N.. written by PE p
    if (!arr) {
        pe_fail("shmem_malloc failed");
        shmem_global_exit(1);
    }
    PE_EXPECT(shmem_ptr(arr, me) == (void *)arr, "shmem_ptr(own object) is the object");
    long on_stack = 0;
    PE_EXPECT(shmem_ptr(&on_stack, me) == NULL, "shmem_ptr of a stack object is NULL");
    shmem_barrier_all();

    // 1. Every PE writes its slot in every PE's array.
    int direct = 0;
    for (int p = 0; p < n; p++) {
        pe_step("write my slot on PE %d", p);
        long *peer = shmem_ptr(arr, p);
        if (peer) {
            direct++;
            for (int i = 0; i < N; i++)
                peer[(size_t)me * N + i] = (long)me * 1000003 + i;
        } else {
            long tmp[N];
            for (int i = 0; i < N; i++)
                tmp[i] = (long)me * 1000003 + i;
            shmem_long_put(arr + (size_t)me * N, tmp, N, p);
        }
    }
    pe_step("barrier after the shmem_ptr stores");
    shmem_barrier_all();
    for (int p = 0; p < n; p++) {
        size_t bad = 0;
        for (int i = 0; i < N; i++)
            bad += arr[(size_t)p * N + i] != (long)p * 1000003 + i;
        PE_EXPECT(bad == 0, "slot of PE %d: %zu of %d elements wrong", p, bad, N);
    }
    // Read the right neighbour's copy of my slot.
    const long *rp = shmem_ptr(arr, right);
    long got[64];
    if (rp)
        memcpy(got, rp + (size_t)me * N, sizeof got);
    else
        shmem_long_get(got, arr + (size_t)me * N, 64, right);
    for (int i = 0; i < 64; i++)
        PE_EXPECT_EQ(got[i], (long)me * 1000003 + i, "my slot read back from PE %d [%d]", right,
                     i);
    if (me == 0)
        printf("PE 0: conf_ptr_wait: shmem_ptr reached %d of %d PEs directly\n", direct, n);
    shmem_barrier_all();
    shmem_free(arr);

    // 2. Token rings; each type in its own zeroed heap word.
    void *tok = shmem_calloc(1, 16);
#define CALL_RING(T, NAME)                                                                   \
    memset(tok, 0, 16);                                                                      \
    shmem_barrier_all();                                                                     \
    ring_##NAME((T *)tok, me, n, right);                                                     \
    shmem_barrier_all();
    PE_P2P_TYPES(CALL_RING)
    PE_P2P_DEPRECATED_TYPES(CALL_RING)
    shmem_free(tok);
    shmem_finalize();
    return pe_end();
}
