// SPDX-License-Identifier: BSD-3-Clause
//
// Limits oshrun runs into, checked before anything starts (issue 28): a job
// that cannot have the descriptors or processes it needs is refused with
// the limit, what is in use and what is needed, instead of hanging in the
// PMIx server (seen with 40 PEs under ulimit -n 24: its data store stayed
// locked by a PE that failed half-way) or failing at the k-th fork.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runtime/rt.h"

#include "oshrun.h"

// Descriptors oshrun holds: its own (the PMIx server's listeners and data
// store, pipes, signalfd) and per PE one PMIx connection, and the two
// output pipes of --tag-output.
#define OSR_NOFILE_BASE 20
#define OSR_TASKS_BASE 4 // oshrun's threads and its sweeper process
#define OSR_PE_TASKS_MIN 4 // a PE's main thread, PMIx's, the watchdog, the heap's server

int osr_limits_check(const osr_opts_t *o)
{
    struct rlimit rl;
    long need = OSR_NOFILE_BASE + (long)o->npes * (o->tag_output ? 3 : 1);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)need) {
        // The soft limit may go up to the hard one: the PEs get it too
        // (a connection-based fabric needs descriptors in every PE).
        rlim_t old = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= (rlim_t)need) {
            if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
                if (o->debug)
                    fprintf(stderr, OSR_NAME ": [debug] open files limit raised from %llu to %llu\n",
                            (unsigned long long)old, (unsigned long long)rl.rlim_cur);
                goto nproc;
            }
        }
        fprintf(stderr,
                OSR_NAME ": %d PEs need about %ld open files in oshrun (one PMIx connection "
                         "per PE%s, and %d of its own), but it may open %llu (ulimit -n; hard "
                         "limit %llu): raise the limit (ulimit -n %ld; PEs over tcp need about "
                         "%d each) or run fewer PEs\n",
                o->npes, need, o->tag_output ? " and two output pipes" : "", OSR_NOFILE_BASE,
                (unsigned long long)old, (unsigned long long)rl.rlim_max, need,
                shm_rt_nofile_need(o->npes));
        return 1;
    }
nproc:
    // RLIMIT_NPROC counts every process and thread of the user; root is
    // exempt from it.
    if (geteuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    long used = shm_rt_user_tasks();
    long min = OSR_TASKS_BASE + (long)o->npes * OSR_PE_TASKS_MIN;
    long full = OSR_TASKS_BASE + (long)o->npes * SHM_RT_PE_THREADS;
    if (used < 0 || (long)rl.rlim_cur - used >= full)
        return 0;
    if ((long)rl.rlim_max - used >= full || rl.rlim_max == RLIM_INFINITY) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NPROC, &rl) == 0)
            return 0;
    }
    int refuse = (long)rl.rlim_cur - used < min;
    fprintf(stderr,
            OSR_NAME ": %s%d PEs need up to %ld processes and threads (each PE runs %d to %d "
                     "threads, oshrun %d), but this user may run %llu (ulimit -u) and runs %ld "
                     "already: raise the limit (ulimit -u %ld) or run fewer PEs\n",
            refuse ? "" : "warning: ", o->npes, full, OSR_PE_TASKS_MIN, SHM_RT_PE_THREADS,
            OSR_TASKS_BASE, (unsigned long long)rl.rlim_cur, used, used + full);
    return refuse ? 1 : 0;
}

void osr_limits_fork_failed(int rank, int err, int left)
{
    char hint[512] = "";
    if (err == EAGAIN)
        shm_rt_hint_nproc(hint, sizeof hint, (long)left * SHM_RT_PE_THREADS);
    fprintf(stderr, OSR_NAME ": cannot start PE %d (fork: %s)%s\n", rank, strerror(err), hint);
}
