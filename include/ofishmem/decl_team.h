/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Teams and communication contexts: declarations (from the type tables) and C11 generics.
 * Included by <shmem.h>; not meant to be included on its own.
 */
#ifndef OFISHMEM_DECL_TEAM_H
#define OFISHMEM_DECL_TEAM_H

/*
 * The handles SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED are
 * addresses of library objects: programs must see them in the shared
 * library even though it hides everything else (-fvisibility=hidden).
 */
#if defined(__GNUC__)
#define SHM_HANDLE_VISIBLE __attribute__((visibility("default")))
#else
#define SHM_HANDLE_VISIBLE
#endif
extern struct shm_ctx shm_ctx_default_g SHM_HANDLE_VISIBLE;

/* ---- Team handles ----------------------------------------------------- */
/** A team: an ordered set of PEs with its own collective workspace. */
typedef struct shm_team *shmem_team_t;
extern struct shm_team shm_team_world_g SHM_HANDLE_VISIBLE;
extern struct shm_team shm_team_shared_g SHM_HANDLE_VISIBLE;
/** All PEs of the job. */
#define SHMEM_TEAM_WORLD ((shmem_team_t)&shm_team_world_g)
/** The PEs that share this PE's host (and can reach each other's memory directly). */
#define SHMEM_TEAM_SHARED ((shmem_team_t)&shm_team_shared_g)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

/** Team configuration (shmem_team_split_*); fields are used only where the mask says so. */
typedef struct {
    int num_contexts; /**< contexts the program means to create from the team (a hint) */
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* ---- Context sessions -------------------------------------------------- */
typedef struct {
    size_t total_ops; /**< expected RMA calls in the session (a hint) */
} shmem_ctx_session_config_t;
#define SHMEM_CTX_SESSION_BATCH (1L << 0)
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0)

/* ---- Teams ------------------------------------------------------------ */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
int shmem_team_sync(shmem_team_t team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);

/* ---- Contexts --------------------------------------------------------- */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_ctx_session_config_t *config, long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);

#endif /* OFISHMEM_DECL_TEAM_H */
