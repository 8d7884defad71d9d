// SPDX-License-Identifier: BSD-3-Clause
/*
 * Teams: who is in a team, and the team's collective workspace.
 *
 * Workspace. Symmetric allocations must be the same on every PE of the
 * job, but a team split involves only the parent's members. So the
 * library reserves, at init, a pool of SHMEM_TEAMS_MAX + 2 workspace slots
 * in the symmetric heap (the same on every PE); a split agrees on a slot
 * free on every member of the parent (an AND-reduction of free-slot
 * bitmasks over the parent). Disjoint teams made by one split may share a
 * slot: no PE is in two of them. A slot holds:
 *   flags[npes]   one word per sending peer, written only by that peer;
 *   sizes[npes]   block sizes of shmem_collect;
 *   sent[npes]    this PE's count of messages sent to each peer (below);
 *   scratch       two halves, for the reductions that stage data.
 *
 * Flags. Peer s writes flag[s] on peer r with the number of messages it
 * has sent to r on this team; r waits until flag[s] reaches the number it
 * has consumed from s, plus one. Every message is consumed exactly once,
 * and the sender completes (quiets) everything before each flag, so the
 * word only grows and a value can never be mistaken for an older or a
 * newer message, however far ahead a PE runs.
 *
 * Lost flags. The sender's counts live in the slot too (sent[], the same
 * offset on every PE), so a PE whose wait has lasted a while reads its
 * count there through the fabric: a flag put lost on a connection the
 * provider reset and silently re-made (tcp;ofi_rxm after a connection
 * reset) is then taken from the count instead of waited for ever
 * (coll/barrier.c). A count is stored only after its flag was issued.
 *
 * Active sets (deprecated collectives) use one job-wide slot whose flags
 * and counts are indexed by world PE instead of team rank: a PE pair
 * counts its messages the same way whichever active set carried them.
 *
 * Views. The node-aware collectives (coll/hosts.c) run the flat algorithms
 * on parts of a team: the members on this PE's host, or one member of each
 * host. A view is a shm_team_t whose fidx[] maps its ranks to the parent's
 * flag indices and whose flags, counts and scratch are the parent's, so a
 * PE pair counts its messages the same way whichever view carried them.
 */
#ifndef SHM_CORE_TEAM_H
#define SHM_CORE_TEAM_H

#include <shmem.h>

#include "core/state.h"

struct shm_team {
    int n;                     /* PEs in the team */
    int me;                    /* this PE's rank in it */
    int start, stride;         /* world PE of rank i (when pes == NULL) */
    int *pes;                  /* world PE of each rank, when not arithmetic */
    int slot;                  /* workspace slot; -1 for an active set */
    int by_world;              /* flags and counts indexed by world PE (active sets) */
    int predefined;            /* WORLD, SHARED: never destroyed */
    volatile uint64_t *flags;  /* this PE's flag words */
    size_t flags_off;          /* heap offset of the flag words (same on every PE) */
    uint64_t *sizes;           /* collect: block sizes by rank */
    size_t sizes_off;
    char *scratch;             /* two halves of scratch_half bytes */
    size_t scratch_off, scratch_half;
    uint64_t scratch_uses;     /* staged collectives so far: picks the half */
    uint64_t *sent, *seen;     /* messages sent to / consumed from each peer */
    size_t sent_off;           /* heap offset of sent[] (the same on every PE) */
    const int *fidx;           /* views: the parent's flag index of each rank (else NULL) */
    struct shm_coll_hosts *hosts; /* hosts of the members (coll/hosts.c); NULL: flat only */
    shmem_team_config_t config;
    long config_mask;
};

typedef struct shm_team shm_team_t;

extern struct shm_team shm_team_world_g;
extern struct shm_team shm_team_shared_g;

/* Called once by shm_core_init after the conduit and the heap exist / before they go. */
void shm_team_init(void);
void shm_team_fini(void);
/* Symmetric-heap bytes shm_team_init takes for npes PEs (its workspace pool). */
size_t shm_team_heap_bytes(int npes);

static inline int shm_team_pe(const shm_team_t *t, int rank)
{
    return t->pes ? t->pes[rank] : t->start + rank * t->stride;
}

/* Rank of world PE pe in t, or -1. */
int shm_team_rank_of(const shm_team_t *t, int pe);

/* An active set as a team view (no allocation): flags in the job-wide slot. */
void shm_team_active_set(shm_team_t *t, const char *fn, int start, int log_stride, int size);

/* Team creation; 0 on success, identical on every member of the parent. */
int shm_team_split_strided(shm_team_t *parent, int start, int stride, int size,
                           const shmem_team_config_t *config, long mask, shm_team_t **new_p);
int shm_team_split_2d(shm_team_t *parent, int xrange, const shmem_team_config_t *xcfg,
                      long xmask, shm_team_t **x_p, const shmem_team_config_t *ycfg,
                      long ymask, shm_team_t **y_p);
void shm_team_destroy(shm_team_t *t);

/* Contexts (core/ctx.c). */
int shm_ctx_create(shm_team_t *team, long options, struct shm_ctx **ctx_p);
void shm_ctx_destroy(struct shm_ctx *ctx);
/* Destroys the contexts made from team (all of them when team is NULL: finalize). */
void shm_ctx_destroy_all(shm_team_t *team);
/* Quiets the default context and every live one (finalize, before its barrier). */
void shm_ctx_quiet_all(void);

#endif /* SHM_CORE_TEAM_H */
