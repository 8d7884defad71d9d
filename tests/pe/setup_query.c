// SPDX-License-Identifier: BSD-3-Clause
//
// Library setup and query routines. Argument: the number of PEs oshrun was
// asked for.
//   shmem_query_initialized before init (0), after init (1), after the
//   matching finalize (0); shmem_init_thread(SHMEM_THREAD_MULTIPLE) and
//   shmem_query_thread agree; a second initialization (1.6: init may be called
//   again; each needs its own finalize) keeps the library usable until the
//   second finalize; my_pe / n_pes / team world values, each PE number used
//   exactly once; shmem_info_get_version == 1.6 and the header constants;
//   shmem_info_get_name non-empty; shmem_pe_accessible; shmem_addr_accessible
//   for heap, .data, .bss and stack addresses; shmem_ptr to self (and, where
//   it returns non-NULL, to the others) gives a usable pointer.
#include "pe_check.h"

long g_data[4] = {11, 12, 13, 14}; // .data
long g_bss[4];                     // .bss
static long seen[64];              // seen[p] set by PE p on every PE

int main(int argc, char **argv)
{
    const int want_npes = argc > 1 ? atoi(argv[1]) : -1;
    int initialized = -1;
    shmem_query_initialized(&initialized);
    if (initialized != 0) {
        fprintf(stderr, "PE ?: shmem_query_initialized before init: expected 0 got %d\n",
                initialized);
        return 1;
    }

    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    pe_begin("setup_query");
    PE_EXPECT_EQ(rc, 0, "shmem_init_thread(SHMEM_THREAD_MULTIPLE) return value");
    PE_EXPECT(provided == SHMEM_THREAD_SINGLE || provided == SHMEM_THREAD_FUNNELED ||
                  provided == SHMEM_THREAD_SERIALIZED || provided == SHMEM_THREAD_MULTIPLE,
              "shmem_init_thread: provided = %d is not a SHMEM_THREAD_* level", provided);
    int queried = -1;
    shmem_query_thread(&queried);
    PE_EXPECT_EQ(queried, provided, "shmem_query_thread vs provided of shmem_init_thread");
    if (pe_me_g == 0)
        printf("PE 0: thread level provided %d (MULTIPLE is %d)\n", provided,
               SHMEM_THREAD_MULTIPLE);
    initialized = -1;
    shmem_query_initialized(&initialized);
    PE_EXPECT_EQ(initialized, 1, "shmem_query_initialized after shmem_init_thread");

    // PE numbers.
    const int me = shmem_my_pe(), n = shmem_n_pes();
    PE_EXPECT(n >= 1 && n <= 64, "shmem_n_pes() = %d out of range", n);
    if (want_npes > 0)
        PE_EXPECT_EQ(n, want_npes, "shmem_n_pes() (oshrun -n)");
    PE_EXPECT(me >= 0 && me < n, "shmem_my_pe() = %d not in [0, %d)", me, n);
    PE_EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_WORLD), me, "shmem_team_my_pe(SHMEM_TEAM_WORLD)");
    PE_EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_WORLD), n, "shmem_team_n_pes(SHMEM_TEAM_WORLD)");
    if (n > 64)
        shmem_global_exit(1);
    for (int p = 0; p < n; p++)
        shmem_long_p(&seen[me], 100 + me, p);
    shmem_barrier_all();
    for (int p = 0; p < n; p++)
        PE_EXPECT_EQ(seen[p], (long)(100 + p),
                     "slot of PE number %d (each PE writes its my_pe to every PE)", p);

    // Version and name.
    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    PE_EXPECT_EQ(major, 1, "shmem_info_get_version major");
    PE_EXPECT_EQ(minor, 6, "shmem_info_get_version minor");
    PE_EXPECT_EQ(SHMEM_MAJOR_VERSION, 1, "SHMEM_MAJOR_VERSION");
    PE_EXPECT_EQ(SHMEM_MINOR_VERSION, 6, "SHMEM_MINOR_VERSION");
    char name[SHMEM_MAX_NAME_LEN + 1];
    memset(name, 'X', sizeof name);
    shmem_info_get_name(name);
    size_t len = strnlen(name, sizeof name);
    PE_EXPECT(len > 0, "shmem_info_get_name: empty name");
    PE_EXPECT(len < SHMEM_MAX_NAME_LEN, "shmem_info_get_name: not terminated within "
                                        "SHMEM_MAX_NAME_LEN (%d)", SHMEM_MAX_NAME_LEN);
    if (me == 0 && len < sizeof name)
        printf("PE 0: library name \"%s\", version %d.%d\n", name, major, minor);

    // Accessibility.
    for (int p = 0; p < n; p++)
        PE_EXPECT_EQ(shmem_pe_accessible(p), 1, "shmem_pe_accessible(%d)", p);
    PE_EXPECT_EQ(shmem_pe_accessible(n), 0, "shmem_pe_accessible(n_pes = %d)", n);
    PE_EXPECT_EQ(shmem_pe_accessible(-1), 0, "shmem_pe_accessible(-1)");
    long *heap = shmem_malloc(8 * sizeof(long));
    long stack_local[4] = {0};
    long *private_heap = malloc(4 * sizeof(long));
    for (int p = 0; p < n; p++) {
        PE_EXPECT_EQ(shmem_addr_accessible(heap, p), 1, "shmem_addr_accessible(heap, %d)", p);
        PE_EXPECT_EQ(shmem_addr_accessible(heap + 7, p), 1,
                     "shmem_addr_accessible(heap + 7 longs, %d)", p);
        PE_EXPECT_EQ(shmem_addr_accessible(g_data, p), 1, "shmem_addr_accessible(.data, %d)", p);
        PE_EXPECT_EQ(shmem_addr_accessible(g_bss + 3, p), 1, "shmem_addr_accessible(.bss, %d)",
                     p);
        PE_EXPECT_EQ(shmem_addr_accessible(stack_local, p), 0,
                     "shmem_addr_accessible(stack variable, %d)", p);
        PE_EXPECT_EQ(shmem_addr_accessible(private_heap, p), 0,
                     "shmem_addr_accessible(malloc'd memory, %d)", p);
    }

    // shmem_ptr: to self a usable alias; to others NULL or usable.
    for (int i = 0; i < 8; i++)
        heap[i] = 1000 * me + i;
    g_bss[0] = 2000 + me;
    shmem_barrier_all();
    long *self = shmem_ptr(heap, me);
    PE_EXPECT(self != NULL, "shmem_ptr(heap, my_pe) returned NULL");
    if (self) {
        PE_EXPECT_EQ(self[3], (long)(1000 * me + 3), "read through shmem_ptr(heap, my_pe)[3]");
        self[5] = -5;
        PE_EXPECT_EQ(heap[5], -5L, "heap[5] after a write through shmem_ptr(heap, my_pe)");
        PE_EXPECT_EQ(shmem_long_g(&heap[5], me), -5L, "shmem_long_g to self after shmem_ptr write");
    }
    long *selfg = shmem_ptr(g_bss, me);
    if (selfg)
        PE_EXPECT_EQ(selfg[0], (long)(2000 + me), "read through shmem_ptr(.bss, my_pe)");
    shmem_barrier_all();
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        long *rp = shmem_ptr(heap, p);
        if (rp)
            PE_EXPECT_EQ(rp[2], (long)(1000 * p + 2), "read through shmem_ptr(heap, %d)[2]", p);
    }
    shmem_barrier_all();
    shmem_free(heap);
    free(private_heap);

    // Second initialization (1.6): still initialized after one finalize.
    shmem_init();
    initialized = -1;
    shmem_query_initialized(&initialized);
    PE_EXPECT_EQ(initialized, 1, "shmem_query_initialized after a second shmem_init");
    pe_step("first of two finalize calls");
    shmem_finalize();
    initialized = -1;
    shmem_query_initialized(&initialized);
    PE_EXPECT_EQ(initialized, 1,
                 "shmem_query_initialized after the first of two shmem_finalize (2 inits)");
    pe_step("use after the first finalize");
    shmem_long_p(&g_bss[1], 500 + me, pe_right());
    shmem_barrier_all();
    PE_EXPECT_EQ(g_bss[1], (long)(500 + pe_left()),
                 "long_p between first and second finalize, from PE %d", pe_left());
    pe_step("second finalize");
    shmem_finalize();
    initialized = -1;
    shmem_query_initialized(&initialized);
    PE_EXPECT_EQ(initialized, 0, "shmem_query_initialized after the last shmem_finalize");
    return pe_end();
}
