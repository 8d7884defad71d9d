// SPDX-License-Identifier: BSD-3-Clause
/*
 * Logging and fatal errors. The level is checked before anything is
 * formatted, so a disabled log line costs one load and one branch.
 */
#ifndef SHM_CORE_LOG_H
#define SHM_CORE_LOG_H

#include <stdarg.h>

#include "core/status.h"

#define SHM_LOG_SUBSYS(X)                                                      \
    X(INIT, "init") X(HEAP, "heap") X(RMA, "rma") X(AMO, "amo")                \
    X(COLL, "coll") X(RPC, "rpc") X(OFI, "ofi") X(RT, "rt")

typedef enum {
#define SHM_LOG_SUB_ENUM(id, name) SHM_LOG_##id,
    SHM_LOG_SUBSYS(SHM_LOG_SUB_ENUM)
#undef SHM_LOG_SUB_ENUM
    SHM_LOG_NSUBSYS
} shm_log_sub_t;

typedef enum {
    SHM_LVL_ERROR = 0,
    SHM_LVL_WARN = 1,
    SHM_LVL_INFO = 2,
    SHM_LVL_DEBUG = 3,
    SHM_LVL_TRACE = 4,
} shm_log_level_t;

extern unsigned char shm_log_level_g[SHM_LOG_NSUBSYS];

/* Parses "warn" or "info,ofi=debug,rma=trace"; returns SHM_ERR_ENV on junk. */
shm_status_t shm_log_configure(const char *spec);

/* Identity printed in every message: [PE n host:pid]. */
void shm_log_set_identity(int pe);

__attribute__((format(printf, 5, 6))) void shm_log_write(shm_log_sub_t sub, int lvl,
                                                         const char *file, int line,
                                                         const char *fmt, ...);

#define SHM_LOG(sub, lvl, ...)                                                 \
    do {                                                                       \
        if (shm_unlikely(shm_log_level_g[SHM_LOG_##sub] >= (lvl)))            \
            shm_log_write(SHM_LOG_##sub, (lvl), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#define SHM_WARN(sub, ...) SHM_LOG(sub, SHM_LVL_WARN, __VA_ARGS__)
#define SHM_INFO(sub, ...) SHM_LOG(sub, SHM_LVL_INFO, __VA_ARGS__)
#define SHM_DEBUG(sub, ...) SHM_LOG(sub, SHM_LVL_DEBUG, __VA_ARGS__)

/*
 * Prints "[PE n host:pid] file:line: message" on stderr and ends the whole
 * job (through the launcher when there is one). Never returns.
 */
__attribute__((noreturn, cold, format(printf, 3, 4))) void
shm_fatal_at(const char *file, int line, const char *fmt, ...);
#define shm_fatal(...) shm_fatal_at(__FILE__, __LINE__, __VA_ARGS__)

/* Same prefix, no abort: for messages a user must see once (e.g. heap full). */
__attribute__((cold, format(printf, 3, 4))) void shm_error_at(const char *file, int line,
                                                              const char *fmt, ...);
#define shm_error(...) shm_error_at(__FILE__, __LINE__, __VA_ARGS__)

#endif /* SHM_CORE_LOG_H */
