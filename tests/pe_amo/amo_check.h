// SPDX-License-Identifier: BSD-3-Clause
//
// Type tables of the AMO tests, written from the spec (not from the
// library's lists, so that a type missing there is caught here).
#ifndef AMO_CHECK_H
#define AMO_CHECK_H

#include "pe_check.h"

// Table "Standard AMO Types and Names" is PE_P2P_TYPES (the same list).
#define PE_AMO_STD_TYPES(X) PE_P2P_TYPES(X)

// Table "Extended AMO Types and Names".
#define PE_AMO_EXT_TYPES(X) X(float, float) X(double, double) PE_AMO_STD_TYPES(X)

// Table "Bitwise AMO Types and Names".
#define PE_AMO_BITWISE_TYPES(X)                                                              \
    X(unsigned int, uint)                                                                    \
    X(unsigned long, ulong)                                                                  \
    X(unsigned long long, ulonglong)                                                         \
    X(int32_t, int32)                                                                        \
    X(int64_t, int64)                                                                        \
    X(uint32_t, uint32)                                                                      \
    X(uint64_t, uint64)

#define PE_IS_UNSIGNED(T) ((T)-1 / 2 < (T)-1)

#endif
