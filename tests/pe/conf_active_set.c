// SPDX-License-Identifier: BSD-3-Clause
//
// Conformance sweep, written the way SHMEM 1.x programs are: the legacy
// active-set collectives with static pSync / pWrk arrays in .bss,
// initialized once to SHMEM_SYNC_VALUE and alternated between consecutive
// calls, over subsets of PEs given as (PE_start, logPE_stride, PE_size):
// all PEs, the even PEs, the odd PEs, the upper half. shmem_barrier,
// shmem_broadcast64 (root relative to the active set; the root's target is
// left alone), shmem_fcollect64, shmem_collect32 (each PE a different
// count), shmem_alltoall64, shmem_long_sum_to_all, shmem_int_max_to_all,
// shmem_double_sum_to_all (in place too). Non-members go straight on.
#include "pe_check.h"

#define NR 1000 // reduction length
#define WRK (NR / 2 + 1 > SHMEM_REDUCE_MIN_WRKDATA_SIZE ? NR / 2 + 1 : SHMEM_REDUCE_MIN_WRKDATA_SIZE)

long pSyncA[SHMEM_REDUCE_SYNC_SIZE];
long pSyncB[SHMEM_REDUCE_SYNC_SIZE];
long pWrkL[WRK];
int pWrkI[WRK];
double pWrkD[WRK];

long lsrc[NR], ldst[NR];
int isrc[NR], idst[NR];
double ddst[NR];
int64_t bsrc[4], asrc[64], bdst[4], fdst[64 * 2], adst[64]; // one buffer per collective
int32_t csrc[64], cdst[64 * 65];
long flag_slot[64];

static int me, npes;

typedef struct {
    int start, logs, size;
    const char *name;
} aset_t;

static int rank_in(const aset_t *a, int pe)
{
    int d = pe - a->start, s = 1 << a->logs;
    return d >= 0 && d % s == 0 && d / s < a->size ? d / s : -1;
}

