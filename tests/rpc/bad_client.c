/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A deliberately bad client: speaks to the server through the conduit and
 * the wire codec directly, sending what a correct client never would, and
 * checks each answer (or silence). bad_client ADDRFILE KEYFILE
 * Counts are checked afterwards from the server's stats by the driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conduit/conduit.h"
#include "core/env.h"
#include "rpc/wire.h"
#include "rpc_test.h"

static cdt_msg_ep_t *ep_g;
static cdt_peer_t srv_g;
static uint8_t key_g[16], self_g[CDT_ADDR_MAX];
static size_t self_len_g;
static char *rbuf_g;
#define RBUF (1u << 20)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Responses seen while waiting for something else. */
static uint64_t seen_id_g[64];
static int seen_st_g[64], nseen_g;

static void note(const cdt_msg_event_t *e)
{
    rpc_hdr_t h;
    if (e->kind == CDT_MSG_RECV && e->len > 0 && nseen_g < 64 &&
        rpc_wire_decode(e->buf, e->len, 1 << 20, &h) == RPC_WIRE_OK && h.type == RPC_T_RESP) {
        seen_id_g[nseen_g] = h.req_id;
        seen_st_g[nseen_g++] = h.status;
    }
}

static void send_raw(const void *msg, size_t len)
{
    int ctx = 0;
    shm_status_t st;
    while ((st = cdt_msg_send(ep_g, srv_g, msg, len, NULL, 0, &ctx)) == SHM_ERR_AGAIN)
        ;
    CHECK(st == SHM_OK, "send of %zu bytes failed: %d", len, st);
    double until = now_ms() + 5000;
    cdt_msg_event_t ev[4];
    for (;;) {
        int n = cdt_msg_poll(ep_g, ev, 4);
        int done = 0;
        for (int i = 0; i < n; i++) {
            if (ev[i].ctx == &ctx)
                done = 1;
            else
                note(&ev[i]);
        }
        if (done)
            return;
        CHECK(now_ms() < until, "send never completed");
    }
}

/* Waits for a response to req_id; returns its status, or 1 if none came in ms. */
static int await_resp(uint64_t req_id, int ms)
{
    double until = now_ms() + ms;
    cdt_msg_event_t ev[8];
    for (;;) {
        for (int i = 0; i < nseen_g; i++)
            if (seen_id_g[i] == req_id)
                return seen_st_g[i];
        if (now_ms() >= until)
            return 1;
        int n = cdt_msg_poll(ep_g, ev, 8);
        for (int i = 0; i < n; i++)
            note(&ev[i]);
    }
}

/* A request: correct unless the caller spoils it afterwards. */
static size_t build(uint8_t *buf, size_t cap, uint64_t id, uint64_t req_id, const uint8_t *key,
                    const void *pay, size_t paylen)
{
    rpc_hdr_t h = {.type = RPC_T_REQ, .rpc_id = id, .req_id = req_id, .timeout_ms = 1000,
                   .payload_len = (uint32_t)paylen, .addr = self_g,
                   .addr_len = (uint8_t)self_len_g};
    memcpy(h.auth, key, 16);
    size_t hl = rpc_wire_encode(buf, cap, &h);
    CHECK(hl && hl + paylen <= cap, "build");
    if (paylen)
        memcpy(buf + hl, pay, paylen);
    return hl + paylen;
}

