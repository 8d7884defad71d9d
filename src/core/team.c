// SPDX-License-Identifier: BSD-3-Clause
/*
 * Teams: the predefined ones, splits, destruction, and the pool of
 * collective workspaces in the symmetric heap (layout: core/team.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/check.h"
#include "core/team.h"
#include "runtime/rt.h"

/* Exported through their declarations in <ofishmem/decl_team.h>. */
struct shm_team shm_team_world_g;
struct shm_team shm_team_shared_g;

/* The pool: slot 0 is WORLD's, slot 1 SHARED's, the rest for splits. */
static struct {
    char *base;            /* first slot (heap) */
    size_t base_off;       /* its heap offset */
    size_t slot_bytes;
    size_t words_bytes;    /* flags (sizes, sent) array of one slot, padded */
    size_t scratch_half;
    int nslots;
    int nmask;             /* 64-bit words of the free-slot bitmask */
    uint64_t *used;        /* bit s: slot s holds a team of this PE */
    shm_team_t **live;     /* live[s]: this PE's team in slot s (SHMEM_DEBUG checks) */
    pthread_mutex_t lock;
    /* Active sets: one job-wide slot of flags, sizes and sent counts, by world PE. */
    volatile uint64_t *as_flags;
    size_t as_flags_off;
    uint64_t *as_sizes;
    size_t as_sizes_off;
    uint64_t *as_sent, *as_seen; /* as_sent: in the heap, after as_sizes */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

static void team_attach(shm_team_t *t, int slot)
{
    char *b = pool.base + (size_t)slot * pool.slot_bytes;
    size_t off = pool.base_off + (size_t)slot * pool.slot_bytes;
    t->slot = slot;
    t->flags = (volatile uint64_t *)b;
    t->flags_off = off;
    t->sizes = (uint64_t *)(b + pool.words_bytes);
    t->sizes_off = off + pool.words_bytes;
    t->sent = (uint64_t *)(b + 2 * pool.words_bytes);
    t->sent_off = off + 2 * pool.words_bytes;
    t->scratch = b + 3 * pool.words_bytes;
    t->scratch_off = off + 3 * pool.words_bytes;
    t->scratch_half = pool.scratch_half;
    t->scratch_uses = 0;
}

/* Zeroes a slot's flags, sizes and sent counts: a free slot is always clean. */
static void slot_clean(int slot)
{
    memset(pool.base + (size_t)slot * pool.slot_bytes, 0, 3 * pool.words_bytes);
}

/* The consumed counts (the sent counts are the slot's: team_attach). */
static int team_counts_alloc(shm_team_t *t)
{
    t->seen = calloc((size_t)t->n, sizeof(uint64_t));
    return t->seen ? 0 : -1;
}

/* If the explicit PE list is an arithmetic progression, keep (start, stride) instead. */
static void team_normalise(shm_team_t *t)
{
    if (t->pes == NULL)
        return;
    int stride = t->n > 1 ? t->pes[1] - t->pes[0] : 1;
    for (int i = 1; i < t->n; i++)
        if (t->pes[i] - t->pes[i - 1] != stride || stride == 0)
            return;
    t->start = t->pes[0];
    t->stride = stride;
    free(t->pes);
    t->pes = NULL;
}

int shm_team_rank_of(const shm_team_t *t, int pe)
{
    if (t->pes) {
        for (int i = 0; i < t->n; i++)
            if (t->pes[i] == pe)
                return i;
        return -1;
    }
    int d = pe - t->start;
    if (t->n == 1)
        return d == 0 ? 0 : -1;
    if (d % t->stride != 0)
        return -1;
    int r = d / t->stride;
    return r >= 0 && r < t->n ? r : -1;
}

static void predefined_init(shm_team_t *t, int slot, int n, int me, int start, int stride,
                            const int *pes)
{
    memset(t, 0, sizeof(*t));
    t->n = n;
    t->me = me;
    t->start = start;
    t->stride = stride;
    t->predefined = 1;
    if (pes) {
        t->pes = malloc((size_t)n * sizeof(int));
        if (t->pes == NULL)
            shm_fatal("out of memory for the predefined teams");
        memcpy(t->pes, pes, (size_t)n * sizeof(int));
        team_normalise(t);
    }
    team_attach(t, slot);
    if (team_counts_alloc(t) != 0)
        shm_fatal("out of memory for the predefined teams");
    t->hosts = shm_coll_hosts_make(t);
    pool.used[slot / 64] |= 1ull << (slot % 64);
}

/* Sizes of the workspace pool for npes PEs (sets pool's layout fields);
 * returns its bytes. */
static size_t pool_layout(int npes)
{
    long teams = shm_env_g.TEAMS_MAX < 0 ? 0 : shm_env_g.TEAMS_MAX > 1 << 20 ? 1 << 20 : shm_env_g.TEAMS_MAX;
    pool.nslots = (int)teams + 2;
    pool.nmask = (pool.nslots + 63) / 64;
    pool.words_bytes = round_up((size_t)npes * sizeof(uint64_t), 64);
    size_t half = shm_env_g.COLL_SCRATCH / 2 / 64 * 64;
    if (half < 256)
        half = 256;
    pool.scratch_half = half;
    pool.slot_bytes = 3 * pool.words_bytes + 2 * half; /* flags | sizes | sent | scratch */
    size_t as_bytes = 3 * pool.words_bytes;
    return (size_t)pool.nslots * pool.slot_bytes + as_bytes;
}

size_t shm_team_heap_bytes(int npes)
{
    return pool_layout(npes);
}

void shm_team_init(void)
{
    int npes = shm_state_g.npes, me = shm_state_g.me;
    shm_coll_configure();
    shm_stats_init();
    shm_coll_hosts_init();

    if (shm_env_g.TEAMS_MAX < 0 || shm_env_g.TEAMS_MAX > 1 << 20)
        shm_fatal("SHMEM_TEAMS_MAX=%ld is out of range (0..%d)", shm_env_g.TEAMS_MAX, 1 << 20);
    size_t total = pool_layout(npes);

    /* Made in the same order on every PE during init: the same offsets everywhere. */
    char *mem = shm_heap_alloc(total, 64);
    if (mem == NULL)
        shm_fatal("symmetric heap too small for the team workspaces (%d x %zu bytes): raise "
                  "SHMEM_SYMMETRIC_SIZE or lower SHMEM_TEAMS_MAX / SHMEM_COLL_SCRATCH",
                  pool.nslots, pool.slot_bytes);
    /* Not zeroed here: the heap was mapped by this init (anonymous memory or
     * a new memfd, never reused) and this is among its first blocks, so it
     * reads zero already. Zeroing it would touch every page of every slot
     * (~2 MB per PE at the defaults, (SHMEM_TEAMS_MAX + 2) x 24 B per PE in
     * the job), and could erase a flag that a peer released early from the
     * launcher's fence had already written (a fence seen releasing one
     * host's PEs before the other's arrived under Slurm). */
    pool.base = mem;
    pool.base_off = (uintptr_t)mem - shm_seg_g[SHM_SEG_HEAP].base;
    pool.as_flags = (volatile uint64_t *)(mem + (size_t)pool.nslots * pool.slot_bytes);
    pool.as_flags_off = pool.base_off + (size_t)pool.nslots * pool.slot_bytes;
    pool.as_sizes = (uint64_t *)((char *)pool.as_flags + pool.words_bytes);
    pool.as_sizes_off = pool.as_flags_off + pool.words_bytes;
    pool.as_sent = (uint64_t *)((char *)pool.as_flags + 2 * pool.words_bytes);
    pool.used = calloc((size_t)pool.nmask, sizeof(uint64_t));
    pool.live = calloc((size_t)pool.nslots, sizeof(*pool.live));
    pool.as_seen = calloc((size_t)npes, sizeof(uint64_t));
    if (!pool.used || !pool.live || !pool.as_seen)
        shm_fatal("out of memory for the team tables");

    predefined_init(&shm_team_world_g, 0, npes, me, 0, 1, NULL);
    int lme = shm_rt_g.local_rank;
    if (shm_rt_g.local_peers == NULL || shm_rt_g.local_size < 1) {
        predefined_init(&shm_team_shared_g, 1, 1, 0, me, 1, NULL);
    } else {
        for (int i = 0; i < shm_rt_g.local_size; i++)
            if (shm_rt_g.local_peers[i] == me)
                lme = i;
        predefined_init(&shm_team_shared_g, 1, shm_rt_g.local_size, lme, 0, 1,
                        shm_rt_g.local_peers);
    }
    SHM_INFO(COLL, "team workspaces: %d slots of %zu bytes (scratch 2 x %zu) at heap offset %zu",
             pool.nslots, pool.slot_bytes, pool.scratch_half, pool.base_off);
}

static void team_free(shm_team_t *t)
{
    shm_coll_hosts_free(t->hosts);
    t->hosts = NULL;
    free(t->pes);
    free(t->seen);
    t->pes = NULL;
    t->sent = t->seen = NULL;
}

void shm_team_fini(void)
{
    shm_stats_report(); /* the fabric (peers, sockets) is still open */
    shm_ctx_destroy_all(NULL);
    team_free(&shm_team_world_g);
    team_free(&shm_team_shared_g);
    free(pool.used);
    free(pool.live);
    pool.live = NULL;
    free(pool.as_seen);
    pool.used = pool.as_sent = pool.as_seen = NULL;
    shm_coll_hosts_fini();
    pool.base = NULL;
}

void shm_team_active_set(shm_team_t *t, const char *fn, int start, int log_stride, int size)
{
    int npes = shm_state_g.npes, me = shm_state_g.me;
    if (shm_unlikely(size < 1 || log_stride < 0 || log_stride > 30 || start < 0 ||
                     start + (long)(size - 1) * (1L << log_stride) >= npes))
        shm_fatal("%s: invalid active set (PE_start %d, logPE_stride %d, PE_size %d) for %d PEs",
                  fn, start, log_stride, size, npes);
    int stride = 1 << log_stride;
    int d = me - start;
    if (shm_unlikely(d < 0 || d % stride != 0 || d / stride >= size))
        shm_fatal("%s: PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)",
                  fn, me, start, log_stride, size);
    memset(t, 0, sizeof(*t));
    t->n = size;
    t->me = d / stride;
    t->start = start;
    t->stride = stride;
    t->slot = -1;
    t->by_world = 1;
    t->flags = pool.as_flags;
    t->flags_off = pool.as_flags_off;
    t->sizes = pool.as_sizes;
    t->sizes_off = pool.as_sizes_off;
    t->sent = pool.as_sent;
    t->sent_off = pool.as_flags_off + 2 * pool.words_bytes;
    t->seen = pool.as_seen;
    t->hosts = shm_coll_hosts_active(t);
}

/* ---- splits ---- */

static void op_and_u64(void *acc, const void *in, size_t n)
{
    uint64_t *a = acc;
    const uint64_t *b = in;
    for (size_t i = 0; i < n; i++)
        a[i] &= b[i];
}

/*
 * Agrees with every member of the parent on `want` slots free everywhere.
 * Fills slots[] and returns how many were found (the same on every member).
 */
static int slots_agree(shm_team_t *parent, int want, int *slots)
{
    uint64_t mine[pool.nmask], all[pool.nmask];
    pthread_mutex_lock(&pool.lock);
    for (int w = 0; w < pool.nmask; w++)
        mine[w] = ~pool.used[w];
    pthread_mutex_unlock(&pool.lock);
    /* Bits past the last slot are never free. */
    if (pool.nslots % 64)
        mine[pool.nmask - 1] &= (1ull << (pool.nslots % 64)) - 1;
    shm_coll_reduce_private(parent, all, mine, (size_t)pool.nmask, sizeof(uint64_t), op_and_u64);
    int got = 0;
    for (int s = 2; s < pool.nslots && got < want; s++)
        if (all[s / 64] >> (s % 64) & 1)
            slots[got++] = s;
    return got;
}

static void slot_take(int slot)
{
    pthread_mutex_lock(&pool.lock);
    uint64_t bit = 1ull << (slot % 64);
    int taken = (pool.used[slot / 64] & bit) != 0;
    pool.used[slot / 64] |= bit;
    pthread_mutex_unlock(&pool.lock);
    if (taken)
        shm_fatal("team workspace %d was taken by a concurrent team creation: create teams "
                  "from one thread at a time",
                  slot);
}

static void no_slot_error(shm_team_t *parent, const char *fn)
{
    if (parent->me == 0)
        shm_error("%s: cannot create the team: SHMEM_TEAMS_MAX=%ld teams already exist on some "
                  "PE of the parent team (destroy teams, or raise SHMEM_TEAMS_MAX)",
                  fn, shm_env_g.TEAMS_MAX);
}

/* The team of parent ranks start + i*stride (i < size), as seen by its member `me`. */
static shm_team_t *team_make(shm_team_t *parent, int start, int stride, int size, int me,
                             int slot, const shmem_team_config_t *cfg, long mask)
{
    shm_team_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        shm_fatal("out of memory creating a team");
    t->n = size;
    t->me = me;
    if (parent->pes == NULL) {
        t->start = parent->start + start * parent->stride;
        t->stride = size > 1 ? parent->stride * stride : 1;
    } else {
        t->pes = malloc((size_t)size * sizeof(int));
        if (t->pes == NULL)
            shm_fatal("out of memory creating a team");
        for (int i = 0; i < size; i++)
            t->pes[i] = parent->pes[start + i * stride];
        team_normalise(t);
    }
    if (team_counts_alloc(t) != 0)
        shm_fatal("out of memory creating a team");
    if (cfg && (mask & SHMEM_TEAM_NUM_CONTEXTS))
        t->config.num_contexts = cfg->num_contexts;
    t->config_mask = mask;
    slot_take(slot);
    team_attach(t, slot);
    t->hosts = shm_coll_hosts_make(t);
    pthread_mutex_lock(&pool.lock);
    pool.live[slot] = t;
    pthread_mutex_unlock(&pool.lock);
    return t;
}

int shm_team_split_strided(shm_team_t *parent, int start, int stride, int size,
                           const shmem_team_config_t *config, long mask, shm_team_t **new_p)
{
    *new_p = NULL;
    if (parent == NULL)
        return -1;
    int n = parent->n;
    /* Every member checks the same arguments: all fail together, without talking. */
    long last = start + (long)(size - 1) * stride;
    if (size < 1 || start < 0 || start >= n || last < 0 || last >= n || (stride == 0 && size != 1))
        return -1;
    if (size == 1)
        stride = 1;
    int slot;
    if (slots_agree(parent, 1, &slot) < 1) {
        no_slot_error(parent, "shmem_team_split_strided");
        return -1;
    }
    int d = parent->me - start;
    if (d % stride == 0 && d / stride >= 0 && d / stride < size)
        *new_p = team_make(parent, start, stride, size, d / stride, slot, config, mask);
    return 0;
}

int shm_team_split_2d(shm_team_t *parent, int xrange, const shmem_team_config_t *xcfg,
                      long xmask, shm_team_t **x_p, const shmem_team_config_t *ycfg,
                      long ymask, shm_team_t **y_p)
{
    *x_p = *y_p = NULL;
    if (parent == NULL || xrange < 1)
        return -1;
    int n = parent->n, p = parent->me;
    if (xrange > n)
        xrange = n;
    int slots[2];
    int got = slots_agree(parent, 2, slots);
    if (got < 1) {
        no_slot_error(parent, "shmem_team_split_2d");
        return -1;
    }
    /* Rows (x teams) share one slot, columns (y teams) another: each set is disjoint. */
    int x = p % xrange, y = p / xrange;
    int xsize = n - y * xrange < xrange ? n - y * xrange : xrange;
    *x_p = team_make(parent, y * xrange, 1, xsize, x, slots[0], xcfg, xmask);
    if (got < 2) {
        no_slot_error(parent, "shmem_team_split_2d");
        return -1;
    }
    int ysize = (n - x + xrange - 1) / xrange;
    *y_p = team_make(parent, x, xrange, ysize, y, slots[1], ycfg, ymask);
    return 0;
}

void shm_team_destroy(shm_team_t *t)
{
    /* Contexts made from the team go with it. */
    shm_ctx_destroy_all(t);
    /* Every message of every member to this PE has been consumed after this. */
    shm_coll_sync(t);
    slot_clean(t->slot);
    pthread_mutex_lock(&pool.lock);
    pool.used[t->slot / 64] &= ~(1ull << (t->slot % 64));
    pool.live[t->slot] = NULL;
    pthread_mutex_unlock(&pool.lock);
    team_free(t);
    free(t);
}

/* SHMEM_DEBUG: is t a predefined team or one of this PE's live teams? A PE
 * is in at most one team per workspace slot, so the slots are the registry. */
int shm_team_is_live(const shm_team_t *t)
{
    if (t == &shm_team_world_g || t == &shm_team_shared_g)
        return 1;
    int live = 0;
    pthread_mutex_lock(&pool.lock);
    for (int s = 2; s < pool.nslots && pool.live && !live; s++)
        live = pool.live[s] == t;
    pthread_mutex_unlock(&pool.lock);
    return live;
}
