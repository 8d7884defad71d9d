// SPDX-License-Identifier: BSD-3-Clause
/*
 * startup: the smallest OpenSHMEM job (issue 16). shmem_init, one barrier,
 * shmem_finalize; run_startup.sh times the whole process from outside.
 *
 *   startup [--sockets] [--alltoall] [--csv FILE]
 *
 * --sockets: each PE counts the sockets in /proc/self/fd (socket pairs and
 * the launcher's connection included) and reads its resident memory right
 * after shmem_init returns (after_init: before it talks to anyone, though a
 * peer that returned sooner may already have connected to it), after the
 * first barriers and one put to PE 0 (after_barrier) and, with --alltoall,
 * after an all-to-all of one long per PE pair, by puts; PE 0 prints
 * "sockets WHEN min A max B npes N; rss kB min max mean" for each; with
 * --csv it appends "when,npes,min,max,rss_mean_kb". Only calls of
 * OpenSHMEM 1.4, so the same source builds with Open MPI's oshcc.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>

static long count_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    struct dirent *de;
    char target[64];
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        ssize_t len = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (strncmp(target, "socket:", 7) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* Reductions by puts and a barrier: the 1.4 API of Open MPI's OSHMEM has no
 * team reductions, and this must build with both. */
#define MAX_PES 65536
static long counts[MAX_PES], rss[MAX_PES];

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void min_max(const long *v, int n, long *mn_p, long *mx_p, double *avg_p)
{
    long mn = v[0], mx = v[0];
    double sum = 0;
    for (int i = 0; i < n; i++) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
        sum += (double)v[i];
    }
    *mn_p = mn;
    *mx_p = mx;
    *avg_p = sum / n;
}

/* Reports socket counts and RSS sampled before (sock >= 0) or now. */
static void report(const char *when, long sock, long res, FILE *csv)
{
    int n = shmem_n_pes();
    if (sock < 0) {
        sock = count_sockets();
        res = rss_kb();
    }
    shmem_long_p(&counts[shmem_my_pe()], sock, 0);
    shmem_long_p(&rss[shmem_my_pe()], res, 0);
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        long mn, mx, rmn, rmx;
        double avg, ravg;
        min_max(counts, n, &mn, &mx, &avg);
        min_max(rss, n, &rmn, &rmx, &ravg);
        printf("sockets %s min %ld max %ld npes %d; rss kB min %ld max %ld mean %.0f\n", when, mn,
               mx, n, rmn, rmx, ravg);
        if (csv)
            fprintf(csv, "%s,%d,%ld,%ld,%.0f\n", when, n, mn, mx, ravg);
    }
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    int sockets = 0, alltoall = 0;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sockets") == 0)
            sockets = 1;
        else if (strcmp(argv[i], "--alltoall") == 0)
            alltoall = 1;
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--sockets] [--alltoall] [--csv FILE]\n", argv[0]);
            return 2;
        }
    }
    shmem_init();
    /* Sampled before this PE talks to anyone (a peer that returned from
     * init sooner may already have connected to it for the barrier). */
    long init_sock = sockets ? count_sockets() : 0, init_rss = sockets ? rss_kb() : 0;
    shmem_barrier_all();
    /* A peer library that crashes in finalize still started the job. */
    if (shmem_my_pe() == 0) {
        printf("startup: %d PEs up\n", shmem_n_pes());
        fflush(stdout);
    }
    if (sockets) {
        FILE *csv = NULL;
        if (csv_path && shmem_my_pe() == 0 && (csv = fopen(csv_path, "a")) == NULL)
            perror(csv_path);
        report("after_init", init_sock, init_rss, csv);
        report("after_barrier", -1, 0, csv);
        if (alltoall) {
            /* Every PE writes one word to every other PE: each pair talks. */
            int n = shmem_n_pes(), me = shmem_my_pe();
            long *slot = shmem_malloc((size_t)n * sizeof(long));
            if (slot == NULL) {
                fprintf(stderr, "PE %d: shmem_malloc failed\n", me);
                shmem_global_exit(1);
            }
            shmem_barrier_all();
            for (int k = 1; k <= n; k++) {
                int pe = (me + k) % n;
                shmem_long_p(&slot[me], (long)me * n + pe, pe);
            }
            shmem_barrier_all();
            for (int i = 0; i < n; i++)
                if (slot[i] != (long)i * n + me) {
                    fprintf(stderr, "PE %d: slot[%d] = %ld, want %ld\n", me, i, slot[i],
                            (long)i * n + me);
                    shmem_global_exit(1);
                }
            report("after_alltoall", -1, 0, csv);
            shmem_free(slot);
        }
        if (csv)
            fclose(csv);
    }
    shmem_finalize();
    return 0;
}
