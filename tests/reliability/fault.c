// SPDX-License-Identifier: BSD-3-Clause
//
// fault MODE [VICTIM]: one PE (VICTIM, default 1) fails in the way MODE says
// while every other PE waits in shmem_barrier_all. The job must end: the
// test is registered with EXPECT_FAILURE, and expect_failure.sh checks the
// exit status, the time from the fault to the end of the job (the victim
// prints death_epoch_ms=N just before the fault), that every process of the
// job is gone, that no /dev/shm file and no oshrun temp dir is left, and that
// exactly one message names the PE and how it failed.
//
// MODE:
//   kill segv term abrt bus    die by that signal (segv and bus are real faults)
//   exit0 exit3                _exit(n): end without shmem_finalize or atexit
//   return3                    return 3 from main without shmem_finalize
//                              (the library finalizes at exit: status 3, no fault)
//   global_exit7               shmem_global_exit(7)
//   hang                       sleep forever (oshrun --timeout must end the job)
//   hang_noterm                as hang, ignoring SIGTERM (oshrun must SIGKILL it)
//   kill_in_put                die by SIGKILL while the others stream puts to it
#include <signal.h>
#include <sys/mman.h>
#include <time.h>

#include "pe_check.h"

static void say_death(const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "PE %d: fault: %s death_epoch_ms=%lld\n", pe_me_g, what,
            (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    fflush(stderr);
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static int fault(const char *mode)
{
    if (strcmp(mode, "kill") == 0 || strcmp(mode, "kill_in_put") == 0) {
        say_death("SIGKILL");
        raise(SIGKILL);
    } else if (strcmp(mode, "segv") == 0) {
        say_death("segmentation fault");
        volatile int *volatile nowhere = NULL; // the compiler can neither see nor drop it
        *nowhere = 1;
    } else if (strcmp(mode, "bus") == 0) {
        // Touching a page of a file mapping beyond the end of the file: SIGBUS.
        FILE *f = tmpfile();
        if (f == NULL)
            return 2;
        volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
        if (p == MAP_FAILED)
            return 2;
        say_death("bus error");
        (void)p[0];
    } else if (strcmp(mode, "term") == 0) {
        say_death("SIGTERM");
        raise(SIGTERM);
    } else if (strcmp(mode, "abrt") == 0) {
        say_death("abort()");
        abort();
    } else if (strcmp(mode, "exit0") == 0) {
        say_death("_exit(0) without shmem_finalize");
        _exit(0);
    } else if (strcmp(mode, "exit3") == 0) {
        say_death("_exit(3) without shmem_finalize");
        _exit(3);
    } else if (strcmp(mode, "global_exit7") == 0) {
        say_death("shmem_global_exit(7)");
        shmem_global_exit(7);
    } else if (strcmp(mode, "hang") == 0) {
        sleep_forever();
    } else if (strcmp(mode, "hang_noterm") == 0) {
        // Ignored, not blocked: a mask is per thread and the library's
        // threads would still take the signal for the process.
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        sleep_forever();
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    static const char *const modes[] = {"kill", "segv", "bus", "term", "abrt", "exit0", "exit3",
                                        "return3", "global_exit7", "hang", "hang_noterm",
                                        "kill_in_put"};
    int known = 0;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        known |= strcmp(mode, modes[i]) == 0;
    if (!known) {
        fprintf(stderr, "usage: %s MODE [VICTIM]: unknown mode '%s'\n", argv[0], mode);
        return 2;
    }

    shmem_init();
    pe_begin("fault");
    // A hang is for oshrun --timeout to end, not for the test's own watchdog.
    if (strncmp(mode, "hang", 4) == 0)
        alarm(0);
    if (victim < 0 || victim >= pe_npes_g) {
        fprintf(stderr, "PE %d: victim %d is not a PE of this job\n", pe_me_g, victim);
        return 2;
    }
    long *buf = shmem_calloc(1 << 16, sizeof(long));
    shmem_barrier_all(); // everybody is up

    if (strcmp(mode, "kill_in_put") == 0) {
        // The victim dies while the others stream puts into it (and into each
        // other): the fault lands in the middle of data transfers, not in a barrier.
        static long src[1 << 16];
        if (pe_me_g == victim) {
            pe_usleep(20000);
            fault(mode);
        }
        pe_step("streaming puts to PE %d while it dies", victim);
        for (long i = 0;; i++) {
            src[0] = i;
            shmem_long_put_nbi(buf, src, 1 << 16, victim);
            shmem_long_p(buf + (i & 0xffff), i, victim);
            if ((i & 15) == 0)
                shmem_quiet();
        }
    }
    if (strcmp(mode, "return3") == 0) {
        if (pe_me_g == victim) {
            fprintf(stderr, "PE %d: returning 3 from main without shmem_finalize\n", pe_me_g);
            return 3; // not finalized at exit (status 3): oshrun ends the job
        }
        pe_step("finalize while PE %d returns 3 without shmem_finalize", victim);
        shmem_finalize();
        return 0;
    }
    if (pe_me_g == victim) {
        int rc = fault(mode);
        fprintf(stderr, "PE %d: fault '%s' did not end this process (rc %d)\n", pe_me_g, mode,
                rc);
        return 2;
    }
    pe_step("barrier_all with PE %d failing (%s): oshrun must end the job", victim, mode);
    shmem_barrier_all();
    // Not reached when the launcher does its job.
    fprintf(stderr, "PE %d: shmem_barrier_all returned although PE %d failed (%s)\n", pe_me_g,
            victim, mode);
    return 1;
}
