// SPDX-License-Identifier: BSD-3-Clause
//
// Every collective with a count of zero is still a valid collective call
// (every PE of the team or active set makes it) and has no effect, whatever
// its pointers: NULL, a garbage address mapped nowhere, or a symmetric
// object whose canary must survive. Team forms (typed, mem and C11 generic
// broadcast, collect, fcollect, alltoall, alltoalls, every reduction and
// scan) on SHMEM_TEAM_WORLD and on a team of the even PEs; the deprecated
// active-set forms (broadcast32/64, collect, fcollect, alltoall(s), every
// *_to_all) on all PEs and on the even PEs (logPE_stride 1), with static
// pSync/pWrk. Then: a collect where the odd ranks contribute nothing (NULL
// source), and real collectives afterwards must still work (a skipped
// zero-count call must not leave the team's flags out of step).
// Run also with SHMEM_DEBUG=1 (argument agreement checks on).
#include "coll_test.h"

#define GARBAGE ((void *)(uintptr_t)0x10) // in the never-mapped first page

static long canary[64];
static const long CANARY = 0x5a5a5a5a5a5a5a5aL;
static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pSync2[SHMEM_COLLECT_SYNC_SIZE];
static long double pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static long src8[64], dst8[64 * 8];

// Active-set reduction tables (1.6 "Reduction Types, Names and Supporting
// Operations for Active-Set-Based Reductions"), from the spec.
#define AS_BITWISE_TYPES(X) X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define AS_MINMAX_TYPES(X)                                                                   \
    AS_BITWISE_TYPES(X) X(float, float) X(double, double) X(long double, longdouble)
#define AS_ARITH_TYPES(X) AS_MINMAX_TYPES(X) CT_COMPLEX_TYPES(X)

static long fails_rc; // team calls that did not return 0

