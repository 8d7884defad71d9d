// SPDX-License-Identifier: BSD-3-Clause
//
// The C11 generic names of the collectives: each must pick the typed
// function of its dest argument (checked by results that only that type
// can give, and by the type of what the call writes).
#include "coll_test.h"

// Sources of 64 elements: alltoall sends element r to rank r (up to 64 PEs).
static long ls[64], ld[64 * 8];
static double ds[8], dd[64 * 8];
static float _Complex cs[4], cd[4];
static unsigned char us[4], ud[4];
static int32_t is[4], id[4];
static long double xs[4], xd[4];
static short ss[64], sd[64 * 8];

int main(void)
{
    shmem_init();
    pe_begin("coll_generic");
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_t W = SHMEM_TEAM_WORLD;
    for (int i = 0; i < 64; i++) {
        ls[i] = me * 10 + i;
        ss[i] = (short)(me + i);
    }
    for (int i = 0; i < 8; i++)
        ds[i] = me + 0.25 * i;
    for (int i = 0; i < 4; i++) {
        cs[i] = (float)me + (float)i * I;
        us[i] = (unsigned char)(1u << ((me + i) % 8));
        is[i] = 0x7f00 | me;
        xs[i] = (long double)me / 4.0L;
    }
    shmem_barrier_all();

    pe_step("generic broadcast / fcollect / collect / alltoall(s)");
    PE_EXPECT_EQ(shmem_broadcast(W, ld, ls, 8, n - 1), 0, "shmem_broadcast returns 0");
    for (int i = 0; i < 8; i++)
        PE_EXPECT_EQ(ld[i], (long)(n - 1) * 10 + i, "generic broadcast long [%d]", i);
    shmem_barrier_all();
    shmem_fcollect(W, dd, ds, 2);
    for (int r = 0; r < n; r++)
        PE_EXPECT_EQ(dd[2 * r + 1], r + 0.25, "generic fcollect double rank %d", r);
    shmem_barrier_all();
    shmem_collect(W, sd, ss, 1);
    for (int r = 0; r < n; r++)
        PE_EXPECT_EQ(sd[r], (short)r, "generic collect short rank %d", r);
    shmem_barrier_all();
    shmem_alltoall(W, ld, ls, 1); // ls[r] to rank r
    for (int r = 0; r < n && r < 64; r++)
        PE_EXPECT_EQ(ld[r], (long)r * 10 + me, "generic alltoall long from rank %d", r);
    shmem_barrier_all();
    shmem_alltoalls(W, sd, ss, 1, 1, 1);
    for (int r = 0; r < n && r < 64; r++)
        PE_EXPECT_EQ(sd[r], (short)(r + me), "generic alltoalls short from rank %d", r);
    shmem_barrier_all();

    pe_step("generic reductions and scans");
    shmem_sum_reduce(W, dd, ds, 8);
    PE_EXPECT_EQ(dd[1], n * (n - 1) / 2.0 + 0.25 * n, "generic sum_reduce double");
    shmem_prod_reduce(W, cd, cs, 4);
    float _Complex e = 1;
    for (int r = 0; r < n; r++)
        e *= (float)r + 1.0f * I;
    // The product of n complex floats: the order of the multiplications (the
    // reduction tree) may round differently from this loop at larger n.
    float _Complex dz = cd[1] - e;
    float d2 = crealf(dz) * crealf(dz) + cimagf(dz) * cimagf(dz);
    float e2 = crealf(e) * crealf(e) + cimagf(e) * cimagf(e);
    PE_EXPECT(d2 <= 1e-10f * e2, "generic prod_reduce complexf");
    shmem_or_reduce(W, ud, us, 4);
    unsigned char eo = 0;
    for (int r = 0; r < n; r++)
        eo |= (unsigned char)(1u << (r % 8));
    PE_EXPECT_EQ(ud[0], eo, "generic or_reduce uchar");
    shmem_and_reduce(W, id, is, 4);
    PE_EXPECT_EQ(id[0], (int32_t)0x7f00, "generic and_reduce int32");
    shmem_xor_reduce(W, id, is, 4);
    int32_t ex = 0;
    for (int r = 0; r < n; r++)
        ex ^= 0x7f00 | r;
    PE_EXPECT_EQ(id[2], ex, "generic xor_reduce int32");
    shmem_max_reduce(W, xd, xs, 4);
    PE_EXPECT_EQ(xd[3], (long double)(n - 1) / 4.0L, "generic max_reduce long double");
    shmem_min_reduce(W, ld, ls, 8);
    PE_EXPECT_EQ(ld[7], 7L, "generic min_reduce long");
    shmem_barrier_all();
    shmem_sum_inscan(W, ld, ls, 2);
    PE_EXPECT_EQ(ld[0], 10L * me * (me + 1) / 2, "generic sum_inscan long");
    shmem_barrier_all();
    shmem_sum_exscan(W, dd, ds, 1);
    PE_EXPECT_EQ(dd[0], me * (me - 1) / 2.0, "generic sum_exscan double");
    shmem_finalize();
    return pe_end();
}
