// SPDX-License-Identifier: BSD-3-Clause
//
// amo_types with SHMEM_AMO_NATIVE=cswap: the library keeps only the
// provider's compare-and-swap and emulates every other AMO with it.
#define AMO_MODE "cswap"
#include "amo_types.c"
