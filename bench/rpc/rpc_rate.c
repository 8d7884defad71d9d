/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Aggregate RPC rate: one server, 1..16 client processes, each keeping a
 * window of small calls in flight, with the server receiving into
 * FI_MULTI_RECV buffers versus one buffer per request.
 *   rpc_rate [-p PROV] [-t SECONDS] [-w WINDOW] [-s BYTES] [-c 1,2,4,8,16] [-r ROUNDS]
 *            [--pin] [--csv FILE] [-b] [-m mr|1b]
 * --pin gives the server CPU 0 to itself and the clients the other CPUs, as
 * a service with a dedicated core would run; without it the scheduler
 * shares every core among all processes. -b busy-polls on both sides
 * (server orpc_progress(0), clients orpc_test) instead of idling politely:
 * the setting to compare with Mercury's perf programs run with -b.
 * -m runs one receive mode only (mr: multi-recv, 1b: one buffer per request).
 * --transport compares instead the same-host queues (SHMEM_RPC_SAME_HOST=1)
 * with the provider (SHMEM_RPC_SAME_HOST=0), both receiving into multi-recv
 * buffers: with -c 1 and -w 1 / -w 16, the "1 / 16 in flight" rows of
 * Mercury's hg_rate.
 * --contexts 1,2,4 compares instead servers of 1, 2, 4 service contexts,
 * each context driven by a progress thread of its own (server threads =
 * contexts), receiving into multi-recv buffers (-m 1b: one buffer per
 * request); clients spread their calls
 * round robin. The table shows each rate and the median per-round ratio to
 * the first count. -W US gives every call US microseconds of CPU work in
 * the handler (thread CPU time, so preemption does not count), for a
 * service whose handlers compute: where a server thread, not the clients,
 * is what limits the rate.
 * Every process is forked from this one before it touches libfabric. The
 * two modes alternate, ROUNDS times per client count; the table shows the
 * medians and the median of the per-round ratios (this machine is noisy).
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "ofishmem_rpc.h"
#include "rpc_bench.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile sig_atomic_t stop_g;
static int busy_g;
static void on_term(int s)
{
    (void)s;
    stop_g = 1;
}

/* -W: CPU work of each call in the handler, in us (a service that computes). */
static double work_us_g;

static void h_echo(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    if (work_us_g > 0) {
        struct timespec t0, t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) / 1e3 < work_us_g);
    }
    orpc_respond(c, 0, in, n);
}

/* --pin: the server alone on CPU 0, the clients on the other CPUs. */
static int pin_g;
/* --transport: mode 1 is the same-host queues, mode 0 the provider. */
static int transport_g;

/* In a forked child, before it reads the environment (at its orpc_open). */
static int child_mode(int multi)
{
    if (!transport_g)
        return multi;
    setenv("SHMEM_RPC_SAME_HOST", multi ? "1" : "0", 1);
    return 1;
}
static void pin_to(int cpu)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0) { /* a client: every CPU but 0 */
        for (long c = n > 1 ? 1 : 0; c < n; c++)
            CPU_SET((int)c, &set);
    } else {
        CPU_SET(cpu, &set);
    }
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("rpc_rate: sched_setaffinity");
}

/* --contexts: the server's service contexts (0: one, driven by this thread). */
static int nctx_g;

