// SPDX-License-Identifier: BSD-3-Clause
/* One status type for the whole library; codes and strings from one list. */
#ifndef SHM_CORE_STATUS_H
#define SHM_CORE_STATUS_H

#define SHM_STATUS_LIST(X)                                                     \
    X(SHM_OK, "success")                                                       \
    X(SHM_ERR_NOMEM, "out of memory")                                          \
    X(SHM_ERR_INVAL, "invalid argument")                                       \
    X(SHM_ERR_ENV, "bad environment variable")                                 \
    X(SHM_ERR_RUNTIME, "runtime (PMIx) failure")                               \
    X(SHM_ERR_FABRIC, "libfabric failure")                                     \
    X(SHM_ERR_NOT_FOUND, "not found")                                          \
    X(SHM_ERR_TIMEOUT, "timed out")                                            \
    X(SHM_ERR_AGAIN, "resource temporarily unavailable")                       \
    X(SHM_ERR_RANGE, "out of range")                                           \
    X(SHM_ERR_PERM, "permission denied")                                       \
    X(SHM_ERR_NOSYS, "not supported")                                          \
    X(SHM_ERR_PROTO, "protocol error")                                         \
    X(SHM_ERR_CANCELED, "canceled")

typedef enum {
#define SHM_STATUS_ENUM(code, str) code,
    SHM_STATUS_LIST(SHM_STATUS_ENUM)
#undef SHM_STATUS_ENUM
    SHM_STATUS_COUNT
} shm_status_t;

const char *shm_status_str(shm_status_t st);

#if defined(__GNUC__)
#define shm_likely(x) __builtin_expect(!!(x), 1)
#define shm_unlikely(x) __builtin_expect(!!(x), 0)
#else
#define shm_likely(x) (x)
#define shm_unlikely(x) (x)
#endif

#endif /* SHM_CORE_STATUS_H */
