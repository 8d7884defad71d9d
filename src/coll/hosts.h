// SPDX-License-Identifier: BSD-3-Clause
/*
 * Where a team's members live, for the node-aware collectives.
 *
 * At init every PE learns the host of every world PE (the launcher's node
 * map, once; or SHMEM_COLL_HOSTS for tests). A team whose members sit on
 * two or more hosts, with two or more members on some host, gets a
 * shm_coll_hosts_t: its members grouped by host and two views of it
 * (core/team.h), on which the flat algorithms run unchanged:
 *   local   the members on this PE's host, in rank order (index lme);
 *   column  member lme of every host that has one: for lme 0 the hosts'
 *           leaders (each host's lowest rank), for lme j the j-th members,
 *           which large reductions use as parallel leaders.
 * Hosts are numbered by their leader's rank, so every member sees the same
 * numbering. Other teams (one host; one member per host) stay flat.
 */
#ifndef SHM_COLL_HOSTS_H
#define SHM_COLL_HOSTS_H

#include "core/team.h"

typedef struct shm_coll_hosts {
    int k;             /* hosts with members of the team */
    int pmin, pmax;    /* members per host, fewest and most */
    int host, lme;     /* this PE's host, and its index among that host's members */
    int *start;        /* [k + 1]: host h's members are memb[start[h] .. start[h + 1]) */
    int *memb;         /* [n]: team ranks grouped by host, ascending within a host */
    int *hof;          /* [n]: host of each team rank */
    shm_team_t local;  /* view: this host's members */
    shm_team_t column; /* view: member lme of every host that has one */
    int *vbuf;         /* the views' pes[] and fidx[] */
} shm_coll_hosts_t;

/* At init (team.c), before any team exists; and at finalize. */
void shm_coll_hosts_init(void);
void shm_coll_hosts_fini(void);

/* Hosts of team t (members, ranks and flag words set), or NULL where the
 * node-aware algorithms do not apply. Called on every member; same result. */
shm_coll_hosts_t *shm_coll_hosts_make(const shm_team_t *t);
void shm_coll_hosts_free(shm_coll_hosts_t *h);

/* The same for an active set (a stack view): kept per shape, never freed
 * before finalize (a few shapes; beyond that, NULL: flat). */
shm_coll_hosts_t *shm_coll_hosts_active(const shm_team_t *t);

/* Hosts of the job as the collectives see them (SHMEM_COLL_HOSTS included). */
int shm_coll_nhosts(void);

/* Members of host h, and the leader (lowest rank) of host h. */
static inline int shm_coll_host_size(const shm_coll_hosts_t *h, int host)
{
    return h->start[host + 1] - h->start[host];
}

static inline int shm_coll_host_leader(const shm_coll_hosts_t *h, int host)
{
    return h->memb[h->start[host]];
}

#endif /* SHM_COLL_HOSTS_H */