static int server_main(const char *prov, int multi, const char *addr_file, const char *key_file)
{
    signal(SIGTERM, on_term);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    o.multi_recv = multi;
    o.auth_key_file = key_file;
    if (nctx_g > 0) { /* a progress thread per context */
        o.contexts = nctx_g;
        o.progress_thread = 1;
    }
    orpc_t *rpc;
    if (orpc_open(&o, &rpc) != ORPC_OK)
        return 1;
    orpc_register(rpc, "bench.echo", h_echo, NULL, 0, NULL);
    if (rpcb_publish_addr(rpc, addr_file) != 0)
        return 1;
    while (!stop_g) {
        if (nctx_g > 0)
            usleep(10000);
        else
            orpc_progress(rpc, busy_g ? 0 : 1);
    }
    /* Receive buffers posted again per request (what multi-recv saves), and
     * the server's CPU time: a cost per call that, unlike the rate, does not
     * depend on how the scheduler shares the cores among the processes. */
    orpc_stats_t st;
    orpc_stats(rpc, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
                 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    char tmp[700];
    snprintf(tmp, sizeof(tmp), "%s.stats", addr_file);
    FILE *f = fopen(tmp, "w");
    if (f != NULL) {
        fprintf(f, "%llu %llu %.6f\n", (unsigned long long)st.requests,
                (unsigned long long)st.reposts, cpu);
        fclose(f);
    }
    orpc_close(rpc);
    return 0;
}

static int client_main(const char *addr_file, const char *key_file, double start, double secs,
                       int window, size_t size, int fd)
{
    char addr[ORPC_ADDR_STRLEN], key[700];
    if (rpcb_read_addr(addr_file, addr, sizeof(addr), 4000) != 0)
        return 1;
    snprintf(key, sizeof(key), "@%s", key_file);
    orpc_t *rpc;
    orpc_peer_t *srv;
    if (orpc_open(NULL, &rpc) != ORPC_OK || orpc_lookup(rpc, addr, key, &srv) != ORPC_OK)
        return 1;
    uint64_t id = orpc_id("bench.echo");
    char *in = calloc(1, size + 1), *out = calloc((size_t)window, size + 1);
    orpc_req_t **req = calloc((size_t)window, sizeof(*req));
    size_t got;
    for (int i = 0; i < 200; i++) /* warm-up: connection, caches */
        if (orpc_call(rpc, srv, id, in, size, out, size, &got, 10000) != 0)
            return 1;
    /* Start together: every client measures the same interval. */
    while (now_s() < start)
        usleep(1000);
    double t0 = now_s(), end = t0 + secs;
    uint64_t done = 0;
    for (int i = 0; i < window; i++)
        if (orpc_icall(rpc, srv, id, in, size, out + (size_t)i * size, size, 10000, &req[i]))
            return 1;
    /* Oldest first: orpc_wait idles politely (spin, yield, sleep) on a
     * machine with more processes than cores. */
    while (now_s() < end) {
        for (int i = 0; i < window; i++) {
            int rc;
            if (busy_g)
                while ((rc = orpc_test(req[i], &got)) == ORPC_EAGAIN)
                    ;
            else
                rc = orpc_wait(req[i], &got);
            if (rc != 0)
                return 1;
            done++;
            if (orpc_icall(rpc, srv, id, in, size, out + (size_t)i * size, size, 10000, &req[i]))
                return 1;
        }
    }
    double el = now_s() - t0;
    for (int i = 0; i < window; i++)
        orpc_wait(req[i], &got);
    double rate = done / el;
    if (write(fd, &rate, sizeof(rate)) != sizeof(rate))
        return 1;
    orpc_peer_release(srv);
    orpc_close(rpc);
    return 0;
}

/* One measurement: server + n clients; returns calls per second (all clients)
 * the server's receive-buffer reposts per request and its CPU us per request. */
static double run(const char *prov, int multi, int n, double secs, int window, size_t size,
                  double *reposts_p, double *cpu_us_p)
{
    char dir[] = "/tmp/orpc-rate.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return -1;
    char af[600], kf[600];
    snprintf(af, sizeof(af), "%s/addr", dir);
    snprintf(kf, sizeof(kf), "%s/key", dir);
    pid_t srv = fork();
    if (srv == 0) {
        if (pin_g)
            pin_to(0);
        _exit(server_main(prov, child_mode(multi), af, kf));
    }
    for (int i = 0; i < 400 && access(af, R_OK) != 0; i++)
        usleep(10000);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t *cl = calloc((size_t)n, sizeof(pid_t));
    /* Time enough for every client to connect and warm up first. */
    double start = now_s() + 0.5 + 0.1 * n;
    for (int i = 0; i < n; i++) {
        cl[i] = fork();
        if (cl[i] == 0) {
            close(fds[0]);
            child_mode(multi);
            if (pin_g)
                pin_to(-1);
            _exit(client_main(af, kf, start, secs, window, size, fds[1]));
        }
    }
    close(fds[1]);
    double total = 0, r;
    int got = 0;
    while (read(fds[0], &r, sizeof(r)) == sizeof(r)) {
        total += r;
        got++;
    }
    close(fds[0]);
    for (int i = 0; i < n; i++)
        waitpid(cl[i], NULL, 0);
    kill(srv, SIGTERM);
    waitpid(srv, NULL, 0);
    char sf[620];
    snprintf(sf, sizeof(sf), "%s.stats", af);
    FILE *f = fopen(sf, "r");
    unsigned long long nreq = 0, nrep = 0;
    double cpu = 0;
    if (f) {
        if (fscanf(f, "%llu %llu %lf", &nreq, &nrep, &cpu) != 3)
            nreq = 0;
        fclose(f);
        unlink(sf);
    }
    *reposts_p = nreq ? (double)nrep / (double)nreq : -1;
    *cpu_us_p = nreq ? cpu * 1e6 / (double)nreq : -1;
    unlink(af);
    unlink(kf);
    rmdir(dir);
    free(cl);
    return got == n ? total : -1;
}

/* --contexts: servers of each context count in turn, every round. */
static int contexts_table(const char *prov, const int *counts, int nc, char *ctx_list,
                          double secs, int window, size_t size, int rounds, int multi, FILE *cf)
{
    int ctxs[8], nx = 0;
    for (char *t = strtok(ctx_list, ","); t && nx < 8; t = strtok(NULL, ","))
        ctxs[nx++] = atoi(t);
    printf("%-8s", "clients");
    for (int x = 0; x < nx; x++)
        printf(" %11d ctx", ctxs[x]);
    for (int x = 1; x < nx; x++)
        printf(" %6d/%d", ctxs[x], ctxs[0]);
    for (int x = 0; x < nx; x++)
        printf(" %9s%d", "us/req ", ctxs[x]);
    printf("\n# (calls/s; ratios: median of per-round ratios; us/req: server CPU per request)\n");
    for (int i = 0; i < nc; i++) {
        double v[8][BENCH_MAX_REPS], q[8][BENCH_MAX_REPS], u[8][BENCH_MAX_REPS], rr;
        for (int k = 0; k < rounds; k++)
            for (int x = 0; x < nx; x++) {
                nctx_g = ctxs[x];
                v[x][k] = run(prov, multi, counts[i], secs, window, size, &rr, &u[x][k]);
                if (v[x][k] <= 0) {
                    fprintf(stderr, "rpc_rate: a run with %d clients, %d contexts failed\n",
                            counts[i], ctxs[x]);
                    return 1;
                }
                q[x][k] = v[x][k] / v[0][k];
            }
        printf("%-8d", counts[i]);
        for (int x = 0; x < nx; x++)
            printf(" %15.0f", bench_median(v[x], rounds));
        for (int x = 1; x < nx; x++)
            printf(" %8.2f", bench_median(q[x], rounds));
        for (int x = 0; x < nx; x++)
            printf(" %10.2f", bench_median(u[x], rounds));
        printf("\n");
        fflush(stdout);
        if (cf) {
            fprintf(cf, "rpc_rate_contexts,%s,%d", prov, counts[i]);
            for (int x = 0; x < nx; x++)
                fprintf(cf, ",%.0f", bench_median(v[x], rounds));
            fprintf(cf, "\n");
        }
    }
    if (cf)
        fclose(cf);
    return 0;
}

int main(int argc, char **argv)
{
    const char *prov = "shm", *csv = NULL;
    double secs = 2;
    int window = 16;
    size_t size = 8;
    int counts[16], nc = 0, rounds = 3;
    char list[64] = "1,2,4,8,16", ctx_list[64] = "";
    int modes = 3; /* bit 0: multi-recv, bit 1: one buffer per request */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            secs = atof(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc)
            snprintf(list, sizeof(list), "%s", argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pin"))
            pin_g = 1;
        else if (!strcmp(argv[i], "--transport"))
            transport_g = 1;
        else if (!strcmp(argv[i], "-W") && i + 1 < argc)
            work_us_g = atof(argv[++i]);
        else if (!strcmp(argv[i], "--contexts") && i + 1 < argc)
            snprintf(ctx_list, sizeof(ctx_list), "%s", argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv = argv[++i];
        else if (!strcmp(argv[i], "-b"))
            busy_g = 1;
        else if (!strcmp(argv[i], "-m") && i + 1 < argc && !strcmp(argv[i + 1], "mr"))
            modes = 1, i++;
        else if (!strcmp(argv[i], "-m") && i + 1 < argc && !strcmp(argv[i + 1], "1b"))
            modes = 2, i++;
        else {
            fprintf(stderr, "usage: %s [-p PROV] [-t SECONDS] [-w WINDOW] [-s BYTES] "
                            "[-c 1,2,4,8,16] [-r ROUNDS] [--pin] [--transport] [--contexts 1,2,4] [-W US] [--csv FILE] [-b] [-m mr|1b]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > BENCH_MAX_REPS) {
        fprintf(stderr, "rpc_rate: -r wants 1..%d\n", BENCH_MAX_REPS);
        return 2;
    }
    for (char *t = strtok(list, ","); t && nc < 16; t = strtok(NULL, ","))
        counts[nc++] = atoi(t);
    signal(SIGPIPE, SIG_IGN);
    printf("# rpc_rate: provider %s, %zu-byte echo, window %d per client, %.1f s per point, "
           "median of %d alternating rounds%s\n", prov, size, window, secs, rounds,
           busy_g ? ", busy polling" : "");
    if (ctx_list[0]) {
        printf("# server: 1 context per progress thread, %s; same-host queues %s; "
               "handler work %.1f us per call\n", modes == 2 ? "one buffer per request" : "multi-recv",
               getenv("SHMEM_RPC_SAME_HOST") && !strcmp(getenv("SHMEM_RPC_SAME_HOST"), "0")
                   ? "off" : "on", work_us_g);
    } else if (transport_g) {
        printf("%-8s %16s %16s %7s %15s %15s %15s\n", "clients", "same-host (/s)",
               "provider (/s)", "ratio", "srv CPU us/req", "reposts/req sq", "reposts/req pv");
        printf("%-8s %16s %16s %7s %15s\n", "", "", "", "", "(sq / pv)");
    } else {
        printf("%-8s %16s %16s %7s %15s %15s %15s\n", "clients", "multi-recv (/s)",
               "one-buffer (/s)", "ratio", "srv CPU us/req", "reposts/req mr", "reposts/req 1b");
        printf("%-8s %16s %16s %7s %15s\n", "", "", "", "", "(mr / 1b)");
    }
    FILE *cf = csv ? fopen(csv, "a") : NULL;
    if (ctx_list[0])
        return contexts_table(prov, counts, nc, ctx_list, secs, window, size, rounds,
                              modes != 2, cf);
    for (int i = 0; i < nc; i++) {
        double rm = 0, rc = 0, mv[BENCH_MAX_REPS], cv[BENCH_MAX_REPS], qv[BENCH_MAX_REPS];
        double um[BENCH_MAX_REPS], uc[BENCH_MAX_REPS];
        for (int k = 0; k < rounds; k++) {
            mv[k] = cv[k] = 1; /* a mode left out (-m) reads as 1/s, ratio alone */
            rm = rc = um[k] = uc[k] = 0;
            if (modes & 1)
                mv[k] = run(prov, 1, counts[i], secs, window, size, &rm, &um[k]);
            if (modes & 2)
                cv[k] = run(prov, 0, counts[i], secs, window, size, &rc, &uc[k]);
            if (mv[k] <= 0 || cv[k] <= 0) {
                fprintf(stderr, "rpc_rate: a run with %d clients failed\n", counts[i]);
                return 1;
            }
            qv[k] = mv[k] / cv[k];
        }
        double m = bench_median(mv, rounds), c = bench_median(cv, rounds);
        double q = bench_median(qv, rounds);
        char cpu[40];
        snprintf(cpu, sizeof(cpu), "%.2f / %.2f", bench_median(um, rounds),
                 bench_median(uc, rounds));
        printf("%-8d %16.0f %16.0f %7.2f %15s %15.5f %15.5f\n", counts[i], m, c, q, cpu, rm, rc);
        fflush(stdout);
        if (cf)
            fprintf(cf, "rpc_rate%s,%s,%d,%.0f,%.0f\n", transport_g ? "_transport" : "", prov,
                    counts[i], m, c);
    }
    if (cf)
        fclose(cf);
    return 0;
}
