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

/* End the whole job with status; msg may be empty. Never returns. The PE
 * is gone within SHM_RT_ABORT_END_MS whatever the launcher does, and within
 * SHM_RT_ABORT_ACK_MS when its PMIx server does not take the abort (a cut
 * channel, a stopped launcher): the launcher then sees the PE exit. */
__attribute__((noreturn)) void shm_rt_abort(int status, const char *msg);
#define SHM_RT_ABORT_ACK_MS 2000
#define SHM_RT_ABORT_END_MS 5000

/*
 * This PE is ending (a fatal path that may wait or ask the launcher first):
 * it exits with status within ms from now whatever the launcher, its PMIx
 * server or the fabric do; why (a static string, or NULL) is logged if that
 * deadline is what ends it. The earliest bound armed holds. Returns 0 when
 * no watchdog runs (no launcher, or outside shm_rt_init..shm_rt_fini).
 */
int shm_rt_end_within(unsigned ms, int status, const char *why);
/* SHMEM_LAUNCHER_TIMEOUT, once the environment is read: how long the
 * launcher may be stopped or unreachable before this PE ends itself. */
void shm_rt_watch_timeout(int seconds);
/* shm_rt_get for fault paths: gives up (SHM_ERR_TIMEOUT) after ms. */
shm_status_t shm_rt_get_within(int pe, const char *key, void *buf, size_t len, unsigned ms);

/*
 * Limits (rt_limits.c): text to append to the message of a failure a limit
 * caused (": this PE has 24 files open and may open 24 (ulimit -n) ...:
 * raise it to ..."), or "" when that limit is not near. For error paths.
 */
#define SHM_RT_NOFILE_BASE 32      /* descriptors of a PE besides its connections */
#define SHM_RT_PE_THREADS 6        /* threads a PE runs at most (its own, PMIx's, ours) */
#define SHM_RT_DEVSHM_PER_PE_MIB 32 /* libfabric shm's regions of one PE */
int shm_rt_nofile_need(int npes);
/* who: "this PE"; force: say it even when the limit is not near (EMFILE). */
size_t shm_rt_hint_nofile(char *buf, size_t len, const char *who, int npes, int force);
/* Processes and threads of this real user (what RLIMIT_NPROC counts). */
long shm_rt_user_tasks(void);
/* need: tasks still to be started (0: unknown). "" when unlimited or root. */
size_t shm_rt_hint_nproc(char *buf, size_t len, long need);
/* A mapping of need bytes failed: the address-space limit, or what fits. */
size_t shm_rt_hint_mapping(char *buf, size_t len, size_t need);
/* libfabric shm on local_pes PEs: "" when /dev/shm has room, else the
 * whole sentence (free, needed, what to do). */
size_t shm_rt_hint_devshm(char *buf, size_t len, int local_pes);

#endif /* SHM_RUNTIME_RT_H */
