// SPDX-License-Identifier: BSD-3-Clause
/* RPC wire codec: header round trip, every refusal, descriptor tag, hashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/wire.h"

static const uint8_t key_g[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const uint8_t addr_g[20] = "fi_shm://1234:0:0";

static size_t make_req(uint8_t *buf, size_t cap, const char *pay, size_t n)
{
    rpc_hdr_t h = {.type = RPC_T_REQ, .rpc_id = 0x1122334455667788ull, .req_id = 42,
                   .timeout_ms = 1000, .payload_len = (uint32_t)n, .addr = addr_g,
                   .addr_len = sizeof(addr_g)};
    memcpy(h.auth, key_g, 16);
    size_t hl = rpc_wire_encode(buf, cap, &h);
    assert_int_not_equal(hl, 0);
    memcpy(buf + hl, pay, n);
    return hl + n;
}

static void test_roundtrip(void **state)
{
    (void)state;
    uint8_t m[256];
    size_t n = make_req(m, sizeof(m), "hello", 5);
    assert_int_equal(n, rpc_wire_hdr_len(sizeof(addr_g)) + 5);
    rpc_hdr_t h;
    assert_int_equal(rpc_wire_decode(m, n, 64, &h), RPC_WIRE_OK);
    assert_int_equal(h.type, RPC_T_REQ);
    assert_int_equal(h.version, RPC_WIRE_VERSION);
    assert_true(h.rpc_id == 0x1122334455667788ull);
    assert_int_equal(h.req_id, 42);
    assert_int_equal(h.timeout_ms, 1000);
    assert_int_equal(h.payload_len, 5);
    assert_memory_equal(h.payload, "hello", 5);
    assert_memory_equal(h.addr, addr_g, sizeof(addr_g));
    assert_true(rpc_auth_equal(h.auth, key_g));
    /* A response carries a negative status and no address. */
    rpc_hdr_t r = {.type = RPC_T_RESP, .req_id = 7, .status = -9};
    size_t hl = rpc_wire_encode(m, sizeof(m), &r);
    assert_int_equal(hl, RPC_HDR_FIXED);
    assert_int_equal(rpc_wire_decode(m, hl, 64, &h), RPC_WIRE_OK);
    assert_int_equal(h.status, -9);
    assert_int_equal(h.payload_len, 0);
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t m[256];
    rpc_hdr_t h;
    size_t n = make_req(m, sizeof(m), "hello", 5);
    assert_int_equal(rpc_wire_decode(m, 10, 64, &h), RPC_WIRE_SHORT);
    assert_int_equal(rpc_wire_decode(NULL, 0, 64, &h), RPC_WIRE_SHORT);
    assert_int_equal(rpc_wire_decode(m, n - 1, 64, &h), RPC_WIRE_LEN_BAD);   /* truncated */
    assert_int_equal(rpc_wire_decode(m, n, 4, &h), RPC_WIRE_TOO_BIG);        /* oversized */
    uint8_t c[256];
    memcpy(c, m, n);
    c[0] ^= 1;
    assert_int_equal(rpc_wire_decode(c, n, 64, &h), RPC_WIRE_MAGIC_BAD);
    memcpy(c, m, n);
    c[4] = 2;
    assert_int_equal(rpc_wire_decode(c, n, 64, &h), RPC_WIRE_VERSION_BAD);
    memcpy(c, m, n);
    c[5] = 7;
    assert_int_equal(rpc_wire_decode(c, n, 64, &h), RPC_WIRE_TYPE_BAD);
    memcpy(c, m, n);
    c[6] = 65;
    assert_int_equal(rpc_wire_decode(c, n, 64, &h), RPC_WIRE_ADDR_BAD);
    memcpy(c, m, n);
    c[6] = 0; /* a request must say who sent it */
    assert_int_equal(rpc_wire_decode(c, n, 64, &h), RPC_WIRE_ADDR_BAD);
    memcpy(c, m, n);
    c[8] = 0xff; /* payload length claims more than came */
    assert_int_equal(rpc_wire_decode(c, n, 1 << 20, &h), RPC_WIRE_LEN_BAD);
    /* Encoding refuses an address that does not fit. */
    rpc_hdr_t big = {.type = RPC_T_REQ, .addr = addr_g, .addr_len = 65};
    assert_int_equal(rpc_wire_encode(m, sizeof(m), &big), 0);
    assert_int_equal(rpc_wire_encode(m, 10, &h), 0);
}

