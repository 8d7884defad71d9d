/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Staging server: PEs of a SHMEM job hand it a buffer of their symmetric
 * heap and a header describing it each step, as one scatter-gather
 * descriptor of two segments; it pulls both in one transfer into its own two
 * pieces (header, data), checks them, appends them to a file as one record
 * (staging_file.h), makes it durable (fdatasync) and only then answers,
 * which releases the PE's buffers. The file is never truncated: a restarted
 * server scans it, cuts a torn last record away (a kill mid-append), and
 * acknowledges a hand-off already on disk (a PE retrying after a kill)
 * without writing it again.
 *   staging_server ADDRFILE KEYFILE OUTFILE     (stops on SIGTERM/SIGINT)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ofishmem_rpc.h"
#include "staging.h"
#include "staging_file.h"

static volatile sig_atomic_t stop_g;
static int fd_g = -1;
static off_t end_g; /* where the next record goes */
static stage_set_t done_g;
static uint64_t *buf_g;
static uint64_t bytes_g, steps_g, bad_g, headers_g, dups_g, io_errs_g;
#define MAX_BYTES STAGE_MAX_BYTES

/* Appends one record at end_g and makes it durable; on failure cuts the file
 * back so that no partial record stays. 0 or -errno. */
static int append_record(const stage_hdr_t *h, const void *data)
{
    struct iovec v[2] = {{(void *)h, sizeof(*h)}, {(void *)data, h->len}};
    size_t total = sizeof(*h) + h->len, done = 0;
    int err = 0;
    while (done < total) {
        struct iovec w[2];
        int nv = 0;
        size_t skip = done;
        for (int i = 0; i < 2; i++) {
            if (skip >= v[i].iov_len) {
                skip -= v[i].iov_len;
                continue;
            }
            w[nv].iov_base = (char *)v[i].iov_base + skip;
            w[nv++].iov_len = v[i].iov_len - skip;
            skip = 0;
        }
        ssize_t n = pwritev(fd_g, w, nv, end_g + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? -errno : -EIO;
            break;
        }
        done += (size_t)n;
    }
    if (err == 0 && fdatasync(fd_g) != 0)
        err = -errno;
    if (err != 0) {
        if (ftruncate(fd_g, end_g) != 0)
            perror("staging_server: ftruncate");
        return err;
    }
    end_g += (off_t)total;
    return 0;
}

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
    if (rc == ORPC_OK && stage_set_has(&done_g, pe, step)) {
        /* A retry of a hand-off whose answer was lost: it is on disk already. */
        dups_g++;
        printf("staging_server: PE %u step %u: already on disk\n", pe, step);
        orpc_respond(c, ORPC_OK, NULL, 0);
        return;
    }
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
        if (rc == ORPC_OK) { /* only checked data goes to the file */
            int e = append_record(&h, buf_g);
            if (e == 0 && stage_set_add(&done_g, pe, step) < 0)
                e = -ENOMEM; /* on disk, not remembered: a retry would write it twice */
            if (e != 0) {
                fprintf(stderr, "staging_server: PE %u step %u: %s\n", pe, step, strerror(-e));
                io_errs_g++;
                stop_g = e == -ENOMEM;
                rc = 2;
            } else {
                bytes_g += len;
            }
        }
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
    setvbuf(stdout, NULL, _IOLBF, 0); /* a killed server's lines stay in its log */
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    buf_g = malloc(MAX_BYTES);
    fd_g = open(argv[3], O_RDWR | O_CREAT, 0644);
    FILE *in = fd_g < 0 ? NULL : fdopen(dup(fd_g), "rb");
    stage_scan_t sc;
    if (buf_g == NULL || in == NULL || stage_scan(in, buf_g, &done_g, 0, &sc) != 0) {
        perror(argv[3]);
        return 1;
    }
    fclose(in);
    if (sc.end < sc.size) { /* a torn record from a kill (or garbage): cut it away */
        fprintf(stderr, "staging_server: %s: dropping %llu bytes after the last complete record\n",
                argv[3], (unsigned long long)(sc.size - sc.end));
        if (ftruncate(fd_g, (off_t)sc.end) != 0 || fdatasync(fd_g) != 0) {
            perror(argv[3]);
            return 1;
        }
    }
    end_g = (off_t)sc.end;
    if (sc.records)
        printf("staging_server: %s holds %llu records already\n", argv[3],
               (unsigned long long)sc.records);
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
    printf("staging_server: pid %d serving at %s\n", (int)getpid(), addr);
    while (!stop_g)
        orpc_progress(rpc, 50);
    orpc_close(rpc);
    close(fd_g);
    printf("staging_server: %llu hand-offs, %llu bytes appended, %llu headers checked, %llu bad, "
           "%llu already on disk, %llu write errors\n",
           (unsigned long long)steps_g, (unsigned long long)bytes_g,
           (unsigned long long)headers_g, (unsigned long long)bad_g, (unsigned long long)dups_g,
           (unsigned long long)io_errs_g);
    free(buf_g);
    free(done_g.k);
    return bad_g != 0 || io_errs_g != 0;
}
