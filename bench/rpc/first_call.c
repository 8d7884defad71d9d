/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transient clients: time from the start of a client process (fork + exec)
 * to its first completed RPC, with the library's defaults (no provider
 * environment set by the user). A server runs in a child; each sample is a
 * new client process. Prints min, median and max of N samples in ms, and the
 * same from the client's main() on (what the library's open, lookup and call
 * take; the rest is exec, loading the libraries and their constructors).
 *   first_call [-p PROV] [-n SAMPLES] [-e]
 *   first_call --client ADDRFILE KEYFILE T0_NS [PROV]   (internal: one client)
 * -e: samples alternate between the default client and one that opens its
 * fabric endpoint at orpc_open (opts.provider; what every client did before
 * a client of same-host servers opened none), both printed. With the
 * same-host queues the default client opens no endpoint at all.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ofishmem_rpc.h"
#include "rpc_bench.h"

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static volatile sig_atomic_t stop_g;
static void on_term(int s)
{
    (void)s;
    stop_g = 1;
}

static void h_echo(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_respond(c, 0, in, n);
}

static int client_main(const char *af, const char *kf, const char *t0s, const char *eprov)
{
    unsigned long long tm = now_ns();
    orpc_opts_t opts;
    orpc_opts_init(&opts);
    opts.provider = eprov; /* NULL: the default (endpoint when a peer needs one) */
    char addr[ORPC_ADDR_STRLEN], key[700];
    if (rpcb_read_addr(af, addr, sizeof(addr), 0) != 0)
        return 1;
    snprintf(key, sizeof(key), "@%s", kf);
    orpc_t *rpc;
    orpc_peer_t *p;
    uint64_t v = 1, o = 0;
    size_t got;
    if (orpc_open(&opts, &rpc) != 0 || orpc_lookup(rpc, addr, key, &p) != 0 ||
        orpc_call(rpc, p, orpc_id("bench.echo"), &v, 8, &o, 8, &got, 30000) != 0 || o != v)
        return 1;
    unsigned long long t1 = now_ns();
    printf("%.3f %.3f\n", (t1 - strtoull(t0s, NULL, 10)) / 1e6, (t1 - tm) / 1e6);
    orpc_peer_release(p);
    orpc_close(rpc);
    return 0;
}

static int server_main(const char *prov, const char *af, const char *kf)
{
    signal(SIGTERM, on_term);
    orpc_t *rpc = rpcb_open_server(prov, kf);
    if (rpc == NULL)
        return 1;
    orpc_register(rpc, "bench.echo", h_echo, NULL, 0, NULL);
    if (rpcb_publish_addr(rpc, af) != 0)
        return 1;
    while (!stop_g)
        orpc_progress(rpc, 1);
    orpc_close(rpc);
    return 0;
}

static void sort_ms(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

int main(int argc, char **argv)
{
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "--client") == 0)
        return client_main(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
    const char *prov = "shm";
    int n = 11, eager = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-e"))
            eager = 1;
        else {
            fprintf(stderr, "usage: %s [-p PROV] [-n SAMPLES] [-e]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || n > 1000)
        return 2;
    rpcb_server_t srv;
    if (rpcb_server_start(&srv, "first", server_main, prov, 4000) != 0)
        return 1;
    /* [0]: default clients, [1]: clients that open their endpoint at once (-e). */
    double *ms[2], *mm[2];
    int ok[2] = {0, 0}, tries[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        ms[k] = calloc((size_t)n, sizeof(double));
        mm[k] = calloc((size_t)n, sizeof(double));
    }
    for (int s = 0; s < n * (eager ? 2 : 1); s++) {
        int k = eager ? s & 1 : 0;
        tries[k]++;
        int fd[2];
        if (pipe(fd) != 0)
            break;
        char t0s[32];
        snprintf(t0s, sizeof(t0s), "%llu", now_ns());
        pid_t c = fork();
        if (c == 0) {
            dup2(fd[1], 1);
            close(fd[0]);
            execl("/proc/self/exe", argv[0], "--client", srv.af, srv.kf, t0s,
                  k ? prov : (char *)NULL, (char *)NULL);
            _exit(127);
        }
        close(fd[1]);
        char buf[64] = "";
        FILE *f = fdopen(fd[0], "r");
        int got = f && fgets(buf, sizeof(buf), f) != NULL;
        if (f)
            fclose(f);
        int st;
        waitpid(c, &st, 0);
        if (got && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
            sscanf(buf, "%lf %lf", &ms[k][ok[k]], &mm[k][ok[k]]) == 2)
            ok[k]++;
    }
    rpcb_server_stop(&srv);
    int all = 1;
    for (int k = 0; k < (eager ? 2 : 1); k++) {
        if (ok[k] == 0) {
            fprintf(stderr, "first_call: no client completed a call\n");
            return 1;
        }
        all &= ok[k] == tries[k];
        int m = ok[k];
        sort_ms(ms[k], m);
        sort_ms(mm[k], m);
        printf("# first_call: provider %s, %s, process start (fork+exec) to first completed "
               "RPC, %d clients (ms)\nmin %.1f  median %.1f  max %.1f\n", prov,
               k ? "client opens its endpoint at orpc_open (-e)" : "default client", m,
               ms[k][0], ms[k][m / 2], ms[k][m - 1]);
        printf("# of which from the client's main() (open, lookup, call)\nmin %.1f  median "
               "%.1f  max %.1f\n", mm[k][0], mm[k][m / 2], mm[k][m - 1]);
        free(ms[k]);
        free(mm[k]);
    }
    return all ? 0 : 1;
}
