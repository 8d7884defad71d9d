// SPDX-License-Identifier: BSD-3-Clause
//
// What a job needs from whichever launcher started it (oshrun, Open MPI's
// mpirun, Slurm's srun), checked against the real placement of the PEs.
//   launcher_probe NPES HOSTS
// A "host" is a network namespace: the multi-host test gives each fake host
// its own, and PEs on one real host share one. Checks that
//  - shmem_n_pes() is NPES and the PEs sit on HOSTS distinct hosts;
//  - SHMEM_TEAM_SHARED holds exactly the PEs of my host, in world order;
//  - shmem_ptr (the same-host direct path) reaches exactly the PEs of my
//    host when SHMEM_DIRECT is on (and only myself when it is off);
//  - put, get, atomics and barriers work between every pair of PEs.
// PE 0 prints one line per host: "host H: PEs a,b,c".
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pe_check.h"

#define MAXPES 64

static uint64_t host_of[MAXPES];   // every PE's host key, filled by puts
static long inbox[MAXPES];         // inbox[p]: written by PE p
static long counter;               // fetch-add target on PE 0
static int ticks;                  // atomic_inc target on every PE

static uint64_t my_host_key(void)
{
    struct stat st;
    // The network namespace identifies the host; fall back to the hostname.
    if (stat("/proc/self/ns/net", &st) == 0)
        return (uint64_t)st.st_ino;
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    uint64_t h = 1469598103934665603ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: launcher_probe NPES HOSTS\n");
        return 2;
    }
    int want_npes = atoi(argv[1]), want_hosts = atoi(argv[2]);
    shmem_init();
    pe_begin("launcher_probe");
    int me = shmem_my_pe(), npes = shmem_n_pes();

    PE_EXPECT_EQ(npes, want_npes, "shmem_n_pes()");
    if (npes > MAXPES || npes != want_npes) {
        pe_fail("cannot go on with %d PEs (expected %d, at most %d)", npes, want_npes, MAXPES);
        shmem_global_exit(1);
    }

    pe_step("exchanging host keys");
    uint64_t key = my_host_key();
    for (int p = 0; p < npes; p++)
        shmem_uint64_put(&host_of[me], &key, 1, p);
    shmem_barrier_all();

    int hosts = 0, nlocal = 0, local[MAXPES];
    for (int p = 0; p < npes; p++) {
        int first = 1;
        for (int q = 0; q < p; q++)
            first &= host_of[q] != host_of[p];
        hosts += first;
        if (host_of[p] == key)
            local[nlocal++] = p;
    }
    PE_EXPECT_EQ(hosts, want_hosts, "number of distinct hosts (network namespaces)");

    pe_step("checking SHMEM_TEAM_SHARED");
    int tsize = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    PE_EXPECT_EQ(tsize, nlocal, "shmem_team_n_pes(SHMEM_TEAM_SHARED) (PEs on my host)");
    for (int i = 0; i < tsize && i < nlocal; i++) {
        int w = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
        PE_EXPECT_EQ(w, local[i], "world PE of SHMEM_TEAM_SHARED member %d", i);
    }
    int my_idx = shmem_team_my_pe(SHMEM_TEAM_SHARED);
    PE_EXPECT(my_idx >= 0 && my_idx < nlocal && local[my_idx] == me,
              "my index in SHMEM_TEAM_SHARED (%d) names me (PE %d)", my_idx, me);

    pe_step("checking shmem_ptr");
    const char *d = getenv("SHMEM_DIRECT");
    int direct = !(d && (strcmp(d, "0") == 0 || strcmp(d, "no") == 0 || strcmp(d, "off") == 0));
    long *heap_word = shmem_malloc(sizeof(long)); // only the heap is mapped by peers
    PE_EXPECT(heap_word != NULL, "shmem_malloc(8) returned NULL");
    for (int p = 0; p < npes && heap_word; p++) {
        int same = host_of[p] == key;
        int reach = shmem_ptr(heap_word, p) != NULL;
        int expect = p == me || (direct && same);
        PE_EXPECT_EQ(reach, expect, "shmem_ptr(heap word, PE %d) != NULL (PE %d is on %s host)", p,
                     p, same ? "my" : "another");
    }

    pe_step("put to every PE");
    long v = 1000L * me + 7;
    for (int p = 0; p < npes; p++)
        shmem_long_put(&inbox[me], &v, 1, p);
    shmem_barrier_all();
    for (int p = 0; p < npes; p++)
        PE_EXPECT_EQ(inbox[p], 1000L * p + 7, "inbox[%d] written by PE %d", p, p);

    pe_step("get from every PE");
    for (int p = 0; p < npes; p++) {
        long got = 0;
        shmem_long_get(&got, &inbox[(p + 1) % npes], 1, p);
        PE_EXPECT_EQ(got, 1000L * ((p + 1) % npes) + 7, "get of inbox[%d] from PE %d",
                     (p + 1) % npes, p);
    }

    pe_step("atomics");
    long before = shmem_long_atomic_fetch_add(&counter, 1, 0);
    PE_EXPECT(before >= 0 && before < npes, "fetch_add on PE 0 returned %ld", before);
    for (int p = 0; p < npes; p++)
        shmem_int_atomic_inc(&ticks, p);
    shmem_barrier_all();
    if (me == 0)
        PE_EXPECT_EQ(counter, (long)npes, "counter on PE 0 after one fetch_add per PE");
    PE_EXPECT_EQ(shmem_int_atomic_fetch(&ticks, me), npes, "ticks after one inc per PE");
    int remote_ticks = shmem_int_atomic_fetch(&ticks, (me + 1) % npes);
    PE_EXPECT_EQ(remote_ticks, npes, "ticks of PE %d", (me + 1) % npes);

    shmem_free(heap_word);
    pe_step("team barrier of SHMEM_TEAM_SHARED");
    shmem_team_sync(SHMEM_TEAM_SHARED);
    shmem_barrier_all();

    if (me == 0) {
        for (int p = 0, h = 0; p < npes; p++) {
            int first = 1;
            for (int q = 0; q < p; q++)
                first &= host_of[q] != host_of[p];
            if (!first)
                continue;
            printf("host %d: PEs", h++);
            for (int q = p; q < npes; q++)
                if (host_of[q] == host_of[p])
                    printf(" %d", q);
            printf("\n");
        }
    }
    shmem_finalize();
    return pe_end();
}
