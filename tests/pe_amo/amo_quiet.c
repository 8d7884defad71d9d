// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_quiet after an AMO means the AMO is applied at its target, even
// when the target is not calling the library (shm applies atomics only in
// the target's progress; tcp;ofi_rxm needs the target too). PE 0 issues
// non-fetching AMOs (add, set, or/xor, signal_add) to
// PE 1 while PE 1 sleeps without calling the library, quiets, then raises
// a flag with a put (a put lands without the target's help on shm). PE 1,
// once awake, must see the flag only together with every AMO applied.
// Then the fetching nbi forms: their results are in place after quiet.
#include "pe_check.h"

static long x_g;          // .bss target
static uint64_t sig_g;    // .bss signal
static long fetched_g[2]; // nbi results (local)

int main(void)
{
    shmem_init();
    pe_begin("amo_quiet");
    long *y = shmem_calloc(1, sizeof(long));
    unsigned int *u = shmem_calloc(1, sizeof(unsigned int));
    long *flag = shmem_calloc(1, sizeof(long));
    const int rounds = 3;
    for (int r = 1; r <= rounds; r++) {
        pe_step("round %d: barrier", r);
        shmem_barrier_all();
        if (pe_me_g == 0 && pe_npes_g > 1) {
            shmem_long_atomic_add(&x_g, 10, 1);
            shmem_long_atomic_set(y, r, 1);
            shmem_uint_atomic_or(u, 1u << r, 1);
            shmem_uint_atomic_xor(u, 1u << 20, 1);
            shmem_signal_add(&sig_g, 1, 1);
            shmem_quiet();
            shmem_long_p(flag, r, 1);
            shmem_quiet();
        } else if (pe_me_g == 1) {
            pe_usleep(200000); // no library calls: no progress here
            pe_step("round %d: waiting for the flag", r);
            shmem_long_wait_until(flag, SHMEM_CMP_GE, r);
            PE_EXPECT_EQ(x_g, 10L * r, "round %d: .bss word after add, quiet, flag", r);
            PE_EXPECT_EQ(*y, (long)r, "round %d: heap word after set, quiet, flag", r);
            unsigned want = 0;
            for (int k = 1; k <= r; k++)
                want |= 1u << k;
            if (r & 1)
                want |= 1u << 20;
            PE_EXPECT_EQ(*u, want, "round %d: or/xor word after quiet, flag", r);
            PE_EXPECT_EQ(shmem_signal_fetch(&sig_g), (uint64_t)r, "round %d: signal_add after quiet, flag", r);
        }
    }
    // Fetching nbi forms: the results are there after quiet.
    pe_step("fetching nbi: barrier");
    shmem_barrier_all();
    if (pe_me_g == 0 && pe_npes_g > 1) {
        shmem_long_atomic_fetch_add_nbi(&fetched_g[0], &x_g, 1, 1);
        shmem_long_atomic_fetch_nbi(&fetched_g[1], y, 1);
        shmem_quiet();
        PE_EXPECT_EQ(fetched_g[0], 10L * rounds, "fetch_add_nbi result after quiet");
        PE_EXPECT_EQ(fetched_g[1], (long)rounds, "fetch_nbi result after quiet");
    }
    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(u);
    shmem_free(y);
    shmem_finalize();
    return pe_end();
}
