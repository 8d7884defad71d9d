// SPDX-License-Identifier: BSD-3-Clause
//
// Globals (.data/.bss) as the only symmetric memory of a program, the way
// legacy codes use them: put-with-signal into a global buffer and signal word,
// wait_until on global flags, the deprecated active-set collectives with
// static pSync/pWrk arrays and global targets, a lock that is a global, and
// AMO counters that are globals. Nothing is allocated on the heap.
//
// argv[1] says which road the globals must take, and it is checked with
// shmem_ptr before anything else:
//   direct  every other PE's globals are mapped here (same-host direct path)
//   fabric  none is (SHMEM_DIRECT=0 or SHMEM_DIRECT_GLOBALS=0)
//   mixed   as SHMEM_DIRECT_NOMAP says: a listed PE maps no other PE's
//           globals (it reaches them through libfabric, and its AMOs are
//           applied by the target), every other PE maps all of them.
// With "fork", a child forked after shmem_init writes a global and exits:
// the parent's copy (and the peers' view of it) must not change.
#include <sys/wait.h>

#include "pe_check.h"

#define MAXPE 16
#define BIG 70000 /* put-with-signal payload: past the bounce size */
#define ROUNDS 200

static char g_payload[BIG];            // .bss: signal payload, from the left PE
static uint64_t g_sig;                 // .bss: its signal word
static long g_flags[MAXPE];            // .bss: wait_until targets, one per origin
static long g_data_init[8] = {1, 2, 3, 4, 5, 6, 7, 8}; // .data: read back remotely
static long g_counter;                 // .bss: fetch_inc from everyone
static long g_lock;                    // .bss: shmem_set_lock
static long g_guarded;                 // .bss: counter under the lock
static long pSync[SHMEM_BCAST_SYNC_SIZE > SHMEM_REDUCE_SYNC_SIZE
                      ? (SHMEM_BCAST_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_BCAST_SYNC_SIZE
                                                                         : SHMEM_COLLECT_SYNC_SIZE)
                      : SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 64];
static long g_bcast[64], g_collect[64 * MAXPE], g_red_src[32], g_red_dst[32];
static long g_a2a_src[4 * MAXPE], g_a2a_dst[4 * MAXPE];
static long g_forked = 42;

