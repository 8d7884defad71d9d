// SPDX-License-Identifier: BSD-3-Clause
/* Atomics over libfabric: capability table and slow paths. */
#include "conduit/ofi/ofi.h"

void cdt_ofi_amo_init(void)
{
}
