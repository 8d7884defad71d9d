// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with the "large" algorithm set (see coll_test.h).
#define COLL_SET "large"
#include "coll_ops.c"
