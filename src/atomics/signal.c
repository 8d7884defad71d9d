// SPDX-License-Identifier: BSD-3-Clause
/*
 * Put-with-signal. The receiver may read the data as soon as it sees the
 * signal, but no provider orders an atomic after a put (shm reorders them,
 * tcp;ofi_rxm counts a put done before it lands unless delivery-complete),
 * so the put is made remotely complete before the signal is issued. The
 * signal is a 64-bit atomic set or add, like every other AMO.
 */
#include <shmem.h>

#include "atomics/amo.h"

void shm_put_signal(const char *fn, struct shm_ctx *ctx, void *dest, const void *src,
                    size_t bytes, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                    int nbi)
{
    cdt_amo_op_t op;
    if (sig_op == SHMEM_SIGNAL_SET)
        op = CDT_AMO_SET;
    else if (sig_op == SHMEM_SIGNAL_ADD)
        op = CDT_AMO_ADD;
    else
        shm_fatal("%s: sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", fn, sig_op);

    size_t soff;
    const int ctx_pe = pe; /* as ctx numbers it; pe becomes the world PE */
    int sseg = shm_amo_target(fn, ctx, sig_addr, sizeof(uint64_t), &pe, &soff);
    /* The blocking put returns once the source may be reused; the nbi one
     * would too, since the quiet below waits for it anyway. */
    shm_rma_put(fn, ctx, dest, src, bytes, ctx_pe, nbi);
    if (bytes > 0 && pe != shm_state_g.me)
        cdt_quiet(&ctx->cdt);
    else
        __atomic_thread_fence(__ATOMIC_RELEASE); /* memmove to ourselves */
    shm_amo_post_at(fn, &ctx->cdt, CDT_AMO_UINT64, op, sseg, soff, &signal, pe);
}