static void test_bulk(void **state)
{
    (void)state;
    uint8_t w[RPC_BULK_WIRE];
    rpc_bulk_wire_t b = {.addr = 0x7f0000001000ull, .len = 1 << 20, .key = 0xabc,
                         .rbase = 0x7f0000001000ull, .ttl_ms = 5000, .access = 1,
                         .owner_len = sizeof(addr_g)};
    memcpy(b.owner, addr_g, sizeof(addr_g));
    rpc_bulk_encode(w, &b, key_g);
    rpc_bulk_wire_t d;
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_OK);
    assert_true(d.addr == b.addr && d.len == b.len && d.key == b.key && d.rbase == b.rbase);
    assert_int_equal(d.ttl_ms, 5000);
    assert_int_equal(d.access, 1);
    assert_memory_equal(d.owner, addr_g, sizeof(addr_g));
    /* Any altered byte before the tag fails the tag. */
    for (int i = 5; i < RPC_BULK_TAG_OFF; i += 7) {
        uint8_t c[RPC_BULK_WIRE];
        memcpy(c, w, sizeof(c));
        c[i] ^= 0x10;
        assert_int_equal(rpc_bulk_decode(c, key_g, &d), RPC_BULK_TAG_BAD);
    }
    uint8_t other[16] = {1};
    assert_int_equal(rpc_bulk_decode(w, other, &d), RPC_BULK_TAG_BAD);
    /* Well-tagged but wrong fields are still refused. */
    b.access = 0;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_ACCESS_BAD);
    b.access = 4 | 1;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_ACCESS_BAD);
    b.access = 3;
    b.addr = UINT64_MAX - 10;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_RANGE_BAD);
    b.addr = 0x1000;
    b.owner_len = 0;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_OWNER_BAD);
    b.owner_len = 4;
    b.ttl_ms = 0;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_TTL_BAD);
    w[0] = 0;
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_MAGIC_BAD);
    /* Sub-range checks, including wrap-around. */
    assert_true(rpc_bulk_range_ok(100, 0, 100));
    assert_true(rpc_bulk_range_ok(100, 100, 0));
    assert_false(rpc_bulk_range_ok(100, 1, 100));
    assert_false(rpc_bulk_range_ok(100, 101, 0));
    assert_false(rpc_bulk_range_ok(100, UINT64_MAX, 2));
}

