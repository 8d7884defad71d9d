/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test server: every RPC shape the tests use. Writes its address to a file
 * (-a) and its auth key to another (-k, mode 0600), serves until test.stop
 * or SIGTERM, then prints its counters.
 *   rpc_server -a ADDRFILE -k KEYFILE [-m 0|1] [-t] [-c 0|1] [-p PROV] [-V]
 * -V: process_vm_readv/writev fail with EPERM in this process (a seccomp
 * filter, as Yama or a container would refuse them), so same-host clients'
 * bulk data must go through the provider, with their registrations.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc_test.h"

static volatile sig_atomic_t stop_g;
static orpc_call_t *deferred_g;
static char *scratch_g;
#define SCRATCH (64u << 20)

static void on_term(int sig)
{
    (void)sig;
    if (stop_g)
        _exit(1); /* asked twice: the loop is stuck, do not linger */
    stop_g = 1;
}

static void h_echo(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_respond(c, 0, in, n);
}

static void h_fill(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    uint32_t len = orpc_dec_u32(&d);
    if (d.err || len > 4 * SCRATCH) {
        orpc_respond(c, ORPC_EPROTO, NULL, 0);
        return;
    }
    char *buf = len > SCRATCH ? malloc(len) : scratch_g; /* results above the limits */
    if (buf == NULL) {
        orpc_respond(c, ORPC_ENOMEM, NULL, 0);
        return;
    }
    t_fill(buf, 0, len, len);
    orpc_respond(c, 0, buf, len);
    if (buf != scratch_g)
        free(buf);
}

static void h_check(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    int64_t bad = t_check(in, 0, n, (uint32_t)n);
    orpc_respond(c, 0, &bad, sizeof(bad));
}

static uint64_t notes_g, note_sum_g;
static void h_note(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    uint64_t v = 0;
    if (n == 8)
        memcpy(&v, in, 8);
    notes_g++;
    note_sum_g += v;
    orpc_respond(c, 0, "ignored", 7); /* a one-way call: nothing is sent */
}

static void h_notes(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    (void)in;
    (void)n;
    uint64_t out[2] = {notes_g, note_sum_g};
    orpc_respond(c, 0, out, sizeof(out));
}

static void h_status(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    int64_t st = orpc_dec_i64(&d);
    orpc_respond(c, d.err ? ORPC_EPROTO : (int)st, NULL, 0);
}

static void h_sleep(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    uint32_t ms = orpc_dec_u32(&d);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    orpc_respond(c, 0, in, n);
}

/* desc, off, len, seed */
static int bulk_args(orpc_call_t *c, const void *in, size_t n, orpc_bulk_desc_t *bd,
                     uint64_t *off, uint64_t *len, uint32_t *seed)
{
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    const void *w = orpc_dec_bytes(&d, ORPC_BULK_DESC_SIZE);
    *off = orpc_dec_u64(&d);
    *len = orpc_dec_u64(&d);
    *seed = orpc_dec_u32(&d);
    if (d.err)
        return ORPC_EPROTO;
    return orpc_bulk_decode(c, w, bd);
}

static void h_pull(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_bulk_desc_t bd;
    uint64_t off, len;
    uint32_t seed;
    int rc = bulk_args(c, in, n, &bd, &off, &len, &seed);
    if (rc == ORPC_OK && len > SCRATCH)
        rc = ORPC_ERANGE;
    if (rc == ORPC_OK) {
        /* Several transfers in flight: four quarters, then one wait. */
        uint64_t q = len / 4;
        for (int i = 0; i < 4 && rc == ORPC_OK; i++) {
            uint64_t o = q * (uint64_t)i, l = i == 3 ? len - o : q;
            rc = orpc_bulk_iget(c, &bd, off + o, scratch_g + o, l);
        }
        int wrc = orpc_bulk_wait(c);
        if (rc == ORPC_OK)
            rc = wrc;
    }
    long long bad = rc == ORPC_OK ? t_check(scratch_g, off, len, seed) : -1;
    if (rc == ORPC_OK && bad >= 0)
        rc = 1000; /* data wrong: the client reports it */
    int64_t where = bad;
    orpc_respond(c, rc, &where, sizeof(where));
}

