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

/* Bytes of each raw key after the first (base address, key rounded up to 8). */
static size_t raw_slot(size_t raw_len)
{
    return 8 + ((raw_len + 7) & ~(size_t)7);
}

size_t rpc_bulk_wire_len(const rpc_bulk_wire_t *b)
{
    switch (b->kind) {
    case RPC_BULK_LIST:
        return RPC_BULK_WIRE + (size_t)b->nseg * RPC_BULK_SEG_WIRE +
               (b->raw_len && b->nkeys ? (size_t)(b->nkeys - 1) * raw_slot(b->raw_len) : 0);
    case RPC_BULK_STRIDED: return RPC_BULK_WIRE + RPC_BULK_SEG_WIRE;
    default: return RPC_BULK_WIRE;
    }
}

uint64_t rpc_bulk_owner_tag(const uint8_t key[16], const uint8_t *owner, size_t len)
{
    uint8_t m[4 + RPC_ADDR_MAX];
    if (len > RPC_ADDR_MAX)
        len = RPC_ADDR_MAX;
    memcpy(m, "OOWN", 4); /* not the hash of any other field's bytes */
    memcpy(m + 4, owner, len);
    return rpc_siphash(key, m, 4 + len);
}

/* The raw keys of b fit a descriptor. */
static int raw_ok(const rpc_bulk_wire_t *b)
{
    unsigned most = b->kind == RPC_BULK_LIST ? b->nseg : 1;
    return b->raw_len <= RPC_BULK_RAW_MAX && b->nkeys >= 1 && b->nkeys <= most &&
           (b->kind != RPC_BULK_LIST || b->nseg <= RPC_BULK_SEG_MAX) &&
           rpc_bulk_wire_len(b) <= RPC_BULK_WIRE_MAX;
}

int rpc_bulk_encode(void *out, const rpc_bulk_wire_t *b, const uint8_t key[16])
{
    uint8_t *p = out;
    int raw = b->raw_len > 0;
    if (raw && !raw_ok(b))
        return -1;
    memset(p, 0, RPC_BULK_WIRE);
    put_le(p + 0, RPC_BULK_MAGIC, 4);
    p[4] = raw ? RPC_BULK_VERSION_RAW : b->kind ? RPC_BULK_VERSION_SG : RPC_WIRE_VERSION;
    p[5] = b->access;
    p[6] = raw ? b->raw_len : b->owner_len;
    p[7] = b->kind;
    put_le(p + 8, b->ttl_ms, 4);
    uint32_t nseg = b->kind == RPC_BULK_LIST ? b->nseg : 0;
    if (raw) {
        put_le(p + 12, nseg, 2);
        put_le(p + 14, b->nkeys, 2);
    } else {
        put_le(p + 12, nseg, 4);
    }
    put_le(p + 16, b->addr, 8);
    put_le(p + 24, b->len, 8);
    put_le(p + 32, b->key, 8);
    put_le(p + 40, b->rbase, 8);
    if (raw) {
        put_le(p + RPC_BULK_OWNER_TAG_OFF, rpc_bulk_owner_tag(key, b->owner, b->owner_len), 8);
        put_le(p + RPC_BULK_RAW_KEY_OFF, b->rawkey[0].base, 8);
        memcpy(p + RPC_BULK_RAW_KEY_OFF + 8, b->rawkey[0].key, b->raw_len);
    } else {
        memcpy(p + 48, b->owner, b->owner_len <= RPC_ADDR_MAX ? b->owner_len : RPC_ADDR_MAX);
    }
    if (b->kind) {
        uint8_t *x = p + RPC_BULK_WIRE;
        size_t xl = rpc_bulk_wire_len(b) - RPC_BULK_WIRE;
        if (b->kind == RPC_BULK_LIST) {
            for (uint32_t i = 0; i < b->nseg && i < RPC_BULK_SEG_MAX; i++) {
                put_le(x + 32 * i, b->seg[i].addr, 8);
                put_le(x + 32 * i + 8, b->seg[i].len, 8);
                put_le(x + 32 * i + 16, b->seg[i].key, 8);
                put_le(x + 32 * i + 24, b->seg[i].rbase, 8);
            }
            /* Raw keys after the first, behind the segments. */
            uint8_t *k = x + (size_t)b->nseg * RPC_BULK_SEG_WIRE;
            for (unsigned i = 1; raw && i < b->nkeys; i++, k += raw_slot(b->raw_len)) {
                memset(k, 0, raw_slot(b->raw_len));
                put_le(k, b->rawkey[i].base, 8);
                memcpy(k + 8, b->rawkey[i].key, b->raw_len);
            }
        } else {
            put_le(x, b->rows, 8);
            put_le(x + 8, b->row_bytes, 8);
            put_le(x + 16, b->pitch, 8);
            put_le(x + 24, 0, 8);
        }
        /* The extension's keyed hash lies inside what the tag covers. */
        put_le(p + RPC_BULK_EXT_OFF, rpc_siphash(key, x, xl), 8);
    }
    put_le(p + RPC_BULK_TAG_OFF, rpc_siphash(key, p, RPC_BULK_TAG_OFF), 8);
    return 0;
}

