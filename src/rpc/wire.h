// SPDX-License-Identifier: BSD-3-Clause
/*
 * The RPC wire format: request/response header and bulk descriptor. Pure
 * functions over bytes (no fabric, no allocation), so they are unit-tested
 * with cmocka and fuzzed with libFuzzer (tests/rpc/fuzz_wire.c).
 */
#ifndef SHM_RPC_WIRE_H
#define SHM_RPC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define RPC_WIRE_MAGIC 0x4350524fu /* "ORPC" little-endian */
#define RPC_BULK_MAGIC 0x4b4c424fu /* "OBLK" */
#define RPC_WIRE_VERSION 1
#define RPC_AUTH_LEN 16
#define RPC_ADDR_MAX 64
#define RPC_HDR_FIXED 56
#define RPC_HDR_MAX (RPC_HDR_FIXED + RPC_ADDR_MAX)
#define RPC_BULK_WIRE 128
#define RPC_BULK_TAG_OFF 120
/* Scatter-gather descriptors (version 2): the 128 bytes above, then an
 * extension of 32 bytes per segment (list) or 32 bytes (strided), whose
 * keyed hash sits at RPC_BULK_EXT_OFF inside the tagged part. */
#define RPC_BULK_VERSION_SG 2
#define RPC_BULK_EXT_OFF 112
#define RPC_BULK_SEG_WIRE 32
#define RPC_BULK_SEG_MAX 64
#define RPC_BULK_WIRE_MAX (RPC_BULK_WIRE + RPC_BULK_SEG_WIRE * RPC_BULK_SEG_MAX)
enum { RPC_BULK_CONTIG = 0, RPC_BULK_LIST = 1, RPC_BULK_STRIDED = 2 };
/*
 * Raw memory keys (version 3, providers with FI_MR_RAW): a table of raw
 * keys (base address, bytes) replaces the 64-bit keys, and the key fields
 * hold indices into it. The first key sits in the 128 bytes where the
 * owner's address was (the owner travels as its keyed hash instead), so a
 * contiguous descriptor stays RPC_BULK_WIRE bytes and a strided one 160; a
 * list's further keys follow its segments, 8 + the key rounded up to 8
 * bytes each, within RPC_BULK_WIRE_MAX.
 */
#define RPC_BULK_VERSION_RAW 3
#define RPC_BULK_RAW_MAX 48         /* bytes of one raw key */
#define RPC_BULK_RAW_KEY_OFF 56     /* the first key's base address, then its bytes */
#define RPC_BULK_OWNER_TAG_OFF 48

enum { RPC_T_REQ = 1, RPC_T_RESP = 2, RPC_T_BYE = 3 };

typedef enum {
    RPC_WIRE_OK = 0,
    RPC_WIRE_SHORT,   /* shorter than a header */
    RPC_WIRE_MAGIC_BAD,
    RPC_WIRE_VERSION_BAD,
    RPC_WIRE_TYPE_BAD,
    RPC_WIRE_ADDR_BAD, /* address length 0 (request) or above RPC_ADDR_MAX */
    RPC_WIRE_LEN_BAD,  /* payload length disagrees with the message length */
    RPC_WIRE_TOO_BIG,  /* payload above the limit */
} rpc_wire_rc_t;

typedef struct {
    uint8_t version, type, addr_len, flags;
    uint32_t payload_len;
    uint32_t timeout_ms;
    uint64_t rpc_id;   /* REQ: handler id */
    uint64_t req_id;   /* client's token, echoed in the response */
    int32_t status;    /* RESP */
    uint8_t auth[RPC_AUTH_LEN];
    const uint8_t *addr;    /* sender's raw address (decode: points into the message) */
    const uint8_t *payload; /* decode: points into the message */
} rpc_hdr_t;

/* Header length for an address of addr_len bytes (payload starts 8-aligned). */
static inline size_t rpc_wire_hdr_len(size_t addr_len)
{
    return RPC_HDR_FIXED + ((addr_len + 7) & ~(size_t)7);
}

/* Writes h (h->addr, h->addr_len, h->payload_len) into buf; returns the header
 * length, or 0 when cap is too small or addr_len too large. */
size_t rpc_wire_encode(void *buf, size_t cap, const rpc_hdr_t *h);

/* Decodes and checks a whole message (header + payload) of len bytes. */
rpc_wire_rc_t rpc_wire_decode(const void *msg, size_t len, size_t max_payload, rpc_hdr_t *h);

const char *rpc_wire_rc_str(rpc_wire_rc_t rc);

/* Constant-time comparison of two auth keys. */
int rpc_auth_equal(const uint8_t *a, const uint8_t *b);

/* SipHash-2-4 of len bytes under a 16-byte key. */
uint64_t rpc_siphash(const uint8_t key[16], const void *data, size_t len);
/* FNV-1a 64 of a string: handler ids. */
uint64_t rpc_fnv1a(const char *s);

typedef enum {
    RPC_BULK_OK = 0,
    RPC_BULK_MAGIC_BAD,
    RPC_BULK_TAG_BAD,    /* not made with this service's key, or altered */
    RPC_BULK_ACCESS_BAD, /* no access bit, or unknown bits */
    RPC_BULK_OWNER_BAD,  /* owner length */
    RPC_BULK_RANGE_BAD,  /* address or length wraps */
    RPC_BULK_TTL_BAD,    /* expired when sent */
    RPC_BULK_SHORT,      /* fewer bytes than the descriptor says it has */
    RPC_BULK_SEGS_BAD,   /* unknown kind, too many segments, or a shape that disagrees */
    RPC_BULK_KEYS_BAD,   /* raw keys: a size, count or index out of range */
} rpc_bulk_rc_t;

