// SPDX-License-Identifier: BSD-3-Clause
/* Library-wide state, contexts, and the checks every API call may make. */
#ifndef SHM_CORE_STATE_H
#define SHM_CORE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "conduit/conduit.h"
#include "core/env.h"
#include "core/log.h"
#include "heap/heap.h"

typedef enum { SHM_STATE_NEW = 0, SHM_STATE_RUNNING, SHM_STATE_FINALIZED } shm_run_state_t;

typedef struct {
    int me, npes;
    int run_state;
    int thread_level;
    int debug;                /* SHMEM_DEBUG: check arguments everywhere */
    uint64_t *barrier_psync;  /* internal symmetric words (see coll/barrier.c) */
    uint64_t barrier_epoch;
} shm_state_t;

extern shm_state_t shm_state_g;

struct shm_ctx {
    cdt_ctx_t cdt;
    long options;
    int is_default;
    struct shm_team *team;       /* the team it was made from (NULL: world) */
    struct shm_ctx *next, *prev; /* every live context made by the program (core/ctx.c) */
};

extern struct shm_ctx shm_ctx_default_g;

/* Out of line: messages for misuse (never return). */
__attribute__((noreturn, cold)) void shm_bad_pe(const char *fn, int pe);
__attribute__((noreturn, cold)) void shm_bad_team_pe(const char *fn, int pe, int team_n);
__attribute__((noreturn, cold)) void shm_bad_addr(const char *fn, const void *addr, size_t len,
                                                  const char *what);
__attribute__((noreturn, cold)) void shm_not_running(const char *fn);

static inline void shm_check_running(const char *fn)
{
    if (shm_unlikely(shm_state_g.run_state != SHM_STATE_RUNNING))
        shm_not_running(fn);
}

/* PE range: one unsigned compare, kept in every build. */
static inline void shm_check_pe(const char *fn, int pe)
{
    if (shm_unlikely((unsigned)pe >= (unsigned)shm_state_g.npes))
        shm_bad_pe(fn, pe);
}

/* Translate a symmetric range or end the job with a message naming fn. */
static inline int shm_xlate_or_die(const char *fn, const void *addr, size_t len, size_t *off_p,
                                   const char *what)
{
    int seg = shm_heap_xlate(addr, len, off_p);
    if (shm_unlikely(seg < 0))
        shm_bad_addr(fn, addr, len, what);
    return seg;
}

/* Polls until *ivar satisfies the comparison; drives progress while waiting. */
void shm_core_wait_progress(void);

#endif /* SHM_CORE_STATE_H */
