/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A SHMEM job that offloads its output to a staging server (DART-style):
 * every step each PE fills a buffer of its symmetric heap and a small header
 * describing it, hands both to the server with an asynchronous RPC carrying
 * one scatter-gather descriptor of two segments (header, payload; no new
 * registration: the heap is registered already), and goes on computing.
 * Two buffers alternate; a buffer is reused only after the server answered.
 *   oshrun -n N staging_pe ADDRFILE KEYFILE [STEPS] [BYTES] [COMPUTE_US]
 * Reports, per PE and for the job, time in the hand-off call versus compute.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ADDRFILE KEYFILE [STEPS] [BYTES] [COMPUTE_US]\n", argv[0]);
        return 2;
    }
    int steps = argc > 3 ? atoi(argv[3]) : 20;
    size_t bytes = argc > 4 ? strtoull(argv[4], NULL, 0) : (1u << 20);
    double cus = argc > 5 ? atof(argv[5]) : 2000;
    bytes &= ~(size_t)7;

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    uint64_t *buf[2] = {shmem_malloc(bytes), shmem_malloc(bytes)};
    stage_hdr_t *hdr[2] = {shmem_malloc(sizeof(stage_hdr_t)), shmem_malloc(sizeof(stage_hdr_t))};
    double *all = shmem_calloc((size_t)3 * npes, sizeof(double)); /* gathered on PE 0 */

    char addr[ORPC_ADDR_STRLEN], key[4096];
    FILE *f = fopen(argv[1], "r");
    if (f == NULL || fgets(addr, sizeof(addr), f) == NULL) {
        fprintf(stderr, "PE %d: cannot read %s\n", me, argv[1]);
        shmem_global_exit(1);
    }
    fclose(f);
    addr[strcspn(addr, "\n")] = '\0';
    snprintf(key, sizeof(key), "@%s", argv[2]);
    orpc_t *rpc;
    orpc_peer_t *srv;
    int rc = orpc_open(NULL, &rpc);
    if (rc == ORPC_OK)
        rc = orpc_lookup(rpc, addr, key, &srv);
    if (rc != ORPC_OK) {
        fprintf(stderr, "PE %d: cannot reach the staging server: %s\n", me, orpc_strerror(rc));
        shmem_global_exit(1);
    }
    uint64_t id = orpc_id(STAGE_PUT);
    orpc_req_t *req[2] = {NULL, NULL};
    orpc_bulk_t *bulk[2] = {NULL, NULL};
    double t_hand = 0, t_comp = 0, t_wait = 0;
    int failures = 0;
    unsigned char args[ORPC_BULK_WIRE_MAX + 16];

    for (int s = 0; s < steps; s++) {
        int k = s % 2;
        double t0 = now_us();
        if (req[k]) { /* the server must be done with this buffer before we refill it */
            size_t got;
            failures += orpc_wait(req[k], &got) != 0;
            orpc_bulk_release(bulk[k]);
            req[k] = NULL;
            bulk[k] = NULL;
        }
        double t1 = now_us();
        t_wait += t1 - t0;
        uint64_t sum = 0;
        for (size_t i = 0; i < bytes / 8; i++)
            sum += buf[k][i] = stage_word((uint32_t)me, (uint32_t)s, i);
        *hdr[k] = (stage_hdr_t){.magic = STAGE_MAGIC, .pe = (uint32_t)me, .step = (uint32_t)s,
                                .len = bytes, .sum = sum};
        /* The hand-off: expose, describe, send. Nothing is copied or registered. */
        double t2 = now_us();
        orpc_enc_t e;
        orpc_enc_init(&e, args, sizeof(args));
        orpc_seg_t segs[2] = {{hdr[k], sizeof(stage_hdr_t)}, {buf[k], bytes}};
        rc = orpc_bulk_expose_sg(rpc, segs, 2, ORPC_BULK_READ, -1, &bulk[k]);
        if (rc == ORPC_OK)
            rc = orpc_bulk_encode(bulk[k], srv,
                                  orpc_enc_reserve(&e, orpc_bulk_encoded_size(bulk[k])));
        orpc_enc_u32(&e, (uint32_t)me);
        orpc_enc_u32(&e, (uint32_t)s);
        orpc_enc_u64(&e, bytes);
        if (rc == ORPC_OK)
            rc = orpc_icall(rpc, srv, id, args, e.pos, NULL, 0, 30000, &req[k]);
        t_hand += now_us() - t2;
        if (rc != ORPC_OK) {
            fprintf(stderr, "PE %d step %d: hand-off failed: %s\n", me, s, orpc_strerror(rc));
            shmem_global_exit(1);
        }
        double t3 = now_us();
        compute(cus);
        /* A cheap poll between compute phases; the pull itself needs none on shm. */
        size_t got;
        rc = orpc_test(req[k], &got);
        if (rc != ORPC_EAGAIN) {
            failures += rc != 0;
            orpc_bulk_release(bulk[k]);
            req[k] = NULL;
            bulk[k] = NULL;
        }
        t_comp += now_us() - t3;
    }
    double t0 = now_us();
    for (int k = 0; k < 2; k++)
        if (req[k]) {
            size_t got;
            failures += orpc_wait(req[k], &got) != 0;
        }
    for (int k = 0; k < 2; k++)
        if (bulk[k])
            orpc_bulk_release(bulk[k]);

    t_wait += now_us() - t0;
    orpc_stats_t st;
    orpc_stats(rpc, &st);
    printf("PE %d: %d hand-offs of %zu B: in hand-off call %.1f us/step, compute %.1f us/step, "
           "waiting %.1f us/step; new registrations %llu; %s\n",
           me, steps, bytes, t_hand / steps, t_comp / steps, t_wait / steps,
           (unsigned long long)st.mr_cache_misses, failures ? "FAILED" : "ok");
    orpc_peer_release(srv);
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
