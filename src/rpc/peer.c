// SPDX-License-Identifier: BSD-3-Clause
/*
 * Peers of an instance (one preallocated array, a hash by address, an index
 * by address-vector entry) and header-only control messages (refusals,
 * goodbyes).
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

/* ---------------------------------------------------------------- peers */

static uint32_t addr_hash(const uint8_t *a, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ a[i]) * 16777619u;
    return h & (RPC_PEER_HASH - 1);
}

orpc_peer_t *rpc_peer_find(orpc_t *r, const uint8_t *addr, size_t alen)
{
    for (int i = r->peer_hash[addr_hash(addr, alen)]; i >= 0; i = r->peers[i].next) {
        orpc_peer_t *p = &r->peers[i];
        if (p->alen == alen && memcmp(p->addr, addr, alen) == 0)
            return p;
    }
    return NULL;
}

/* An entry in the kept list (a peer's address inserted again) leaves it: 1. */
static int kept_take(orpc_t *r, cdt_peer_t fa)
{
    for (int i = 0; i < r->nkept; i++)
        if (r->kept[i] == fa) {
            memmove(&r->kept[i], &r->kept[i + 1], (size_t)(r->nkept - i - 1) * sizeof(fa));
            r->nkept--;
            return 1;
        }
    return 0;
}

/*
 * A forgotten peer's address-vector entry. On libfabric shm it is freed only
 * after RPC_SHM_KEPT_MAX more (see there): the next address inserted must not
 * get its slot. Each kept entry keeps the peer's region mapped (a few MiB of
 * /dev/shm when the peer is gone and its file removed).
 */
static void peer_av_forget(orpc_t *r, orpc_peer_t *p)
{
    if (p->fa == CDT_PEER_NONE)
        return; /* same-host only: in no address vector */
    if (strcmp(r->prov, "shm") != 0) {
        cdt_msg_remove(r->ep, p->fa);
        return;
    }
    if (r->nkept == RPC_SHM_KEPT_MAX) {
        cdt_msg_remove(r->ep, r->kept[0]);
        memmove(&r->kept[0], &r->kept[1], (size_t)(RPC_SHM_KEPT_MAX - 1) * sizeof(r->kept[0]));
        r->nkept--;
    }
    r->kept[r->nkept++] = p->fa;
}

/* Inserts a peer's address into the address vector (lock held, endpoint open). */
static int av_enter(orpc_t *r, const uint8_t *addr, size_t alen, cdt_peer_t *fa_p)
{
    cdt_peer_t fa;
    if (cdt_msg_insert(r->ep, addr, alen, &fa) != SHM_OK)
        return ORPC_EFABRIC;
    if (!kept_take(r, fa)) /* else a forgotten peer again: its kept entry is in use again */
        r->av_inserts++;
    if (fa >= r->by_fa_cap) {
        size_t cap = r->by_fa_cap ? r->by_fa_cap : 64;
        while (cap <= fa)
            cap *= 2;
        orpc_peer_t **nb = realloc(r->by_fa, cap * sizeof(*nb));
        if (nb == NULL) {
            cdt_msg_remove(r->ep, fa);
            return ORPC_ENOMEM;
        }
        memset(nb + r->by_fa_cap, 0, (cap - r->by_fa_cap) * sizeof(*nb));
        r->by_fa = nb;
        r->by_fa_cap = cap;
    }
    *fa_p = fa;
    return ORPC_OK;
}

int rpc_peer_to_fabric(orpc_t *r, orpc_peer_t *p)
{
    if (p->fa != CDT_PEER_NONE)
        return ORPC_OK;
    if (rpc_sq_name_is(p->addr, p->alen))
        return ORPC_EPEER; /* a same-host-only client: no fabric name to reach */
    int rc = rpc_need_endpoint(r);
    if (rc == ORPC_OK && (rc = av_enter(r, p->addr, p->alen, &p->fa)) == ORPC_OK)
        r->by_fa[p->fa] = p;
    return rc;
}

/*
 * Peers live in one array allocated at open (the application holds pointers
 * to them). When it is full the least recently heard idle peer goes.
 */
orpc_peer_t *rpc_peer_new(orpc_t *r, const uint8_t *addr, size_t alen)
{
    if (r->peer_free < 0) {
        orpc_peer_t *old = NULL;
        for (int i = 0; i < r->npeers; i++) {
            orpc_peer_t *q = &r->peers[i];
            if (q->used && q->refs == 0 && q->inflight == 0 &&
                (old == NULL || q->last_ns < old->last_ns))
                old = q;
        }
        if (old == NULL)
            return NULL;
        rpc_peer_reclaim(r, old);
    }
    /* A client's same-host name, or no endpoint of ours yet (a same-host-only
     * client): no address-vector entry until one is needed (rpc_peer_to_fabric). */
    cdt_peer_t fa = CDT_PEER_NONE;
    if (r->ep && !rpc_sq_name_is(addr, alen) && av_enter(r, addr, alen, &fa) != ORPC_OK)
        return NULL;
    int i = r->peer_free;
    orpc_peer_t *p = &r->peers[i];
    r->peer_free = p->next;
    memset(p, 0, sizeof(*p));
    p->rpc = r;
    p->used = 1;
    memcpy(p->addr, addr, alen);
    p->alen = (uint8_t)alen;
    p->fa = fa;
    p->last_ns = rpc_now_ns();
    uint32_t h = addr_hash(addr, alen);
    p->next = r->peer_hash[h];
    r->peer_hash[h] = i;
    if (fa != CDT_PEER_NONE)
        r->by_fa[fa] = p;
    r->st.peers_live++;
    SHM_DEBUG(RPC, "new peer at address-vector entry %llu (%llu live)", (unsigned long long)fa,
              (unsigned long long)r->st.peers_live);
    return p;
}