static void h_push(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_bulk_desc_t bd;
    uint64_t off, len;
    uint32_t seed;
    int rc = bulk_args(c, in, n, &bd, &off, &len, &seed);
    if (rc == ORPC_OK && len > SCRATCH)
        rc = ORPC_ERANGE;
    if (rc == ORPC_OK) {
        t_fill(scratch_g, off, len, seed);
        rc = orpc_bulk_put(c, &bd, off, scratch_g, len);
    }
    orpc_respond(c, rc, NULL, 0);
}

static void h_pull_late(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    const void *w = orpc_dec_bytes(&d, ORPC_BULK_DESC_SIZE);
    uint32_t ms = orpc_dec_u32(&d);
    orpc_bulk_desc_t bd;
    int rc = d.err ? ORPC_EPROTO : orpc_bulk_decode(c, w, &bd);
    if (rc == ORPC_OK) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        rc = orpc_bulk_get(c, &bd, 0, scratch_g, bd.len < 64 ? bd.len : 64);
    }
    orpc_respond(c, rc, NULL, 0);
}

/* Each refusal the server must make, as a vector of return codes. */
/* Calls held unanswered, the server's loop going on (run_faults.sh). */
static orpc_call_t *held_g[64];
static unsigned nheld_g;
static void h_hold(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in;
    (void)n;
    (void)arg;
    if (nheld_g < 64)
        held_g[nheld_g++] = c;
    else
        orpc_respond(c, ORPC_EBUSY, NULL, 0);
}

/* The server dies in the middle of a bulk transfer (tests/rpc/run_faults.sh). */
static void h_bulk_die(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    int push = arg != NULL;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    const void *w = orpc_dec_bytes(&d, ORPC_BULK_DESC_SIZE);
    orpc_bulk_desc_t bd = {0};
    int rc = d.err ? ORPC_EPROTO : orpc_bulk_decode(c, w, &bd);
    uint64_t len = bd.len < SCRATCH ? bd.len : SCRATCH, q = len / 4;
    for (int i = 0; i < 4 && rc == ORPC_OK; i++) {
        uint64_t o = q * (uint64_t)i, l = i == 3 ? len - o : q;
        rc = push ? orpc_bulk_iput(c, &bd, o, scratch_g + o, l)
                  : orpc_bulk_iget(c, &bd, o, scratch_g + o, l);
    }
    fprintf(stderr, "server: dying with a bulk %s of %llu bytes in flight (rc %d)\n",
            push ? "push" : "pull", (unsigned long long)len, rc);
    raise(SIGKILL);
}

static double realtime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void h_bulk_loop(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    const char *kind = arg != NULL ? "push" : "pull";
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    const void *w = orpc_dec_bytes(&d, ORPC_BULK_DESC_SIZE);
    orpc_bulk_desc_t bd = {0};
    int rc = d.err ? ORPC_EPROTO : orpc_bulk_decode(c, w, &bd);
    uint32_t delay = 0;
    if (rc == ORPC_OK && d.len - d.pos >= 4)
        delay = orpc_dec_u32(&d);
    if (rc == ORPC_OK && delay) {
        /* The client is killed meanwhile: the transfers start towards a dead one. */
        fprintf(stderr, "server: bulk %s loop waits %u ms before its first transfer\n", kind,
                delay);
        usleep(delay * 1000u);
        fprintf(stderr, "server: bulk %s loop running (first transfer at %.0f ms realtime)\n",
                kind, realtime_ms());
    }
    uint64_t len = bd.len < SCRATCH ? bd.len : SCRATCH;
    double t0 = realtime_ms(), last = t0, w0 = t_run_wait_ms();
    long rounds = 0;
    /* Bounded: 60 s, far past the test's limits. */
    while (rc == ORPC_OK && realtime_ms() - t0 < 60000) {
        rc = arg != NULL ? orpc_bulk_put(c, &bd, 0, scratch_g, len)
                         : orpc_bulk_get(c, &bd, 0, scratch_g, len);
        if (rc == ORPC_OK && rounds++ == 0 && delay == 0)
            fprintf(stderr, "server: bulk %s loop running (%llu bytes a transfer)\n", kind,
                    (unsigned long long)len);
        if (rc == ORPC_OK)
            last = realtime_ms();
    }
    /* With what this thread waited for a CPU during the loop: the test's
     * bound on noticing the dead client leaves that out. */
    fprintf(stderr,
            "server: bulk %s loop ended: %d (%s) at %.0f ms realtime, %.0f ms after the last "
            "good transfer, %ld good, %.0f ms waiting for a CPU\n",
            kind, rc, orpc_strerror(rc), realtime_ms(), realtime_ms() - last, rounds,
            t_run_wait_ms() - w0);
    orpc_respond(c, rc, NULL, 0);
}

