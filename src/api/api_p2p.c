// SPDX-License-Identifier: BSD-3-Clause
/*
 * Point-to-point synchronisation: wait_until and test, their _all, _any,
 * _some and _vector forms, and shmem_signal_wait_until. Waiting drives
 * network progress (some providers apply incoming atomics only then) and
 * yields the core when this host has more PEs than cores (cdt_poll_idle).
 */
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
    /* Progress on every call: `while (shmem_test(x, SHMEM_CMP_NE, v))` is a    \
     * wait too, and would never see a provider that applies AMOs only in   \
     * the target's progress. */                                            \
    SHM_DEFINE(int, shmem_##N##_test, (T * ivar, int cmp, T cmp_value), {      \
        cdt_progress();                                                        \
        if (shm_##N##_check(__func__, ivar, cmp, cmp_value)) {                 \
            __atomic_thread_fence(__ATOMIC_ACQUIRE);                           \
            return 1;                                                          \
        }                                                                      \
        return 0;                                                              \
    })
SHM_P2P_WAIT_TYPES(SHM_P2P_TYPED)

/*
 * Sets of variables. status[i] != 0 excludes ivars[i]; a NULL status
 * excludes nothing. cmp_values (the _vector forms) gives one comparison
 * value per element, else cmp_value is used for all. _any starts its scan
 * after the index it returned last, so every satisfied element is
 * eventually returned.
 */
static __thread size_t shm_p2p_any_next;