void rpc_peer_reclaim(orpc_t *r, orpc_peer_t *p)
{
    int idx = (int)(p - r->peers);
    uint32_t h = addr_hash(p->addr, p->alen);
    int *link = &r->peer_hash[h];
    while (*link >= 0 && *link != idx)
        link = &r->peers[*link].next;
    if (*link == idx)
        *link = p->next;
    if (p->sq) {
        if (p->sq->idx >= 0)
            p->sq->peer = NULL; /* the connection lives on until the client closes it */
        else
            rpc_sq_disconnect(r, p->sq);
        p->sq = NULL;
    }
    peer_av_forget(r, p);
    if (p->fa < r->by_fa_cap)
        r->by_fa[p->fa] = NULL;
    p->used = 0;
    p->next = r->peer_free;
    r->peer_free = idx;
    r->st.peers_live--;
    r->st.peers_reclaimed++;
}

/*
 * Client side, after a lookup tried the same-host queues: a server they
 * reach and that copies our bulk data itself knows us by our same-host name
 * when we have one (then no endpoint is needed); any other goes through the
 * provider (its endpoint opened now, the peer put in the address vector).
 */
int rpc_peer_route(orpc_t *r, orpc_peer_t *p)
{
    if (p->refs > 1 || p->talked)
        return ORPC_OK; /* looked up before: its route stands */
    if (r->sq_self_alen && rpc_sq_copies(p->sq)) {
        p->sq_self = 1;
        return ORPC_OK;
    }
    p->sq_self = 0;
    return rpc_peer_to_fabric(r, p);
}

/* Forget a peer as soon as nothing refers to it any more. */
void rpc_peer_maybe_reclaim(orpc_t *r, orpc_peer_t *p)
{
    if (p->used && p->refs == 0 && p->inflight == 0 && (p->bye || p->failed))
        rpc_peer_reclaim(r, p);
}

/*
 * Who sent a request: FI_SOURCE when the provider gives a real entry (never
 * 0: that is ourselves, and what shm reports for unknown senders), else the
 * address carried in the header, inserted on first sight.
 */
orpc_peer_t *rpc_peer_of_request(orpc_t *r, cdt_peer_t src, const uint8_t *addr,
                                    size_t alen)
{
    rpc_sq_conn_t *c = r->sq_from;
    if (c) {
        /* Through a same-host queue: its peer, bound at its first request. */
        if (c->peer && c->peer->alen == alen && memcmp(c->peer->addr, addr, alen) == 0)
            return c->peer;
        orpc_peer_t *p = rpc_peer_find(r, addr, alen);
        if (p == NULL && (p = rpc_peer_new(r, addr, alen)) == NULL)
            return NULL;
        if (c->peer && c->peer->sq == c)
            c->peer->sq = NULL;
        if (p->sq && p->sq != c)
            p->sq->peer = NULL; /* its older connection, closing */
        c->peer = p;
        p->sq = c;
        p->sq_gone = 0;
        return p;
    }
    if (src != CDT_PEER_NONE && src != 0 && src < r->by_fa_cap) {
        orpc_peer_t *p = r->by_fa[src];
        if (p && p->alen == alen && memcmp(p->addr, addr, alen) == 0)
            return p;
    }
    orpc_peer_t *p = rpc_peer_find(r, addr, alen);
    return p ? p : rpc_peer_new(r, addr, alen);
}

/* ---------------------------------------------------- control messages */

static rpc_ctl_t *ctl_get(orpc_t *r)
{
    for (int i = 0; i < RPC_NCTL; i++)
        if (!r->ctl[i].busy) {
            r->ctl[i].busy = 1;
            return &r->ctl[i];
        }
    return NULL;
}

/* A header-only message: a refusal (RESP with status) or a goodbye. Best effort. */
void rpc_ctl_send(orpc_t *r, orpc_peer_t *p, int type, uint64_t req_id, int status,
                     const uint8_t *auth)
{
    rpc_ctl_t *c = ctl_get(r);
    if (c == NULL)
        return;
    rpc_hdr_t h = {.type = (uint8_t)type, .req_id = req_id, .status = status};
    memcpy(h.auth, auth, RPC_AUTH_LEN);
    if (type == RPC_T_BYE)
        h.addr = rpc_self_name(r, p, &h.addr_len);
    size_t hl = rpc_wire_encode(c->hdr, sizeof(c->hdr), &h);
    shm_status_t st = SHM_ERR_AGAIN;
    for (int tries = 0; tries < 1000 && st == SHM_ERR_AGAIN; tries++)
        st = rpc_msg_send(r, p, c->hdr, hl, NULL, 0, c);
    if (st != SHM_OK) {
        c->busy = 0;
        return;
    }
    c->peer = p;
    p->inflight++;
}

void rpc_ctl_done(orpc_t *r, rpc_ctl_t *c, int failed)
{
    orpc_peer_t *p = c->peer;
    c->busy = 0;
    c->peer = NULL;
    if (p) {
        p->inflight--;
        if (failed)
            p->failed = 1;
        rpc_peer_maybe_reclaim(r, p);
    }
}
