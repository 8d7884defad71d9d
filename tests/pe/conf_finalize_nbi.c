// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_finalize with non-blocking operations still in flight: "there is an
// implicit global barrier in shmem_finalize so that pending communications
// are completed". PEs work in pairs (0,1), (2,3); an odd PE out only
// finalizes. The sender (even PE) issues, without any quiet:
//   an 8 MiB putmem_nbi, 512 long_put_nbi of one element, a
//   putmem_signal_nbi, a getmem_nbi of 1 MiB into a private buffer (in .bss:
//   the heap is gone after finalize), and on a second context (created and
//   never destroyed) a putmem_nbi;
// then shmem_fence / shmem_ctx_fence and an atomic set of a flag per
// context, and calls shmem_finalize at once. The target waits for both
// flags with shmem_wait_until (the fence orders the flag after the data),
// checks everything, then finalizes. The sender checks its get result after
// shmem_finalize returned, with plain loads of its own memory only.
#include "pe_check.h"

#define BIG (8u << 20)
#define GET (1u << 20)
#define NSMALL 512
#define CTXB 65536

static long flag, flag_ctx;
static uint64_t sig;
static long small[NSMALL];
static long small_src[NSMALL];
static char got[GET];           // sender's get target: private, survives finalize
static char sigdata_src[4096];
static char ctx_src[CTXB];

int main(void)
{
    shmem_init();
    pe_begin("conf_finalize_nbi");
    const int me = shmem_my_pe(), n = shmem_n_pes();
    const int partner = me ^ 1, paired = partner < n, sender = paired && !(me & 1);
    char *big = shmem_malloc(BIG);   // target of the big put on the receiver
    char *getsrc = shmem_malloc(GET); // the receiver's data the sender gets
    char *sigdata = shmem_malloc(sizeof sigdata_src);
    char *ctxdst = shmem_malloc(CTXB);
    char *bigsrc = malloc(BIG);
    if (!big || !getsrc || !sigdata || !ctxdst || !bigsrc) {
        pe_fail("out of memory");
        shmem_global_exit(1);
    }
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    pe_fill(bigsrc, BIG, me, 1, 0);
    pe_fill(getsrc, GET, me, 2, 0);
    pe_fill(sigdata_src, sizeof sigdata_src, me, 3, 0);
    pe_fill(ctx_src, CTXB, me, 4, 0);
    memset(big, 0, BIG);
    memset(got, 0, GET);
    for (int i = 0; i < NSMALL; i++)
        small_src[i] = 7 * me + i + 1;
    shmem_barrier_all();

    if (sender) {
        pe_step("sender: issue nbi operations to PE %d and finalize without a quiet", partner);
        shmem_putmem_nbi(big, bigsrc, BIG, partner);
        for (int i = 0; i < NSMALL; i++)
            shmem_long_put_nbi(&small[i], &small_src[i], 1, partner);
        shmem_putmem_signal_nbi(sigdata, sigdata_src, sizeof sigdata_src, &sig, 77,
                                SHMEM_SIGNAL_SET, partner);
        shmem_getmem_nbi(got, getsrc, GET, partner);
        shmem_ctx_putmem_nbi(ctx, ctxdst, ctx_src, CTXB, partner);
        shmem_ctx_fence(ctx);
        shmem_ctx_long_atomic_set(ctx, &flag_ctx, 1, partner);
        shmem_fence();
        shmem_long_atomic_set(&flag, 1, partner);
        // No quiet, no ctx_destroy: shmem_finalize completes it all.
        shmem_finalize();
        // Only my own memory from here on: the get must have landed.
        pe_check_fill(got, GET, partner, 2, 0, "getmem_nbi result after shmem_finalize");
        free(bigsrc);
        return pe_end();
    }
    if (paired) {
        pe_step("target: wait for the flags of PE %d", partner);
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
        shmem_long_wait_until(&flag_ctx, SHMEM_CMP_EQ, 1);
        pe_check_fill(big, BIG, partner, 1, 0, "8 MiB putmem_nbi");
        for (int i = 0; i < NSMALL; i++)
            PE_EXPECT_EQ(small[i], 7L * partner + i + 1, "long_put_nbi [%d]", i);
        PE_EXPECT_EQ(shmem_signal_fetch(&sig), (uint64_t)77, "signal of putmem_signal_nbi");
        pe_check_fill(sigdata, sizeof sigdata_src, partner, 3, 0, "putmem_signal_nbi data");
        pe_check_fill(ctxdst, CTXB, partner, 4, 0, "putmem_nbi on a second context");
    }
    pe_step("finalize");
    shmem_finalize();
    free(bigsrc);
    return pe_end();
}
