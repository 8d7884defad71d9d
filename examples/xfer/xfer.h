/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nessie's transfer service on ofishmem_rpc: three ways to move an array of
 * 16-byte records between a client and a server.
 *   xfer_write_encode  the records travel inside the request's arguments (any size:
 *                      above 64 KiB the library moves them with its own bulk pull)
 *   xfer_write_rdma    the client exposes them; the server pulls (orpc_bulk_get)
 *   xfer_read_rdma     the client exposes a buffer; the server pushes (orpc_bulk_put)
 * Every record is a function of (seed, index), so both sides can check every byte.
 */
#ifndef XFER_H
#define XFER_H

#include <stdint.h>

#include "ofishmem_rpc.h"

#define XFER_WRITE_ENCODE "xfer_write_encode"
#define XFER_WRITE_RDMA "xfer_write_rdma"
#define XFER_READ_RDMA "xfer_read_rdma"
#define XFER_STOP "xfer_stop"

typedef struct {
    uint32_t id, seed;
    uint64_t value;
} xfer_rec_t;

static inline void xfer_make(xfer_rec_t *r, uint32_t seed, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        r[i].id = (uint32_t)i;
        r[i].seed = seed;
        r[i].value = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
    }
}

/* Index of the first wrong record, or -1. */
static inline long long xfer_check(const xfer_rec_t *r, uint32_t seed, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (r[i].id != (uint32_t)i || r[i].seed != seed ||
            r[i].value != ((i + 1) * 0x9e3779b97f4a7c15ull ^ seed))
            return (long long)i;
    return -1;
}

#endif
