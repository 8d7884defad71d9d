/* SPDX-License-Identifier: BSD-3-Clause */
/* <mpp/shmemx.h>: the deprecated SGI header directory (see <mpp/shmem.h>). */
#include "../shmemx.h"
