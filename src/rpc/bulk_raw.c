// SPDX-License-Identifier: BSD-3-Clause
/*
 * Raw memory keys on the server's side (providers with FI_MR_RAW): a
 * descriptor carries its client's raw keys (wire.h, version 3), and the
 * server maps each into a key of its own domain (fi_mr_map_raw) before it
 * transfers. Mappings are kept per instance, found again by their bytes (a
 * client's registration cache hands out the same key call after call), and
 * unmapped once no descriptor that names them can be used and no transfer
 * issued under them is in flight: a transfer starts only before its
 * descriptor's deadline, so a mapping whose last deadline has passed, older
 * than the start of every call's transfers still out, is free. The sweep
 * reclaims those every 200 ms; at RPC_RAWMAP_MAX live mappings a new one is
 * refused until some are free; the instance's close unmaps the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

#define RPC_RAWMAP_HASH 256
/* Mappings one instance keeps at most: each descriptor still usable holds
 * one (4096: a thousand calls a second with fresh registrations and the
 * default 4 s deadline; a registration cache needs a handful). */
#define RPC_RAWMAP_MAX 4096

struct rpc_rawmap {
    struct rpc_rawmap *next;
    uint64_t base, key;
    uint64_t dl;          /* the latest deadline of a descriptor naming it */
    uint8_t len;
    uint8_t raw[RPC_BULK_RAW_MAX];
};

static unsigned bucket(uint64_t base, const uint8_t *raw, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull ^ base;
    for (size_t i = 0; i < len; i++)
        h = (h ^ raw[i]) * 0x100000001b3ull;
    return (unsigned)(h ^ (h >> 32)) % RPC_RAWMAP_HASH;
}

/* The earliest start of the transfers still in flight (UINT64_MAX: none). */
static uint64_t oldest_busy(const orpc_t *r)
{
    uint64_t t = UINT64_MAX;
    for (int i = 0; i < r->ncalls; i++) {
        const struct orpc_call *c = &r->calls[i];
        if (c->bulk_done < c->bulk_issued && c->bulk_busy_ns < t)
            t = c->bulk_busy_ns;
    }
    return t;
}

/* Unmaps what no descriptor and no transfer can still use (all: force). */
void rpc_rawmap_reclaim(orpc_t *r, uint64_t now, int force)
{
    if (r->nrawmaps == 0)
        return;
    uint64_t busy = force ? UINT64_MAX : oldest_busy(r);
    for (int b = 0; b < RPC_RAWMAP_HASH; b++) {
        for (struct rpc_rawmap **link = &r->rawmaps[b]; *link;) {
            struct rpc_rawmap *m = *link;
            if (force || (now > m->dl && m->dl < busy)) {
                *link = m->next;
                if (r->ep)
                    cdt_bulk_unmap_raw(r->ep, m->key);
                free(m);
                r->nrawmaps--;
            } else {
                link = &m->next;
            }
        }
    }
}

int rpc_rawmap_get(orpc_t *r, const rpc_bulk_rawkey_t *k, size_t len, uint64_t deadline,
                   uint64_t *key_p)
{
    if (r->ep == NULL || len == 0 || len > RPC_BULK_RAW_MAX)
        return ORPC_EPERM;
    if (r->rawmaps == NULL && (r->rawmaps = calloc(RPC_RAWMAP_HASH, sizeof(*r->rawmaps))) == NULL)
        return ORPC_ENOMEM;
    unsigned b = bucket(k->base, k->key, len);
    for (struct rpc_rawmap *m = r->rawmaps[b]; m; m = m->next) {
        if (m->base == k->base && m->len == len && memcmp(m->raw, k->key, len) == 0) {
            if (deadline > m->dl)
                m->dl = deadline;
            *key_p = m->key;
            return ORPC_OK;
        }
    }
    if (r->nrawmaps >= RPC_RAWMAP_MAX)
        rpc_rawmap_reclaim(r, rpc_now_ns(), 0);
    if (r->nrawmaps >= RPC_RAWMAP_MAX) {
        SHM_WARN(RPC, "%d raw memory keys mapped, every one named by a descriptor still in "
                      "use: a new one is refused until their deadlines pass",
                 r->nrawmaps);
        return ORPC_EAGAIN;
    }
    struct rpc_rawmap *m = malloc(sizeof(*m));
    if (m == NULL)
        return ORPC_ENOMEM;
    if (cdt_bulk_map_raw(r->ep, k->base, k->key, len, &m->key) != SHM_OK) {
        free(m);
        return ORPC_EPERM;
    }
    m->base = k->base;
    m->len = (uint8_t)len;
    memcpy(m->raw, k->key, len);
    m->dl = deadline;
    m->next = r->rawmaps[b];
    r->rawmaps[b] = m;
    r->nrawmaps++;
    *key_p = m->key;
    return ORPC_OK;
}

void rpc_rawmap_fini(orpc_t *r)
{
    rpc_rawmap_reclaim(r, 0, 1);
    free(r->rawmaps);
    r->rawmaps = NULL;
}
