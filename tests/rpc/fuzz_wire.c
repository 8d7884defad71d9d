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
    return 0;
}
