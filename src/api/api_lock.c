// SPDX-License-Identifier: BSD-3-Clause
/* Distributed locks (MCS queue lock on the user's symmetric long: src/atomics/lock.c). */
#include "api/api.h"
#include "atomics/amo.h"

SHM_DEFINE(void, shmem_set_lock, (long *lock), { shm_lock_set(__func__, lock); })
SHM_DEFINE(int, shmem_test_lock, (long *lock), { return shm_lock_test(__func__, lock); })
SHM_DEFINE(void, shmem_clear_lock, (long *lock), { shm_lock_clear(__func__, lock); })
