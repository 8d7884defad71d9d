// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with large counts (3 MiB messages) and the logarithmic algorithms.
#define COLL_SCALE 12
#define COLL_SET "log"
#include "coll_ops.c"
