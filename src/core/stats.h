// SPDX-License-Identifier: BSD-3-Clause
/*
 * SHMEM_STATS: counts of this PE's collective traffic, reported at
 * shmem_finalize. Counted where a collective hands something to the fabric
 * (coll/coll.h's put, flag, get helpers): copies into mapped peers' memory
 * are not fabric messages. Off, each counting site is one predictable
 * branch on a flag; on, plain increments (no atomics: collectives of one
 * team do not run concurrently, and the report is a diagnostic).
 */
#ifndef SHM_CORE_STATS_H
#define SHM_CORE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "core/log.h"

#define SHM_STAT_KINDS(X)                                                                      \
    X(BARRIER, "barrier") X(BCAST, "bcast") X(REDUCE, "reduce") X(FCOLLECT, "fcollect")        \
    X(COLLECT, "collect") X(ALLTOALL, "alltoall") X(SCAN, "scan") X(TEAM, "team_split")

typedef enum {
#define SHM_STAT_ENUM(id, name) SHM_STAT_##id,
    SHM_STAT_KINDS(SHM_STAT_ENUM)
#undef SHM_STAT_ENUM
    SHM_STAT_NKINDS
} shm_stat_kind_t;

typedef struct {
    uint64_t calls, node;       /* calls, and those that took a node form */
    uint64_t puts, put_bytes;   /* data puts through the fabric */
    uint64_t flags;             /* 8-byte flag puts through the fabric */
    uint64_t gets, get_bytes;   /* gets through the fabric */
} shm_stat_coll_t;

typedef struct {
    int on;
    int kind;    /* the collective running, -1 outside one */
    int is_node; /* it took a node form */
    shm_stat_coll_t coll[SHM_STAT_NKINDS];
} shm_stats_t;

extern shm_stats_t shm_stats_g;

/* From SHMEM_STATS, at init; the report at finalize (while the fabric is open). */
void shm_stats_init(void);
void shm_stats_report(void);

/* Around a collective entry point: the outermost one names the kind. */
static inline int shm_stats_begin(shm_stat_kind_t kind)
{
    if (shm_likely(!shm_stats_g.on) || shm_stats_g.kind >= 0)
        return 0;
    shm_stats_g.kind = (int)kind;
    shm_stats_g.is_node = 0;
    shm_stats_g.coll[kind].calls++;
    return 1;
}

static inline void shm_stats_end(int began)
{
    if (shm_likely(!began))
        return;
    if (shm_stats_g.is_node)
        shm_stats_g.coll[shm_stats_g.kind].node++;
    shm_stats_g.kind = -1;
}

static inline shm_stat_coll_t *shm_stats_cur(void)
{
    return &shm_stats_g.coll[shm_stats_g.kind >= 0 ? shm_stats_g.kind : SHM_STAT_TEAM];
}

/* Counting sites (fabric only). */
static inline void shm_stats_put(size_t bytes)
{
    if (shm_unlikely(shm_stats_g.on)) {
        shm_stat_coll_t *c = shm_stats_cur();
        c->puts++;
        c->put_bytes += bytes;
    }
}

static inline void shm_stats_flag(void)
{
    if (shm_unlikely(shm_stats_g.on))
        shm_stats_cur()->flags++;
}

static inline void shm_stats_get(size_t bytes)
{
    if (shm_unlikely(shm_stats_g.on)) {
        shm_stat_coll_t *c = shm_stats_cur();
        c->gets++;
        c->get_bytes += bytes;
    }
}

static inline void shm_stats_node(void)
{
    if (shm_unlikely(shm_stats_g.on))
        shm_stats_g.is_node = 1;
}

#endif /* SHM_CORE_STATS_H */
