// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with the PEs on several hosts as the collectives see them (coll_test.h, set "hosts_large").
#define COLL_SET "hosts_large"
#include "coll_ops.c"