/* Size of a version-3 descriptor from its first 16 bytes; 0 with *rc why not. */
static size_t raw_size(const uint8_t *p, rpc_bulk_rc_t *rc)
{
    size_t rl = p[6], nk = get_le(p + 14, 2), ns = get_le(p + 12, 2);
    *rc = RPC_BULK_KEYS_BAD;
    if (rl == 0 || rl > RPC_BULK_RAW_MAX || nk == 0)
        return 0;
    if (p[7] == RPC_BULK_CONTIG || p[7] == RPC_BULK_STRIDED) {
        if (ns != 0 || nk != 1)
            return 0;
        return p[7] == RPC_BULK_CONTIG ? RPC_BULK_WIRE : RPC_BULK_WIRE + RPC_BULK_SEG_WIRE;
    }
    *rc = RPC_BULK_SEGS_BAD;
    if (p[7] != RPC_BULK_LIST || ns == 0 || ns > RPC_BULK_SEG_MAX)
        return 0;
    *rc = RPC_BULK_KEYS_BAD;
    size_t size = RPC_BULK_WIRE + ns * RPC_BULK_SEG_WIRE + (nk - 1) * raw_slot(rl);
    return nk <= ns && size <= RPC_BULK_WIRE_MAX ? size : 0;
}

size_t rpc_bulk_wire_size(const void *wire, size_t avail)
{
    const uint8_t *p = wire;
    if (wire == NULL || avail < 16 || get_le(p, 4) != RPC_BULK_MAGIC)
        return 0;
    if (p[4] == RPC_WIRE_VERSION)
        return RPC_BULK_WIRE;
    if (p[4] == RPC_BULK_VERSION_RAW) {
        rpc_bulk_rc_t rc;
        return raw_size(p, &rc);
    }
    if (p[4] != RPC_BULK_VERSION_SG)
        return 0;
    uint64_t nseg = get_le(p + 12, 4);
    if (p[7] == RPC_BULK_LIST)
        return nseg <= RPC_BULK_SEG_MAX ? RPC_BULK_WIRE + (size_t)nseg * RPC_BULK_SEG_WIRE : 0;
    return p[7] == RPC_BULK_STRIDED ? RPC_BULK_WIRE + RPC_BULK_SEG_WIRE : 0;
}

static int wraps(uint64_t a, uint64_t n)
{
    return a + n < a;
}

/* The extension of a version-2 or -3 descriptor (its hash checked by the
 * caller; b->nseg set for a list). */
static rpc_bulk_rc_t sg_decode(const uint8_t *p, rpc_bulk_wire_t *b)
{
    const uint8_t *x = p + RPC_BULK_WIRE;
    b->kind = p[7];
    if (b->kind == RPC_BULK_LIST) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < b->nseg; i++) {
            rpc_bulk_seg_t *s = &b->seg[i];
            s->addr = get_le(x + 32 * i, 8);
            s->len = get_le(x + 32 * i + 8, 8);
            s->key = get_le(x + 32 * i + 16, 8);
            s->rbase = get_le(x + 32 * i + 24, 8);
            if (s->len > (1ull << 56) || wraps(s->addr, s->len) || wraps(s->rbase, s->len))
                return RPC_BULK_RANGE_BAD;
            if (b->raw_len && s->key >= b->nkeys)
                return RPC_BULK_KEYS_BAD;
            sum += s->len; /* at most 64 x 2^56: no wrap */
        }
        return sum == b->len ? RPC_BULK_OK : RPC_BULK_SEGS_BAD;
    }
    b->rows = get_le(x, 8);
    b->row_bytes = get_le(x + 8, 8);
    b->pitch = get_le(x + 16, 8);
    if (b->rows > (1ull << 56) || b->row_bytes > (1ull << 56) || b->pitch > (1ull << 56))
        return RPC_BULK_RANGE_BAD;
    /* Rows may not overlap; the logical length is rows x row_bytes. */
    if ((b->rows > 1 && b->pitch < b->row_bytes) ||
        (b->row_bytes && b->rows > (1ull << 56) / b->row_bytes) ||
        b->rows * b->row_bytes != b->len)
        return RPC_BULK_SEGS_BAD;
    if (b->rows > 1 && b->pitch > ((1ull << 62) - b->row_bytes) / (b->rows - 1))
        return RPC_BULK_RANGE_BAD;
    uint64_t span = b->rows ? (b->rows - 1) * b->pitch + b->row_bytes : 0;
    if (wraps(b->addr, span) || wraps(b->rbase, span))
        return RPC_BULK_RANGE_BAD;
    return RPC_BULK_OK;
}