#define SHM_P2P_SETS(T, N)                                                     \
    static inline int shm_##N##_sat(const char *fn, T *ivars, size_t i, int cmp, \
                                    const T *cmp_values, T cmp_value)          \
    {                                                                          \
        return shm_##N##_check(fn, &ivars[i], cmp, cmp_values ? cmp_values[i] : cmp_value); \
    }                                                                          \
    static void shm_##N##_wait_all(const char *fn, T *ivars, size_t nelems, const int *status, \
                                   int cmp, const T *cmp_values, T cmp_value)  \
    {                                                                          \
        for (size_t i = 0; i < nelems; i++)                                    \
            if (!status || !status[i])                                         \
                while (!shm_##N##_sat(fn, ivars, i, cmp, cmp_values, cmp_value)) \
                    shm_core_wait_progress();                                  \
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                               \
    }                                                                          \
    static int shm_##N##_test_all(const char *fn, T *ivars, size_t nelems, const int *status, \
                                  int cmp, const T *cmp_values, T cmp_value)   \
    {                                                                          \
        cdt_progress();                                                        \
        for (size_t i = 0; i < nelems; i++)                                    \
            if ((!status || !status[i]) &&                                     \
                !shm_##N##_sat(fn, ivars, i, cmp, cmp_values, cmp_value))      \
                return 0;                                                      \
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                               \
        return 1;                                                              \
    }                                                                          \
    /* SIZE_MAX: none satisfied; *empty_p: the set is empty. */                \
    static size_t shm_##N##_scan_any(const char *fn, T *ivars, size_t nelems, const int *status, \
                                     int cmp, const T *cmp_values, T cmp_value, int *empty_p) \
    {                                                                          \
        size_t start = shm_p2p_any_next < nelems ? shm_p2p_any_next : 0;       \
        int empty = 1;                                                         \
        for (size_t k = 0; k < nelems; k++) {                                  \
            size_t i = start + k < nelems ? start + k : start + k - nelems;    \
            if (status && status[i])                                           \
                continue;                                                      \
            empty = 0;                                                         \
            if (shm_##N##_sat(fn, ivars, i, cmp, cmp_values, cmp_value)) {     \
                shm_p2p_any_next = i + 1;                                      \
                __atomic_thread_fence(__ATOMIC_ACQUIRE);                       \
                return i;                                                      \
            }                                                                  \
        }                                                                      \
        *empty_p = empty;                                                      \
        return SIZE_MAX;                                                       \
    }                                                                          \
    static size_t shm_##N##_wait_any(const char *fn, T *ivars, size_t nelems, const int *status, \
                                     int cmp, const T *cmp_values, T cmp_value) \
    {                                                                          \
        for (;;) {                                                             \
            int empty = 0;                                                     \
            size_t i = shm_##N##_scan_any(fn, ivars, nelems, status, cmp, cmp_values, cmp_value, \
                                          &empty);                             \
            if (i != SIZE_MAX || empty)                                        \
                return i;                                                      \
            shm_core_wait_progress();                                          \
        }                                                                      \
    }                                                                          \
    static size_t shm_##N##_test_any(const char *fn, T *ivars, size_t nelems, const int *status, \
                                     int cmp, const T *cmp_values, T cmp_value) \
    {                                                                          \
        int empty = 0;                                                         \
        cdt_progress();                                                        \
        return shm_##N##_scan_any(fn, ivars, nelems, status, cmp, cmp_values, cmp_value, \
                                  &empty);                                     \
    }                                                                          \
    /* Number of satisfied elements (indices in indices[]); -1: empty set. */  \
    static long shm_##N##_scan_some(const char *fn, T *ivars, size_t nelems, size_t *indices, \
                                    const int *status, int cmp, const T *cmp_values, T cmp_value) \
    {                                                                          \
        long n = 0;                                                            \
        int empty = 1;                                                         \
        for (size_t i = 0; i < nelems; i++) {                                  \
            if (status && status[i])                                           \
                continue;                                                      \
            empty = 0;                                                         \
            if (shm_##N##_sat(fn, ivars, i, cmp, cmp_values, cmp_value))       \
                indices[n++] = i;                                              \
        }                                                                      \
        if (n > 0)                                                             \
            __atomic_thread_fence(__ATOMIC_ACQUIRE);                           \
        return empty ? -1 : n;                                                 \
    }                                                                          \
    static size_t shm_##N##_wait_some(const char *fn, T *ivars, size_t nelems, size_t *indices, \
                                      const int *status, int cmp, const T *cmp_values, \
                                      T cmp_value)                             \
    {                                                                          \
        for (;;) {                                                             \
            long n = shm_##N##_scan_some(fn, ivars, nelems, indices, status, cmp, cmp_values, \
                                         cmp_value);                           \
            if (n != 0)                                                        \
                return n < 0 ? 0 : (size_t)n;                                  \
            shm_core_wait_progress();                                          \
        }                                                                      \
    }                                                                          \
    static size_t shm_##N##_test_some(const char *fn, T *ivars, size_t nelems, size_t *indices, \
                                      const int *status, int cmp, const T *cmp_values, \
                                      T cmp_value)                             \
    {                                                                          \
        cdt_progress();                                                        \
        long n = shm_##N##_scan_some(fn, ivars, nelems, indices, status, cmp, cmp_values, \
                                     cmp_value);                               \
        return n < 0 ? 0 : (size_t)n;                                          \
    }                                                                          \
    SHM_DEFINE(void, shmem_##N##_wait_until_all,                               \
               (T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
               { shm_##N##_wait_all(__func__, ivars, nelems, status, cmp, NULL, cmp_value); }) \
    SHM_DEFINE(void, shmem_##N##_wait_until_all_vector,                        \
               (T * ivars, size_t nelems, const int *status, int cmp, const T *cmp_values), \
               { shm_##N##_wait_all(__func__, ivars, nelems, status, cmp, cmp_values, 0); }) \
    SHM_DEFINE(size_t, shmem_##N##_wait_until_any,                             \
               (T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
               { return shm_##N##_wait_any(__func__, ivars, nelems, status, cmp, \
                                NULL, cmp_value); })                           \
    SHM_DEFINE(size_t, shmem_##N##_wait_until_any_vector,                      \
               (T * ivars, size_t nelems, const int *status, int cmp, const T *cmp_values), \
               { return shm_##N##_wait_any(__func__, ivars, nelems, status, cmp, \
                                cmp_values, 0); })                             \
    SHM_DEFINE(size_t, shmem_##N##_wait_until_some,                            \
               (T * ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                T cmp_value),                                                  \
               { return shm_##N##_wait_some(__func__, ivars, nelems, indices, status, cmp, NULL, \
                                            cmp_value); })                     \
    SHM_DEFINE(size_t, shmem_##N##_wait_until_some_vector,                     \
               (T * ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                const T *cmp_values),                                                \
               { return shm_##N##_wait_some(__func__, ivars, nelems, indices, status, cmp, \
                                            cmp_values, 0); })                 \
    SHM_DEFINE(int, shmem_##N##_test_all,                                      \
               (T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
               { return shm_##N##_test_all(__func__, ivars, nelems, status, cmp, \
                                NULL, cmp_value); })                           \
    SHM_DEFINE(int, shmem_##N##_test_all_vector,                               \
               (T * ivars, size_t nelems, const int *status, int cmp, const T *cmp_values), \
               { return shm_##N##_test_all(__func__, ivars, nelems, status, cmp, \
                                cmp_values, 0); })                             \
    SHM_DEFINE(size_t, shmem_##N##_test_any,                                   \
               (T * ivars, size_t nelems, const int *status, int cmp, T cmp_value), \
               { return shm_##N##_test_any(__func__, ivars, nelems, status, cmp, \
                                NULL, cmp_value); })                           \
    SHM_DEFINE(size_t, shmem_##N##_test_any_vector,                            \
               (T * ivars, size_t nelems, const int *status, int cmp, const T *cmp_values), \
               { return shm_##N##_test_any(__func__, ivars, nelems, status, cmp, \
                                cmp_values, 0); })                             \
    SHM_DEFINE(size_t, shmem_##N##_test_some,                                  \
               (T * ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                T cmp_value),                                                  \
               { return shm_##N##_test_some(__func__, ivars, nelems, indices, status, cmp, NULL, \
                                            cmp_value); })                     \
    SHM_DEFINE(size_t, shmem_##N##_test_some_vector,                           \
               (T * ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                const T *cmp_values),                                                \
               { return shm_##N##_test_some(__func__, ivars, nelems, indices, status, cmp, \
                                            cmp_values, 0); })
SHM_P2P_WAIT_TYPES(SHM_P2P_SETS)

/* The value returned is the one that satisfied the comparison. */
SHM_DEFINE(uint64_t, shmem_signal_wait_until, (uint64_t * sig_addr, int cmp, uint64_t cmp_value), {
    for (;;) {
        uint64_t v = __atomic_load_n(sig_addr, __ATOMIC_RELAXED);
        if (shm_cmp_ok(__func__, cmp, v < cmp_value, v == cmp_value)) {
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            return v;
        }
        shm_core_wait_progress();
    }
})

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
