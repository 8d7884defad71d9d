// SPDX-License-Identifier: BSD-3-Clause
/* Point-to-point synchronisation: wait_until and test. */
#include "api/api.h"

static inline int shm_cmp_ok(const char *fn, int cmp, int lt, int eq)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return eq;
    case SHMEM_CMP_NE: return !eq;
    case SHMEM_CMP_GT: return !lt && !eq;
    case SHMEM_CMP_GE: return !lt;
    case SHMEM_CMP_LT: return lt;
    case SHMEM_CMP_LE: return lt || eq;
    default: shm_fatal("%s: unknown comparison operator %d", fn, cmp);
    }
}

/* The word is written by remote PEs: read it as volatile, then acquire. */
#define SHM_P2P_TYPED(T, N)                                                    \
    static inline int shm_##N##_check(const char *fn, T *ivar, int cmp, T v)   \
    {                                                                          \
        T cur = *(volatile T *)ivar;                                           \
        return shm_cmp_ok(fn, cmp, cur < v, cur == v);                         \
    }                                                                          \
    SHM_DEFINE(void, shmem_##N##_wait_until, (T * ivar, int cmp, T cmp_value), { \
        while (!shm_##N##_check(__func__, ivar, cmp, cmp_value))               \
            shm_core_wait_progress();                                          \
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                               \
    })                                                                         \
    SHM_DEFINE(int, shmem_##N##_test, (T * ivar, int cmp, T cmp_value), {      \
        if (shm_##N##_check(__func__, ivar, cmp, cmp_value)) {                 \
            __atomic_thread_fence(__ATOMIC_ACQUIRE);                           \
            return 1;                                                          \
        }                                                                      \
        cdt_progress();                                                        \
        return 0;                                                              \
    })
SHM_P2P_TYPES(SHM_P2P_TYPED)

#define SHM_P2P_DEPRECATED(T, N)                                               \
    SHM_DEFINE(void, shmem_##N##_wait, (T * ivar, T cmp_value), {              \
        while (*(volatile T *)ivar == cmp_value)                               \
            shm_core_wait_progress();                                          \
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                               \
    })
SHM_P2P_DEPRECATED_TYPES(SHM_P2P_DEPRECATED)

SHM_DEFINE(void, shmem_wait, (long *ivar, long cmp_value), { pshmem_long_wait(ivar, cmp_value); })
/* The generic macro of <shmem.h> shadows this name; the symbol is for old binaries. */
#undef shmem_wait_until
SHM_DEFINE(void, shmem_wait_until, (long *ivar, int cmp, long cmp_value),
           { pshmem_long_wait_until(ivar, cmp, cmp_value); })
