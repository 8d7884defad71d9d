/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A SHMEM job that offloads its output to a staging server (DART-style):
 * every step each PE fills a buffer of its symmetric heap and a small header
 * describing it, hands both to the server with an asynchronous RPC carrying
 * one scatter-gather descriptor of two segments (header, payload; no new
 * registration: the heap is registered already), and goes on computing.
 * Two buffers alternate; a buffer is reused only after the server answered.
 * A hand-off that fails for want of the server (killed, restarting) is sent
 * again, synchronously, after reading ADDRFILE again (a restarted server
 * publishes its new address there), for up to 60 s; a hand-off unanswered
 * for 5 s counts as failed (a dead server's calls end by their timeout: no
 * error comes from the provider); the server acknowledges
 * a step it has on disk already without writing it twice.
 *   oshrun -n N staging_pe ADDRFILE KEYFILE [STEPS] [BYTES] [COMPUTE_US]
 *                          [ACKLOG [FIRST_STEP]]
 * ACKLOG: each PE appends "PE STEP" to ACKLOG.<PE> for every acknowledged
 * step (for staging_check). Steps run from FIRST_STEP (default 0).
 * STAGING_DEBUG set: each failed resend attempt is printed to stderr.
 * Reports, per PE and for the job, time in the hand-off call versus compute.
 */
