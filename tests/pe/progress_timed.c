// SPDX-License-Identifier: BSD-3-Clause
//
// The progress thread as a timed poller (SHMEM_PROGRESS_THREAD=poll, the
// default on sockets): it wakes now and then instead of sleeping on the
// fabric's wait object, shortly after traffic, rarely when none comes
// (ofi_progress.c). The same checks hold for the other modes (tcp's
// default sleeps on the wait object; shm's on same-host wake-ups), and run
// on them too. Two things a user would check:
//
//  1. idle: every PE sleeps 2 s without calling the library; the process's
//     CPU time meanwhile (the progress thread's) stays under 10% of a core.
//     A poller that spun, or never backed off from its short interval on a
//     loaded machine, fails it.
//  2. late peer: PE 0 computes (no library call) and PE 1 waits 2 s before
//     it talks to it, so PE 0's poller has backed off to its longest
//     interval; then PE 1 gets, fetch-adds and puts 40 times in a row, each
//     needing PE 0's progress on providers that move data only while the
//     target polls. They must all finish within 10 s (a poller that looked
//     once a second would take 80 s), with the right values.
#include "pe_check.h"

#include <sys/resource.h>

#define LATE_OPS 40

static long garr_g[LATE_OPS];
static long counter_g;
static volatile int done_g;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void part_idle(void)
{
    pe_step("idle: every PE sleeps 2 s without a library call");
    shmem_barrier_all();
    double c0 = cpu_s(), t0 = now_s();
    sleep_s(2.0);
    double cpu = cpu_s() - c0, wall = now_s() - t0;
    PE_EXPECT(cpu < 0.1 * wall,
              "idle PE %d used %.3f s of CPU in %.2f s asleep (%.1f%% of a core; limit 10%%)",
              pe_me_g, cpu, wall, 100.0 * cpu / wall);
    shmem_barrier_all();
}

static void part_late(void)
{
    int me = pe_me_g;
    for (int i = 0; i < LATE_OPS; i++)
        garr_g[i] = 1000L * me + i;
    counter_g = 0;
    done_g = 0;
    shmem_barrier_all();
    pe_step("late peer: PE 1 waits 2 s, then works on computing PE 0's memory");
    if (me == 0) {
        double t0 = now_s(), x = 1.0;
        while (!done_g && now_s() - t0 < 60.0)
            x = x * 1.0000001 + 1e-9; /* work, no library call */
        PE_EXPECT(done_g == 1, "PE 0 computed %.1f s and PE 1's operations never completed",
                  now_s() - t0);
        if (x < 0)
            printf("%g\n", x);
    } else if (me == 1) {
        sleep_s(2.0);
        double t0 = now_s();
        for (int i = 0; i < LATE_OPS; i++) {
            long v = shmem_long_g(&garr_g[i], 0);
            PE_EXPECT_EQ(v, (long)i, "get %d of computing PE 0's garr", i);
            long old = shmem_long_atomic_fetch_add(&counter_g, 3, 0);
            PE_EXPECT_EQ(old, 3L * i, "fetch_add %d on computing PE 0's counter", i);
            shmem_long_p(&garr_g[i], -i, 0);
            shmem_quiet();
        }
        shmem_int_p((int *)&done_g, 1, 0);
        shmem_quiet();
        double took = now_s() - t0;
        PE_EXPECT(took < 10.0,
                  "%d gets, fetch-adds and puts on a PE computing for 2 s already took %.1f s",
                  LATE_OPS, took);
    }
    shmem_barrier_all();
    if (me == 0) {
        PE_EXPECT_EQ(counter_g, 3L * LATE_OPS, "PE 0's counter after PE 1's fetch-adds");
        for (int i = 0; i < LATE_OPS; i++)
            PE_EXPECT_EQ(garr_g[i], (long)-i, "PE 0's garr[%d] after PE 1's put", i);
    }
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    pe_begin("progress_timed");
    if (pe_npes_g < 2) {
        printf("progress_timed needs 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    part_idle();
    part_late();
    shmem_finalize();
    return pe_end();
}
