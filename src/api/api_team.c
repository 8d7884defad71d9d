// SPDX-License-Identifier: BSD-3-Clause
/* Teams and contexts. */
#include "api/api.h"
#include "coll/coll.h"
#include "core/check.h"
#include "core/team.h"

#define TEAM(t) ((shm_team_t *)(t))
#define CTX(c) ((struct shm_ctx *)(c))

SHM_DEFINE(int, shmem_team_my_pe, (shmem_team_t team), {
    shm_check_running(__func__);
    shm_check_team_live(__func__, TEAM(team));
    return team ? TEAM(team)->me : -1;
})

SHM_DEFINE(int, shmem_team_n_pes, (shmem_team_t team), {
    shm_check_running(__func__);
    shm_check_team_live(__func__, TEAM(team));
    return team ? TEAM(team)->n : -1;
})

SHM_DEFINE(int, shmem_team_get_config,
           (shmem_team_t team, long config_mask, shmem_team_config_t *config), {
               shm_check_running(__func__);
               shm_check_team_live(__func__, TEAM(team));
               if (team == SHMEM_TEAM_INVALID || config == NULL)
                   return -1;
               if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
                   config->num_contexts = TEAM(team)->config.num_contexts;
               return 0;
           })

SHM_DEFINE(int, shmem_team_translate_pe, (shmem_team_t src_team, int src_pe, shmem_team_t dest_team),
           {
               shm_check_running(__func__);
               shm_check_team_live(__func__, TEAM(src_team));
               shm_check_team_live(__func__, TEAM(dest_team));
               if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID)
                   return -1;
               if (src_pe < 0 || src_pe >= TEAM(src_team)->n)
                   return -1;
               return shm_team_rank_of(TEAM(dest_team), shm_team_pe(TEAM(src_team), src_pe));
           })

SHM_DEFINE(int, shmem_team_split_strided,
           (shmem_team_t parent_team, int start, int stride, int size,
            const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team),
           {
               shm_check_running(__func__);
               shm_check_team_live(__func__, TEAM(parent_team));
               shm_team_t *t = NULL;
               int rc = shm_team_split_strided(TEAM(parent_team), start, stride, size, config,
                                               config_mask, &t);
               if (rc != 0 && parent_team != SHMEM_TEAM_INVALID && TEAM(parent_team)->me == 0)
                   SHM_DEBUG(COLL, "shmem_team_split_strided(start %d, stride %d, size %d) of a "
                             "team of %d PEs failed", start, stride, size, TEAM(parent_team)->n);
               *new_team = (shmem_team_t)t;
               return rc;
           })

SHM_DEFINE(int, shmem_team_split_2d,
           (shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
            long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
            long yaxis_mask, shmem_team_t *yaxis_team),
           {
               shm_check_running(__func__);
               shm_check_team_live(__func__, TEAM(parent_team));
               shm_team_t *x = NULL, *y = NULL;
               int rc = shm_team_split_2d(TEAM(parent_team), xrange, xaxis_config, xaxis_mask,
                                          &x, yaxis_config, yaxis_mask, &y);
               *xaxis_team = (shmem_team_t)x;
               *yaxis_team = (shmem_team_t)y;
               return rc;
           })

SHM_DEFINE(void, shmem_team_destroy, (shmem_team_t team), {
    shm_check_running(__func__);
    shm_check_team_live(__func__, TEAM(team));
    if (team == SHMEM_TEAM_INVALID)
        return;
    if (TEAM(team)->predefined) {
        shm_error("shmem_team_destroy: %s is a predefined team and cannot be destroyed",
                  team == SHMEM_TEAM_WORLD ? "SHMEM_TEAM_WORLD" : "SHMEM_TEAM_SHARED");
        return;
    }
    shm_team_destroy(TEAM(team));
})

SHM_DEFINE(int, shmem_team_sync, (shmem_team_t team), {
    shm_check_running(__func__);
    shm_check_team_live(__func__, TEAM(team));
    if (team == SHMEM_TEAM_INVALID)
        return -1;
    shm_coll_sync(TEAM(team));
    return 0;
})

void *pshmem_ptr(const void *dest, int pe); /* api_setup.c */

SHM_DEFINE(void *, shmem_team_ptr, (shmem_team_t team, const void *dest, int pe), {
    shm_check_running(__func__);
    shm_check_team_live(__func__, TEAM(team));
    if (team == SHMEM_TEAM_INVALID || pe < 0 || pe >= TEAM(team)->n)
        return NULL;
    return pshmem_ptr(dest, shm_team_pe(TEAM(team), pe));
})

/* ---- contexts ---- */

SHM_DEFINE(int, shmem_ctx_create, (long options, shmem_ctx_t *ctx), {
    shm_check_running(__func__);
    struct shm_ctx *c;
    if (shm_ctx_create(NULL, options, &c) != 0) {
        *ctx = SHMEM_CTX_INVALID;
        return -1;
    }
    *ctx = (shmem_ctx_t)c;
    return 0;
})

/* Not collective (spec: "the context creation operation is not collective"):
 * each PE may make its team contexts when it likes, from any team it is in. */
SHM_DEFINE(int, shmem_team_create_ctx, (shmem_team_t team, long options, shmem_ctx_t *ctx), {
    shm_check_running(__func__);
    shm_check_team_live(__func__, TEAM(team));
    struct shm_ctx *c = NULL;
    /* A SHMEM_TEAM_WORLD context is an ordinary one (team NULL): no PE translation. */
    shm_team_t *t = TEAM(team) == &shm_team_world_g ? NULL : TEAM(team);
    if (team == SHMEM_TEAM_INVALID || shm_ctx_create(t, options, &c) != 0) {
        *ctx = SHMEM_CTX_INVALID;
        return -1;
    }
    *ctx = (shmem_ctx_t)c;
    return 0;
})

SHM_DEFINE(void, shmem_ctx_destroy, (shmem_ctx_t ctx), {
    shm_check_running(__func__);
    if (ctx == SHMEM_CTX_INVALID)
        return;
    shm_check_ctx_live(__func__, CTX(ctx));
    if (CTX(ctx)->is_default)
        shm_fatal("shmem_ctx_destroy: SHMEM_CTX_DEFAULT cannot be destroyed");
    shm_ctx_destroy(CTX(ctx));
})

SHM_DEFINE(int, shmem_ctx_get_team, (shmem_ctx_t ctx, shmem_team_t *team), {
    shm_check_running(__func__);
    if (ctx == SHMEM_CTX_INVALID || team == NULL) {
        if (team)
            *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    shm_check_ctx_live(__func__, CTX(ctx));
    shm_team_t *t = CTX(ctx)->team;
    *team = t ? (shmem_team_t)t : SHMEM_TEAM_WORLD;
    return 0;
})

/* Sessions are hints; this library has no batching yet, so they only check the context. */
SHM_DEFINE(void, shmem_ctx_session_start,
           (shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config,
            long config_mask),
           {
               (void)options;
               (void)config;
               (void)config_mask;
               if (ctx == SHMEM_CTX_INVALID)
                   return;
               shm_check_running(__func__);
           })

SHM_DEFINE(void, shmem_ctx_session_stop, (shmem_ctx_t ctx), {
    if (ctx == SHMEM_CTX_INVALID)
        return;
    shm_check_running(__func__);
})
