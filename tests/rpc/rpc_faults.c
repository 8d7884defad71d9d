// SPDX-License-Identifier: BSD-3-Clause
//
// A client whose server dies under it (tests/rpc/run_faults.sh):
//   rpc_faults ADDRFILE KEYFILE KIND TIMEOUT_MS
// KIND: call | pull | push. The client puts 3 calls in flight that the
// server holds unanswered (test.hold), exposing a 4 MiB buffer; with pull or
// push one more call, first, makes the server start a bulk transfer of that buffer
// and SIGKILL itself with it in flight (test.pull_die / test.push_die);
// with call the script kills the server once every client printed
// "pending". Every call must then end with a negative ORPC_ status within
// TIMEOUT_MS + 1.5 s of its issue, never a success. Then the client waits
// for a new address in ADDRFILE (the script restarts the server), looks it
// up and makes a checked call: it must work. Prints one line per call.
// KIND first_stopped: the server is SIGSTOPped before this client's first
// call, which must fail within TIMEOUT_MS; the script then kills and
// restarts the server, and the checked call to the new one must work (on
// libfabric shm the first message to a server carries this process's name;
// one never read must not keep later servers from learning it).
//
// Clients that die under a server (run_faults.sh client_pull|client_push):
//   rpc_faults ADDRFILE KEYFILE victim_pull|victim_push TIMEOUT_MS [DELAY_MS]
//     exposes 16 MiB (lifetime 30 s) and asks the server to pull from /
//     push into it in a loop (test.pull_loop / test.push_loop), after
//     DELAY_MS, then waits for the answer; the script SIGKILLs it meanwhile.
//   rpc_faults ADDRFILE KEYFILE bystander TIMEOUT_MS SECONDS
//     checked echo calls, one after another, for SECONDS: each must succeed
//     within TIMEOUT_MS; prints how many and the slowest.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rpc_test.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int read_addr(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0] != '\0';
}

/* Asks for a bulk loop over 16 MiB of ours and waits: killed meanwhile. */
static int victim(orpc_t *rpc, orpc_peer_t *srv, const char *what, uint32_t delay_ms)
{
    size_t n = 16u << 20;
    char *buf = malloc(n);
    CHECK(buf != NULL, "malloc");
    t_fill(buf, 0, n, 9);
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose(rpc, buf, n, ORPC_BULK_READ | ORPC_BULK_WRITE, 30000, &b), 0,
             "expose");
    unsigned char a[ORPC_BULK_DESC_SIZE + 4];
    orpc_bulk_encode(b, srv, a);
    for (int i = 0; i < 4; i++)
        a[ORPC_BULK_DESC_SIZE + i] = (unsigned char)(delay_ms >> (8 * i));
    orpc_req_t *q;
    CHECK_RC(orpc_icall(rpc, srv, orpc_id(strcmp(what, "push") == 0 ? T_PUSH_LOOP : T_PULL_LOOP),
                        a, sizeof(a), NULL, 0, 60000, &q),
             0, "icall loop");
    printf("pending: a bulk %s loop\n", what);
    int rc = orpc_wait(q, NULL);
    fprintf(stderr, "FAIL: the bulk %s loop answered %d (%s): this client should be dead\n", what,
            rc, orpc_strerror(rc));
    return 1;
}

/* Echo calls for secs seconds, every one checked. */
static int bystander(orpc_t *rpc, orpc_peer_t *srv, int timeout, int secs)
{
    double t_end = now_ms() + secs * 1e3, worst = 0;
    long calls = 0;
    printf("pending: bystander calls\n");
    while (now_ms() < t_end) {
        char msg[64], back[64] = "";
        int m = snprintf(msg, sizeof(msg), "bystander %d call %ld", (int)getpid(), calls);
        size_t got = 0;
        orpc_req_t *r;
        double t0 = now_ms();
        CHECK_RC(orpc_icall(rpc, srv, orpc_id(T_ECHO), msg, (size_t)m, back, sizeof(back), timeout,
                            &r),
                 0, "icall echo");
        int rc = orpc_wait(r, &got);
        double took = now_ms() - t0;
        CHECK(rc == 0, "echo call %ld failed after %.0f ms: %d (%s)", calls, took, rc,
              orpc_strerror(rc));
        CHECK(got == (size_t)m && memcmp(back, msg, (size_t)m) == 0, "echo returned wrong bytes");
        if (took > worst)
            worst = took;
        calls++;
        usleep(20000);
    }
    printf("bystander: %ld echo calls all ok, slowest %.0f ms\n", calls, worst);
    orpc_peer_release(srv);
    orpc_close(rpc);
    printf("PASS\n");
    return 0;
}

