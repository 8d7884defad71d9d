// SPDX-License-Identifier: BSD-3-Clause
//
// Helpers of the collective tests: algorithm sets chosen before shmem_init
// (argv[1]), the team shapes every test runs on, and the type tables of the
// spec's reduction sections (written here from the spec, independently of
// the library's own lists, so that a slip in one shows up in the other).
#ifndef COLL_TEST_H
#define COLL_TEST_H

#include <complex.h>

#include "pe_check.h"

// ---- algorithm sets ------------------------------------------------------
// auto   the library's choice
// linear flat algorithms everywhere
// log    dissemination / tree / recursive doubling / bruck / pairwise, with
//        small broadcast segments so that pipelining is exercised
// large  dissemination / tree / rsag / ring / pairwise
// tiny   linear with a 1 KiB team scratch (reductions in many chunks)
// fabric the library's choice with the same-host direct path off: every
//        transfer and flag goes through the provider
// hosts  the library's choice with the PEs on uneven hosts (SHMEM_COLL_HOSTS:
//        2, 1, 3 PEs, repeated): the node-aware forms wherever a team spans
//        hosts with several members on one
// hosts_cyclic  the same with PE p on host p mod 3 (no host's PEs adjacent)
// hosts_fabric  hosts with the direct path off (host-local steps cross the
//        provider too), binary host trees
// hosts_large   hosts, every node form forced, large ones from small sizes
//        (reductions reduce-scatter across hosts from 64 bytes, by recursive
//        halving, 4 KiB broadcast segments, chains as host trees)
static inline void coll_set_algorithms(const char *set)
{
    struct {
        const char *set, *var, *val;
    } t[] = {
        {"linear", "SHMEM_BARRIER_ALGORITHM", "linear"},
        {"linear", "SHMEM_BCAST_ALGORITHM", "linear"},
        {"linear", "SHMEM_REDUCE_ALGORITHM", "linear"},
        {"linear", "SHMEM_FCOLLECT_ALGORITHM", "linear"},
        {"linear", "SHMEM_COLLECT_ALGORITHM", "linear"},
        {"linear", "SHMEM_ALLTOALL_ALGORITHM", "linear"},
        {"log", "SHMEM_BARRIER_ALGORITHM", "dissemination"},
        {"log", "SHMEM_BCAST_ALGORITHM", "tree"},
        {"log", "SHMEM_BCAST_SEGMENT", "4k"},
        {"log", "SHMEM_REDUCE_ALGORITHM", "rd"},
        {"log", "SHMEM_FCOLLECT_ALGORITHM", "bruck"},
        {"log", "SHMEM_COLLECT_ALGORITHM", "bruck"},
        {"log", "SHMEM_ALLTOALL_ALGORITHM", "pairwise"},
        {"large", "SHMEM_BARRIER_ALGORITHM", "dissemination"},
        {"large", "SHMEM_BCAST_ALGORITHM", "tree"},
        {"large", "SHMEM_REDUCE_ALGORITHM", "rsag"},
        {"large", "SHMEM_FCOLLECT_ALGORITHM", "ring"},
        {"large", "SHMEM_COLLECT_ALGORITHM", "ring"},
        {"large", "SHMEM_ALLTOALL_ALGORITHM", "pairwise"},
        {"tiny", "SHMEM_REDUCE_ALGORITHM", "linear"},
        {"tiny", "SHMEM_COLL_SCRATCH", "1k"},
        {"tiny", "SHMEM_BARRIER_ALGORITHM", "linear"},
        {"tiny", "SHMEM_FCOLLECT_ALGORITHM", "ring"},
        {"tiny", "SHMEM_COLLECT_ALGORITHM", "linear"},
        {"fabric", "SHMEM_DIRECT", "0"},
        {"hosts", "SHMEM_COLL_HOSTS", "block:2,1,3"},
        {"hosts_cyclic", "SHMEM_COLL_HOSTS", "cyclic:3"},
        {"hosts_fabric", "SHMEM_COLL_HOSTS", "block:2,1,3"},
        {"hosts_fabric", "SHMEM_DIRECT", "0"},
        {"hosts_large", "SHMEM_COLL_HOSTS", "block:3,1,2"},
        {"hosts_large", "SHMEM_BARRIER_ALGORITHM", "node"},
        {"hosts_large", "SHMEM_BCAST_ALGORITHM", "node"},
        {"hosts_large", "SHMEM_BCAST_SEGMENT", "4k"},
        {"hosts_large", "SHMEM_REDUCE_ALGORITHM", "node"},
        {"hosts_large", "SHMEM_REDUCE_RSAG_MIN", "64"},
        {"hosts_large", "SHMEM_FCOLLECT_ALGORITHM", "node"},
        {"hosts_large", "SHMEM_COLLECT_ALGORITHM", "node"},
        {"hosts_large", "SHMEM_ALLTOALL_ALGORITHM", "node"},
        {"hosts_large", "SHMEM_COLL_NODE_RADIX", "1"},
        {"hosts_large", "SHMEM_REDUCE_NODE_LINEAR_HOSTS", "1"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(set, t[i].set) == 0)
            setenv(t[i].var, t[i].val, 0);
}

// ---- team shapes ---------------------------------------------------------
#define MAX_SHAPES 8

typedef struct {
    shmem_team_t team; // SHMEM_TEAM_INVALID where this PE is not a member
    char name[64];
    int owned;         // destroy at the end
} shape_t;

// Collective over the world: the same shapes (count, names) on every PE.
static inline int coll_make_shapes(shape_t *s)
{
    int n = shmem_n_pes(), me = shmem_my_pe(), k = 0;
    s[k].team = SHMEM_TEAM_WORLD;
    s[k].owned = 0;
    snprintf(s[k++].name, sizeof s[0].name, "world");
    // Odd PEs (or PE 0 alone in a job of one).
    int start = n > 1 ? 1 : 0, size = n > 1 ? n / 2 : 1;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &s[k].team) != 0)
        pe_fail("split_strided(%d, 2, %d) failed", start, size);
    s[k].owned = 1;
    snprintf(s[k++].name, sizeof s[0].name, "strided(%d,2,%d)", start, size);
    // Every PE, in reverse order: rank r is world PE n-1-r.
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &s[k].team) != 0)
        pe_fail("split_strided(%d, -1, %d) failed", n - 1, n);
    s[k].owned = 1;
    snprintf(s[k++].name, sizeof s[0].name, "reversed(%d,-1,%d)", n - 1, n);
    // A 2-D split of the reversed team (non-power-of-two rows when n allows).
    int xr = n >= 6 ? 3 : 2;
    shmem_team_t x, y;
    if (shmem_team_split_2d(s[k - 1].team, xr, NULL, 0, &x, NULL, 0, &y) != 0)
        pe_fail("split_2d(xrange %d) failed", xr);
    s[k].team = x;
    s[k].owned = 1;
    snprintf(s[k++].name, sizeof s[0].name, "2d-x(xrange %d)", xr);
    s[k].team = y;
    s[k].owned = 1;
    snprintf(s[k++].name, sizeof s[0].name, "2d-y(xrange %d)", xr);
    (void)me;
    return k;
}