/* The raw keys of a version-3 descriptor of size bytes. */
static void raw_decode(const uint8_t *p, size_t size, rpc_bulk_wire_t *b)
{
    b->raw_len = p[6];
    b->nkeys = (uint8_t)get_le(p + 14, 2);
    b->owner_tag = get_le(p + RPC_BULK_OWNER_TAG_OFF, 8);
    b->rawkey[0].base = get_le(p + RPC_BULK_RAW_KEY_OFF, 8);
    memcpy(b->rawkey[0].key, p + RPC_BULK_RAW_KEY_OFF + 8, b->raw_len);
    const uint8_t *k = p + size - (size_t)(b->nkeys - 1) * raw_slot(b->raw_len);
    for (unsigned i = 1; i < b->nkeys; i++, k += raw_slot(b->raw_len)) {
        b->rawkey[i].base = get_le(k, 8);
        memcpy(b->rawkey[i].key, k + 8, b->raw_len);
    }
}

rpc_bulk_rc_t rpc_bulk_decode_n(const void *wire, size_t avail, const uint8_t key[16],
                                rpc_bulk_wire_t *b)
{
    const uint8_t *p = wire;
    if (wire == NULL || avail < RPC_BULK_WIRE)
        return RPC_BULK_SHORT;
    int v = p[4];
    if (get_le(p, 4) != RPC_BULK_MAGIC ||
        (v != RPC_WIRE_VERSION && v != RPC_BULK_VERSION_SG && v != RPC_BULK_VERSION_RAW))
        return RPC_BULK_MAGIC_BAD;
    rpc_bulk_rc_t why = RPC_BULK_SEGS_BAD;
    size_t size = v == RPC_BULK_VERSION_RAW ? raw_size(p, &why) : rpc_bulk_wire_size(wire, avail);
    if (size == 0)
        return why;
    if (avail < size)
        return RPC_BULK_SHORT;
    /* The tag first: nothing else in an altered descriptor is worth reading. */
    uint64_t tag = get_le(p + RPC_BULK_TAG_OFF, 8);
    if (rpc_siphash(key, p, RPC_BULK_TAG_OFF) != tag)
        return RPC_BULK_TAG_BAD;
    if (size > RPC_BULK_WIRE && rpc_siphash(key, p + RPC_BULK_WIRE, size - RPC_BULK_WIRE) !=
                                    get_le(p + RPC_BULK_EXT_OFF, 8))
        return RPC_BULK_TAG_BAD;
    b->kind = RPC_BULK_CONTIG;
    b->nseg = 0;
    b->rows = b->row_bytes = b->pitch = 0;
    b->raw_len = b->nkeys = 0;
    b->owner_tag = 0;
    b->access = p[5];
    b->ttl_ms = (uint32_t)get_le(p + 8, 4);
    b->addr = get_le(p + 16, 8);
    b->len = get_le(p + 24, 8);
    b->key = get_le(p + 32, 8);
    b->rbase = get_le(p + 40, 8);
    if (b->access == 0 || (b->access & ~3u))
        return RPC_BULK_ACCESS_BAD;
    if (v == RPC_BULK_VERSION_RAW) {
        /* The owner is its tag (the caller compares it); keys are indices. */
        b->owner_len = 0;
        raw_decode(p, size, b);
        if (b->kind != RPC_BULK_LIST && b->key != 0)
            return RPC_BULK_KEYS_BAD;
        b->nseg = p[7] == RPC_BULK_LIST ? (uint32_t)get_le(p + 12, 2) : 0;
    } else {
        b->owner_len = p[6];
        if (b->owner_len == 0 || b->owner_len > RPC_ADDR_MAX)
            return RPC_BULK_OWNER_BAD;
        memcpy(b->owner, p + 48, b->owner_len);
        b->nseg = p[7] == RPC_BULK_LIST ? (uint32_t)get_le(p + 12, 4) : 0;
    }
    if (b->len > (1ull << 56) || wraps(b->addr, b->len) || wraps(b->rbase, b->len))
        return RPC_BULK_RANGE_BAD;
    if (v != RPC_WIRE_VERSION && (v == RPC_BULK_VERSION_SG || p[7] != RPC_BULK_CONTIG)) {
        rpc_bulk_rc_t rc = sg_decode(p, b);
        if (rc != RPC_BULK_OK)
            return rc;
    }
    if (b->ttl_ms == 0)
        return RPC_BULK_TTL_BAD;
    return RPC_BULK_OK;
}

