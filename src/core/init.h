// SPDX-License-Identifier: BSD-3-Clause
#ifndef SHM_CORE_INIT_H
#define SHM_CORE_INIT_H

#include <shmem.h>

#ifndef OFISHMEM_VERSION_STRING
#define OFISHMEM_VERSION_STRING "unknown"
#endif

void shm_core_init(int requested_thread_level);
void shm_core_finalize(void);
/* Barrier of all PEs after quieting the default context (coll/barrier.c). */
void shm_coll_barrier_world(void);
/* Barrier without completing outstanding RMA (shmem_sync_all). */
void shm_coll_sync_world(void);

#endif /* SHM_CORE_INIT_H */
