// SPDX-License-Identifier: BSD-3-Clause
//
// bad_input MODE: PE 1 (or every PE, for collectives and setup misuse) makes
// one wrong call; the job must end with one message that names the function,
// the PE and the bad value (checked by expect_failure.sh with a regex per
// mode, see CMakeLists.txt). The other PEs wait in a barrier, so a wrong call
// that is silently accepted shows up as "the bad call returned" instead of a
// hang.
#include <shmemx.h>

#include "pe_check.h"

typedef void (*bad_fn)(long *sym, long *src);

static void pe_negative(long *sym, long *src) { shmem_long_p(sym, 1, -1); }
static void pe_npes(long *sym, long *src) { shmem_long_put(sym, src, 4, shmem_n_pes()); }
static void pe_get_npes(long *sym, long *src) { src[0] = shmem_long_g(sym, shmem_n_pes() + 5); }
static void pe_amo(long *sym, long *src) { src[0] = shmem_long_atomic_fetch_add(sym, 1, -7); }
static void stack_target(long *sym, long *src)
{
    long local[4] = {0};
    shmem_long_put(local, src, 4, 0);
    src[0] = local[0];
}
static void malloc_target(long *sym, long *src)
{
    long *m = calloc(8, sizeof(long));
    shmem_long_get(src, m, 4, 0); // a private source of a get is just as wrong
    free(m);
}
// The heap's largest free block, taken whole by every PE in main (collective):
// a fresh heap's free tail, so the block ends where the heap ends.
static char *tail_g;
static size_t tail_len_g;
static void heap_end(long *sym, long *src)
{
    // The last 8 bytes of the heap and 8 beyond it.
    shmem_long_put((long *)(tail_g + tail_len_g - 8), src, 2, 0);
}
static void count_negative(long *sym, long *src) { shmem_long_put(sym, src, (size_t)-1, 0); }
// 2^61 + 1 longs: the byte count wraps to 8 in size_t arithmetic.
static void count_wrap(long *sym, long *src)
{
    shmem_long_put(sym, src, ((size_t)1 << 61) + 1, 0);
}
static void stride_negative(long *sym, long *src) { shmem_long_iput(sym, src, -2, 1, 4, 0); }
static void stride_wrap(long *sym, long *src)
{
    shmem_long_iput(sym, src, PTRDIFF_MAX / 2, 1, 4, 0);
}
static void amo_misaligned(long *sym, long *src)
{
    src[0] = (long)shmem_uint64_atomic_compare_swap((uint64_t *)((char *)sym + 4), 0, 1, 0);
}
static void ctx_destroyed(long *sym, long *src)
{
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0) {
        pe_fail("shmem_ctx_create failed");
        return;
    }
    shmem_ctx_destroy(ctx);
    shmem_ctx_long_p(ctx, sym, 1, 0);
}
static void pe_in_coll(long *sym, long *src) { shmem_long_broadcast(SHMEM_TEAM_WORLD, sym, src, 4, shmem_n_pes()); }
// The deprecated active-set broadcast with PE_root given as a PE number (as
// code written for Open MPI's OSHMEM does): PE 1 alone, an active set of
// itself (start 1, size 1), where the only valid PE_root is 0.
static void aset_bcast_root(long *sym, long *src)
{
    static long psync[SHMEM_BCAST_SYNC_SIZE];
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_broadcast64(sym, src, 4, pe_me_g, pe_me_g, 0, 1, psync);
}

static const struct {
    const char *name;
    bad_fn fn;
    int all; // every PE makes the call (collectives), else PE 1 alone
} modes[] = {
    {"pe_negative", pe_negative, 0},   {"pe_npes", pe_npes, 0},
    {"pe_get_npes", pe_get_npes, 0},   {"pe_amo", pe_amo, 0},
    {"stack_target", stack_target, 0}, {"malloc_target", malloc_target, 0},
    {"heap_end", heap_end, 0},         {"count_negative", count_negative, 0},
    {"count_wrap", count_wrap, 0},     {"stride_negative", stride_negative, 0},
    {"stride_wrap", stride_wrap, 0},   {"amo_misaligned", amo_misaligned, 0},
    {"ctx_destroyed", ctx_destroyed, 0}, {"bcast_root", pe_in_coll, 1},
    {"aset_bcast_root", aset_bcast_root, 0},
};

