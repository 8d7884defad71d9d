// SPDX-License-Identifier: BSD-3-Clause
/*
 * Argument checks shared by the API (issue #8). Each inline check is one
 * predictable branch; what happens when it fails lives out of line (cold,
 * noreturn, core/check.c) so the fast path stays a compare and a jump.
 *
 * Always on (they cost nothing next to the path they guard):
 *   PE range (shm_check_pe, core/state.h), symmetric range
 *   (shm_xlate_or_die), element count x size overflow (shm_check_nbytes).
 * Only with SHMEM_DEBUG=1 (they take a lock or talk to other PEs):
 *   use of a destroyed context or team, collectives whose size or root
 *   differs across the team.
 */
#ifndef SHM_CORE_CHECK_H
#define SHM_CORE_CHECK_H

#include <stddef.h>

#include "core/state.h"

struct shm_team;

__attribute__((noreturn, cold)) void shm_bad_count(const char *fn, size_t n, size_t esize);
__attribute__((noreturn, cold)) void shm_bad_ctx(const char *fn, const void *ctx);
__attribute__((noreturn, cold)) void shm_bad_team(const char *fn, const void *team);

/* Liveness registries (core/ctx.c, core/team.c); they take a lock. */
int shm_ctx_is_live(const struct shm_ctx *ctx);
int shm_team_is_live(const struct shm_team *team);

/* n elements of esize bytes, or the job ends: a wrapped count (a negative
 * one cast to size_t, or one so large that n * esize wraps to a small
 * number) must not become a short, silently "successful" transfer. */
static inline size_t shm_check_nbytes(const char *fn, size_t n, size_t esize)
{
    size_t bytes;
    if (shm_unlikely(__builtin_mul_overflow(n, esize, &bytes)))
        shm_bad_count(fn, n, esize);
    return bytes;
}

/* SHMEM_DEBUG: a context must be SHMEM_CTX_DEFAULT or one that exists. */
static inline void shm_check_ctx_live(const char *fn, const struct shm_ctx *ctx)
{
    if (shm_unlikely(shm_state_g.debug) && ctx != &shm_ctx_default_g && !shm_ctx_is_live(ctx))
        shm_bad_ctx(fn, ctx);
}

/* SHMEM_DEBUG: a team handle must name a team that exists. NULL
 * (SHMEM_TEAM_INVALID) is left to the caller, which returns an error. */
static inline void shm_check_team_live(const char *fn, const struct shm_team *team)
{
    if (shm_unlikely(shm_state_g.debug) && team != NULL && !shm_team_is_live(team))
        shm_bad_team(fn, team);
}

/*
 * SHMEM_DEBUG: every member of team t must pass the same byte count (and
 * root, when root >= 0) to a collective. Costs one extra all-to-all exchange
 * of the values, so it runs only with SHMEM_DEBUG. The team's rank 0
 * reports the first PE that differs from it (one message); the others wait
 * for the job to end. Also checks 0 <= root < team size on every PE.
 */
void shm_check_coll_args(const char *fn, struct shm_team *t, size_t bytes, int root);

#endif /* SHM_CORE_CHECK_H */
