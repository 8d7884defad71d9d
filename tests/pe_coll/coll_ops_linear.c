// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with the "linear" algorithm set (see coll_test.h).
#define COLL_SET "linear"
#include "coll_ops.c"