// Modes that need more than one call site: teams, collectives, setup.
static int team_destroyed(void)
{
    shmem_team_t t;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &t) != 0) {
        pe_fail("shmem_team_split_strided failed");
        return -2;
    }
    shmem_team_destroy(t);
    if (pe_me_g != 1) {
        shmem_barrier_all(); // PE 1 never arrives
        return -2;
    }
    return shmem_team_my_pe(t);
}

static int bcast_mismatch(long *sym, long *src)
{
    // PE 1 broadcasts 8 elements, the others 4.
    return shmem_long_broadcast(SHMEM_TEAM_WORLD, sym, src, pe_me_g == 1 ? 8 : 4, 0);
}

static int reduce_mismatch(long *sym, long *src)
{
    return shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sym, src, pe_me_g == 1 ? 3 : 4);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    static long src[64];

    // Job-wide settings that differ on one PE (PE 1: its launcher-given rank).
    const char *rank = getenv("PMIX_RANK");
    if (rank && strcmp(rank, "1") == 0) {
        if (strcmp(mode, "mixed_direct") == 0)
            setenv("SHMEM_DIRECT", "0", 1);
        else if (strcmp(mode, "mixed_heap_size") == 0)
            setenv("SHMEM_SYMMETRIC_SIZE", "64M", 1);
        else if (strcmp(mode, "mixed_globals") == 0)
            setenv("SHMEM_DIRECT_GLOBALS", "0", 1);
        else if (strcmp(mode, "mixed_fabric") == 0)
            setenv("SHMEM_FABRIC", "always", 1);
    }
    if (strncmp(mode, "mixed_", 6) == 0) {
        shmem_init();
        fprintf(stderr, "PE %d: shmem_init accepted a setting that differs between PEs\n",
                shmem_my_pe());
        return 1;
    }
    if (strcmp(mode, "before_init") == 0) {
        static long x;
        shmem_long_p(&x, 1, 0);
        fprintf(stderr, "shmem_long_p before shmem_init returned\n");
        return 1;
    }
    shmem_init();
    pe_begin("bad_input");
    long *sym = shmem_calloc(64, sizeof(long));
    if (strcmp(mode, "heap_end") == 0) {
        shmemx_heap_info_t info;
        shmemx_heap_query(&info);
        tail_len_g = info.largest_free;
        tail_g = shmem_malloc(tail_len_g);
        if (tail_g == NULL) {
            pe_fail("shmem_malloc(%zu) of the largest free block failed", tail_len_g);
            return 1;
        }
    }
    shmem_barrier_all();
    pe_step("%s", mode);

    if (strcmp(mode, "after_finalize") == 0) {
        static long x;
        shmem_finalize();
        if (pe_me_g == 1)
            shmem_long_p(&x, 1, 0);
        else
            return 0;
        fprintf(stderr, "PE %d: shmem_long_p after shmem_finalize returned\n", pe_me_g);
        return 1;
    }
    if (strcmp(mode, "team_destroyed") == 0) {
        int rc = team_destroyed();
        fprintf(stderr, "PE %d: shmem_team_my_pe on a destroyed team returned %d\n", pe_me_g, rc);
        return 1;
    }
    if (strcmp(mode, "bcast_mismatch") == 0 || strcmp(mode, "reduce_mismatch") == 0) {
        int rc = mode[0] == 'b' ? bcast_mismatch(sym, src) : reduce_mismatch(sym, src);
        fprintf(stderr, "PE %d: %s returned %d\n", pe_me_g, mode, rc);
        return 1;
    }
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(mode, modes[i].name) != 0)
            continue;
        if (modes[i].all || pe_me_g == 1) {
            modes[i].fn(sym, src);
            fprintf(stderr, "PE %d: the bad call (%s) returned\n", pe_me_g, mode);
            return 1;
        }
        shmem_barrier_all(); // PE 1 never arrives: its job ends first
        fprintf(stderr, "PE %d: barrier returned although PE 1's call was bad (%s)\n", pe_me_g,
                mode);
        return 1;
    }
    fprintf(stderr, "usage: %s MODE: unknown mode '%s'\n", argv[0], mode);
    return 2;
}
