// SPDX-License-Identifier: BSD-3-Clause
/* The runtime's watchdog (rt_watch.c), for rt_pmix.c. */
#ifndef SHM_RUNTIME_RT_WATCH_H
#define SHM_RUNTIME_RT_WATCH_H

/* Exit status of a PE whose launcher went away. */
#define RT_LAUNCHER_LOST_STATUS 1

/* After PMIx_Init: start the thread. 0, or -1 (errno) when it could not. */
int shm_rt_watch_start(void);
/* Before PMIx_Finalize: the server connection's descriptor stops being ours. */
void shm_rt_watch_leaving(void);
/* After PMIx_Finalize: stop and join the thread. */
void shm_rt_watch_stop(void);
/* shm_rt_abort: exit with status end_ms from now, or ack_ms from now when
 * PMIx_Abort has not returned by then. 0: no watchdog runs. */
int shm_rt_watch_abort_begin(unsigned ack_ms, unsigned end_ms, int status);
void shm_rt_watch_abort_acked(void);
/* The launcher went away (a PMIx call says it cannot reach the server):
 * "[PE n host:pid] FILE:LINE: <the message>" and exit. Never returns. */
__attribute__((noreturn, format(printf, 3, 4))) void shm_rt_watch_gone(const char *file, int line,
                                                                     const char *fmt, ...);
/* The first thread that ends the PE with a line of its own: 1; the others
 * (their line would be a second one): 0. */
int shm_rt_exit_claim(void);

#endif /* SHM_RUNTIME_RT_WATCH_H */
