/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transfer service. xfer_server ADDRFILE KEYFILE
 * Writes its address and (mode 0600) its key, serves until xfer_stop.
 * Write requests are checked record by record: the status says whether
 * every byte arrived (0) or the index of the first bad record (> 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xfer.h"

static int stop_g;
static xfer_rec_t *buf_g;
#define MAX_RECS (1u << 20) /* 16 MiB */

static void w_encode(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    uint32_t seed = orpc_dec_u32(&d);
    uint32_t count = orpc_dec_u32(&d);
    const xfer_rec_t *r = orpc_dec_bytes(&d, (size_t)count * sizeof(xfer_rec_t));
    if (d.err || count > MAX_RECS) {
        orpc_respond(c, ORPC_EPROTO, NULL, 0);
        return;
    }
    /* The arguments may be unaligned inside the receive buffer: copy first.
     * (Above 64 KiB the library pulled them into memory of its own first:
     * the handler does not see the difference.) */
    memcpy(buf_g, r, (size_t)count * sizeof(xfer_rec_t));
    long long bad = xfer_check(buf_g, seed, count);
    orpc_respond(c, bad < 0 ? 0 : (int)bad + 1, NULL, 0);
}

static int rdma_args(orpc_call_t *c, const void *in, size_t n, orpc_bulk_desc_t *bd,
                     uint32_t *seed, uint32_t *count)
{
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    const void *w = orpc_dec_bytes(&d, ORPC_BULK_DESC_SIZE);
    *seed = orpc_dec_u32(&d);
    *count = orpc_dec_u32(&d);
    if (d.err || *count > MAX_RECS)
        return ORPC_EPROTO;
    int rc = orpc_bulk_decode(c, w, bd);
    if (rc == ORPC_OK && bd->len < (uint64_t)*count * sizeof(xfer_rec_t))
        rc = ORPC_ERANGE;
    return rc;
}

static void w_rdma(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_bulk_desc_t bd;
    uint32_t seed, count;
    int rc = rdma_args(c, in, n, &bd, &seed, &count);
    if (rc == ORPC_OK)
        rc = orpc_bulk_get(c, &bd, 0, buf_g, (size_t)count * sizeof(xfer_rec_t));
    if (rc == ORPC_OK) {
        long long bad = xfer_check(buf_g, seed, count);
        rc = bad < 0 ? 0 : (int)bad + 1;
    }
    orpc_respond(c, rc, NULL, 0);
}

static void r_rdma(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_bulk_desc_t bd;
    uint32_t seed, count;
    int rc = rdma_args(c, in, n, &bd, &seed, &count);
    if (rc == ORPC_OK) {
        xfer_make(buf_g, seed, count);
        rc = orpc_bulk_put(c, &bd, 0, buf_g, (size_t)count * sizeof(xfer_rec_t));
    }
    orpc_respond(c, rc, NULL, 0);
}

static void h_stop(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in;
    (void)n;
    (void)arg;
    orpc_respond(c, 0, NULL, 0);
    stop_g = 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s ADDRFILE KEYFILE\n", argv[0]);
        return 2;
    }
    buf_g = malloc((size_t)MAX_RECS * sizeof(xfer_rec_t));
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.auth_key_file = argv[2];
    orpc_t *rpc;
    int rc = orpc_open(&o, &rpc);
    if (rc != ORPC_OK) {
        fprintf(stderr, "xfer_server: orpc_open: %s\n", orpc_strerror(rc));
        return 1;
    }
    orpc_register(rpc, XFER_WRITE_ENCODE, w_encode, NULL, 0, NULL);
    orpc_register(rpc, XFER_WRITE_RDMA, w_rdma, NULL, 0, NULL);
    orpc_register(rpc, XFER_READ_RDMA, r_rdma, NULL, 0, NULL);
    orpc_register(rpc, XFER_STOP, h_stop, NULL, 0, NULL);
    char addr[ORPC_ADDR_STRLEN], tmp[4096];
    orpc_addr(rpc, addr, sizeof(addr));
    snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return 1;
    fprintf(f, "%s\n", addr);
    fclose(f);
    rename(tmp, argv[1]);
    printf("xfer_server: serving at %s\n", addr);
    fflush(stdout);
    while (!stop_g)
        orpc_progress(rpc, 100);
    orpc_close(rpc);
    free(buf_g);
    return 0;
}
