// SPDX-License-Identifier: BSD-3-Clause
//
// progress_cost: what asynchronous progress costs and buys.
//
//   idle     every PE sleeps S seconds without calling the library; each
//            reports the CPU time its process used meanwhile (progress
//            thread included): the cost of an idle progress engine.
//   serve    PE 0 computes for S seconds (a loop, no library call) while the
//            other PEs stream 8-byte puts into a global of PE 0 and a fetching
//            atomic every 64 puts; reports the operations completed, the
//            fetching atomics' mean latency and PE 0's CPU time beyond its
//            own compute loop.
//
// Usage: oshrun -n 2 progress_cost [idle|serve] [seconds]  (one CSV line per PE)
// Compare SHMEM_PROGRESS_THREAD=auto (default) with =off on each provider.
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long sink_g[64];
static long counter_g;
static volatile int stop_g;

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

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "idle";
    double secs = argc > 2 ? atof(argv[2]) : 3.0;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (me == 0)
        printf("mode,pe,npes,seconds,cpu_s,ops,fetch_lat_us\n");
    shmem_barrier_all();
    if (strcmp(mode, "idle") == 0) {
        double c0 = cpu_s();
        struct timespec ts = {.tv_sec = (time_t)secs,
                              .tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9)};
        nanosleep(&ts, NULL);
        double c = cpu_s() - c0;
        shmem_barrier_all();
        printf("idle,%d,%d,%.2f,%.4f,0,0\n", me, n, secs, c);
    } else if (strcmp(mode, "serve") == 0) {
        if (me == 0) {
            double c0 = cpu_s(), t0 = now_s(), x = 1.0;
            while (now_s() - t0 < secs)
                x = x * 1.0000001 + 1e-9;
            stop_g = 1;
            double c = cpu_s() - c0 - (now_s() - t0); /* beyond the compute loop's core */
            printf("serve,%d,%d,%.2f,%.4f,%ld,0%s\n", me, n, secs, c, counter_g,
                   x < 0 ? " " : "");
            for (int pe = 1; pe < n; pe++)
                shmem_int_p((int *)&stop_g, 1, pe);
        } else {
            long ops = 0, fetches = 0;
            double flat = 0;
            long v = me;
            while (!stop_g) {
                shmem_long_put(&sink_g[me % 64], &v, 1, 0);
                if (++ops % 64 == 0) {
                    double t = now_s();
                    shmem_long_atomic_fetch_add(&counter_g, 1, 0);
                    flat += now_s() - t;
                    fetches++;
                }
            }
            shmem_quiet();
            printf("serve,%d,%d,%.2f,0,%ld,%.2f\n", me, n, secs, ops,
                   fetches ? flat / (double)fetches * 1e6 : 0.0);
        }
        shmem_barrier_all();
    } else {
        if (me == 0)
            fprintf(stderr, "progress_cost: unknown mode '%s' (idle|serve)\n", mode);
        shmem_finalize();
        return 2;
    }
    shmem_finalize();
    return 0;
}