static void h_bulk_bad(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    int32_t rcs[8];
    memset(rcs, 0, sizeof(rcs));
    if (n < ORPC_BULK_DESC_SIZE) {
        orpc_respond(c, ORPC_EPROTO, NULL, 0);
        return;
    }
    orpc_bulk_desc_t bd;
    int rc = orpc_bulk_decode(c, in, &bd);
    if (rc != ORPC_OK) {
        orpc_respond(c, rc, NULL, 0);
        return;
    }
    rcs[0] = orpc_bulk_get(c, &bd, 0, scratch_g, bd.len + 1);       /* too long */
    rcs[1] = orpc_bulk_get(c, &bd, bd.len, scratch_g, 1);           /* past the end */
    rcs[2] = orpc_bulk_get(c, &bd, UINT64_MAX - 2, scratch_g, 8);   /* wraps */
    rcs[3] = orpc_bulk_put(c, &bd, 0, scratch_g, 8);                /* read-only exposure */
    rcs[4] = orpc_bulk_get(c, &bd, 0, scratch_g, bd.len);           /* allowed */
    /* A descriptor altered in flight (its length doubled) must fail the tag. */
    unsigned char w[ORPC_BULK_DESC_SIZE];
    memcpy(w, in, sizeof(w));
    w[24] ^= 0x40;
    orpc_bulk_desc_t bd2;
    rcs[5] = orpc_bulk_decode(c, w, &bd2);
    orpc_respond(c, 0, rcs, sizeof(rcs));
}

static void h_queued(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_respond(c, 7, in, n);
}

static void h_defer(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    (void)in;
    (void)n;
    deferred_g = c; /* answered by the main loop, after the handler returned */
}

static void h_stats(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    (void)in;
    (void)n;
    /* The counters, then what malloc holds (in use, and free but kept), so
     * that the churn test tells the server's own growth from the allocator's. */
    struct {
        orpc_stats_t st;
        uint64_t heap_used, heap_free;
    } out;
    orpc_stats(orpc_call_rpc(c), &out.st);
    struct mallinfo2 mi = mallinfo2();
    out.heap_used = mi.uordblks + mi.hblkhd;
    out.heap_free = mi.fordblks;
    orpc_respond(c, 0, &out, sizeof(out));
}

static void h_stop(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    (void)in;
    (void)n;
    orpc_respond(c, 0, NULL, 0);
    stop_g = 1;
}

