/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transient clients: time from the start of a client process (fork + exec)
 * to its first completed RPC, with the library's defaults (no provider
 * environment set by the user). A server runs in a child; each sample is a
 * new client process. Prints min, median and max of N samples in ms.
 *   first_call [-p PROV] [-n SAMPLES]
 *   first_call --client ADDRFILE KEYFILE T0_NS   (internal: one client)
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

static int client_main(const char *af, const char *kf, const char *t0s)
{
    char addr[ORPC_ADDR_STRLEN], key[700];
    if (rpcb_read_addr(af, addr, sizeof(addr), 0) != 0)
        return 1;
    snprintf(key, sizeof(key), "@%s", kf);
    orpc_t *rpc;
    orpc_peer_t *p;
    uint64_t v = 1, o = 0;
    size_t got;
    if (orpc_open(NULL, &rpc) != 0 || orpc_lookup(rpc, addr, key, &p) != 0 ||
        orpc_call(rpc, p, orpc_id("bench.echo"), &v, 8, &o, 8, &got, 30000) != 0 || o != v)
        return 1;
    unsigned long long t1 = now_ns();
    printf("%.3f\n", (t1 - strtoull(t0s, NULL, 10)) / 1e6);
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

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--client") == 0)
        return client_main(argv[2], argv[3], argv[4]);
    const char *prov = "shm";
    int n = 11;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prov = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-p PROV] [-n SAMPLES]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || n > 1000)
        return 2;
    rpcb_server_t srv;
    if (rpcb_server_start(&srv, "first", server_main, prov, 4000) != 0)
        return 1;
    double *ms = calloc((size_t)n, sizeof(double));
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int fd[2];
        if (pipe(fd) != 0)
            break;
        char t0s[32];
        snprintf(t0s, sizeof(t0s), "%llu", now_ns());
        pid_t c = fork();
        if (c == 0) {
            dup2(fd[1], 1);
            close(fd[0]);
            execl("/proc/self/exe", argv[0], "--client", srv.af, srv.kf, t0s, (char *)NULL);
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
        if (got && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ms[ok++] = atof(buf);
    }
    rpcb_server_stop(&srv);
    if (ok == 0) {
        fprintf(stderr, "first_call: no client completed a call\n");
        return 1;
    }
    for (int i = 1; i < ok; i++)
        for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
            double t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    printf("# first_call: provider %s, process start (fork+exec) to first completed RPC, "
           "%d clients (ms)\nmin %.1f  median %.1f  max %.1f\n", prov, ok, ms[0], ms[ok / 2],
           ms[ok - 1]);
    free(ms);
    return ok == n ? 0 : 1;
}
