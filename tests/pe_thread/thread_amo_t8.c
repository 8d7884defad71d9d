// SPDX-License-Identifier: BSD-3-Clause
//
// thread_amo.c with 8 threads per PE: more threads than cores, as an OpenMP
// program on a small node runs.
#define THR_N 8
#include "thread_amo.c"
