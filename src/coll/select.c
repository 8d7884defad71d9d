// SPDX-License-Identifier: BSD-3-Clause
/*
 * Algorithm names and thresholds from the env table, parsed once.
 *
 * Default crossovers (env.def), measured with bench/osu/osu_coll_lat on a
 * 2-core VM, shm provider, minimum over 6-8 alternating runs:
 *  - flat algorithms up to 8 PEs: at 2-4 PEs they tie with or beat the
 *    logarithmic ones (fcollect 8 B at 4 PEs: linear 52 us, ring 70, bruck
 *    103), and at 7 PEs (oversubscribed) they win clearly, since every extra
 *    step waits for more PEs to be scheduled (barrier: linear 68 us,
 *    dissemination 244; reduce 8 B: linear 150, rd 263);
 *  - reductions switch to rsag at 64 KiB: rd/rsag 26/33 us at 32 KiB and
 *    66/30 at 64 KiB with 2 PEs, 191/198 and 402/217 with 4 PEs;
 *  - alltoall stayed linear up to 2 MiB blocks at 4 PEs (2.5 ms vs 2.7 ms
 *    pairwise), so pairwise is kept for teams above 8 PEs.
 */
#include <string.h>

#include "coll/coll.h"

shm_coll_config_t shm_coll_cfg_g;

/* Index of `val` in the NULL-terminated names, or the end of the job naming the variable. */
static int pick(const char *var, const char *val, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(val, names[i]) == 0)
            return i;
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        strncat(list, i ? "|" : "", sizeof(list) - strlen(list) - 1);
        strncat(list, names[i], sizeof(list) - strlen(list) - 1);
    }
    shm_fatal("SHMEM_%s='%s' is not valid: expected %s", var, val, list);
}

static long positive(const char *var, long v)
{
    if (v < 0)
        shm_fatal("SHMEM_%s=%ld is not valid: expected a count >= 0", var, v);
    return v;
}

void shm_coll_configure(void)
{
    static const char *const barrier[] = {"auto", "linear", "dissemination", NULL};
    static const char *const bcast[] = {"auto", "linear", "tree", NULL};
    static const char *const reduce[] = {"auto", "linear", "rd", "rsag", NULL};
    static const char *const gather[] = {"auto", "linear", "ring", "bruck", NULL};
    static const char *const a2a[] = {"auto", "linear", "pairwise", NULL};
    shm_coll_config_t *c = &shm_coll_cfg_g;
    const shm_env_t *e = &shm_env_g;

    c->barrier = pick("BARRIER_ALGORITHM", e->BARRIER_ALGORITHM, barrier);
    c->bcast = pick("BCAST_ALGORITHM", e->BCAST_ALGORITHM, bcast);
    c->reduce = pick("REDUCE_ALGORITHM", e->REDUCE_ALGORITHM, reduce);
    c->fcollect = pick("FCOLLECT_ALGORITHM", e->FCOLLECT_ALGORITHM, gather);
    c->collect = pick("COLLECT_ALGORITHM", e->COLLECT_ALGORITHM, gather);
    c->alltoall = pick("ALLTOALL_ALGORITHM", e->ALLTOALL_ALGORITHM, a2a);
    c->barrier_linear_npes = positive("BARRIER_LINEAR_NPES", e->BARRIER_LINEAR_NPES);
    c->bcast_linear_npes = positive("BCAST_LINEAR_NPES", e->BCAST_LINEAR_NPES);
    c->bcast_segment = e->BCAST_SEGMENT ? e->BCAST_SEGMENT : 1;
    c->reduce_linear_npes = positive("REDUCE_LINEAR_NPES", e->REDUCE_LINEAR_NPES);
    c->reduce_linear_max = e->REDUCE_LINEAR_MAX;
    c->reduce_rsag_min = e->REDUCE_RSAG_MIN;
    c->fcollect_linear_npes = positive("FCOLLECT_LINEAR_NPES", e->FCOLLECT_LINEAR_NPES);
    c->fcollect_ring_min = e->FCOLLECT_RING_MIN;
    c->alltoall_linear_npes = positive("ALLTOALL_LINEAR_NPES", e->ALLTOALL_LINEAR_NPES);
    c->alltoall_pairwise_min = e->ALLTOALL_PAIRWISE_MIN;
}
