// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with large counts (3 MiB messages), the library's own algorithm choice.
#define COLL_SCALE 12
#include "coll_ops.c"
