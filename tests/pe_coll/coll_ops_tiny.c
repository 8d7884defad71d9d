// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with the "tiny" algorithm set (1 KiB team scratch: reductions in
// many chunks) and small counts only (a 3000-long sum still takes ~400 chunks).
#define COLL_SET "tiny"
#define COLL_SCALE 0
#include "coll_ops.c"
