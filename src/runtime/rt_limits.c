// SPDX-License-Identifier: BSD-3-Clause
/*
 * What a PE can run out of, said with the limit, what is in use and what is
 * needed: appended to the message of the failure it caused (open files,
 * processes and threads, address space) or said up front (/dev/shm for
 * libfabric's shm provider). Only error paths and start-up call these.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "runtime/rt.h"

/* Descriptors open in this process. */
static int open_files(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own */
}

static void limit_str(rlim_t v, char *buf, size_t len)
{
    if (v == RLIM_INFINITY)
        snprintf(buf, len, "unlimited");
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
}

int shm_rt_nofile_need(int npes)
{
    return SHM_RT_NOFILE_BASE + 2 * (npes > 1 ? npes - 1 : 0);
}

size_t shm_rt_hint_nofile(char *buf, size_t len, const char *who, int npes, int force)
{
    struct rlimit rl;
    int open = open_files();
    buf[0] = '\0';
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (open < 0) /* /proc/self/fd could not be opened: no descriptor left */
        open = rl.rlim_cur == RLIM_INFINITY ? 0 : (int)rl.rlim_cur;
    if (!force && (rl.rlim_cur == RLIM_INFINITY || (rlim_t)open + 8 < rl.rlim_cur))
        return 0;
    char cur[32], max[32];
    limit_str(rl.rlim_cur, cur, sizeof cur);
    limit_str(rl.rlim_max, max, sizeof max);
    int need = shm_rt_nofile_need(npes), n;
    if (npes > 0)
        n = snprintf(buf, len,
                     ": %s has %d files open and may open %s (ulimit -n; hard limit %s); a "
                     "connection-based fabric (tcp;ofi_rxm) holds up to 2 per peer PE it talks "
                     "to, per context, so a job of %d PEs needs about %d besides the program's "
                     "own files: raise the limit (ulimit -n %d in the job script, or the "
                     "launcher's or scheduler's setting)",
                     who, open, cur, max, npes, need,
                     open + 8 >= need ? open + 2 * npes + 16 : need);
    else
        n = snprintf(buf, len,
                     ": %s has %d files open and may open %s (ulimit -n; hard limit %s): raise "
                     "the limit (ulimit -n in the job script, or the launcher's or scheduler's "
                     "setting)",
                     who, open, cur, max);
    return n > 0 ? (size_t)n : 0;
}

/* Tasks (processes and threads) of this real user, as RLIMIT_NPROC counts. */
long shm_rt_user_tasks(void)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return -1;
    uid_t me = getuid();
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char path[288], line[256];
        snprintf(path, sizeof path, "/proc/%s/status", de->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        long uid = -1, threads = 0;
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "Uid:", 4) == 0)
                uid = strtol(line + 4, NULL, 10);
            else if (strncmp(line, "Threads:", 8) == 0)
                threads = strtol(line + 8, NULL, 10);
        }
        fclose(f);
        if (uid == (long)me)
            n += threads;
    }
    closedir(d);
    return n;
}

size_t shm_rt_hint_nproc(char *buf, size_t len, long need)
{
    struct rlimit rl;
    buf[0] = '\0';
    /* Not enforced for root (CAP_SYS_RESOURCE/ADMIN): not the cause there. */
    if (getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || geteuid() == 0)
        return 0;
    long used = shm_rt_user_tasks();
    int n = snprintf(buf, len,
                     ": this user may run %llu processes and threads (ulimit -u) and runs %ld; "
                     "a PE runs up to %d threads",
                     (unsigned long long)rl.rlim_cur, used, SHM_RT_PE_THREADS);
    if (n > 0 && need > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", so about %ld more are needed: raise it (ulimit -u %ld)",
                      need, used + need);
    return n > 0 ? (size_t)n : 0;
}

/* The largest private mapping that fits now, to the MiB (bisection over
 * reservations that are released at once). */
static size_t largest_mappable(void)
{
    size_t lo = 0, hi = (size_t)1 << 47;
    while (hi - lo > ((size_t)1 << 20)) {
        size_t mid = lo + (hi - lo) / 2;
        void *p = mmap(NULL, mid, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            hi = mid;
        } else {
            munmap(p, mid);
            lo = mid;
        }
    }
    return lo;
}

/* This process's mapped size (VmSize), bytes. */
static size_t mapped_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0)
            kb = strtoull(line + 7, NULL, 10);
    if (f)
        fclose(f);
    return kb * 1024;
}

/* "812 MiB", "12.0 GiB", "100.0 TiB" */
static const char *size_str(size_t b, char *buf, size_t len)
{
    if (b < ((size_t)10 << 30))
        snprintf(buf, len, "%zu MiB", b >> 20);
    else if (b < ((size_t)10 << 40))
        snprintf(buf, len, "%.1f GiB", (double)b / (double)((size_t)1 << 30));
    else
        snprintf(buf, len, "%.1f TiB", (double)b / (double)((size_t)1 << 40));
    return buf;
}

size_t shm_rt_hint_mapping(char *buf, size_t len, size_t need)
{
    struct rlimit rl;
    size_t fit = largest_mappable(), used = mapped_now();
    char f[32], nd[32];
    int n;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        n = snprintf(buf, len,
                     ": this PE may map %llu KiB in all (ulimit -v), maps %zu KiB already and "
                     "could map at most %s more; it needs %s: raise the limit to at least %zu KiB "
                     "(ulimit -v) or lower SHMEM_SYMMETRIC_SIZE",
                     (unsigned long long)(rl.rlim_cur / 1024), used / 1024,
                     size_str(fit, f, sizeof f), size_str(need, nd, sizeof nd),
                     (used + need) / 1024 + 1);
    else
        n = snprintf(buf, len,
                     ": the largest mapping this PE could make now is %s (the machine's address "
                     "space, or its overcommit settings); it needs %s: lower SHMEM_SYMMETRIC_SIZE",
                     size_str(fit, f, sizeof f), size_str(need, nd, sizeof nd));
    return n > 0 ? (size_t)n : 0;
}

size_t shm_rt_hint_devshm(char *buf, size_t len, int local_pes)
{
    struct statvfs sv;
    buf[0] = '\0';
    if (statvfs("/dev/shm", &sv) != 0)
        return 0;
    unsigned long long free_mib = (unsigned long long)sv.f_bavail * sv.f_frsize >> 20;
    unsigned long long need = (unsigned long long)local_pes * SHM_RT_DEVSHM_PER_PE_MIB;
    if (free_mib >= need)
        return 0;
    int n = snprintf(buf, len,
                     "/dev/shm has %llu MiB free, and libfabric's shm provider keeps up to %d MiB "
                     "there per PE (two 16 MiB regions, filled as traffic grows): the %d PEs of "
                     "this host need about %llu MiB, else a PE may die of SIGBUS; give /dev/shm "
                     "more (e.g. docker --shm-size=%llum), or run without a fabric "
                     "(SHMEM_FABRIC=auto, one host) or over SHMEM_OFI_PROVIDER='tcp;ofi_rxm'",
                     free_mib, SHM_RT_DEVSHM_PER_PE_MIB, local_pes, need, need + 64);
    return n > 0 ? (size_t)n : 0;
}