static int listed(const char *list, int pe)
{
    while (list && *list) {
        char *end;
        long a = strtol(list, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (pe >= a && pe <= b)
            return 1;
        list = *end == ',' ? end + 1 : end + strlen(end);
    }
    return 0;
}

static void check_roads(const char *mode)
{
    const char *nomap = getenv("SHMEM_DIRECT_NOMAP");
    for (int pe = 0; pe < pe_npes_g; pe++) {
        if (pe == pe_me_g)
            continue;
        int want;
        if (strcmp(mode, "direct") == 0)
            want = 1;
        else if (strcmp(mode, "fabric") == 0)
            want = 0;
        else
            want = !listed(nomap, pe_me_g);
        void *p = shmem_ptr(&g_counter, pe);
        PE_EXPECT((p != NULL) == want, "mode %s: PE %d's globals %s mapped here (shmem_ptr %p)",
                  mode, pe, want ? "should be" : "should not be", p);
        if (p)
            PE_EXPECT_EQ(((long *)shmem_ptr(g_data_init, pe))[7], 8L,
                         ".data word of PE %d through shmem_ptr", pe);
    }
}

static void signals(void)
{
    const int right = pe_right(), left = pe_left();
    char *src = malloc(BIG);
    for (int r = 1; r <= 3; r++) {
        pe_step("put_signal round %d", r);
        for (size_t i = 0; i < BIG; i++)
            src[i] = (char)(i * 7 + r + pe_me_g);
        size_t len = r == 1 ? 8 : r == 2 ? 4096 : BIG;
        if (r == 2)
            shmem_putmem_signal_nbi(g_payload, src, len, &g_sig, (uint64_t)r, SHMEM_SIGNAL_SET,
                                    right);
        else
            shmem_putmem_signal(g_payload, src, len, &g_sig, 1, SHMEM_SIGNAL_ADD, right);
        uint64_t want = r == 1 ? 1 : r == 2 ? 2 : 3;
        uint64_t got = shmem_signal_wait_until(&g_sig, SHMEM_CMP_GE, want);
        PE_EXPECT_EQ(got, want, "signal word after round %d", r);
        long bad = 0;
        for (size_t i = 0; i < len; i++)
            bad += g_payload[i] != (char)(i * 7 + r + left);
        PE_EXPECT_EQ(bad, 0L, "payload bytes wrong in round %d (%zu bytes from PE %d)", r, len,
                     left);
        PE_EXPECT_EQ(shmem_signal_fetch(&g_sig), want, "shmem_signal_fetch round %d", r);
        shmem_barrier_all(); // nobody overwrites the payload before it is checked
    }
    free(src);
}

static void waits(void)
{
    pe_step("wait_until on global flags");
    for (int r = 1; r <= ROUNDS; r++) {
        // Everyone bumps its own flag on every PE; each PE waits for all.
        for (int pe = 0; pe < pe_npes_g; pe++)
            shmem_long_atomic_set(&g_flags[pe_me_g], r, pe);
        for (int pe = 0; pe < pe_npes_g; pe++)
            shmem_long_wait_until(&g_flags[pe], SHMEM_CMP_GE, r);
        size_t idx[MAXPE];
        int status[MAXPE] = {0};
        PE_EXPECT_EQ(shmem_long_test_some(g_flags, (size_t)pe_npes_g, idx, status, SHMEM_CMP_GE,
                                          r),
                     (size_t)pe_npes_g, "test_some on the flags, round %d", r);
        shmem_barrier_all(); // round r seen by all before r+1 is set
    }
}

static void counters_and_lock(void)
{
    pe_step("fetch_inc on PE 0's global counter");
    long mine = 0;
    for (int i = 0; i < ROUNDS; i++)
        mine += shmem_long_atomic_fetch_inc(&g_counter, 0) >= 0;
    shmem_barrier_all();
    if (pe_me_g == 0)
        PE_EXPECT_EQ(g_counter, (long)ROUNDS * pe_npes_g, "global counter on PE 0");
    PE_EXPECT_EQ(mine, (long)ROUNDS, "fetch_incs done");
    pe_step("set_lock on a global lock");
    for (int i = 0; i < ROUNDS / 4; i++) {
        shmem_set_lock(&g_lock);
        long v = shmem_long_g(&g_guarded, 0);
        shmem_long_p(&g_guarded, v + 1, 0);
        shmem_clear_lock(&g_lock);
    }
    shmem_barrier_all();
    if (pe_me_g == 0)
        PE_EXPECT_EQ(g_guarded, (long)(ROUNDS / 4) * pe_npes_g, "counter guarded by the lock");
}

static void legacy_collectives(void)
{
    const int n = pe_npes_g;
    for (size_t i = 0; i < sizeof(pSync) / sizeof(pSync[0]); i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (int r = 0; r < 3; r++) {
        pe_step("broadcast64 from PE %d", r % n);
        for (int i = 0; i < 64; i++)
            g_bcast[i] = pe_me_g == r % n ? 1000 * r + i : -1;
        static long bsrc[64];
        memcpy(bsrc, g_bcast, sizeof(bsrc));
        shmem_barrier(0, 0, n, pSync);
        shmem_broadcast64(g_bcast, bsrc, 64, r % n, 0, 0, n, pSync);
        shmem_barrier(0, 0, n, pSync);
        for (int i = 0; i < 64; i++)
            if (pe_me_g != r % n)
                PE_EXPECT_EQ(g_bcast[i], 1000L * r + i, "broadcast64 word %d round %d", i, r);
    }
    pe_step("fcollect64");
    static long csrc[64];
    for (int i = 0; i < 64; i++)
        csrc[i] = pe_me_g * 100 + i;
    shmem_fcollect64(g_collect, csrc, 64, 0, 0, n, pSync);
    shmem_barrier(0, 0, n, pSync);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 64; i++)
            PE_EXPECT_EQ(g_collect[p * 64 + i], p * 100L + i, "fcollect64 from PE %d word %d", p,
                         i);
    pe_step("sum_to_all with static pWrk");
    for (int i = 0; i < 32; i++)
        g_red_src[i] = pe_me_g + i;
    shmem_long_sum_to_all(g_red_dst, g_red_src, 32, 0, 0, n, pWrk, pSync);
    shmem_barrier(0, 0, n, pSync);
    for (int i = 0; i < 32; i++)
        PE_EXPECT_EQ(g_red_dst[i], (long)n * (n - 1) / 2 + (long)n * i, "sum_to_all word %d", i);
    pe_step("alltoall64");
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 4; i++)
            g_a2a_src[p * 4 + i] = pe_me_g * 1000 + p * 10 + i;
    shmem_barrier_all();
    shmem_alltoall64(g_a2a_dst, g_a2a_src, 4, 0, 0, n, pSync);
    shmem_barrier(0, 0, n, pSync);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 4; i++)
            PE_EXPECT_EQ(g_a2a_dst[p * 4 + i], p * 1000L + pe_me_g * 10 + i,
                         "alltoall64 from PE %d word %d", p, i);
}

static void forked_child(void)
{
    pe_step("fork after shmem_init");
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        g_forked = 7; // must stay the child's own
        _exit(g_forked == 7 ? 0 : 1);
    }
    int st = 0;
    PE_EXPECT(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "the forked child did not exit cleanly (status %#x)", st);
    PE_EXPECT_EQ(g_forked, 42L, "a global after a forked child wrote its copy");
    shmem_barrier_all();
    long v = shmem_long_g(&g_forked, pe_right());
    PE_EXPECT_EQ(v, 42L, "PE %d's global after its child wrote its copy", pe_right());
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "direct";
    const int do_fork = argc > 2 && strcmp(argv[2], "fork") == 0;
    shmem_init();
    pe_begin("globals_sync");
    if (pe_npes_g > MAXPE) {
        pe_fail("at most %d PEs", MAXPE);
        shmem_finalize();
        return pe_end();
    }
    check_roads(mode);
    shmem_barrier_all();
    signals();
    waits();
    counters_and_lock();
    legacy_collectives();
    if (do_fork)
        forked_child();
    pe_step("final barrier");
    shmem_barrier_all();
    shmem_finalize();
    return pe_end();
}
