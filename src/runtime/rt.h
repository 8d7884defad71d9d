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

#endif /* SHM_RUNTIME_RT_H */