static inline void coll_free_shapes(shape_t *s, int k)
{
    // Destroy in reverse creation order; non-members hold SHMEM_TEAM_INVALID.
    for (int i = k - 1; i >= 0; i--)
        if (s[i].owned && s[i].team != SHMEM_TEAM_INVALID)
            shmem_team_destroy(s[i].team);
}

// World PE of rank r of team t.
static inline int coll_world(shmem_team_t t, int r)
{
    return shmem_team_translate_pe(t, r, SHMEM_TEAM_WORLD);
}

// ---- reduction type tables (1.6, "Reduction Types, Names and Supporting Operations") ----
#define CT_BITWISE_TYPES(X)                                                                  \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                  \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8)                 \
    X(int16_t, int16) X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)                  \
    X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)
#define CT_SIGNED_TYPES(X)                                                                   \
    X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long)            \
    X(long long, longlong) X(ptrdiff_t, ptrdiff)
#define CT_REAL_TYPES(X) X(float, float) X(double, double) X(long double, longdouble)
#define CT_MINMAX_TYPES(X) CT_SIGNED_TYPES(X) CT_BITWISE_TYPES(X) CT_REAL_TYPES(X)
#define CT_COMPLEX_TYPES(X) X(double _Complex, complexd) X(float _Complex, complexf)
#define CT_ARITH_TYPES(X) CT_MINMAX_TYPES(X) CT_COMPLEX_TYPES(X)

// Small values whose sums and products cannot overflow any type for up to 7 PEs.
#define CT_VAL(T, r, i) ((T)(((r) * 5 + (i) * 3) % 15 + 1))
#define CT_PVAL(T, r, i) ((T)((((r) + (i)) % 3) == 0 ? 2 : 1))

#endif
