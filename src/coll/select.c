// SPDX-License-Identifier: BSD-3-Clause
/*
 * Algorithm names and thresholds from the env table, parsed once.
 *
 * Default crossovers (env.def) come from bench/osu/osu_coll_lat on a 2-core
 * VM (shm provider, same-host direct path, 7 PEs oversubscribed), minimum
 * over 4-8 alternating runs, in microseconds:
 *  - barrier: dissemination takes ceil(log2 n) steps, linear 2: at 2-4 PEs
 *    dissemination wins or ties (2 PEs 0.3 vs 0.6, 3 PEs 21.8 vs 25.6,
 *    4 PEs 12.7 vs 14.2), at 7 linear wins (34 vs 63);
 *  - broadcast: linear up to 8 PEs (8 B at 7 PEs: 0.1 vs tree 2.2; 512 KiB
 *    at 7 PEs: 8.6 vs 30), the tree from 1 MiB above 4 PEs (7 PEs: 77 vs
 *    104 at 1 MiB, 216 vs 284 at 2 MiB; at 4 PEs linear still wins);
 *  - reduce: linear up to 8 PEs and 4 KiB (7 PEs, 8 B: 26 vs rd 47), rsag
 *    from 16 KiB (16 KiB: 4 PEs rsag 20.5 vs rd 29.3, 7 PEs 67 vs 124; at
 *    4 KiB linear 11 vs rsag 21 at 4 PEs);
 *  - fcollect, alltoall: linear beat bruck/ring and pairwise at every size
 *    measured up to 8 PEs (fcollect 1 MiB at 7 PEs: 719 vs 1179;
 *    alltoall 1 MiB at 7 PEs: 911 vs 1128).
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
    c->bcast_tree_min = e->BCAST_TREE_MIN;
    c->bcast_segment = e->BCAST_SEGMENT ? e->BCAST_SEGMENT : 1;
    c->reduce_linear_npes = positive("REDUCE_LINEAR_NPES", e->REDUCE_LINEAR_NPES);
    c->reduce_linear_max = e->REDUCE_LINEAR_MAX;
    c->reduce_rsag_min = e->REDUCE_RSAG_MIN;
    c->fcollect_linear_npes = positive("FCOLLECT_LINEAR_NPES", e->FCOLLECT_LINEAR_NPES);
    c->fcollect_ring_min = e->FCOLLECT_RING_MIN;
    c->alltoall_linear_npes = positive("ALLTOALL_LINEAR_NPES", e->ALLTOALL_LINEAR_NPES);
    c->alltoall_pairwise_min = e->ALLTOALL_PAIRWISE_MIN;
}