/* Scatter-gather descriptors: lists and strided blocks, their sizes and checks. */
static void test_bulk_sg(void **state)
{
    (void)state;
    static uint8_t w[RPC_BULK_WIRE_MAX + 8];
    static rpc_bulk_wire_t b, d;
    memset(&b, 0, sizeof(b));
    b.kind = RPC_BULK_LIST;
    b.nseg = 3;
    b.seg[0] = (rpc_bulk_seg_t){.addr = 0x1000, .len = 1, .key = 5, .rbase = 0x1000};
    b.seg[1] = (rpc_bulk_seg_t){.addr = 0x9000, .len = 0, .key = 0, .rbase = 0};
    b.seg[2] = (rpc_bulk_seg_t){.addr = 0x20000, .len = 4095, .key = 6, .rbase = 0};
    b.addr = 0x1000;
    b.len = 4096;
    b.ttl_ms = 100;
    b.access = 3;
    b.owner_len = sizeof(addr_g);
    memcpy(b.owner, addr_g, sizeof(addr_g));
    assert_int_equal(rpc_bulk_wire_len(&b), RPC_BULK_WIRE + 3 * RPC_BULK_SEG_WIRE);
    rpc_bulk_encode(w, &b, key_g);
    size_t n = rpc_bulk_wire_len(&b);
    assert_int_equal(rpc_bulk_wire_size(w, 16), n);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_OK);
    assert_int_equal(d.kind, RPC_BULK_LIST);
    assert_int_equal(d.nseg, 3);
    assert_true(d.seg[2].addr == 0x20000 && d.seg[2].len == 4095 && d.seg[2].key == 6);
    assert_true(d.len == 4096);
    /* One byte short, or the 128-byte decoder: refused as short. */
    assert_int_equal(rpc_bulk_decode_n(w, n - 1, key_g, &d), RPC_BULK_SHORT);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_SHORT);
    /* Any altered byte of the extension fails the tag. */
    for (size_t i = RPC_BULK_WIRE; i < n; i += 5) {
        w[i] ^= 0x40;
        assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_TAG_BAD);
        w[i] ^= 0x40;
    }
    /* Lengths that do not add up; a wrapping segment; too many segments. */
    b.len = 4097;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_SEGS_BAD);
    b.len = 4096;
    b.seg[0].addr = UINT64_MAX;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_RANGE_BAD);
    b.seg[0].addr = 0x1000;
    b.nseg = RPC_BULK_SEG_MAX;
    for (unsigned i = 3; i < RPC_BULK_SEG_MAX; i++)
        b.seg[i] = (rpc_bulk_seg_t){.addr = 0x1000, .len = 0};
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_wire_len(&b), RPC_BULK_WIRE_MAX);
    assert_int_equal(rpc_bulk_decode_n(w, RPC_BULK_WIRE_MAX, key_g, &d), RPC_BULK_OK);
    w[12] = RPC_BULK_SEG_MAX + 1; /* the count itself (under the tag too) */
    assert_int_equal(rpc_bulk_wire_size(w, 16), 0);
    assert_int_equal(rpc_bulk_decode_n(w, sizeof(w), key_g, &d), RPC_BULK_SEGS_BAD);
    /* Strided: 100 rows of 513 bytes every 1000. */
    memset(&b.seg, 0, sizeof(b.seg));
    b.kind = RPC_BULK_STRIDED;
    b.nseg = 0;
    b.rows = 100;
    b.row_bytes = 513;
    b.pitch = 1000;
    b.len = 100 * 513;
    b.key = 9;
    b.rbase = 0x5000;
    rpc_bulk_encode(w, &b, key_g);
    n = rpc_bulk_wire_len(&b);
    assert_int_equal(n, RPC_BULK_WIRE + 32);
    assert_int_equal(rpc_bulk_wire_size(w, 16), n);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_OK);
    assert_true(d.kind == RPC_BULK_STRIDED && d.rows == 100 && d.row_bytes == 513 &&
                d.pitch == 1000 && d.len == 51300);
    b.pitch = 512; /* rows overlap */
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_SEGS_BAD);
    b.pitch = 1000;
    b.len = 51301; /* shape and length disagree */
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_SEGS_BAD);
    b.len = 51300;
    b.addr = UINT64_MAX - 60000; /* the span wraps */
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_RANGE_BAD);
    b.addr = 0x5000;
    b.rows = (1ull << 40);
    b.row_bytes = 1ull << 20;
    b.len = 0; /* rows x row_bytes would overflow the limit */
    rpc_bulk_encode(w, &b, key_g);
    assert_int_not_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_OK);
    /* A contiguous descriptor is still 128 bytes, version 1. */
    memset(&b, 0, sizeof(b));
    b.len = 10, b.ttl_ms = 1, b.access = 1, b.owner_len = 4;
    rpc_bulk_encode(w, &b, key_g);
    assert_int_equal(w[4], RPC_WIRE_VERSION);
    assert_int_equal(rpc_bulk_wire_size(w, 16), RPC_BULK_WIRE);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_OK);
    assert_int_equal(d.kind, RPC_BULK_CONTIG);
}

/* Re-hashes a descriptor's extension and re-tags it after an edit, so the
 * field checks behind the tag are what is tested. */
static void retag(uint8_t *w, size_t size)
{
    uint64_t v;
    if (size > RPC_BULK_WIRE) {
        v = rpc_siphash(key_g, w + RPC_BULK_WIRE, size - RPC_BULK_WIRE);
        for (int i = 0; i < 8; i++)
            w[RPC_BULK_EXT_OFF + i] = (uint8_t)(v >> (8 * i));
    }
    v = rpc_siphash(key_g, w, RPC_BULK_TAG_OFF);
    for (int i = 0; i < 8; i++)
        w[RPC_BULK_TAG_OFF + i] = (uint8_t)(v >> (8 * i));
}