/*
 * One client through COUNT servers in turn (run_faults.sh server_restarts):
 * for server n it waits until GOFILE (ADDRFILE.go) says n, looks the address
 * up, makes a 32 KiB echo call (above shm's inject size) and a small one,
 * prints "server n: rc (...)", releases the peer and lets the goodbye go.
 * The script kills each server after its line, and stops some before the
 * client's call (which must then fail): on shm, more forgotten peers than
 * the instance keeps (RPC_SHM_KEPT_MAX) and slots a stopped server never
 * acknowledged.
 */
static int restarts(const char *af, const char *key, int timeout, int count)
{
    char go[4096], addr[ORPC_ADDR_STRLEN];
    snprintf(go, sizeof(go), "%s.go", af);
    orpc_t *rpc;
    CHECK_RC(orpc_open(NULL, &rpc), ORPC_OK, "orpc_open");
    size_t big = 32u << 10, got = 0;
    char *out = malloc(big), *back = malloc(big);
    CHECK(out != NULL && back != NULL, "malloc");
    t_fill(out, 0, big, 3);
    for (int n = 0; n < count; n++) {
        char want[32], line[32] = "";
        snprintf(want, sizeof(want), "%d", n);
        for (int i = 0; i < 800 && !(read_addr(go, line, sizeof(line)) && strcmp(line, want) == 0);
             i++)
            usleep(25000);
        CHECK(strcmp(line, want) == 0, "no go for server %d", n);
        CHECK(read_addr(af, addr, sizeof(addr)), "no address in %s", af);
        orpc_peer_t *srv;
        CHECK_RC(orpc_lookup(rpc, addr, key, &srv), ORPC_OK, "orpc_lookup");
        double t = now_ms();
        int rc = orpc_call(rpc, srv, orpc_id(T_ECHO), out, big, back, big, &got, timeout);
        if (rc == ORPC_OK) {
            CHECK(got == big && memcmp(back, out, big) == 0, "server %d: echo wrong", n);
            rc = orpc_call(rpc, srv, orpc_id(T_ECHO), "s", 1, back, 8, &got, timeout);
            CHECK(rc != ORPC_OK || (got == 1 && back[0] == 's'), "server %d: echo wrong", n);
        }
        printf("server %d: %d (%s) after %.0f ms\n", n, rc, orpc_strerror(rc), now_ms() - t);
        orpc_peer_release(srv);
        orpc_progress(rpc, 100);
    }
    free(out);
    free(back);
    orpc_close(rpc);
    printf("PASS\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: rpc_faults ADDRFILE KEYFILE call|pull|push|first_stopped|restarts|victim_pull|"
                        "victim_push|bystander TIMEOUT_MS [SECONDS]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *af = argv[1], *kind = argv[3];
    int timeout = atoi(argv[4]);
    char addr[ORPC_ADDR_STRLEN], key[300];
    snprintf(key, sizeof(key), "@%s", argv[2]);
    if (strcmp(kind, "restarts") == 0)
        return restarts(af, key, timeout, argc > 5 ? atoi(argv[5]) : 12);
    CHECK(read_addr(af, addr, sizeof(addr)), "no address in %s", af);
    orpc_t *rpc;
    orpc_peer_t *srv;
    CHECK_RC(orpc_open(NULL, &rpc), ORPC_OK, "orpc_open");
    CHECK_RC(orpc_lookup(rpc, addr, key, &srv), ORPC_OK, "orpc_lookup");
    if (strncmp(kind, "victim_", 7) == 0)
        return victim(rpc, srv, kind + 7, argc > 5 ? (uint32_t)atoi(argv[5]) : 0);
    if (strcmp(kind, "bystander") == 0)
        return bystander(rpc, srv, timeout, argc > 5 ? atoi(argv[5]) : 5);

    size_t n = 4u << 20;
    char *buf = malloc(n);
    CHECK(buf != NULL, "malloc");
    t_fill(buf, 0, n, 7);
    int bad = 0;
    if (strcmp(kind, "first_stopped") == 0) {
        /* The server never saw us: its first message from us is never read. */
        char back[8];
        size_t got;
        double t = now_ms();
        int rc = orpc_call(rpc, srv, orpc_id(T_ECHO), "x", 1, back, sizeof(back), &got, timeout);
        printf("first call to a stopped server: %d (%s) after %.0f ms\n", rc, orpc_strerror(rc),
               now_ms() - t);
        CHECK(rc < 0, "a call to a stopped server answered %d", rc);
        orpc_peer_release(srv);
        goto restarted;
    }
    orpc_bulk_t *b;
    /* A short lifetime: after a failed call, orpc_bulk_release keeps the
     * buffer registered until 2 x its lifetime (the server may still be
     * writing into it), 60 s with the default SHMEM_RPC_BULK_TTL. */
    enum { TTL_MS = 2000 };
    double t_expose = now_ms();
    CHECK_RC(orpc_bulk_expose(rpc, buf, n, ORPC_BULK_READ | ORPC_BULK_WRITE, TTL_MS, &b), 0,
             "expose");

    enum { NQ = 4 };
    orpc_req_t *q[NQ];
    double t0[NQ], w0 = t_run_wait_ms();
    const char *what[NQ];
    int nq = 0;
    for (int i = 0; i < 3; i++) {
        t0[nq] = now_ms();
        what[nq] = "held call";
        CHECK_RC(orpc_icall(rpc, srv, orpc_id(T_HOLD), "h", 1, NULL, 0, timeout, &q[nq]), 0,
                 "icall hold");
        nq++;
    }
    orpc_progress(rpc, 100); /* the holds reach the server first */
    if (strcmp(kind, "call") != 0) {
        unsigned char a[ORPC_BULK_DESC_SIZE];
        orpc_bulk_encode(b, srv, a);
        t0[nq] = now_ms();
        what[nq] = strcmp(kind, "pull") == 0 ? "call whose bulk pull is in flight"
                                             : "call whose bulk push is in flight";
        CHECK_RC(orpc_icall(rpc, srv, orpc_id(strcmp(kind, "pull") == 0 ? T_PULL_DIE : T_PUSH_DIE),
                            a, sizeof(a), NULL, 0, timeout, &q[nq]),
                 0, "icall die");
        nq++;
    }
    printf("pending: %d calls\n", nq);
    fflush(stdout);

    /* Bounds: the timeout (the buffer: twice its lifetime) plus 1.5 s, plus
     * what this thread spent waiting for a CPU meanwhile (t_run_wait_ms). */
    for (int i = 0; i < nq; i++) {
        int rc = orpc_wait(q[i], NULL);
        double took = now_ms() - t0[i], lag = t_run_wait_ms() - w0;
        printf("%s: %d (%s) after %.0f ms (%.0f ms waiting for a CPU)\n", what[i], rc,
               orpc_strerror(rc), took, lag);
        if (rc >= 0) {
            fprintf(stderr, "FAIL: %s completed with %d although the server died\n", what[i], rc);
            bad++;
        }
        if (took > timeout + 1500 + lag) {
            fprintf(stderr,
                    "FAIL: %s ended after %.0f ms (timeout %d ms, %.0f ms waiting for a CPU)\n",
                    what[i], took, timeout, lag);
            bad++;
        }
    }
    CHECK_RC(orpc_bulk_release(b), 0, "orpc_bulk_release");
    double held = now_ms() - t_expose, lag = t_run_wait_ms() - w0;
    printf("buffer released %.0f ms after it was exposed (bound: 2 x %d ms; %.0f ms waiting for a "
           "CPU)\n", held, TTL_MS, lag);
    CHECK(held <= 2 * TTL_MS + 1500 + lag, "orpc_bulk_release held the buffer %.0f ms", held);
    orpc_peer_release(srv);
    /* Time for the goodbye to the dead server to complete: the instance then
     * forgets that peer (its address-vector entry is freed before the
     * restarted server is looked up). */
    orpc_progress(rpc, 200);

restarted:;
    /* The restarted server: a new address, looked up afresh. */
    char addr2[ORPC_ADDR_STRLEN] = "";
    for (int i = 0; i < 400; i++) {
        if (read_addr(af, addr2, sizeof(addr2)) && strcmp(addr2, addr) != 0)
            break;
        usleep(50000);
    }
    CHECK(addr2[0] && strcmp(addr2, addr) != 0,
          "no new server address in %s after 20 s (it holds '%s'; the first server's was '%s')",
          af, addr2, addr);
    CHECK_RC(orpc_lookup(rpc, addr2, key, &srv), ORPC_OK, "orpc_lookup (restarted server)");
    /* First a 32 KiB echo: above libfabric shm's 4 KiB inject size the
     * provider copies from this process by its own protocol, which a stale
     * peer slot would misdirect; sent before the new server ever answered. */
    size_t big = 32u << 10, got = 0;
    char *bigback = malloc(big);
    CHECK(bigback != NULL, "malloc");
    CHECK_RC(orpc_call(rpc, srv, orpc_id(T_ECHO), buf, big, bigback, big, &got, 5000), 0,
             "32 KiB echo on the restarted server");
    CHECK(got == big && memcmp(bigback, buf, big) == 0, "32 KiB echo returned wrong bytes");
    free(bigback);
    char msg[64], back[64] = "";
    int m = snprintf(msg, sizeof(msg), "after the restart (pid %d)", (int)getpid());
    orpc_req_t *r;
    CHECK_RC(orpc_icall(rpc, srv, orpc_id(T_ECHO), msg, (size_t)m, back, sizeof(back), 5000, &r),
             0, "icall echo");
    CHECK_RC(orpc_wait(r, &got), 0, "echo on the restarted server");
    CHECK(got == (size_t)m && memcmp(back, msg, (size_t)m) == 0, "echo returned wrong bytes");
    printf("restarted server: 32 KiB and small echo ok\n");
    orpc_peer_release(srv);
    orpc_close(rpc);
    free(buf);
    if (bad)
        return 1;
    printf("PASS\n");
    return 0;
}
