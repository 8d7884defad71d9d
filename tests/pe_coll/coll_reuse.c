// SPDX-License-Identifier: BSD-3-Clause
//
// Back-to-back collectives that reuse the SAME source and dest buffers, as
// OSU-style loops and iterative solvers do:
//     for (...) { shmem_broadcastmem(team, dst, src, n, root); use(dst); }
// with no barrier in between. The spec lets a PE "immediately call another
// collective on that same team without any other intervening
// synchronization" (collectives intro), and dest must hold this call's
// result when the call returns; so a fast PE must never write the next
// call's data into a slow peer's dest before that peer is done with it.
//
// Every iteration changes every value (a function of iteration, rank and
// index) and checks dest right after each call: broadcast (rotating root),
// fcollect, collect (ragged), alltoall, alltoalls, sum and max reductions,
// sum inscan; at three sizes (1, 37 and 900 longs: linear, tree/segmented
// and large-message algorithms under "auto"). Some iterations hold back one
// PE (a rotating one) so that the others race ahead into the next call.
// Teams: world and two splits (coll_test.h). Then the same for the
// deprecated active-set forms on all PEs, alternating two static pSync
// arrays as the spec asks.
// argv[1] picks the algorithm set (coll_test.h), argv[2] the iterations,
// argv[3] "teams" or "asets" runs only that part.
#include "coll_test.h"

#define NSIZES 3
static const size_t sizes[NSIZES] = {1, 37, 900};
#define MAXNEL 900

static long *src, *dst; // symmetric, shared by every call
static long iters = 40;
// Big enough for any of the active-set collectives used here.
#define PSYNC_SIZE                                                                           \
    (SHMEM_REDUCE_SYNC_SIZE + SHMEM_BCAST_SYNC_SIZE + SHMEM_COLLECT_SYNC_SIZE +             \
     SHMEM_ALLTOALL_SYNC_SIZE)
static long psync[2][PSYNC_SIZE];
static long pwrk[MAXNEL / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];

// Value j of rank r's contribution to call `tag` (iteration * 8 + call):
// distinct for every call, rank and index.
static long val(long tag, int r, size_t j)
{
    return tag * 1000003L + (long)r * 7919L + (long)j + 1;
}

// Elements rank r brings to collect in iteration it (0 .. nel).
static size_t ragged(long it, int r, size_t nel)
{
    return (size_t)((it + r) % 3) * nel / 2;
}

// One PE of the team (rotating) is late on some calls: the others run ahead.
static void maybe_delay(long it, int call, int me, int n)
{
    if ((it + call) % 3 == 0 && me == (int)((it + call) / 3 % n))
        pe_usleep(200 + 100 * (it % 4));
}

// tag = iteration * 8 + call: every call of every iteration has its own values.
static void check_range(const long *got, size_t cnt, long tag, int r, size_t j0,
                        const char *name, const char *what)
{
    for (size_t j = 0; j < cnt; j++)
        if (got[j] != val(tag, r, j0 + j)) {
            pe_fail("%s: %s iteration %ld: element %zu (rank %d's %zu) = %ld, expected %ld%s",
                    name, what, tag / 8, j, r, j0 + j, got[j], val(tag, r, j0 + j),
                    got[j] > val(tag, r, j0 + j) ? " (a later call's value)" : "");
            return;
        }
    pe_checks_g++;
}

static void expect(long got, long want, long it, size_t j, const char *name, const char *what)
{
    PE_EXPECT(got == want, "%s: %s iteration %ld: element %zu = %ld, expected %ld%s", name, what,
              it, j, got, want, got > want ? " (a later call's value?)" : "");
}