/* The 64-bit formats are byte for byte those before raw keys existed
 * (hashes of the encodings of the format's first version, 500e867). */
static void test_bulk_golden(void **state)
{
    (void)state;
    static uint8_t w[RPC_BULK_WIRE_MAX];
    static rpc_bulk_wire_t b;
    memset(&b, 0, sizeof(b));
    b.addr = 0x7f0000001000ull, b.len = 1 << 20, b.key = 0xabc, b.rbase = 0x7f0000001000ull;
    b.ttl_ms = 5000, b.access = 1, b.owner_len = sizeof(addr_g);
    memcpy(b.owner, addr_g, sizeof(addr_g));
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_true(rpc_siphash(key_g, w, RPC_BULK_WIRE) == 0x7fedff9f8b65c443ull);
    b.kind = RPC_BULK_LIST, b.nseg = 3, b.addr = 0x1000, b.len = 4096, b.key = 0, b.rbase = 0;
    b.seg[0] = (rpc_bulk_seg_t){0x1000, 1, 5, 0x1000};
    b.seg[1] = (rpc_bulk_seg_t){0x9000, 0, 0, 0};
    b.seg[2] = (rpc_bulk_seg_t){0x20000, 4095, 6, 0};
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(rpc_bulk_wire_len(&b), 224);
    assert_true(rpc_siphash(key_g, w, 224) == 0xfaff852c1cf2e58bull);
    memset(&b.seg, 0, sizeof(b.seg));
    b.nseg = 0, b.kind = RPC_BULK_STRIDED, b.rows = 100, b.row_bytes = 513, b.pitch = 1000;
    b.len = 51300, b.key = 9, b.rbase = 0x5000, b.addr = 0x5000;
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_true(rpc_siphash(key_g, w, 160) == 0xcc9e9de3fc0ea2f8ull);
}

/* Raw memory keys (FI_MR_RAW, version 3): every kind, the key table, the
 * owner's hash, and refusals of altered or malformed ones. */
