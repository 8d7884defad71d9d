// SPDX-License-Identifier: BSD-3-Clause
// coll_ops with the "log" algorithm set (see coll_test.h).
#define COLL_SET "log"
#include "coll_ops.c"
