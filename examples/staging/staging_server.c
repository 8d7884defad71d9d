/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Staging server: PEs of a SHMEM job hand it a buffer of their symmetric
 * heap and a header describing it each step, as one scatter-gather
 * descriptor of two segments; it pulls both in one transfer into its own two
 * pieces (header, data), checks them, appends the data to a file and
 * answers, which releases the PE's buffers.
 *   staging_server ADDRFILE KEYFILE OUTFILE     (stops on SIGTERM/SIGINT)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofishmem_rpc.h"
#include "staging.h"

static volatile sig_atomic_t stop_g;
static FILE *out_g;
static uint64_t *buf_g;
static uint64_t bytes_g, steps_g, bad_g, headers_g;
#define MAX_BYTES (64u << 20)

static void on_term(int sig)
{
    (void)sig;
    stop_g = 1;
}

static void stage_put(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    /* The descriptor leads the arguments; it says how long it is. */
    size_t dl = orpc_bulk_wire_size(in, n);
    orpc_dec_t d;
    orpc_dec_init(&d, in, n);
    const void *w = orpc_dec_bytes(&d, dl);
    uint32_t pe = orpc_dec_u32(&d), step = orpc_dec_u32(&d);
    uint64_t len = orpc_dec_u64(&d);
    orpc_bulk_desc_t bd;
    stage_hdr_t h;
    int rc = dl == 0 || d.err ? ORPC_EPROTO : len > MAX_BYTES ? ORPC_ERANGE
                                                               : orpc_bulk_decode_n(c, w, dl, &bd);
    if (rc == ORPC_OK && bd.len != sizeof(h) + len)
        rc = ORPC_ERANGE;
    if (rc == ORPC_OK) {
        /* Remote list (header, payload) into a local list (h, buf_g). */
        orpc_seg_t mine[2] = {{&h, sizeof(h)}, {buf_g, len}};
        rc = orpc_bulk_getv(c, &bd, 0, mine, 2);
    }
    if (rc == ORPC_OK) {
        uint64_t sum = 0;
        for (uint64_t i = 0; i < len / 8; i++) {
            sum += buf_g[i];
            if (buf_g[i] != stage_word(pe, step, i)) {
                fprintf(stderr, "staging_server: PE %u step %u: word %llu wrong\n", pe, step,
                        (unsigned long long)i);
                bad_g++;
                rc = 1;
                break;
            }
        }
        if (rc == ORPC_OK && (h.magic != STAGE_MAGIC || h.pe != pe || h.step != step ||
                              h.len != len || h.sum != sum)) {
            fprintf(stderr, "staging_server: PE %u step %u: header disagrees\n", pe, step);
            bad_g++;
            rc = 1;
        }
        headers_g += rc == ORPC_OK;
        fwrite(buf_g, 1, len, out_g);
        bytes_g += len;
        steps_g++;
    }
    orpc_respond(c, rc, NULL, 0); /* the PE may reuse its buffer from now on */
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s ADDRFILE KEYFILE OUTFILE\n", argv[0]);
        return 2;
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    out_g = fopen(argv[3], "wb");
    buf_g = malloc(MAX_BYTES);
    if (out_g == NULL || buf_g == NULL)
        return 1;
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.auth_key_file = argv[2];
    orpc_t *rpc;
    int rc = orpc_open(&o, &rpc);
    if (rc != ORPC_OK) {
        fprintf(stderr, "staging_server: %s\n", orpc_strerror(rc));
        return 1;
    }
    orpc_register(rpc, STAGE_PUT, stage_put, NULL, 0, NULL);
    char addr[ORPC_ADDR_STRLEN], tmp[4096];
    orpc_addr(rpc, addr, sizeof(addr));
    snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    fprintf(f, "%s\n", addr);
    fclose(f);
    rename(tmp, argv[1]);
    while (!stop_g)
        orpc_progress(rpc, 50);
    orpc_close(rpc);
    fclose(out_g);
    printf("staging_server: %llu hand-offs, %llu bytes appended, %llu headers checked, %llu bad\n",
           (unsigned long long)steps_g, (unsigned long long)bytes_g,
           (unsigned long long)headers_g, (unsigned long long)bad_g);
    free(buf_g);
    return bad_g != 0;
}