static void run_set(const aset_t *a, int round)
{
    int r = rank_in(a, me), st = 1 << a->logs;
    if (r < 0)
        return;
    int root = (round + 1) % a->size;
    int rootpe = a->start + root * st;

    // Sources and targets are ready on every member before anyone calls a
    // collective on them: set them before the barrier that starts the round.
    for (int i = 0; i < 4; i++) {
        bsrc[i] = (int64_t)me * 100 + i + round;
        bdst[i] = -1;
    }
    for (int i = 0; i < NR; i++) {
        lsrc[i] = me + 1 + i;
        isrc[i] = me * (i % 2 ? 1 : -1);
        ddst[i] = 0.5 * me + i; // reduced in place
    }
    for (int k = 0; k < a->size; k++)
        asrc[k] = (int64_t)me * 64 + k;

    // shmem_barrier: my puts to every member are visible after it.
    pe_step("%s: shmem_barrier", a->name);
    for (int k = 0; k < a->size; k++)
        shmem_long_p(&flag_slot[me], 1000 * round + me, a->start + k * st);
    shmem_barrier(a->start, a->logs, a->size, pSyncA);
    for (int k = 0; k < a->size; k++) {
        int pe = a->start + k * st;
        PE_EXPECT_EQ(flag_slot[pe], 1000L * round + pe, "%s: slot of PE %d after shmem_barrier",
                     a->name, pe);
    }

    pe_step("%s: shmem_broadcast64 from active-set rank %d", a->name, root);
    shmem_broadcast64(bdst, bsrc, 4, root, a->start, a->logs, a->size, pSyncB);
    for (int i = 0; i < 4; i++)
        PE_EXPECT_EQ(bdst[i], me == rootpe ? (int64_t)-1 : (int64_t)rootpe * 100 + i + round,
                     "%s: broadcast64 [%d] (root PE %d)", a->name, i, rootpe);

    pe_step("%s: shmem_fcollect64", a->name);
    shmem_fcollect64(fdst, bsrc, 2, a->start, a->logs, a->size, pSyncA);
    for (int k = 0; k < a->size; k++) {
        int pe = a->start + k * st;
        PE_EXPECT_EQ(fdst[2 * k + 1], (int64_t)pe * 100 + 1 + round,
                     "%s: fcollect64 block of rank %d", a->name, k);
    }

    pe_step("%s: shmem_collect32", a->name);
    for (int i = 0; i <= r; i++)
        csrc[i] = me * 1000 + i;
    shmem_collect32(cdst, csrc, (size_t)r + 1, a->start, a->logs, a->size, pSyncB);
    for (int k = 0, at = 0; k < a->size; at += ++k) {
        int pe = a->start + k * st;
        PE_EXPECT_EQ(cdst[at + k], pe * 1000 + k, "%s: collect32 last element of rank %d",
                     a->name, k);
    }

    pe_step("%s: shmem_alltoall64", a->name);
    for (int k = 0; k < a->size; k++)
    shmem_alltoall64(adst, asrc, 1, a->start, a->logs, a->size, pSyncA);
    for (int k = 0; k < a->size; k++)
        PE_EXPECT_EQ(adst[k], (int64_t)(a->start + k * st) * 64 + r, "%s: alltoall64 from rank %d",
                     a->name, k);

    pe_step("%s: shmem_long_sum_to_all, shmem_int_max_to_all, shmem_double_sum_to_all",
            a->name);
    long lsum = 0;
    int imax = 0;
    for (int k = 0; k < a->size; k++) {
        int pe = a->start + k * st;
        lsum += pe + 1;
        imax = pe > imax ? pe : imax;
    }
    shmem_long_sum_to_all(ldst, lsrc, NR, a->start, a->logs, a->size, pWrkL, pSyncB);
    shmem_int_max_to_all(idst, isrc, NR, a->start, a->logs, a->size, pWrkI, pSyncA);
    shmem_double_sum_to_all(ddst, ddst, NR, a->start, a->logs, a->size, pWrkD, pSyncB);
    long bad = 0;
    for (int i = 0; i < NR; i++) {
        double dsum = 0;
        for (int k = 0; k < a->size; k++)
            dsum += 0.5 * (a->start + k * st) + i;
        int imax_i = i % 2 ? imax : -a->start;
        if (ldst[i] != lsum + (long)i * a->size || idst[i] != imax_i || ddst[i] != dsum) {
            if (!bad)
                pe_fail("%s: to_all [%d]: long %ld (want %ld) int %d (want %d) double %g "
                        "(want %g)",
                        a->name, i, ldst[i], lsum + (long)i * a->size, idst[i], imax_i, ddst[i],
                        dsum);
            bad++;
        }
    }
    pe_checks_g++;
}

int main(void)
{
    shmem_init();
    pe_begin("conf_active_set");
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes > 64) {
        pe_fail("at most 64 PEs");
        shmem_finalize();
        return pe_end();
    }
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        pSyncA[i] = pSyncB[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all(); // pSync initialized everywhere before first use

    aset_t sets[4];
    int ns = 0;
    sets[ns++] = (aset_t){0, 0, npes, "all PEs"};
    sets[ns++] = (aset_t){0, 1, (npes + 1) / 2, "even PEs"};
    if (npes > 1)
        sets[ns++] = (aset_t){1, 1, npes / 2, "odd PEs"};
    if (npes > 2)
        sets[ns++] = (aset_t){npes / 2, 0, npes - npes / 2, "upper half"};
    for (int round = 0; round < 3; round++)
        for (int s = 0; s < ns; s++) {
            run_set(&sets[s], round);
            pe_step("barrier_all after %s round %d", sets[s].name, round);
            shmem_barrier_all(); // sets overlap: the next one may reuse the buffers
        }
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        PE_EXPECT_EQ(pSyncA[i] + pSyncB[i], 2 * SHMEM_SYNC_VALUE,
                     "pSync[%d] back to SHMEM_SYNC_VALUE", i);
    shmem_finalize();
    return pe_end();
}