#define RC(call)                                                                             \
    do {                                                                                     \
        int rc_ = (call);                                                                    \
        if (rc_ != 0 && fails_rc++ < 5)                                                      \
            pe_fail("%s returned %d, not 0", #call, rc_);                                    \
    } while (0)

// ---- team forms ----------------------------------------------------------
#define ZERO_TEAM_RMA(T, N)                                                                  \
    static void zero_team_##N(shmem_team_t t, void *vp)                                      \
    {                                                                                        \
        T *p = vp;                                                                           \
        RC(shmem_##N##_broadcast(t, p, p, 0, 0));                                            \
        RC(shmem_##N##_collect(t, p, p, 0));                                                 \
        RC(shmem_##N##_fcollect(t, p, p, 0));                                                \
        RC(shmem_##N##_alltoall(t, p, p, 0));                                                \
        RC(shmem_##N##_alltoalls(t, p, p, 1, 1, 0));                                         \
        RC(shmem_##N##_alltoalls(t, p, p, 3, 2, 0));                                         \
    }
PE_RMA_TYPES(ZERO_TEAM_RMA)
#define CALL_TEAM_RMA(T, N) zero_team_##N(t, p);

#define ZERO_REDUCE(T, N, OP) RC(shmem_##N##_##OP##_reduce(t, (T *)p, (T *)p, 0));
#define ZERO_BITWISE(T, N) ZERO_REDUCE(T, N, and) ZERO_REDUCE(T, N, or) ZERO_REDUCE(T, N, xor)
#define ZERO_MINMAX(T, N) ZERO_REDUCE(T, N, max) ZERO_REDUCE(T, N, min)
#define ZERO_ARITH(T, N)                                                                     \
    ZERO_REDUCE(T, N, sum) ZERO_REDUCE(T, N, prod)                                           \
    RC(shmem_##N##_sum_inscan(t, (T *)p, (T *)p, 0));                                        \
    RC(shmem_##N##_sum_exscan(t, (T *)p, (T *)p, 0));

static void zero_team(shmem_team_t t, void *p)
{
    PE_RMA_TYPES(CALL_TEAM_RMA)
    RC(shmem_broadcastmem(t, p, p, 0, 0));
    RC(shmem_collectmem(t, p, p, 0));
    RC(shmem_fcollectmem(t, p, p, 0));
    RC(shmem_alltoallmem(t, p, p, 0));
    RC(shmem_alltoallsmem(t, p, p, 1, 1, 0));
    CT_BITWISE_TYPES(ZERO_BITWISE)
    CT_MINMAX_TYPES(ZERO_MINMAX)
    CT_ARITH_TYPES(ZERO_ARITH)
    // C11 generic names.
    long *lp = p;
    double *dp = p;
    unsigned char *up = p;
    RC(shmem_broadcast(t, lp, lp, 0, 0));
    RC(shmem_collect(t, dp, dp, 0));
    RC(shmem_fcollect(t, up, up, 0));
    RC(shmem_alltoall(t, lp, lp, 0));
    RC(shmem_alltoalls(t, dp, dp, 2, 2, 0));
    RC(shmem_and_reduce(t, up, up, 0));
    unsigned long *ulp = p;
    RC(shmem_or_reduce(t, ulp, ulp, 0));
    RC(shmem_xor_reduce(t, up, up, 0));
    RC(shmem_max_reduce(t, dp, dp, 0));
    RC(shmem_min_reduce(t, lp, lp, 0));
    RC(shmem_sum_reduce(t, dp, dp, 0));
    RC(shmem_prod_reduce(t, lp, lp, 0));
    RC(shmem_sum_inscan(t, lp, lp, 0));
    RC(shmem_sum_exscan(t, dp, dp, 0));
}

// ---- active-set forms ----------------------------------------------------
#define ZERO_TOALL(T, N, OP)                                                                 \
    shmem_##N##_##OP##_to_all((T *)p, (T *)p, 0, start, logs, size, (T *)pWrk, pSync);
#define ZERO_AS_BITWISE(T, N) ZERO_TOALL(T, N, and) ZERO_TOALL(T, N, or) ZERO_TOALL(T, N, xor)
#define ZERO_AS_MINMAX(T, N) ZERO_TOALL(T, N, max) ZERO_TOALL(T, N, min)
#define ZERO_AS_ARITH(T, N) ZERO_TOALL(T, N, sum) ZERO_TOALL(T, N, prod)

static void zero_active_set(int start, int logs, int size, void *p)
{
    shmem_broadcast32(p, p, 0, 0, start, logs, size, pSync);
    shmem_broadcast64(p, p, 0, size - 1, start, logs, size, pSync2);
    shmem_collect32(p, p, 0, start, logs, size, pSync);
    shmem_collect64(p, p, 0, start, logs, size, pSync2);
    shmem_fcollect32(p, p, 0, start, logs, size, pSync);
    shmem_fcollect64(p, p, 0, start, logs, size, pSync2);
    shmem_alltoall32(p, p, 0, start, logs, size, pSync);
    shmem_alltoall64(p, p, 0, start, logs, size, pSync2);
    shmem_alltoalls32(p, p, 1, 1, 0, start, logs, size, pSync);
    shmem_alltoalls64(p, p, 2, 3, 0, start, logs, size, pSync2);
    AS_BITWISE_TYPES(ZERO_AS_BITWISE)
    AS_MINMAX_TYPES(ZERO_AS_MINMAX)
    AS_ARITH_TYPES(ZERO_AS_ARITH)
}

static void check_canary(const char *after)
{
    for (int i = 0; i < 64; i++)
        if (canary[i] != CANARY) {
            pe_fail("canary[%d] = %#lx after %s", i, (unsigned long)canary[i], after);
            return;
        }
    pe_checks_g++;
}

// A real broadcast + fcollect on team t (rank r holds world PE w): the flags must be in step.
static void real_after(shmem_team_t t, const char *what)
{
    int r = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
    if (r < 0)
        return;
    int root = tn - 1;
    src8[0] = 1000 + r;
    RC(shmem_long_broadcast(t, dst8, src8, 1, root));
    PE_EXPECT_EQ(dst8[0], 1000L + root, "%s: broadcast from rank %d after zero-count calls",
                 what, root);
    // Into another buffer: a fast PE's fcollect may land before this PE read the broadcast.
    RC(shmem_long_fcollect(t, dst8 + 64, src8, 1));
    for (int k = 0; k < tn && k < 64; k++)
        PE_EXPECT_EQ(dst8[64 + k], 1000L + k, "%s: fcollect block of rank %d after zero-count calls",
                     what, k);
    shmem_team_sync(t);
}

int main(int argc, char **argv)
{
    coll_set_algorithms(argc > 1 ? argv[1] : "auto");
    shmem_init();
    pe_begin("zero_coll");
    const int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < 64; i++)
        canary[i] = CANARY;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        pSync2[i] = SHMEM_SYNC_VALUE;
    shmem_team_t even = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &even);
    shmem_barrier_all();

    void *const ptrs[] = {NULL, GARBAGE, canary};
    const char *const names[] = {"NULL", "garbage 0x10", "a symmetric object"};
    for (int k = 0; k < 3; k++) {
        pe_step("zero-count team collectives on the world team, pointers %s", names[k]);
        zero_team(SHMEM_TEAM_WORLD, ptrs[k]);
        if (even != SHMEM_TEAM_INVALID) {
            pe_step("zero-count team collectives on the even PEs, pointers %s", names[k]);
            zero_team(even, ptrs[k]);
        }
        pe_step("zero-count active-set collectives on all PEs, pointers %s", names[k]);
        zero_active_set(0, 0, n, ptrs[k]);
        if (me % 2 == 0) {
            pe_step("zero-count active-set collectives on the even PEs, pointers %s", names[k]);
            zero_active_set(0, 1, (n + 1) / 2, ptrs[k]);
        }
        pe_step("barrier after the zero-count collectives, pointers %s", names[k]);
        shmem_barrier_all();
        check_canary(names[k]);
    }
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        PE_EXPECT_EQ(pSync[i], SHMEM_SYNC_VALUE, "pSync[%d] after zero-count collectives", i);

    // collect with some empty contributions: odd ranks pass 0 and NULL.
    pe_step("collect where the odd PEs contribute nothing");
    int mine = me % 2 ? 0 : 2, total = 0;
    src8[0] = 100 + me;
    src8[1] = 200 + me;
    RC(shmem_long_collect(SHMEM_TEAM_WORLD, dst8, mine ? src8 : NULL, (size_t)mine));
    for (int r = 0; r < n; r += 2, total += 2) {
        PE_EXPECT_EQ(dst8[total], 100L + r, "collect: first element from PE %d", r);
        PE_EXPECT_EQ(dst8[total + 1], 200L + r, "collect: second element from PE %d", r);
    }
    shmem_barrier_all();
    pe_step("collect64 on the active set of all PEs where the odd PEs contribute nothing");
    shmem_collect64(dst8, mine ? src8 : NULL, (size_t)mine, 0, 0, n, pSync);
    for (int r = 0, at = 0; r < n; r += 2, at += 2)
        PE_EXPECT_EQ(dst8[at + 1], 200L + r, "collect64: second element from PE %d", r);
    shmem_barrier_all();

    pe_step("real collectives after the zero-count ones");
    real_after(SHMEM_TEAM_WORLD, "world");
    if (even != SHMEM_TEAM_INVALID)
        real_after(even, "even PEs");
    PE_EXPECT_EQ(fails_rc, 0L, "team collectives that did not return 0");
    if (even != SHMEM_TEAM_INVALID)
        shmem_team_destroy(even);
    shmem_finalize();
    return pe_end();
}
