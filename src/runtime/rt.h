// SPDX-License-Identifier: BSD-3-Clause
/*
 * Runtime: who am I, who are my peers, and one key/value exchange.
 * Backed by PMIx (oshrun, Slurm, Open MPI); a process started without a
 * launcher is a job of one PE.
 */
#ifndef SHM_RUNTIME_RT_H
#define SHM_RUNTIME_RT_H

#include <stddef.h>

#include "core/status.h"

typedef struct {
    int rank;
    int size;
    int local_rank;  /* rank among the PEs of this host */
    int local_size;
    int *local_peers; /* local_size world ranks sharing this host, ascending */
    int nnodes;       /* hosts the job spans */
    int singleton;   /* started without a launcher */
    char nspace[256];
} shm_rt_info_t;

extern shm_rt_info_t shm_rt_g;

shm_status_t shm_rt_init(void);
void shm_rt_fini(void);

/* Publish a value under key; visible to every PE after shm_rt_exchange(). */
shm_status_t shm_rt_put(const char *key, const void *buf, size_t len);
/*
 * Commit and fence: the one exchange of init. collect: the fence brings every
 * PE's values to every host (O(N) per host; then each shm_rt_get is local).
 * Otherwise a value is fetched from its owner's server on its first
 * shm_rt_get (direct modex), so the fence costs the same at any job size.
 */
shm_status_t shm_rt_exchange(int collect);
/* Fetch pe's value of key into buf (exactly len bytes expected). */
shm_status_t shm_rt_get(int pe, const char *key, void *buf, size_t len);
/* Node index of pe (slow: PMIx look-ups; for fault paths), -1 if unknown. */
int shm_rt_node_of(int pe);
/* Node of every PE into node_of[size] (0..nnodes-1, the node list's order: the
 * same on every PE), from the job's node map, else PMIX_NODEID: K (or N)
 * look-ups, once. 0 on success, -1 where the launcher gives neither. */
int shm_rt_node_map(int *node_of);
/* A barrier through the launcher (slow; used during init and finalize only). */
shm_status_t shm_rt_barrier(void);
/* The same, calling poll_fn while it waits: a PE in it keeps serving the
 * fabric (with no progress thread, a peer's last barrier flag or its
 * quiet's read-back may still need this PE's progress). */
shm_status_t shm_rt_barrier_poll(void (*poll_fn)(void));

/* End the whole job with status; msg may be empty. Never returns. */
__attribute__((noreturn)) void shm_rt_abort(int status, const char *msg);

#endif /* SHM_RUNTIME_RT_H */