static void run_team(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    for (int s = 0; s < NSIZES; s++) {
        size_t nel = sizes[s];
        for (long it = 1; it <= iters; it++) {
            pe_step("%s: nel %zu iteration %ld", name, nel, it);
            int call = 0;

            // broadcast: root rotates; every PE's dest (the root's too) gets it.
            int root = (int)(it % n);
            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_broadcast(t, dst, src, nel, root) != 0)
                pe_fail("%s: broadcast returned nonzero", name);
            check_range(dst, nel, it * 8, root, 0, name, "broadcast");

            // fcollect
            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8 + 1, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_fcollect(t, dst, src, nel) != 0)
                pe_fail("%s: fcollect returned nonzero", name);
            for (int r = 0; r < n; r++)
                check_range(dst + (size_t)r * nel, nel, it * 8 + 1, r, 0, name, "fcollect");

            // collect: ragged blocks, concatenated in rank order
            size_t mine = ragged(it, me, nel);
            for (size_t j = 0; j < mine; j++)
                src[j] = val(it * 8 + 2, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_collect(t, dst, src, mine) != 0)
                pe_fail("%s: collect returned nonzero", name);
            size_t at = 0;
            for (int r = 0; r < n; r++) {
                size_t c = ragged(it, r, nel);
                check_range(dst + at, c, it * 8 + 2, r, 0, name, "collect");
                at += c;
            }

            // alltoall: my block for rank r is my values r*nel ..
            for (size_t j = 0; j < (size_t)n * nel; j++)
                src[j] = val(it * 8 + 3, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_alltoall(t, dst, src, nel) != 0)
                pe_fail("%s: alltoall returned nonzero", name);
            for (int r = 0; r < n; r++)
                check_range(dst + (size_t)r * nel, nel, it * 8 + 3, r, (size_t)me * nel, name,
                            "alltoall");

            // alltoalls: dest stride 2, source stride 1 (the buffers hold 2 n nel)
            size_t ns = nel < 64 ? nel : 64;
            for (size_t j = 0; j < (size_t)n * ns; j++)
                src[j] = val(it * 8 + 4, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_alltoalls(t, dst, src, 2, 1, ns) != 0)
                pe_fail("%s: alltoalls returned nonzero", name);
            for (int r = 0; r < n; r++)
                for (size_t j = 0; j < ns; j++)
                    expect(dst[((size_t)r * ns + j) * 2],
                           val(it * 8 + 4, r, (size_t)me * ns + j), it, j, name, "alltoalls");

            // sum, max, inscan
            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8 + 5, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_sum_reduce(t, dst, src, nel) != 0)
                pe_fail("%s: sum_reduce returned nonzero", name);
            for (size_t j = 0; j < nel; j++) {
                long want = 0;
                for (int r = 0; r < n; r++)
                    want += val(it * 8 + 5, r, j);
                expect(dst[j], want, it, j, name, "sum_reduce");
            }
            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8 + 6, me, j) * (me % 2 ? -1 : 1);
            maybe_delay(it, call++, me, n);
            if (shmem_long_max_reduce(t, dst, src, nel) != 0)
                pe_fail("%s: max_reduce returned nonzero", name);
            for (size_t j = 0; j < nel; j++) {
                long want = val(it * 8 + 6, 0, j);
                for (int r = 0; r < n; r++) {
                    long v = val(it * 8 + 6, r, j) * (r % 2 ? -1 : 1);
                    want = v > want ? v : want;
                }
                expect(dst[j], want, it, j, name, "max_reduce");
            }
            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8 + 7, me, j);
            maybe_delay(it, call++, me, n);
            if (shmem_long_sum_inscan(t, dst, src, nel) != 0)
                pe_fail("%s: sum_inscan returned nonzero", name);
            for (size_t j = 0; j < nel; j++) {
                long want = 0;
                for (int r = 0; r <= me; r++)
                    want += val(it * 8 + 7, r, j);
                expect(dst[j], want, it, j, name, "sum_inscan");
            }
        }
    }
}

