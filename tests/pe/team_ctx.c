// SPDX-License-Identifier: BSD-3-Clause
//
// Team contexts (shmem_team_create_ctx) as the spec defines them:
//   - creating one is not collective: the odd PEs make and destroy contexts
//     from SHMEM_TEAM_WORLD while the even PEs are already in a barrier; PE 0
//     makes one from SHMEM_TEAM_SHARED while the others make theirs from
//     SHMEM_TEAM_WORLD (a collective creation would hang in both);
//   - a thread-free PE may make several from one team and use them each.
#include "pe_check.h"

static long box[8];
static long counter;

int main(void)
{
    shmem_init();
    pe_begin("team_ctx");
    const int me = shmem_my_pe(), n = shmem_n_pes();

    pe_step("odd PEs make contexts from SHMEM_TEAM_WORLD, even PEs wait in a barrier");
    if (me % 2 == 1) {
        for (int i = 0; i < 3; i++) {
            shmem_ctx_t c;
            PE_EXPECT_EQ(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &c), 0,
                         "team_create_ctx(WORLD) %d on an odd PE alone", i);
            if (c != SHMEM_CTX_INVALID) {
                shmem_ctx_long_atomic_inc(c, &counter, 0);
                shmem_ctx_quiet(c);
                shmem_ctx_destroy(c);
            }
        }
    }
    shmem_barrier_all();
    if (me == 0)
        PE_EXPECT_EQ(counter, (long)(n / 2) * 3, "increments through the odd PEs' contexts");
    shmem_barrier_all();

    pe_step("PE 0 from SHMEM_TEAM_SHARED, the others from SHMEM_TEAM_WORLD");
    shmem_team_t from = me == 0 ? SHMEM_TEAM_SHARED : SHMEM_TEAM_WORLD;
    shmem_ctx_t ctx;
    PE_EXPECT_EQ(shmem_team_create_ctx(from, 0, &ctx), 0, "team_create_ctx(%s)",
                 me == 0 ? "SHARED" : "WORLD");
    shmem_team_t got = SHMEM_TEAM_INVALID;
    PE_EXPECT_EQ(shmem_ctx_get_team(ctx, &got), 0, "ctx_get_team");
    PE_EXPECT(got == from, "the context belongs to the team it was made from");
    // WORLD PE 0 as this context numbers it (SHARED holds it here: one host).
    int zero = shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, from);
    PE_EXPECT_EQ(zero, 0, "world PE 0 in the context's team");
    shmem_ctx_long_p(ctx, &box[me % 8], me + 100, zero);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    if (me == 0)
        for (int p = 0; p < n && p < 8; p++)
            PE_EXPECT_EQ(box[p], (long)p + 100, "put from PE %d through its team context", p);

    shmem_finalize();
    return pe_end();
}
