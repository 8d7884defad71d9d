// SPDX-License-Identifier: BSD-3-Clause
/*
 * libFuzzer target: the request decoder and the bulk descriptor checks see
 * arbitrary bytes. Invariants: nothing is read out of bounds (ASan), a
 * decoded payload lies inside the message, a descriptor that passes its
 * checks describes a range that does not wrap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/wire.h"

static const uint8_t key_g[16] = {7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpc_hdr_t h;
    if (rpc_wire_decode(data, size, 65536, &h) == RPC_WIRE_OK) {
        size_t hl = rpc_wire_hdr_len(h.addr_len);
        if (h.payload != data + hl || hl + h.payload_len != size || h.payload_len > 65536)
            abort();
        /* Re-encoding the header gives back the same bytes. */
        uint8_t out[RPC_HDR_MAX];
        if (rpc_wire_encode(out, sizeof(out), &h) != hl || memcmp(out, data, 36) ||
            memcmp(out + 40, data + 40, 16))
            abort();
    }
    /* Descriptors: as given (the tag almost never matches) and re-tagged with
     * our key, so the field checks behind the tag are reached too. */
    if (size >= RPC_BULK_WIRE) {
        uint8_t w[RPC_BULK_WIRE];
        memcpy(w, data, sizeof(w));
        rpc_bulk_wire_t b;
        rpc_bulk_decode(w, key_g, &b);
        uint64_t tag = rpc_siphash(key_g, w, RPC_BULK_TAG_OFF);
        for (int i = 0; i < 8; i++)
            w[RPC_BULK_TAG_OFF + i] = (uint8_t)(tag >> (8 * i));
        memcpy(w, "OBLK", 4);
        w[4] = RPC_WIRE_VERSION;
        if (rpc_bulk_decode(w, key_g, &b) == RPC_BULK_OK) {
            if (b.addr + b.len < b.addr || b.rbase + b.len < b.rbase || b.owner_len == 0 ||
                b.owner_len > RPC_ADDR_MAX || b.access == 0 || b.access > 3)
                abort();
            /* Sub-range checks with offsets from the input. */
            uint64_t off = 0, n = 0;
            if (size >= RPC_BULK_WIRE + 16) {
                memcpy(&off, data + RPC_BULK_WIRE, 8);
                memcpy(&n, data + RPC_BULK_WIRE + 8, 8);
            }
            if (rpc_bulk_range_ok(b.len, off, n) && (off > b.len || off + n > b.len || off + n < off))
                abort();
        }
    }
    /* Scatter-gather descriptors: the input as a version-2 header with its
     * extension re-hashed and re-tagged, so the segment and shape checks run. */
    if (size >= RPC_BULK_WIRE + 16) {
        static uint8_t w[RPC_BULK_WIRE_MAX];
        size_t n = size < sizeof(w) ? size : sizeof(w);
        memcpy(w, data, n);
        memcpy(w, "OBLK", 4);
        w[4] = RPC_BULK_VERSION_SG;
        size_t want = rpc_bulk_wire_size(w, n);
        if (want > RPC_BULK_WIRE && want <= n) {
            uint64_t xh = rpc_siphash(key_g, w + RPC_BULK_WIRE, want - RPC_BULK_WIRE);
            for (int i = 0; i < 8; i++)
                w[RPC_BULK_EXT_OFF + i] = (uint8_t)(xh >> (8 * i));
        }
        uint64_t tag = rpc_siphash(key_g, w, RPC_BULK_TAG_OFF);
        for (int i = 0; i < 8; i++)
            w[RPC_BULK_TAG_OFF + i] = (uint8_t)(tag >> (8 * i));
        static rpc_bulk_wire_t b;
        if (rpc_bulk_decode_n(w, n, key_g, &b) == RPC_BULK_OK) {
            if (want > n || b.len > (1ull << 56))
                abort();
            if (b.kind == RPC_BULK_LIST) {
                uint64_t sum = 0;
                if (b.nseg > RPC_BULK_SEG_MAX)
                    abort();
                for (uint32_t i = 0; i < b.nseg; i++) {
                    if (b.seg[i].addr + b.seg[i].len < b.seg[i].addr)
                        abort();
                    sum += b.seg[i].len;
                }
                if (sum != b.len)
                    abort();
            } else if (b.kind == RPC_BULK_STRIDED) {
                if (b.rows * b.row_bytes != b.len || (b.rows > 1 && b.pitch < b.row_bytes))
                    abort();
                uint64_t span = b.rows ? (b.rows - 1) * b.pitch + b.row_bytes : 0;
                if (b.addr + span < b.addr || b.rbase + span < b.rbase)
                    abort();
            } else {
                abort(); /* version 2 is never contiguous */
            }
        }
    }
    /* Raw-key descriptors (version 3): the input as its header, the key
     * size, counts and kind from the input, extension re-hashed and
     * re-tagged, so the key table and index checks run. A decoded one is
     * re-encoded (with the owner's hash it carried) to the same bytes. */
    if (size >= 16) {
        static uint8_t w[RPC_BULK_WIRE_MAX];
        size_t n = size < sizeof(w) ? size : sizeof(w);
        memcpy(w, data, n);
        memcpy(w, "OBLK", 4);
        w[4] = RPC_BULK_VERSION_RAW;
        size_t want = rpc_bulk_wire_size(w, n);
        if (want > RPC_BULK_WIRE_MAX)
            abort();
        if (want >= RPC_BULK_WIRE && want <= n) {
            if (want > RPC_BULK_WIRE) {
                uint64_t xh = rpc_siphash(key_g, w + RPC_BULK_WIRE, want - RPC_BULK_WIRE);
                for (int i = 0; i < 8; i++)
                    w[RPC_BULK_EXT_OFF + i] = (uint8_t)(xh >> (8 * i));
            }
            uint64_t tag = rpc_siphash(key_g, w, RPC_BULK_TAG_OFF);
            for (int i = 0; i < 8; i++)
                w[RPC_BULK_TAG_OFF + i] = (uint8_t)(tag >> (8 * i));
        }
        static rpc_bulk_wire_t b;
        if (rpc_bulk_decode_n(w, n, key_g, &b) == RPC_BULK_OK) {
            unsigned most = b.kind == RPC_BULK_LIST ? b.nseg : 1;
            if (want < RPC_BULK_WIRE || want > n || b.raw_len == 0 ||
                b.raw_len > RPC_BULK_RAW_MAX || b.nkeys == 0 || b.nkeys > most ||
                b.owner_len != 0 || rpc_bulk_wire_len(&b) != want)
                abort();
            if (b.kind != RPC_BULK_LIST && b.key != 0)
                abort();
            for (uint32_t i = 0; b.kind == RPC_BULK_LIST && i < b.nseg; i++)
                if (b.seg[i].key >= b.nkeys)
                    abort();
            /* The encoder writes these very bytes back but for padding the
             * decoder ignores: decode that again to the same fields. */
            static uint8_t again[RPC_BULK_WIRE_MAX];
            static rpc_bulk_wire_t b2;
            if (rpc_bulk_encode(again, &b, key_g) != 0 ||
                rpc_bulk_decode_n(again, want, key_g, &b2) != RPC_BULK_OK ||
                b2.nkeys != b.nkeys || b2.raw_len != b.raw_len || b2.len != b.len)
                abort();
            for (unsigned k = 0; k < b.nkeys; k++)
                if (b2.rawkey[k].base != b.rawkey[k].base ||
                    memcmp(b2.rawkey[k].key, b.rawkey[k].key, b.raw_len) != 0)
                    abort();
        }
    }
    /* Collective calls: the header and the gathered records of any bytes. */
    rpc_coll_hdr_t c;
    if (rpc_coll_decode(data, size, &c) == RPC_WIRE_OK) {
        if (c.n == 0 || c.n > RPC_COLL_MAX || c.rank >= c.n || c.root >= c.n ||
            c.fanout == 0 || c.addr_len > size - RPC_COLL_HDR)
            abort();
        int kids[RPC_COLL_MAX];
        int k = rpc_coll_children(c.rank, c.root, c.n, c.fanout, kids);
        if (k < 0 || k > c.fanout || k >= c.n)
            abort();
        for (int i = 0; i < k; i++)
            if (kids[i] < 0 || kids[i] >= c.n || kids[i] == c.rank || kids[i] == c.root)
                abort();
    }
    size_t pos = 0;
    uint32_t m, dl;
    int32_t st;
    const void *d;
    int rc;
    while ((rc = rpc_coll_rec_next(data, size, &pos, &m, &st, &d, &dl)) == 1)
        if (pos > size || (const uint8_t *)d + dl != data + pos)
            abort();
    if (rc == 0 && pos != size)
        abort();
    return 0;
}