// The active-set forms on all PEs, alternating two pSync arrays (no barriers).
static void run_active_set(void)
{
    int n = shmem_n_pes(), me = shmem_my_pe();
    const char *name = "[active set, 2 pSyncs]";
    for (int s = 0; s < NSIZES; s++) {
        size_t nel = sizes[s];
        long k = 0; // calls so far: picks the pSync
        for (long it = 1; it <= iters; it++) {
            pe_step("%s: nel %zu iteration %ld", name, nel, it);
            int call = 0;
            int root = (int)(it % n);
            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8, me, j);
            maybe_delay(it, call++, me, n);
            shmem_broadcast64(dst, src, nel, root, 0, 0, n, psync[k++ % 2]);
            if (me != root) // active sets leave the root's dest alone
                check_range(dst, nel, it * 8, root, 0, name, "broadcast64");

            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8 + 1, me, j);
            maybe_delay(it, call++, me, n);
            shmem_fcollect64(dst, src, nel, 0, 0, n, psync[k++ % 2]);
            for (int r = 0; r < n; r++)
                check_range(dst + (size_t)r * nel, nel, it * 8 + 1, r, 0, name, "fcollect64");

            size_t mine = ragged(it, me, nel);
            for (size_t j = 0; j < mine; j++)
                src[j] = val(it * 8 + 2, me, j);
            maybe_delay(it, call++, me, n);
            shmem_collect64(dst, src, mine, 0, 0, n, psync[k++ % 2]);
            size_t at = 0;
            for (int r = 0; r < n; r++) {
                size_t c = ragged(it, r, nel);
                check_range(dst + at, c, it * 8 + 2, r, 0, name, "collect64");
                at += c;
            }

            for (size_t j = 0; j < (size_t)n * nel; j++)
                src[j] = val(it * 8 + 3, me, j);
            maybe_delay(it, call++, me, n);
            shmem_alltoall64(dst, src, nel, 0, 0, n, psync[k++ % 2]);
            for (int r = 0; r < n; r++)
                check_range(dst + (size_t)r * nel, nel, it * 8 + 3, r, (size_t)me * nel, name,
                            "alltoall64");

            for (size_t j = 0; j < nel; j++)
                src[j] = val(it * 8 + 5, me, j);
            maybe_delay(it, call++, me, n);
            shmem_long_sum_to_all(dst, src, (int)nel, 0, 0, n, pwrk, psync[k++ % 2]);
            for (size_t j = 0; j < nel; j++) {
                long want = 0;
                for (int r = 0; r < n; r++)
                    want += val(it * 8 + 5, r, j);
                expect(dst[j], want, it, j, name, "long_sum_to_all");
            }
        }
    }
}

int main(int argc, char **argv)
{
    const char *set = argc > 1 ? argv[1] : "auto";
    if (argc > 2)
        iters = atol(argv[2]);
    const char *part = argc > 3 ? argv[3] : "all";
    int teams = strcmp(part, "asets") != 0, asets = strcmp(part, "teams") != 0;
    coll_set_algorithms(set);
    for (int i = 0; i < PSYNC_SIZE; i++)
        psync[0][i] = psync[1][i] = SHMEM_SYNC_VALUE;
    shmem_init();
    pe_begin("coll_reuse");
    pe_watchdog(110);
    int npes = shmem_n_pes();
    size_t cap = (size_t)npes * MAXNEL * 2;
    src = shmem_malloc(cap * sizeof(long));
    dst = shmem_malloc(cap * sizeof(long));
    if (!src || !dst) {
        pe_fail("shmem_malloc failed");
        shmem_global_exit(1);
    }
    shape_t shapes[MAX_SHAPES];
    pe_step("making team shapes");
    int k = coll_make_shapes(shapes);
    // world, strided (odd PEs) and reversed: the 2-D splits add nothing here.
    for (int i = 0; teams && i < k && i < 3; i++) {
        shmem_barrier_all();
        if (shapes[i].team == SHMEM_TEAM_INVALID)
            continue;
        char name[128];
        snprintf(name, sizeof name, "[%s] %s", set, shapes[i].name);
        run_team(shapes[i].team, name);
    }
    shmem_barrier_all();
    if (asets)
        run_active_set();
    shmem_barrier_all();
    coll_free_shapes(shapes, k);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return pe_end();
}