typedef struct {
    uint64_t addr, len, key, rbase;
} rpc_bulk_seg_t;

/* A raw key of a version-3 descriptor: fi_mr_raw_attr's base and bytes. */
typedef struct {
    uint64_t base;
    uint8_t key[RPC_BULK_RAW_MAX];
} rpc_bulk_rawkey_t;

typedef struct {
    uint64_t addr, len, key, rbase;
    uint32_t ttl_ms;
    uint8_t access, owner_len;
    uint8_t owner[RPC_ADDR_MAX];
    /* Raw keys (raw_len > 0: version 3): key and seg[].key are indices into
     * rawkey[0..nkeys); the owner is carried as owner_tag (encode: made from
     * owner; decode: owner_len 0, compare with rpc_bulk_owner_tag). */
    uint8_t raw_len;
    uint8_t nkeys;
    uint64_t owner_tag;
    /* Scatter-gather (kind != RPC_BULK_CONTIG): len is the logical length
     * (the concatenation); list: nseg segments (addr, key, rbase of the
     * header unused); strided: rows of row_bytes every pitch bytes from
     * addr/rbase under key. */
    uint8_t kind;
    uint32_t nseg;
    uint64_t rows, row_bytes, pitch;
    rpc_bulk_seg_t seg[RPC_BULK_SEG_MAX];
    rpc_bulk_rawkey_t rawkey[RPC_BULK_SEG_MAX];
} rpc_bulk_wire_t;

/* Bytes the descriptor b encodes to (RPC_BULK_WIRE .. RPC_BULK_WIRE_MAX;
 * a raw-key list may need more, which rpc_bulk_encode refuses). */
size_t rpc_bulk_wire_len(const rpc_bulk_wire_t *b);
/* What a raw-key descriptor of owner carries instead of its address. */
uint64_t rpc_bulk_owner_tag(const uint8_t key[16], const uint8_t *owner, size_t len);
/* Writes the descriptor (rpc_bulk_wire_len bytes) with its tag under key;
 * -1 (nothing written) for raw keys that do not fit: raw_len above
 * RPC_BULK_RAW_MAX, nkeys out of range, or more than RPC_BULK_WIRE_MAX. */
int rpc_bulk_encode(void *out, const rpc_bulk_wire_t *b, const uint8_t key[16]);
/* Bytes of the descriptor at wire, from its first 16 bytes (avail >= 16);
 * 0: not a descriptor, or more segments than RPC_BULK_SEG_MAX. */
size_t rpc_bulk_wire_size(const void *wire, size_t avail);
/* Checks and decodes one of at most avail bytes at wire. */
rpc_bulk_rc_t rpc_bulk_decode_n(const void *wire, size_t avail, const uint8_t key[16],
                                rpc_bulk_wire_t *b);
/* The same for a contiguous descriptor (128 bytes at wire). */
rpc_bulk_rc_t rpc_bulk_decode(const void *wire, const uint8_t key[16], rpc_bulk_wire_t *b);
/* Is [off, off+n) inside a descriptor of len bytes? */
static inline int rpc_bulk_range_ok(uint64_t len, uint64_t off, uint64_t n)
{
    return off <= len && n <= len - off;
}


/* Collective calls (orpc_call_all, coll.c): a request with RPC_F_COLL
 * carries, at the start of its payload, this header, then the joined
 * address of the members (addr_len bytes, no NUL), then the arguments.
 * Members are numbered 0..n-1 in the address's order; each forwards to its
 * children in a k-ary tree (fanout k) rooted at root. */
#define RPC_COLL_HDR 16
#define RPC_COLL_MAX 64        /* members (the contexts a joined address names) */
#define RPC_COLL_REC 12        /* gathered result record: u32 member, i32 status, u32 len */
#define RPC_COLL_NONE 0xffffffffu
typedef struct {
    uint16_t n, rank, root, fanout;
    uint32_t addr_len;
} rpc_coll_hdr_t;
void rpc_coll_encode(void *out, const rpc_coll_hdr_t *c);
/* Checks and decodes the header at the start of avail payload bytes:
 * RPC_WIRE_OK, RPC_WIRE_SHORT (fewer bytes than it and its address), or
 * RPC_WIRE_LEN_BAD (members, rank, root or fanout out of range). */
rpc_wire_rc_t rpc_coll_decode(const void *pay, size_t avail, rpc_coll_hdr_t *c);
/* The children of rank (at most fanout of them, in kids): their count. */
int rpc_coll_children(unsigned rank, unsigned root, unsigned n, unsigned fanout, int *kids);
/* Reads the gathered record at *pos of buf[0..len): 1 (and *pos past it),
 * 0 at the end, -1 when malformed (a header or length past the end). */
int rpc_coll_rec_next(const void *buf, size_t len, size_t *pos, uint32_t *member,
                      int32_t *status, const void **data, uint32_t *dlen);
void rpc_coll_rec_put(void *out, uint32_t member, int32_t status, uint32_t dlen);

#endif /* SHM_RPC_WIRE_H */
