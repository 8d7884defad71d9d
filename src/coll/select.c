// SPDX-License-Identifier: BSD-3-Clause
/*
 * Algorithm names and thresholds from the env table, parsed once.
 *
 * Default crossovers (env.def) come from `bench/run_coll.sh BUILD sweep`
 * (bench/osu/osu_coll_lat, every algorithm forced by name in turn) on a
 * 2-core VM, shm provider, same-host direct path, median of 3 interleaved
 * runs, load ~2-5; microseconds at 2 / 4 / 7 PEs (7 oversubscribed):
 *  - barrier: dissemination takes ceil(log2 n) steps, linear 2: dissemination
 *    up to 4 PEs (0.11 vs 0.16, 11.3 vs 11.9), linear above (7: 35 vs 64);
 *  - broadcast: linear up to 8 PEs below 1 MiB (64 KiB: 1.3/7.7/3.4 vs tree
 *    1.5/8.1/10.5), the segmented tree from 1 MiB at every size (46/79/119
 *    vs tree 36/63/86);
 *  - reduce: linear up to 8 PEs and 4 KiB (8 B at 4 PEs: 10.0 vs rd 14.4 vs
 *    rsag 22.3; 7 PEs 27.8 vs 50.7 vs 74.9), rsag from 16 KiB (4 PEs 24.2
 *    vs 27.5 linear; 7 PEs 63.8 vs rd 123; 1 MiB at 4 PEs 123 vs 1806);
 *  - fcollect, collect, alltoall: linear beat bruck/ring and pairwise at
 *    every size up to 8 PEs (fcollect 1 MiB at 7 PEs: 742 vs bruck 1085,
 *    ring 1534; alltoall 1 MiB at 7 PEs: 931 vs pairwise 1862), so the
 *    logarithmic ones take over only above 8 PEs.
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
    static const char *const barrier[] = {"auto", "linear", "dissemination", "node", NULL};
    static const char *const bcast[] = {"auto", "linear", "tree", "node", NULL};
    static const char *const reduce[] = {"auto", "linear", "rd", "rsag", "node", NULL};
    static const char *const gather[] = {"auto", "linear", "ring", "bruck", "node", NULL};
    static const char *const a2a[] = {"auto", "linear", "pairwise", "node", NULL};
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
    c->reduce_node_linear_hosts = positive("REDUCE_NODE_LINEAR_HOSTS", e->REDUCE_NODE_LINEAR_HOSTS);
    c->fcollect_linear_npes = positive("FCOLLECT_LINEAR_NPES", e->FCOLLECT_LINEAR_NPES);
    c->fcollect_ring_min = e->FCOLLECT_RING_MIN;
    c->alltoall_linear_npes = positive("ALLTOALL_LINEAR_NPES", e->ALLTOALL_LINEAR_NPES);
    c->alltoall_pairwise_min = e->ALLTOALL_PAIRWISE_MIN;
    c->alltoall_node_max = e->ALLTOALL_NODE_MAX;
    c->node_aware = e->COLL_NODE_AWARE;
    long radix = positive("COLL_NODE_RADIX", e->COLL_NODE_RADIX);
    if (radix == 0)
        radix = e->DIRECT ? 1 << 30 : 2; /* flags are stores on one host; else a binary tree */
    c->node_radix = radix < 1 << 30 ? (int)radix : 1 << 30;
    if (e->COLL_LOSE_FLAG < 0)
        shm_fatal("SHMEM_COLL_LOSE_FLAG=%ld: expected 0 (off) or N > 0 (every Nth flag)",
                  (long)e->COLL_LOSE_FLAG);
    c->lose_flag = e->COLL_LOSE_FLAG;
}
