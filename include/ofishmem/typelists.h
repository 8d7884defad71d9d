/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place the OpenSHMEM 1.6 type tables are written down.
 *
 * Every typed function of the library, its prototype in <shmem.h> and its
 * C11 _Generic association are produced by expanding these lists with an
 * X(CTYPE, NAME) macro. The lists live under include/ (not src/api/) because
 * the installed <shmem.h> expands them too.
 *
 * X(CTYPE, NAME):  CTYPE is the C type, NAME the token used in function names.
 */
#ifndef OFISHMEM_TYPELISTS_H
#define OFISHMEM_TYPELISTS_H

#include <stddef.h>
#include <stdint.h>

/* Table "Standard RMA Types and Names" (also broadcast, collect, alltoall). */
#define SHM_RMA_TYPES(X)                                                       \
    X(float, float) X(double, double) X(long double, longdouble)               \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)            \
    X(long, long) X(long long, longlong) X(unsigned char, uchar)               \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)    \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)         \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16)  \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

/*
 * The distinct C types of the RMA table, for _Generic: int8_t..uint64_t,
 * size_t and ptrdiff_t are typedefs of these and would be duplicate
 * associations.
 */
#define SHM_GENERIC_TYPES(X)                                                   \
    X(float, float) X(double, double) X(long double, longdouble)               \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)            \
    X(long, long) X(long long, longlong) X(unsigned char, uchar)               \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)    \
    X(unsigned long long, ulonglong)

/* Sized RMA forms: X(BITS, BYTES). */
#define SHM_SIZED_TYPES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

/* Table "Standard AMO Types and Names" (inc, fetch_inc, add, fetch_add, compare_swap). */
#define SHM_AMO_STD_TYPES(X)                                                   \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)     \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                   \
    X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)                    \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

#define SHM_AMO_STD_GENERIC_TYPES(X)                                           \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)     \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)

/* Table "Extended AMO Types and Names" (fetch, set, swap). */
#define SHM_AMO_EXT_TYPES(X) X(float, float) X(double, double) SHM_AMO_STD_TYPES(X)
#define SHM_AMO_EXT_GENERIC_TYPES(X)                                           \
    X(float, float) X(double, double) SHM_AMO_STD_GENERIC_TYPES(X)

/* Table "Bitwise AMO Types and Names" (and, or, xor and fetch forms). */
#define SHM_AMO_BITWISE_TYPES(X)                                               \
    X(unsigned int, uint) X(unsigned long, ulong)                              \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)       \
    X(uint32_t, uint32) X(uint64_t, uint64)
/* int32_t and int64_t are typedefs of int and long (or long long), types the
 * three unsigned names do not cover. */
#define SHM_AMO_BITWISE_GENERIC_TYPES(X)                                       \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) \
    X(int32_t, int32) X(int64_t, int64)

/*
 * Point-to-point synchronisation (wait_until, test and their _all, _any,
 * _some and _vector forms). The spec's table "Point-to-Point Synchronization
 * Types and Names" lists short and unsigned short; since 1.5 the routines
 * name the standard AMO types and keep short and unsigned short only as
 * deprecated types of wait_until and test. Sandia OpenSHMEM (and Cray's)
 * take them in every point-to-point routine, as the 1.5 drafts of the set
 * forms did, and programs written for it use them (its tests-sos C11
 * programs wait on short arrays): every point-to-point routine here takes
 * them, deprecated.
 */
#define SHM_P2P_TYPES(X) SHM_AMO_STD_TYPES(X)
#define SHM_P2P_GENERIC_TYPES(X) SHM_AMO_STD_GENERIC_TYPES(X)
#define SHM_P2P_DEPRECATED_ONLY_TYPES(X) X(short, short) X(unsigned short, ushort)
#define SHM_P2P_DEPRECATED_ONLY_GENERIC_TYPES(X) SHM_P2P_DEPRECATED_ONLY_TYPES(X)

/* Deprecated shmem_TYPE_wait: the 1.4 point-to-point table. */
#define SHM_P2P_DEPRECATED_TYPES(X)                                            \
    SHM_P2P_DEPRECATED_ONLY_TYPES(X) SHM_AMO_STD_TYPES(X)

/* Every type the point-to-point routines accept (current and deprecated). */
#define SHM_P2P_WAIT_TYPES(X) SHM_P2P_DEPRECATED_TYPES(X)
#define SHM_P2P_WAIT_GENERIC_TYPES(X)                                          \
    SHM_P2P_DEPRECATED_ONLY_GENERIC_TYPES(X) SHM_P2P_GENERIC_TYPES(X)

/* Reduction tables (1.6 "Reduction Types, Names and Supporting Operations"). */
#define SHM_REDUCE_BITWISE_TYPES(X)                                            \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)    \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8)   \
    X(int16_t, int16) X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)    \
    X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)

#define SHM_REDUCE_MINMAX_TYPES(X)                                             \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)            \
    X(long, long) X(long long, longlong) X(ptrdiff_t, ptrdiff)                 \
    SHM_REDUCE_BITWISE_TYPES(X) X(float, float) X(double, double)              \
    X(long double, longdouble)

#define SHM_REDUCE_ARITH_TYPES(X)                                              \
    SHM_REDUCE_MINMAX_TYPES(X) X(double _Complex, complexd)                    \
    X(float _Complex, complexf)

/* Distinct C types of the team reduction tables, for _Generic (see SHM_GENERIC_TYPES). */
#define SHM_REDUCE_BITWISE_GENERIC_TYPES(X)                                    \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)    \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8)   \
    X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)
#define SHM_REDUCE_MINMAX_GENERIC_TYPES(X) SHM_GENERIC_TYPES(X)
#define SHM_REDUCE_ARITH_GENERIC_TYPES(X)                                      \
    SHM_GENERIC_TYPES(X) X(double _Complex, complexd) X(float _Complex, complexf)

/* Deprecated active-set reductions (1.6 "... for Active-Set-Based Reductions"). */
#define SHM_TOALL_BITWISE_TYPES(X)                                             \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define SHM_TOALL_MINMAX_TYPES(X)                                              \
    SHM_TOALL_BITWISE_TYPES(X) X(float, float) X(double, double)               \
    X(long double, longdouble)
#define SHM_TOALL_ARITH_TYPES(X)                                               \
    SHM_TOALL_MINMAX_TYPES(X) X(double _Complex, complexd)                     \
    X(float _Complex, complexf)

#endif /* OFISHMEM_TYPELISTS_H */