rpc_bulk_rc_t rpc_bulk_decode(const void *wire, const uint8_t key[16], rpc_bulk_wire_t *b)
{
    return rpc_bulk_decode_n(wire, RPC_BULK_WIRE, key, b);
}

/* ------------------------------------------------------ collective calls */

void rpc_coll_encode(void *out, const rpc_coll_hdr_t *c)
{
    uint8_t *p = out;
    put_le(p, c->n, 2);
    put_le(p + 2, c->rank, 2);
    put_le(p + 4, c->root, 2);
    put_le(p + 6, c->fanout, 2);
    put_le(p + 8, c->addr_len, 4);
    put_le(p + 12, 0, 4);
}

rpc_wire_rc_t rpc_coll_decode(const void *pay, size_t avail, rpc_coll_hdr_t *c)
{
    const uint8_t *p = pay;
    if (pay == NULL || avail < RPC_COLL_HDR)
        return RPC_WIRE_SHORT;
    c->n = (uint16_t)get_le(p, 2);
    c->rank = (uint16_t)get_le(p + 2, 2);
    c->root = (uint16_t)get_le(p + 4, 2);
    c->fanout = (uint16_t)get_le(p + 6, 2);
    c->addr_len = (uint32_t)get_le(p + 8, 4);
    if (c->n == 0 || c->n > RPC_COLL_MAX || c->rank >= c->n || c->root >= c->n ||
        c->fanout == 0 || c->fanout > RPC_COLL_MAX || get_le(p + 12, 4) != 0 ||
        (c->n > 1 && c->addr_len == 0))
        return RPC_WIRE_LEN_BAD;
    if (c->addr_len > avail - RPC_COLL_HDR)
        return RPC_WIRE_SHORT;
    return RPC_WIRE_OK;
}

int rpc_coll_children(unsigned rank, unsigned root, unsigned n, unsigned fanout, int *kids)
{
    if (n == 0 || rank >= n || root >= n || fanout == 0)
        return 0;
    unsigned rel = (rank + n - root) % n;
    int k = 0;
    for (unsigned j = 1; j <= fanout; j++) {
        unsigned c = rel * fanout + j; /* at most 64 x 64: no wrap */
        if (c >= n)
            break;
        kids[k++] = (int)((c + root) % n);
    }
    return k;
}

int rpc_coll_rec_next(const void *buf, size_t len, size_t *pos, uint32_t *member,
                      int32_t *status, const void **data, uint32_t *dlen)
{
    const uint8_t *p = buf;
    if (*pos == len)
        return 0;
    if (*pos > len || len - *pos < RPC_COLL_REC)
        return -1;
    uint32_t n = (uint32_t)get_le(p + *pos + 8, 4);
    if (n > len - *pos - RPC_COLL_REC)
        return -1;
    *member = (uint32_t)get_le(p + *pos, 4);
    *status = (int32_t)(uint32_t)get_le(p + *pos + 4, 4);
    *dlen = n;
    *data = p + *pos + RPC_COLL_REC;
    *pos += RPC_COLL_REC + n;
    return 1;
}

void rpc_coll_rec_put(void *out, uint32_t member, int32_t status, uint32_t dlen)
{
    uint8_t *p = out;
    put_le(p, member, 4);
    put_le(p + 4, (uint32_t)status, 4);
    put_le(p + 8, dlen, 4);
}
