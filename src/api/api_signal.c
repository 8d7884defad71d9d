// SPDX-License-Identifier: BSD-3-Clause
/*
 * Signals: put-with-signal (typed, sized, mem; blocking and nbi; context
 * forms), signal_add/set/fetch. shmem_signal_wait_until is with the other
 * waits in api_p2p.c.
 */
#include "api/api.h"
#include "atomics/amo.h"

#define CTX(c) ((struct shm_ctx *)(c))
#define DFLT (&shm_ctx_default_g)

#define SHM_PUT_SIGNAL_FAMILY(PFX, T, ES)                                      \
    SHM_DEFINE(void, shmem_ctx_##PFX##_signal,                                 \
               (shmem_ctx_t ctx, T *dest, const T *src, size_t n, uint64_t *sig_addr, \
                uint64_t signal, int sig_op, int pe),                          \
               { shm_put_signal(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, ES), sig_addr, signal, \
                                sig_op, pe, 0); })                             \
    SHM_DEFINE(void, shmem_##PFX##_signal,                                     \
               (T *dest, const T *src, size_t n, uint64_t *sig_addr, uint64_t signal, \
                int sig_op, int pe),                                           \
               { shm_put_signal(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, ES), sig_addr, signal, sig_op, \
                                pe, 0); })                                     \
    SHM_DEFINE(void, shmem_ctx_##PFX##_signal_nbi,                             \
               (shmem_ctx_t ctx, T *dest, const T *src, size_t n, uint64_t *sig_addr, \
                uint64_t signal, int sig_op, int pe),                          \
               { shm_put_signal(__func__, CTX(ctx), dest, src, shm_check_nbytes(__func__, n, ES), sig_addr, signal, \
                                sig_op, pe, 1); })                             \
    SHM_DEFINE(void, shmem_##PFX##_signal_nbi,                                 \
               (T *dest, const T *src, size_t n, uint64_t *sig_addr, uint64_t signal, \
                int sig_op, int pe),                                           \
               { shm_put_signal(__func__, DFLT, dest, src, shm_check_nbytes(__func__, n, ES), sig_addr, signal, sig_op, \
                                pe, 1); })

#define SHM_PUT_SIGNAL_TYPED(T, N) SHM_PUT_SIGNAL_FAMILY(N##_put, T, sizeof(T))
SHM_RMA_TYPES(SHM_PUT_SIGNAL_TYPED)

#define SHM_PUT_SIGNAL_SIZED(BITS, BYTES) SHM_PUT_SIGNAL_FAMILY(put##BITS, void, BYTES)
SHM_SIZED_TYPES(SHM_PUT_SIGNAL_SIZED)

SHM_PUT_SIGNAL_FAMILY(putmem, void, 1)

SHM_DEFINE(uint64_t, shmem_signal_fetch, (const uint64_t *sig_addr), {
    if (shm_unlikely(shm_state_g.debug))
        shm_check_running(__func__);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
})

SHM_DEFINE(void, shmem_ctx_signal_add,
           (shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe),
           { shm_amo_post(__func__, CTX(ctx), CDT_AMO_UINT64, CDT_AMO_ADD, sig_addr,
                          sizeof(uint64_t), &signal, pe); })
SHM_DEFINE(void, shmem_signal_add, (uint64_t * sig_addr, uint64_t signal, int pe),
           { shm_amo_post(__func__, DFLT, CDT_AMO_UINT64, CDT_AMO_ADD, sig_addr, sizeof(uint64_t),
                          &signal, pe); })
SHM_DEFINE(void, shmem_ctx_signal_set,
           (shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe),
           { shm_amo_post(__func__, CTX(ctx), CDT_AMO_UINT64, CDT_AMO_SET, sig_addr,
                          sizeof(uint64_t), &signal, pe); })
SHM_DEFINE(void, shmem_signal_set, (uint64_t * sig_addr, uint64_t signal, int pe),
           { shm_amo_post(__func__, DFLT, CDT_AMO_UINT64, CDT_AMO_SET, sig_addr, sizeof(uint64_t),
                          &signal, pe); })
