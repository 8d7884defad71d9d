// SPDX-License-Identifier: BSD-3-Clause
/* The RPC wire format (see wire.h): explicit little-endian, every length checked. */
#include "rpc/wire.h"

#include <string.h>

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

size_t rpc_wire_encode(void *buf, size_t cap, const rpc_hdr_t *h)
{
    if (h->addr_len > RPC_ADDR_MAX)
        return 0;
    size_t hl = rpc_wire_hdr_len(h->addr_len);
    if (cap < hl)
        return 0;
    uint8_t *p = buf;
    memset(p, 0, hl);
    put_le(p + 0, RPC_WIRE_MAGIC, 4);
    p[4] = h->version ? h->version : RPC_WIRE_VERSION;
    p[5] = h->type;
    p[6] = h->addr_len;
    p[7] = h->flags;
    put_le(p + 8, h->payload_len, 4);
    put_le(p + 12, h->timeout_ms, 4);
    put_le(p + 16, h->rpc_id, 8);
    put_le(p + 24, h->req_id, 8);
    put_le(p + 32, (uint32_t)h->status, 4);
    memcpy(p + 40, h->auth, RPC_AUTH_LEN);
    if (h->addr_len)
        memcpy(p + RPC_HDR_FIXED, h->addr, h->addr_len);
    return hl;
}

rpc_wire_rc_t rpc_wire_decode(const void *msg, size_t len, size_t max_payload, rpc_hdr_t *h)
{
    const uint8_t *p = msg;
    if (msg == NULL || len < RPC_HDR_FIXED)
        return RPC_WIRE_SHORT;
    if (get_le(p, 4) != RPC_WIRE_MAGIC)
        return RPC_WIRE_MAGIC_BAD;
    h->version = p[4];
    h->type = p[5];
    h->addr_len = p[6];
    h->flags = p[7];
    h->payload_len = (uint32_t)get_le(p + 8, 4);
    h->timeout_ms = (uint32_t)get_le(p + 12, 4);
    h->rpc_id = get_le(p + 16, 8);
    h->req_id = get_le(p + 24, 8);
    h->status = (int32_t)(uint32_t)get_le(p + 32, 4);
    memcpy(h->auth, p + 40, RPC_AUTH_LEN);
    h->addr = p + RPC_HDR_FIXED;
    h->payload = NULL;
    if (h->version != RPC_WIRE_VERSION)
        return RPC_WIRE_VERSION_BAD;
    if (h->type < RPC_T_REQ || h->type > RPC_T_BYE)
        return RPC_WIRE_TYPE_BAD;
    if (h->addr_len > RPC_ADDR_MAX || (h->type != RPC_T_RESP && h->addr_len == 0))
        return RPC_WIRE_ADDR_BAD;
    size_t hl = rpc_wire_hdr_len(h->addr_len);
    if (len < hl)
        return RPC_WIRE_SHORT;
    if ((size_t)h->payload_len != len - hl)
        return len - hl > max_payload ? RPC_WIRE_TOO_BIG : RPC_WIRE_LEN_BAD;
    if (h->payload_len > max_payload)
        return RPC_WIRE_TOO_BIG;
    h->payload = p + hl;
    return RPC_WIRE_OK;
}

const char *rpc_wire_rc_str(rpc_wire_rc_t rc)
{
    static const char *const s[] = {"ok", "short", "bad magic", "bad version", "bad type",
                                    "bad address", "bad length", "too big"};
    return (unsigned)rc < sizeof(s) / sizeof(s[0]) ? s[rc] : "?";
}

int rpc_auth_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < RPC_AUTH_LEN; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                               \
    do {                                                                       \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);              \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                 \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                 \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);              \
    } while (0)

uint64_t rpc_siphash(const uint8_t key[16], const void *data, size_t len)
{
    const uint8_t *in = data;
    uint64_t k0 = get_le(key, 8), k1 = get_le(key + 8, 8);
    uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = get_le(in + i, 8);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    b |= get_le(in + full, (unsigned)(len - full));
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t rpc_fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

void rpc_bulk_encode(void *out, const rpc_bulk_wire_t *b, const uint8_t key[16])
{
    uint8_t *p = out;
    memset(p, 0, RPC_BULK_WIRE);
    put_le(p + 0, RPC_BULK_MAGIC, 4);
    p[4] = RPC_WIRE_VERSION;
    p[5] = b->access;
    p[6] = b->owner_len;
    put_le(p + 8, b->ttl_ms, 4);
    put_le(p + 16, b->addr, 8);
    put_le(p + 24, b->len, 8);
    put_le(p + 32, b->key, 8);
    put_le(p + 40, b->rbase, 8);
    memcpy(p + 48, b->owner, b->owner_len <= RPC_ADDR_MAX ? b->owner_len : RPC_ADDR_MAX);
    put_le(p + RPC_BULK_TAG_OFF, rpc_siphash(key, p, RPC_BULK_TAG_OFF), 8);
}

rpc_bulk_rc_t rpc_bulk_decode(const void *wire, const uint8_t key[16], rpc_bulk_wire_t *b)
{
    const uint8_t *p = wire;
    if (get_le(p, 4) != RPC_BULK_MAGIC || p[4] != RPC_WIRE_VERSION)
        return RPC_BULK_MAGIC_BAD;
    /* The tag first: nothing else in an altered descriptor is worth reading. */
    uint64_t tag = get_le(p + RPC_BULK_TAG_OFF, 8);
    if (rpc_siphash(key, p, RPC_BULK_TAG_OFF) != tag)
        return RPC_BULK_TAG_BAD;
    b->access = p[5];
    b->owner_len = p[6];
    b->ttl_ms = (uint32_t)get_le(p + 8, 4);
    b->addr = get_le(p + 16, 8);
    b->len = get_le(p + 24, 8);
    b->key = get_le(p + 32, 8);
    b->rbase = get_le(p + 40, 8);
    if (b->access == 0 || (b->access & ~3u))
        return RPC_BULK_ACCESS_BAD;
    if (b->owner_len == 0 || b->owner_len > RPC_ADDR_MAX)
        return RPC_BULK_OWNER_BAD;
    memcpy(b->owner, p + 48, b->owner_len);
    if (b->len > (1ull << 56) || b->addr + b->len < b->addr || b->rbase + b->len < b->rbase)
        return RPC_BULK_RANGE_BAD;
    if (b->ttl_ms == 0)
        return RPC_BULK_TTL_BAD;
    return RPC_BULK_OK;
}
