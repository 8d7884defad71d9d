// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with the same-host direct path off (SHMEM_DIRECT=0): everything
// through the provider, as between hosts.
#define COLL_SET "fabric"
#include "coll_ops.c"