static void test_bulk_raw(void **state)
{
    (void)state;
    static uint8_t w[RPC_BULK_WIRE_MAX + 8];
    static rpc_bulk_wire_t b, d;
    memset(&b, 0, sizeof(b));
    b.addr = 0x7f0000001000ull, b.len = 8192, b.rbase = 0x40, b.ttl_ms = 900, b.access = 3;
    b.owner_len = sizeof(addr_g);
    memcpy(b.owner, addr_g, sizeof(addr_g));
    b.raw_len = 24, b.nkeys = 1;
    b.rawkey[0].base = 0x7f0000000000ull;
    for (int i = 0; i < 24; i++)
        b.rawkey[0].key[i] = (uint8_t)(0x30 + i);
    /* Contiguous: still 128 bytes (ORPC_BULK_DESC_SIZE). */
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(w[4], RPC_BULK_VERSION_RAW);
    assert_int_equal(rpc_bulk_wire_size(w, 16), RPC_BULK_WIRE);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_OK);
    assert_true(d.kind == RPC_BULK_CONTIG && d.raw_len == 24 && d.nkeys == 1 && d.key == 0);
    assert_true(d.addr == b.addr && d.len == 8192 && d.rbase == 0x40 && d.ttl_ms == 900);
    assert_true(d.rawkey[0].base == b.rawkey[0].base);
    assert_memory_equal(d.rawkey[0].key, b.rawkey[0].key, 24);
    /* The owner travels as its keyed hash: the caller's matches, another's not. */
    assert_int_equal(d.owner_len, 0);
    assert_true(d.owner_tag == rpc_bulk_owner_tag(key_g, addr_g, sizeof(addr_g)));
    assert_true(d.owner_tag != rpc_bulk_owner_tag(key_g, addr_g, sizeof(addr_g) - 1));
    /* Any altered byte is refused: in the first 16 (version, key size, kind,
     * counts: read for the size before the tag) one way or another, after
     * them (raw key, its base, the owner's hash...) by the tag. */
    for (int i = 4; i < RPC_BULK_TAG_OFF + 8; i++) {
        w[i] ^= 0x08;
        if (i < 16)
            assert_int_not_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_OK);
        else
            assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_TAG_BAD);
        w[i] ^= 0x08;
    }
    /* Well tagged but malformed: no key, a key too large, a count or an
     * index out of range. */
    static const struct { int off; uint8_t v; } bad[] = {
        {6, 0}, {6, RPC_BULK_RAW_MAX + 1}, {14, 0}, {14, 2}, {32, 1}};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        uint8_t c[RPC_BULK_WIRE];
        memcpy(c, w, sizeof(c));
        c[bad[k].off] = bad[k].v;
        retag(c, sizeof(c));
        assert_int_equal(rpc_bulk_decode(c, key_g, &d), RPC_BULK_KEYS_BAD);
    }
    /* Keys that do not fit are not encoded. */
    b.raw_len = RPC_BULK_RAW_MAX + 1;
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), -1);
    b.raw_len = RPC_BULK_RAW_MAX;
    b.nkeys = 2; /* a contiguous one has one */
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), -1);
    b.nkeys = 1;
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(rpc_bulk_decode(w, key_g, &d), RPC_BULK_OK);
    assert_memory_equal(d.rawkey[0].key, b.rawkey[0].key, RPC_BULK_RAW_MAX);
    /* Strided: 160 bytes, the key in the header. */
    b.raw_len = 24;
    b.kind = RPC_BULK_STRIDED, b.rows = 4, b.row_bytes = 100, b.pitch = 1000, b.len = 400;
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(rpc_bulk_wire_size(w, 16), RPC_BULK_WIRE + 32);
    assert_int_equal(rpc_bulk_decode_n(w, RPC_BULK_WIRE + 32, key_g, &d), RPC_BULK_OK);
    assert_true(d.kind == RPC_BULK_STRIDED && d.rows == 4 && d.raw_len == 24 && d.nkeys == 1);
    /* A list: three segments under two keys (segment 1 empty), the second
     * key after the segments (8 + 24 bytes). */
    b.kind = RPC_BULK_LIST, b.rows = b.row_bytes = b.pitch = 0;
    b.nseg = 3, b.nkeys = 2, b.len = 300;
    b.seg[0] = (rpc_bulk_seg_t){.addr = 0x1000, .len = 100, .key = 1, .rbase = 0};
    b.seg[1] = (rpc_bulk_seg_t){.addr = 0x9000, .len = 0, .key = 0, .rbase = 0};
    b.seg[2] = (rpc_bulk_seg_t){.addr = 0x20000, .len = 200, .key = 0, .rbase = 0x10};
    b.rawkey[1].base = 0x1000;
    memset(b.rawkey[1].key, 0xee, 24);
    size_t n = rpc_bulk_wire_len(&b);
    assert_int_equal(n, RPC_BULK_WIRE + 3 * RPC_BULK_SEG_WIRE + 32);
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(rpc_bulk_wire_size(w, 16), n);
    assert_int_equal(rpc_bulk_decode_n(w, n - 1, key_g, &d), RPC_BULK_SHORT);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_OK);
    assert_true(d.nseg == 3 && d.nkeys == 2 && d.seg[0].key == 1 && d.seg[2].key == 0);
    assert_true(d.rawkey[1].base == 0x1000 && d.rawkey[1].key[23] == 0xee);
    assert_memory_equal(d.rawkey[0].key, b.rawkey[0].key, 24);
    for (size_t i = RPC_BULK_WIRE; i < n; i++) { /* the second key too */
        w[i] ^= 0x01;
        assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_TAG_BAD);
        w[i] ^= 0x01;
    }
    b.seg[0].key = 2; /* no such key */
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(rpc_bulk_decode_n(w, n, key_g, &d), RPC_BULK_KEYS_BAD);
    b.seg[0].key = 1;
    b.nkeys = 4; /* more keys than segments */
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), -1);
    /* 64 segments under 64 keys: more than RPC_BULK_WIRE_MAX. */
    b.nseg = RPC_BULK_SEG_MAX, b.nkeys = RPC_BULK_SEG_MAX, b.len = 0;
    for (unsigned i = 0; i < RPC_BULK_SEG_MAX; i++)
        b.seg[i] = (rpc_bulk_seg_t){.addr = 0x1000, .len = 0, .key = i};
    assert_true(rpc_bulk_wire_len(&b) > RPC_BULK_WIRE_MAX);
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), -1);
    /* ...and a header claiming that is refused before the tag is read. */
    b.nkeys = 1;
    for (unsigned i = 0; i < RPC_BULK_SEG_MAX; i++)
        b.seg[i].key = 0;
    assert_int_equal(rpc_bulk_encode(w, &b, key_g), 0);
    assert_int_equal(rpc_bulk_wire_len(&b), RPC_BULK_WIRE_MAX);
    assert_int_equal(rpc_bulk_decode_n(w, RPC_BULK_WIRE_MAX, key_g, &d), RPC_BULK_OK);
    w[14] = RPC_BULK_SEG_MAX;
    assert_int_equal(rpc_bulk_wire_size(w, 16), 0);
    assert_int_equal(rpc_bulk_decode_n(w, sizeof(w), key_g, &d), RPC_BULK_KEYS_BAD);
}