int main(int argc, char **argv)
{
    CHECK(argc == 3, "usage: bad_client ADDRFILE KEYFILE");
    char addr[300], keyhex[80], prov[64];
    FILE *f = fopen(argv[1], "r");
    CHECK(f && fgets(addr, sizeof(addr), f), "address file");
    fclose(f);
    f = fopen(argv[2], "r");
    CHECK(f && fgets(keyhex, sizeof(keyhex), f), "key file");
    fclose(f);
    for (int i = 0; i < 16; i++)
        CHECK(sscanf(keyhex + 2 * i, "%2hhx", &key_g[i]) == 1, "key hex");
    char err[200];
    CHECK(shm_env_load(&shm_env_g, shm_env_from_process, err, sizeof(err)) == SHM_OK, "%s", err);
    uint8_t name[CDT_ADDR_MAX];
    size_t nlen = sizeof(name);
    addr[strcspn(addr, "\n")] = '\0';
    CHECK(cdt_msg_addr_from_str(addr, prov, sizeof(prov), name, &nlen) == SHM_OK, "address");
    cdt_msg_cfg_t cfg = {.provider = prov};
    CHECK(cdt_msg_open(&cfg, &ep_g) == SHM_OK, "cdt_msg_open");
    self_len_g = sizeof(self_g);
    CHECK(cdt_msg_name(ep_g, self_g, &self_len_g) == SHM_OK, "name");
    CHECK(cdt_msg_insert(ep_g, name, nlen, &srv_g) == SHM_OK, "insert");
    /* Within what the provider takes in one buffer (fi_msg(3): max_msg_size). */
    size_t most = cdt_msg_max_size(ep_g), rlen = RBUF < most ? RBUF : most & ~(size_t)4095;
    rbuf_g = malloc(rlen);
    CHECK(cdt_msg_set_min_multi_recv(ep_g, rlen / 8) == SHM_OK, "min multi recv");
    int rctx = 1;
    CHECK(cdt_msg_post_recv(ep_g, rbuf_g, rlen, 1, &rctx) == SHM_OK, "post");
    /* The server's request limit, from its address (64 KiB when it gives none). */
    const char *mr = strstr(addr, "/max_req=");
    size_t max_req = mr ? strtoull(mr + 9, NULL, 10) : 64u << 10;

    static uint8_t m[3u << 20];
    uint64_t echo = orpc_id(T_ECHO), pull = orpc_id(T_PULL);
    uint8_t badkey[16];
    memcpy(badkey, key_g, 16);
    badkey[5] ^= 1;
    size_t n;
    int rc;

    /* 1. Wrong auth key: dropped, no answer. */
    n = build(m, sizeof(m), echo, 101, badkey, "hi", 2);
    send_raw(m, n);
    CHECK((rc = await_resp(101, 300)) == 1, "request with a wrong key was answered (%d)", rc);
    /* 2. Wrong version: dropped. */
    n = build(m, sizeof(m), echo, 102, key_g, "hi", 2);
    m[4] = 99;
    send_raw(m, n);
    CHECK(await_resp(102, 300) == 1, "request of version 99 was answered");
    /* 3. Truncated: the header claims more payload than came. */
    n = build(m, sizeof(m), echo, 103, key_g, "0123456789", 10);
    send_raw(m, n - 6);
    CHECK_RC(await_resp(103, 2000), ORPC_EPROTO, "truncated request");
    /* 4. Garbage shorter than a header, and a long garbage one. */
    send_raw("garbage", 7);
    for (size_t i = 0; i < 4096; i++)
        m[i] = (uint8_t)(i * 37 + 11);
    send_raw(m, 4096);
    /* 5. Bad address length and bad type: dropped. */
    n = build(m, sizeof(m), echo, 105, key_g, "hi", 2);
    m[6] = 200;
    send_raw(m, n);
    n = build(m, sizeof(m), echo, 106, key_g, "hi", 2);
    m[5] = 9;
    send_raw(m, n);
    CHECK(await_resp(105, 300) == 1 && await_resp(106, 10) == 1, "malformed header answered");
    /* 6. Oversized: above the server's request limit but within its buffer
     * (and the provider's max_msg_size: the server caps its limit to fit
     * one): refused with ERANGE. */
    n = build(m, sizeof(m), echo, 107, key_g, m + (2u << 20), max_req + 100);
    CHECK(n <= most, "a request of %zu bytes is above max_msg_size %zu", n, most);
    send_raw(m, n);
    CHECK_RC(await_resp(107, 2000), ORPC_ERANGE, "oversized request");
    /* 7. Larger than a whole receive buffer (1 MiB): it lands in the overflow
     * area behind the buffer, whole, and is refused with ERANGE (on shm a cut
     * message would hang the server; see the limits scenario). Not where the
     * provider takes no message that large (its receive buffers neither). */
    n = build(m, sizeof(m), echo, 108, key_g, m + 4096, (2u << 20) + 4096);
    if (n <= most) {
        send_raw(m, n);
        CHECK_RC(await_resp(108, 5000), ORPC_ERANGE, "2 MiB request");
    } else {
        printf("bad_client: no 2 MiB request (the provider's max_msg_size is %zu)\n", most);
    }
    /* 8. A bulk descriptor naming another process (the server itself) as owner. */
    uint8_t args[ORPC_BULK_DESC_SIZE + 20];
    rpc_bulk_wire_t w = {.addr = 0x10000, .len = 4096, .key = 1, .rbase = 0x10000,
                         .ttl_ms = 10000, .access = 3, .owner_len = (uint8_t)nlen};
    memcpy(w.owner, name, nlen);
    rpc_bulk_encode(args, &w, key_g);
    orpc_enc_t e;
    orpc_enc_init(&e, args + ORPC_BULK_DESC_SIZE, 20);
    orpc_enc_u64(&e, 0);
    orpc_enc_u64(&e, 64);
    orpc_enc_u32(&e, 1);
    n = build(m, sizeof(m), pull, 109, key_g, args, sizeof(args));
    send_raw(m, n);
    CHECK_RC(await_resp(109, 2000), ORPC_EPERM, "descriptor owned by a third process");
    /* 9. A descriptor tagged with the wrong key. */
    w.owner_len = (uint8_t)self_len_g;
    memcpy(w.owner, self_g, self_len_g);
    rpc_bulk_encode(args, &w, badkey);
    n = build(m, sizeof(m), pull, 110, key_g, args, sizeof(args));
    send_raw(m, n);
    CHECK_RC(await_resp(110, 2000), ORPC_EAUTH, "descriptor with a forged tag");
    /* 9b. A raw-key descriptor (FI_MR_RAW providers: version 3) with one byte
     * of its raw key altered after tagging: refused by the tag, before any
     * key is mapped. Any provider's server decodes it. */
    w.raw_len = 24;
    w.nkeys = 1;
    w.key = 0;
    w.rawkey[0].base = 0x10000;
    for (int i = 0; i < 24; i++)
        w.rawkey[0].key[i] = (uint8_t)(0xa5 ^ i);
    CHECK(rpc_bulk_encode(args, &w, key_g) == 0, "raw-key descriptor");
    CHECK(args[4] == RPC_BULK_VERSION_RAW, "raw-key descriptor of version %d", args[4]);
    args[RPC_BULK_RAW_KEY_OFF + 8 + 5] ^= 0x40;
    n = build(m, sizeof(m), pull, 112, key_g, args, sizeof(args));
    send_raw(m, n);
    CHECK_RC(await_resp(112, 2000), ORPC_EAUTH, "raw-key descriptor with an altered key byte");
    w.raw_len = 0;
    /* 10. Our own descriptor claiming more than we exposed is caught by nothing but
     * the tag: a correct tag over a wrong length passes, which is why only the
     * client that registered can make one. Covered by test.bulk_bad instead. */
    /* 11. After all that, a correct request is still served. */
    n = build(m, sizeof(m), echo, 111, key_g, "ok", 2);
    send_raw(m, n);
    CHECK_RC(await_resp(111, 2000), 0, "correct request after the bad ones");
    cdt_msg_close(ep_g);
    free(rbuf_g);
    printf("bad_client: ok\n");
    return 0;
}