/* Makes process_vm_readv/writev fail with EPERM here and in threads made later. */
static int deny_process_vm(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("rpc_server: seccomp filter");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *addr_file = NULL, *key_file = NULL;
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    int opt;
    while ((opt = getopt(argc, argv, "a:k:m:tc:p:V")) != -1) {
        switch (opt) {
        case 'a': addr_file = optarg; break;
        case 'k': key_file = optarg; break;
        case 'm': o.multi_recv = atoi(optarg); break;
        case 't': o.progress_thread = 1; break;
        case 'c': o.mr_cache = atoi(optarg); break;
        case 'p': o.provider = optarg; break;
        case 'V':
            if (deny_process_vm() != 0)
                return 2;
            break;
        default:
            fprintf(stderr, "usage: %s -a ADDRFILE [-k KEYFILE] [-m 0|1] [-t] [-p PROV] [-V]\n",
                    argv[0]);
            return 2;
        }
    }
    if (addr_file == NULL) {
        fprintf(stderr, "rpc_server: -a ADDRFILE is required\n");
        return 2;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    signal(SIGPIPE, SIG_IGN);
    scratch_g = malloc(SCRATCH);
    o.auth_key_file = key_file;
    orpc_t *rpc;
    int rc = orpc_open(&o, &rpc);
    CHECK_RC(rc, ORPC_OK, "orpc_open");
    CHECK_RC(orpc_register(rpc, T_ECHO, h_echo, NULL, 0, NULL), ORPC_OK, "register");
    orpc_register(rpc, T_STATUS, h_status, NULL, 0, NULL);
    orpc_register(rpc, T_SLEEP, h_sleep, NULL, 0, NULL);
    orpc_register(rpc, T_FILL, h_fill, NULL, 0, NULL);
    orpc_register(rpc, T_PULL, h_pull, NULL, 0, NULL);
    orpc_register(rpc, T_PUSH, h_push, NULL, 0, NULL);
    orpc_register(rpc, T_PULL_LATE, h_pull_late, NULL, 0, NULL);
    orpc_register(rpc, T_BULK_BAD, h_bulk_bad, NULL, 0, NULL);
    orpc_register(rpc, T_QUEUED, h_queued, NULL, ORPC_HANDLER_QUEUED, NULL);
    orpc_register(rpc, T_DEFER, h_defer, NULL, 0, NULL);
    orpc_register(rpc, T_STATS, h_stats, NULL, 0, NULL);
    orpc_register(rpc, T_CHECK, h_check, NULL, 0, NULL);
    orpc_register(rpc, T_NOTE, h_note, NULL, 0, NULL);
    orpc_register(rpc, T_NOTES, h_notes, NULL, 0, NULL);
    orpc_register(rpc, T_STOP, h_stop, NULL, 0, NULL);
    orpc_register(rpc, T_PULL_DIE, h_bulk_die, NULL, 0, NULL);
    orpc_register(rpc, T_HOLD, h_hold, NULL, 0, NULL);
    orpc_register(rpc, T_PUSH_DIE, h_bulk_die, (void *)1, 0, NULL);
    orpc_register(rpc, T_PULL_LOOP, h_bulk_loop, NULL, 0, NULL);
    orpc_register(rpc, T_PUSH_LOOP, h_bulk_loop, (void *)1, 0, NULL);

    char addr[ORPC_ADDR_STRLEN];
    CHECK_RC(orpc_addr(rpc, addr, sizeof(addr)), ORPC_OK, "orpc_addr");
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s.tmp", addr_file);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "cannot write %s", tmp);
    fprintf(f, "%s\n", addr);
    fclose(f);
    rename(tmp, addr_file); /* readers never see half an address */

    while (!stop_g) {
        orpc_progress(rpc, 10);
        orpc_run_queued(rpc, 16, 0);
        if (deferred_g) {
            orpc_call_t *c = deferred_g;
            deferred_g = NULL;
            orpc_respond(c, 3, "late", 4);
        }
    }
    /* The stop call's own response may still be in flight: its handler ran
     * in the progress pass before the loop ended, and no harvest has read
     * its send's completion yet (1 in ~50 stops beside CPU hogs, when the
     * request came in orpc_run_queued's pass). Drain it first, so that
     * live-calls counts only calls the library failed to free; bounded, so
     * that a leaked call still shows. */
    orpc_stats_t st;
    orpc_stats(rpc, &st);
    for (int i = 0; i < 200 && st.calls_live > 0; i++) {
        orpc_progress(rpc, 10);
        orpc_stats(rpc, &st);
    }
    printf("server: requests %llu responses %llu auth-rejected %llu malformed %llu "
           "oversized %llu truncated %llu busy %llu copied %llu reposts %llu bulk-refused %llu "
           "bulk-errors %llu peers %llu reclaimed %llu live-calls %llu\n",
           (unsigned long long)st.requests, (unsigned long long)st.responses,
           (unsigned long long)st.rejected_auth, (unsigned long long)st.malformed,
           (unsigned long long)st.oversized, (unsigned long long)st.truncated,
           (unsigned long long)st.busy, (unsigned long long)st.copied,
           (unsigned long long)st.reposts, (unsigned long long)st.bulk_refused,
           (unsigned long long)st.bulk_errors, (unsigned long long)st.peers_live,
           (unsigned long long)st.peers_reclaimed, (unsigned long long)st.calls_live);
    orpc_close(rpc);
    free(scratch_g);
    return 0;
}