static void test_hashes(void **state)
{
    (void)state;
    /* SipHash-2-4 reference vectors (key 00..0f; message 00..n-1). */
    uint8_t msg[16];
    for (int i = 0; i < 16; i++)
        msg[i] = (uint8_t)i;
    assert_true(rpc_siphash(key_g, msg, 0) == 0x726fdb47dd0e0e31ull);
    assert_true(rpc_siphash(key_g, msg, 15) == 0xa129ca6149be45e5ull);
    /* FNV-1a 64 reference values. */
    assert_true(rpc_fnv1a("") == 0xcbf29ce484222325ull);
    assert_true(rpc_fnv1a("a") == 0xaf63dc4c8601ec8cull);
    uint8_t a[16] = {0}, b[16] = {0};
    assert_true(rpc_auth_equal(a, b));
    b[15] = 1;
    assert_false(rpc_auth_equal(a, b));
}

/* Collective calls: the header's checks, the tree's shape, gathered records. */
static void test_coll(void **state)
{
    (void)state;
    uint8_t m[64] = {0};
    rpc_coll_hdr_t c = {.n = 8, .rank = 3, .root = 2, .fanout = 2, .addr_len = 10}, d;
    rpc_coll_encode(m, &c);
    assert_int_equal(rpc_coll_decode(m, RPC_COLL_HDR + 10, &d), RPC_WIRE_OK);
    assert_int_equal(d.n, 8);
    assert_int_equal(d.rank, 3);
    assert_int_equal(d.root, 2);
    assert_int_equal(d.fanout, 2);
    assert_int_equal(d.addr_len, 10);
    assert_int_equal(rpc_coll_decode(m, RPC_COLL_HDR + 9, &d), RPC_WIRE_SHORT);
    assert_int_equal(rpc_coll_decode(m, RPC_COLL_HDR - 1, &d), RPC_WIRE_SHORT);
    assert_int_equal(rpc_coll_decode(NULL, 100, &d), RPC_WIRE_SHORT);
    rpc_coll_hdr_t bad[] = {
        {.n = 0, .fanout = 1},                                 /* no members */
        {.n = RPC_COLL_MAX + 1, .fanout = 1, .addr_len = 1},   /* too many */
        {.n = 4, .rank = 4, .fanout = 1, .addr_len = 1},       /* rank beyond */
        {.n = 4, .root = 4, .fanout = 1, .addr_len = 1},       /* root beyond */
        {.n = 4, .fanout = 0, .addr_len = 1},                  /* no fanout */
        {.n = 4, .fanout = RPC_COLL_MAX + 1, .addr_len = 1},
        {.n = 2, .fanout = 1, .addr_len = 0},                  /* members without an address */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rpc_coll_encode(m, &bad[i]);
        assert_int_equal(rpc_coll_decode(m, sizeof(m), &d), RPC_WIRE_LEN_BAD);
    }
    c.n = 1, c.rank = c.root = 0, c.addr_len = 0;
    rpc_coll_encode(m, &c);
    m[12] = 1; /* the reserved word must be 0 */
    assert_int_equal(rpc_coll_decode(m, sizeof(m), &d), RPC_WIRE_LEN_BAD);
    m[12] = 0;
    assert_int_equal(rpc_coll_decode(m, RPC_COLL_HDR, &d), RPC_WIRE_OK);

    /* Every member is reached exactly once, from its parent, for every shape. */
    int kids[RPC_COLL_MAX];
    for (unsigned n = 1; n <= RPC_COLL_MAX; n++)
        for (unsigned f = 1; f <= n; f++)
            for (unsigned root = 0; root < n; root += (n + 2) / 3) {
                int seen[RPC_COLL_MAX] = {0}, depth[RPC_COLL_MAX] = {0}, maxd = 0;
                int queue[RPC_COLL_MAX], qh = 0, qt = 0;
                seen[root] = 1;
                queue[qt++] = (int)root;
                while (qh < qt) {
                    int me = queue[qh++];
                    int k = rpc_coll_children((unsigned)me, root, n, f, kids);
                    assert_true(k >= 0 && k <= (int)f);
                    for (int i = 0; i < k; i++) {
                        assert_true(kids[i] >= 0 && kids[i] < (int)n);
                        assert_int_equal(seen[kids[i]], 0);
                        seen[kids[i]] = 1;
                        depth[kids[i]] = depth[me] + 1;
                        maxd = depth[kids[i]] > maxd ? depth[kids[i]] : maxd;
                        queue[qt++] = kids[i];
                    }
                }
                assert_int_equal(qt, (int)n);
                /* A k-ary tree: depth about log_k(n), not n. */
                if (f >= 2 && n >= 2) {
                    unsigned cap = 1, d2 = 0, level = 1;
                    while (cap < n) {
                        level *= f;
                        cap += level;
                        d2++;
                    }
                    assert_true(maxd <= (int)d2);
                }
            }
    assert_int_equal(rpc_coll_children(5, 0, 4, 2, kids), 0);

    /* Records: written, read back, and cut ones refused. */
    uint8_t r[64];
    rpc_coll_rec_put(r, 7, -3, 4);
    memcpy(r + RPC_COLL_REC, "abcd", 4);
    rpc_coll_rec_put(r + RPC_COLL_REC + 4, 9, 0, 0);
    size_t len = 2 * RPC_COLL_REC + 4, pos = 0;
    uint32_t mem, dl;
    int32_t st;
    const void *data;
    assert_int_equal(rpc_coll_rec_next(r, len, &pos, &mem, &st, &data, &dl), 1);
    assert_int_equal(mem, 7);
    assert_int_equal(st, -3);
    assert_int_equal(dl, 4);
    assert_memory_equal(data, "abcd", 4);
    assert_int_equal(rpc_coll_rec_next(r, len, &pos, &mem, &st, &data, &dl), 1);
    assert_int_equal(mem, 9);
    assert_int_equal(dl, 0);
    assert_int_equal(rpc_coll_rec_next(r, len, &pos, &mem, &st, &data, &dl), 0);
    for (size_t cut = 1; cut < len; cut++) {
        int rc = 1;
        pos = 0;
        while (rc == 1)
            rc = rpc_coll_rec_next(r, cut, &pos, &mem, &st, &data, &dl);
        if (cut == RPC_COLL_REC + 4)
            assert_int_equal(rc, 0); /* a whole first record */
        else
            assert_int_equal(rc, -1);
    }
    rpc_coll_rec_put(r, 1, 0, 0xffffffffu); /* a length past the end */
    pos = 0;
    assert_int_equal(rpc_coll_rec_next(r, 64, &pos, &mem, &st, &data, &dl), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_bulk),
        cmocka_unit_test(test_bulk_sg),
        cmocka_unit_test(test_bulk_golden),
        cmocka_unit_test(test_bulk_raw),
        cmocka_unit_test(test_hashes),
        cmocka_unit_test(test_coll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