#include <fcntl.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ofishmem_rpc.h"
#include "staging.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Stand-in for a solver step: busy arithmetic for us microseconds. */
static double compute(double us)
{
    volatile double x = 1.0;
    double end = now_us() + us;
    while (now_us() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 0.5;
    return x;
}

static int me;
static const char *addr_file_g;
static char key_g[4096];
static orpc_t *rpc;
static orpc_peer_t *srv;
static uint64_t id;
static orpc_req_t *req[2];
static orpc_bulk_t *bulk[2];
static uint64_t *buf[2];
static stage_hdr_t *hdr[2];
static size_t bytes;
static int failures, retries, ack_fd = -1;
static unsigned char args[2][ORPC_BULK_WIRE_MAX + 16];
static char srv_addr[ORPC_ADDR_STRLEN]; /* the address last looked up */
/* A hand-off unanswered this long is sent again (the server keeps what it
 * has on disk); the buffer's exposure lasts as long, so that releasing it
 * after a dead server waits no longer than that. */
#define HANDOFF_TIMEOUT_MS 5000

/* Reads the server's address (again) and looks it up. */
static int connect_srv(void)
{
    char addr[ORPC_ADDR_STRLEN];
    FILE *f = fopen(addr_file_g, "r");
    if (f == NULL)
        return ORPC_EPEER;
    int ok = fgets(addr, sizeof(addr), f) != NULL;
    fclose(f);
    if (!ok)
        return ORPC_EPEER;
    addr[strcspn(addr, "\n")] = '\0';
    snprintf(srv_addr, sizeof(srv_addr), "%s", addr);
    return orpc_lookup(rpc, addr, key_g, &srv);
}

/* The hand-off of buffer k (header and payload filled): expose, describe,
 * send. Nothing is copied or registered. */
static int send_step(int k)
{
    orpc_enc_t e;
    orpc_enc_init(&e, args[k], sizeof(args[k]));
    orpc_seg_t segs[2] = {{hdr[k], sizeof(stage_hdr_t)}, {buf[k], bytes}};
    int rc = orpc_bulk_expose_sg(rpc, segs, 2, ORPC_BULK_READ, HANDOFF_TIMEOUT_MS, &bulk[k]);
    if (rc == ORPC_OK)
        rc = orpc_bulk_encode(bulk[k], srv, orpc_enc_reserve(&e, orpc_bulk_encoded_size(bulk[k])));
    orpc_enc_u32(&e, hdr[k]->pe);
    orpc_enc_u32(&e, hdr[k]->step);
    orpc_enc_u64(&e, bytes);
    if (rc == ORPC_OK)
        rc = orpc_icall(rpc, srv, id, args[k], e.pos, NULL, 0, HANDOFF_TIMEOUT_MS, &req[k]);
    if (rc != ORPC_OK && bulk[k]) {
        orpc_bulk_release(bulk[k]);
        bulk[k] = NULL;
    }
    return rc;
}

static void finish(int k, int rc);

/* Buffer k's hand-off failed for want of the server (rc < 0): send it again,
 * synchronously, after a fresh look at the address file, for up to 60 s.
 * The other buffer's hand-off is settled first (it went to the same server). */
static int resend(int k)
{
    if (req[1 - k]) {
        size_t got;
        finish(1 - k, orpc_wait(req[1 - k], &got));
    }
    double end = now_us() + 60e6, pause_us = 20000;
    int rc = ORPC_EPEER;
    while (now_us() < end) {
        retries++;
        usleep((useconds_t)pause_us);
        pause_us = pause_us * 2 > 500000 ? 500000 : pause_us * 2;
        if (srv)
            orpc_peer_release(srv);
        srv = NULL;
        if ((rc = connect_srv()) != ORPC_OK)
            continue;
        const char *stage = "send";
        if ((rc = send_step(k)) == ORPC_OK) {
            size_t got;
            stage = "answer";
            rc = orpc_wait(req[k], &got);
            orpc_bulk_release(bulk[k]);
            req[k] = NULL;
            bulk[k] = NULL;
        }
        if (rc >= 0)
            return rc;
        if (getenv("STAGING_DEBUG"))
            fprintf(stderr, "PE %d step %u: attempt %d: %s: %s (t=%.3f, server %s)\n", me,
                    hdr[k]->step, retries, stage, orpc_strerror(rc), now_us() / 1e6, srv_addr);
    }
    fprintf(stderr, "PE %d step %u: no server for 60 s: %s\n", me, hdr[k]->step,
            orpc_strerror(rc));
    return rc;
}

/* Buffer k's hand-off completed with rc: retry it if the server was missing,
 * log it if acknowledged. Afterwards the buffer may be refilled. */
static void finish(int k, int rc)
{
    if (bulk[k])
        orpc_bulk_release(bulk[k]);
    req[k] = NULL;
    bulk[k] = NULL;
    if (rc < 0)
        rc = resend(k);
    if (rc != 0) {
        failures++;
        return;
    }
    if (ack_fd >= 0) {
        char line[64];
        int n = snprintf(line, sizeof(line), "%u %u\n", hdr[k]->pe, hdr[k]->step);
        if (write(ack_fd, line, (size_t)n) != n)
            failures++;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr,
                "usage: %s ADDRFILE KEYFILE [STEPS] [BYTES] [COMPUTE_US] [ACKLOG [FIRST_STEP]]\n",
                argv[0]);
        return 2;
    }
    int steps = argc > 3 ? atoi(argv[3]) : 20;
    bytes = argc > 4 ? strtoull(argv[4], NULL, 0) : (1u << 20);
    double cus = argc > 5 ? atof(argv[5]) : 2000;
    int first = argc > 7 ? atoi(argv[7]) : 0;
    bytes &= ~(size_t)7;
    if (steps <= 0 || first < 0) {
        fprintf(stderr, "%s: STEPS must be > 0 and FIRST_STEP >= 0\n", argv[0]);
        return 2;
    }

    shmem_init();
    me = shmem_my_pe();
    int npes = shmem_n_pes();
    buf[0] = shmem_malloc(bytes);
    buf[1] = shmem_malloc(bytes);
    hdr[0] = shmem_malloc(sizeof(stage_hdr_t));
    hdr[1] = shmem_malloc(sizeof(stage_hdr_t));
    double *all = shmem_calloc((size_t)3 * npes, sizeof(double)); /* gathered on PE 0 */

    if (argc > 6) {
        char path[4096];
        snprintf(path, sizeof(path), "%s.%d", argv[6], me);
        ack_fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (ack_fd < 0) {
            perror(path);
            shmem_global_exit(1);
        }
    }
    addr_file_g = argv[1];
    snprintf(key_g, sizeof(key_g), "@%s", argv[2]);
    int rc = orpc_open(NULL, &rpc);
    if (rc == ORPC_OK && access(addr_file_g, R_OK) != 0) {
        fprintf(stderr, "PE %d: cannot read %s\n", me, addr_file_g);
        shmem_global_exit(1);
    }
    if (rc == ORPC_OK)
        rc = connect_srv();
    if (rc != ORPC_OK) {
        fprintf(stderr, "PE %d: cannot reach the staging server: %s\n", me, orpc_strerror(rc));
        shmem_global_exit(1);
    }
    id = orpc_id(STAGE_PUT);
    double t_hand = 0, t_comp = 0, t_wait = 0;

    for (int s = first; s < first + steps; s++) {
        int k = s % 2;
        double t0 = now_us();
        if (req[k]) { /* the server must be done with this buffer before we refill it */
            size_t got;
            finish(k, orpc_wait(req[k], &got));
        }
        double t1 = now_us();
        t_wait += t1 - t0;
        uint64_t sum = 0;
        for (size_t i = 0; i < bytes / 8; i++)
            sum += buf[k][i] = stage_word((uint32_t)me, (uint32_t)s, i);
        *hdr[k] = (stage_hdr_t){.magic = STAGE_MAGIC, .pe = (uint32_t)me, .step = (uint32_t)s,
                                .len = bytes, .sum = sum};
        double t2 = now_us();
        rc = srv ? send_step(k) : ORPC_EPEER;
        t_hand += now_us() - t2;
        if (rc != ORPC_OK) { /* no server now: settle this step by resending it */
            int before = failures;
            finish(k, rc < 0 ? rc : ORPC_EPROTO);
            if (failures != before) {
                fprintf(stderr, "PE %d step %d: hand-off failed: %s\n", me, s,
                        orpc_strerror(rc));
                shmem_global_exit(1);
            }
            continue;
        }
        double t3 = now_us();
        compute(cus);
        /* A cheap poll between compute phases; the pull itself needs none on shm. */
        size_t got;
        rc = orpc_test(req[k], &got);
        if (rc != ORPC_EAGAIN)
            finish(k, rc);
        t_comp += now_us() - t3;
    }
    double t0 = now_us();
    for (int k = 0; k < 2; k++)
        if (req[k]) {
            size_t got;
            finish(k, orpc_wait(req[k], &got));
        }

    t_wait += now_us() - t0;
    orpc_stats_t st;
    orpc_stats(rpc, &st);
    printf("PE %d: %d hand-offs of %zu B: in hand-off call %.1f us/step, compute %.1f us/step, "
           "waiting %.1f us/step; new registrations %llu; retries %d; %s\n",
           me, steps, bytes, t_hand / steps, t_comp / steps, t_wait / steps,
           (unsigned long long)st.mr_cache_misses, retries, failures ? "FAILED" : "ok");
    if (srv)
        orpc_peer_release(srv);
    if (ack_fd >= 0)
        close(ack_fd);
    orpc_close(rpc);

    double mine[3] = {t_hand / steps, t_comp / steps, (double)failures};
    shmem_double_put(all + 3 * me, mine, 3, 0);
    shmem_barrier_all();
    if (me == 0) {
        double h = 0, c = 0, fl = 0;
        for (int p = 0; p < npes; p++) {
            h += all[3 * p];
            c += all[3 * p + 1];
            fl += all[3 * p + 2];
        }
        printf("staging: %d PEs, hand-off %.1f us/step vs compute %.1f us/step (%.2f%% of "
               "compute); %s\n",
               npes, h / npes, c / npes, 100.0 * h / c, fl == 0 ? "all steps staged" : "FAILURES");
    }
    shmem_barrier_all();
    shmem_free(all);
    shmem_free(buf[0]);
    shmem_free(buf[1]);
    shmem_free(hdr[0]);
    shmem_free(hdr[1]);
    shmem_finalize();
    return failures != 0;
}
