// SPDX-License-Identifier: BSD-3-Clause
/* What happens when an argument check fails (see core/check.h): one message
 * naming the function, the PE (in the [PE n host:pid] prefix) and the bad
 * value, then the whole job ends. */
#include "core/check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "core/team.h"
#include "runtime/rt.h"

void shm_not_running(const char *fn)
{
    shm_fatal("%s called %s", fn,
              shm_state_g.run_state == SHM_STATE_NEW ? "before shmem_init"
                                                     : "after shmem_finalize");
}

void shm_bad_pe(const char *fn, int pe)
{
    if (shm_state_g.run_state != SHM_STATE_RUNNING)
        shm_not_running(fn);
    shm_fatal("%s: PE %d is out of range (the job has PEs 0..%d)", fn, pe, shm_state_g.npes - 1);
}

void shm_bad_team_pe(const char *fn, int pe, int team_n)
{
    if (shm_state_g.run_state != SHM_STATE_RUNNING)
        shm_not_running(fn);
    shm_fatal("%s: PE %d is out of range for the context's team (a context made by "
              "shmem_team_create_ctx numbers PEs within its team: 0..%d)",
              fn, pe, team_n - 1);
}

void shm_bad_addr(const char *fn, const void *addr, size_t len, const char *what)
{
    if (shm_state_g.run_state != SHM_STATE_RUNNING)
        shm_not_running(fn);
    uintptr_t a = (uintptr_t)addr;
    /* The start is symmetric but the range is not: say by how much it overruns. */
    for (int s = 0; s < SHM_NSEGS; s++) {
        uintptr_t base = shm_seg_g[s].base, end = base + shm_seg_g[s].len;
        if (a >= base && a < end)
            shm_fatal("%s: %s %p (+%zu bytes) runs %zu bytes past the end of the %s [%p, %p)", fn,
                      what, addr, len, len - (size_t)(end - a),
                      s == SHM_SEG_HEAP ? "symmetric heap" : "program's data/BSS segment",
                      (void *)base, (void *)end);
    }
    shm_fatal("%s: %s %p (+%zu bytes) is not symmetric: it is not (entirely) in the symmetric "
              "heap [%p, %p) nor in the program's data/BSS",
              fn, what, addr, len, (void *)shm_seg_g[SHM_SEG_HEAP].base,
              (void *)(shm_seg_g[SHM_SEG_HEAP].base + shm_seg_g[SHM_SEG_HEAP].len));
}

void shm_bad_count(const char *fn, size_t n, size_t esize)
{
    if (shm_state_g.run_state != SHM_STATE_RUNNING)
        shm_not_running(fn);
    shm_fatal("%s: %zu elements of %zu bytes overflow the size (a negative count?)", fn, n,
              esize);
}

void shm_bad_ctx(const char *fn, const void *ctx)
{
    shm_fatal("%s: context %p was destroyed or never created", fn, ctx);
}

void shm_bad_team(const char *fn, const void *team)
{
    shm_fatal("%s: team %p was destroyed or never created", fn, team);
}

/* Collective argument agreement ------------------------------------------ */

typedef struct {
    uint64_t bytes, root;
} coll_args_t;

/* Slot i holds rank i's values, zero elsewhere: OR gathers them all. */
static void op_or_u64(void *acc, const void *in, size_t n)
{
    uint64_t *a = acc;
    const uint64_t *b = in;
    for (size_t i = 0; i < n; i++)
        a[i] |= b[i];
}

/* Only rank 0 reports; the others wait for the job to end (one message). */
static __attribute__((noreturn, cold)) void coll_wait_for_end(const char *fn)
{
    /* Rank 0 aborts the job at once; if it never does (it died), say so. */
    struct timespec ts = {10, 0};
    nanosleep(&ts, NULL);
    shm_fatal("%s: the collective's arguments differ across the team", fn);
}

void shm_check_coll_args(const char *fn, struct shm_team *t, size_t bytes, int root)
{
    if (!shm_state_g.debug || t == NULL)
        return;
    shm_check_team_live(fn, t);
    int n = t->n;
    coll_args_t *mine = calloc((size_t)n, sizeof(*mine));
    coll_args_t *all = calloc((size_t)n, sizeof(*all));
    if (mine == NULL || all == NULL)
        shm_fatal("%s: out of memory checking the arguments (SHMEM_DEBUG)", fn);
    /* +1 so that a slot of zeros means "not written". */
    mine[t->me].bytes = (uint64_t)bytes + 1;
    mine[t->me].root = (uint64_t)(int64_t)root + 1;
    shm_coll_reduce_private(t, all, mine, 2 * (size_t)n, sizeof(uint64_t), op_or_u64);
    int bad = -1;
    const char *what = NULL;
    for (int r = 1; r < n && bad < 0; r++) {
        if (all[r].bytes != all[0].bytes)
            bad = r, what = "size";
        else if (root >= 0 && all[r].root != all[0].root)
            bad = r, what = "root";
    }
    if (bad < 0 && root >= 0 && root >= n)
        bad = 0, what = "range";
    coll_args_t theirs = bad >= 0 ? all[bad] : all[0];
    free(mine);
    free(all);
    if (bad < 0)
        return;
    if (t->me != 0)
        coll_wait_for_end(fn);
    int pe0 = shm_team_pe(t, 0), peb = shm_team_pe(t, bad);
    if (strcmp(what, "range") == 0)
        shm_fatal("%s: root PE %d is out of range (the team has %d PEs)", fn, root, n);
    if (strcmp(what, "size") == 0)
        shm_fatal("%s: PE %d passed %llu bytes, PE %d passed %zu: the size must be the same on "
                  "every PE of the team",
                  fn, peb, (unsigned long long)(theirs.bytes - 1), pe0, bytes);
    shm_fatal("%s: PE %d passed root %lld, PE %d passed root %d: the root must be the same on "
              "every PE of the team",
              fn, peb, (long long)(int64_t)(theirs.root - 1), pe0, root);
}
