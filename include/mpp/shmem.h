/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * <mpp/shmem.h>: the header directory of SGI SHMEM, deprecated since
 * OpenSHMEM 1.1 but still required (spec Annex "Deprecated API", header
 * directory mpp). The same declarations as <shmem.h>.
 */
#include "../shmem.h"
