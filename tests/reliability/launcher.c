// SPDX-License-Identifier: BSD-3-Clause
//
// launcher MODE [SECONDS]: PEs whose launcher (or its PMIx channel) fails
// under them; launcher_fail.sh breaks it once PE 0 has printed
// "launcher: ready" (after a barrier: every PE is up), and checks that every
// PE ends within the documented bound with a line saying why.
//   compute         every PE computes for ever: it never calls the library
//                   again (only the runtime's watchdog can notice)
//   finalize WHEN   every PE computes until WHEN, then calls shmem_finalize
//                   (it needs the launcher: a fence)
//   report WHEN     PE 1 computes until WHEN, then calls shmem_global_exit(5)
//                   (it tells the launcher: PMIx_Abort); the others wait in
//                   a barrier
// WHEN: seconds, or the path of a file the test creates once it has broken
// the launcher (so a loaded machine cannot reorder the two).
// A PE that reaches its end prints "launcher: PE n finished" (the tests
// expect none to).
#include <time.h>

#include "pe_check.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Busy until `when` (forever if NULL): seconds, or a file to appear;
// touching nothing of the library.
static void compute(const char *when)
{
    volatile unsigned long x = 0;
    int file = when != NULL && when[0] == '/';
    double until = when != NULL && !file ? now_s() + atof(when) : 0;
    for (;;) {
        if (file && access(when, F_OK) == 0)
            return;
        if (when != NULL && !file && now_s() >= until)
            return;
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: launcher compute|finalize S|report S\n");
        return 2;
    }
    const char *mode = argv[1];
    const char *when = argc > 2 ? argv[2] : "0";
    shmem_init();
    pe_begin("launcher");
    shmem_barrier_all();
    if (pe_me_g == 0) {
        printf("launcher: ready (%d PEs)\n", pe_npes_g);
        fflush(stdout);
    }
    if (strcmp(mode, "compute") == 0) {
        pe_step("computing for ever");
        compute(NULL);
    } else if (strcmp(mode, "finalize") == 0) {
        pe_step("computing until %s, then shmem_finalize", when);
        compute(when);
        pe_step("shmem_finalize");
        shmem_finalize();
    } else if (strcmp(mode, "report") == 0) {
        if (pe_me_g == 1) {
            pe_step("computing until %s, then shmem_global_exit", when);
            compute(when);
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            fprintf(stderr, "PE 1: reporting: shmem_global_exit(5) report_epoch_ms=%lld\n",
                    (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
            shmem_global_exit(5);
        }
        pe_step("barrier (PE 1 reports instead)");
        shmem_barrier_all();
    } else {
        fprintf(stderr, "launcher: unknown mode '%s'\n", mode);
        return 2;
    }
    fprintf(stderr, "launcher: PE %d finished\n", pe_me_g);
    return 0;
}
