/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transfer client. xfer_client ADDRFILE KEYFILE [--stop]
 * Runs the three operations at growing sizes and verifies every byte: the
 * server checks what it receives (status 0 = all records right), the client
 * checks what the server pushed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xfer.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ADDRFILE KEYFILE [--stop]\n", argv[0]);
        return 2;
    }
    char addr[ORPC_ADDR_STRLEN], key[4096];
    FILE *f = fopen(argv[1], "r");
    if (f == NULL || fgets(addr, sizeof(addr), f) == NULL) {
        fprintf(stderr, "xfer_client: cannot read %s\n", argv[1]);
        return 1;
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
        fprintf(stderr, "xfer_client: cannot reach %s: %s\n", addr, orpc_strerror(rc));
        return 1;
    }
    uint64_t id_enc = orpc_id(XFER_WRITE_ENCODE), id_wr = orpc_id(XFER_WRITE_RDMA),
             id_rd = orpc_id(XFER_READ_RDMA);
    size_t maxn = 1u << 20;
    xfer_rec_t *recs = malloc(maxn * sizeof(xfer_rec_t));
    size_t args_cap = maxn * sizeof(xfer_rec_t) + 64;
    unsigned char *args = malloc(args_cap);
    int failures = 0;
    printf("%-18s %10s %12s  %s\n", "operation", "records", "usec", "check");
    for (size_t n = 1; n <= maxn; n *= 4) {
        uint32_t seed = (uint32_t)n * 7 + 1;
        size_t bytes = n * sizeof(xfer_rec_t);
        orpc_enc_t e;
        size_t got;
        double t0;
        /* 1. Data inside the arguments, at every size: above the eager limit
         * (64 KiB) the library has the server pull them (two-phase). */
        {
            xfer_make(recs, seed, n);
            orpc_enc_init(&e, args, args_cap);
            orpc_enc_u32(&e, seed);
            orpc_enc_u32(&e, (uint32_t)n);
            orpc_enc_bytes(&e, recs, bytes);
            t0 = now_us();
            rc = orpc_call(rpc, srv, id_enc, args, e.pos, NULL, 0, &got, 10000);
            printf("%-18s %10zu %12.1f  %s\n", XFER_WRITE_ENCODE, n, now_us() - t0,
                   rc == 0 ? "ok" : orpc_strerror(rc));
            failures += rc != 0;
        }
        /* 2. The server pulls from our buffer. */
        xfer_make(recs, seed + 1, n);
        orpc_bulk_t *b;
        t0 = now_us();
        rc = orpc_bulk_expose(rpc, recs, bytes, ORPC_BULK_READ, -1, &b);
        if (rc == ORPC_OK) {
            orpc_enc_init(&e, args, 65536);
            orpc_bulk_encode(b, srv, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE));
            orpc_enc_u32(&e, seed + 1);
            orpc_enc_u32(&e, (uint32_t)n);
            rc = orpc_call(rpc, srv, id_wr, args, e.pos, NULL, 0, &got, 10000);
            orpc_bulk_release(b); /* only now may the buffer be reused */
        }
        printf("%-18s %10zu %12.1f  %s\n", XFER_WRITE_RDMA, n, now_us() - t0,
               rc == 0 ? "ok" : orpc_strerror(rc));
        failures += rc != 0;
        /* 3. The server pushes into our buffer; we check every byte. */
        memset(recs, 0, bytes);
        t0 = now_us();
        rc = orpc_bulk_expose(rpc, recs, bytes, ORPC_BULK_WRITE, -1, &b);
        if (rc == ORPC_OK) {
            orpc_enc_init(&e, args, 65536);
            orpc_bulk_encode(b, srv, orpc_enc_reserve(&e, ORPC_BULK_DESC_SIZE));
            orpc_enc_u32(&e, seed + 2);
            orpc_enc_u32(&e, (uint32_t)n);
            rc = orpc_call(rpc, srv, id_rd, args, e.pos, NULL, 0, &got, 10000);
            orpc_bulk_release(b);
        }
        double us = now_us() - t0;
        long long bad = rc == 0 ? xfer_check(recs, seed + 2, n) : -1;
        printf("%-18s %10zu %12.1f  %s\n", XFER_READ_RDMA, n, us,
               rc != 0 ? orpc_strerror(rc) : bad < 0 ? "ok" : "WRONG DATA");
        if (bad >= 0)
            fprintf(stderr, "xfer_client: record %lld of %zu wrong after xfer_read_rdma\n", bad,
                    n);
        failures += rc != 0 || bad >= 0;
    }
    if (argc > 3 && strcmp(argv[3], "--stop") == 0) {
        size_t got;
        orpc_call(rpc, srv, orpc_id(XFER_STOP), NULL, 0, NULL, 0, &got, 5000);
    }
    orpc_peer_release(srv);
    orpc_close(rpc);
    free(recs);
    free(args);
    printf("xfer: %s\n", failures ? "FAILED" : "all transfers verified");
    return failures != 0;
}
