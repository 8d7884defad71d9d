// SPDX-License-Identifier: BSD-3-Clause
/*
 * Data services: instances, the receive pool, peers, the server's dispatch
 * and the client's calls. Everything on the small-RPC path comes from
 * preallocated pools; the lock is taken only when a progress thread exists.
 */
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "core/state.h"
#include "rpc/rpc.h"

/* Nesting of handlers on this thread: handlers never run inside handlers. */
static __thread int rpc_depth_tls;

/* ------------------------------------------------------------ utilities */

int rpc_rc(shm_status_t st)
{
    switch (st) {
    case SHM_OK: return ORPC_OK;
    case SHM_ERR_NOMEM: return ORPC_ENOMEM;
    case SHM_ERR_INVAL: return ORPC_EINVAL;
    case SHM_ERR_TIMEOUT: return ORPC_ETIMEDOUT;
    case SHM_ERR_AGAIN: return ORPC_EAGAIN;
    case SHM_ERR_RANGE: return ORPC_ERANGE;
    case SHM_ERR_PERM: return ORPC_EPERM;
    case SHM_ERR_NOSYS: return ORPC_ENOSYS;
    case SHM_ERR_PROTO: return ORPC_EPROTO;
    case SHM_ERR_NOT_FOUND: return ORPC_ENOENT;
    default: return ORPC_EFABRIC;
    }
}

RPC_EXPORT const char *orpc_strerror(int rc)
{
    switch (rc) {
    case ORPC_OK: return "success";
    case ORPC_EINVAL: return "invalid argument";
    case ORPC_ENOMEM: return "out of memory";
    case ORPC_EFABRIC: return "network failure";
    case ORPC_ETIMEDOUT: return "timed out";
    case ORPC_EAGAIN: return "not complete yet";
    case ORPC_ENOENT: return "no such handler";
    case ORPC_EAUTH: return "authentication failed";
    case ORPC_EPROTO: return "malformed message";
    case ORPC_ERANGE: return "out of range";
    case ORPC_EPERM: return "access not granted";
    case ORPC_EEXPIRED: return "bulk descriptor expired";
    case ORPC_EBUSY: return "server busy";
    case ORPC_EPEER: return "peer unreachable";
    case ORPC_EADDR: return "bad address string";
    case ORPC_ENOSYS: return "not supported";
    default: return rc > 0 ? "handler status" : "unknown error";
    }
}

RPC_EXPORT uint64_t orpc_id(const char *name)
{
    return rpc_fnv1a(name);
}

void rpc_idle(rpc_idle_t *idle)
{
    if (idle->n++ < 16)
        return;
    uint64_t now = rpc_now_ns();
    if (idle->since == 0)
        idle->since = now;
    uint64_t idle_ns = now - idle->since;
    if (idle_ns < RPC_IDLE_YIELD_NS) {
        sched_yield();
        return;
    }
    /* Long idle: sleep, longer the longer it lasts (at most 1 ms). */
    long ns = idle_ns < 20000000ull ? 20000 : idle_ns < 200000000ull ? 200000 : 1000000;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* The env table, for processes that are not PEs (a PE loaded it at init). */
static pthread_once_t env_once_g = PTHREAD_ONCE_INIT;
static int env_ok_g;

static void env_load_once(void)
{
    if (shm_state_g.run_state == SHM_STATE_RUNNING) {
        env_ok_g = 1;
        return;
    }
    char err[256];
    if (shm_env_load(&shm_env_g, shm_env_from_process, err, sizeof(err)) != SHM_OK) {
        shm_error("%s", err);
        return;
    }
    if (shm_log_configure(shm_env_g.LOG_LEVEL) != SHM_OK) {
        shm_error("SHMEM_LOG_LEVEL='%s' is not valid", shm_env_g.LOG_LEVEL);
        return;
    }
    env_ok_g = 1;
}

/* ---------------------------------------------------------------- peers */

static uint32_t addr_hash(const uint8_t *a, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ a[i]) * 16777619u;
    return h & (RPC_PEER_HASH - 1);
}

static orpc_peer_t *peer_find(orpc_t *r, const uint8_t *addr, size_t alen)
{
    for (int i = r->peer_hash[addr_hash(addr, alen)]; i >= 0; i = r->peers[i].next) {
        orpc_peer_t *p = &r->peers[i];
        if (p->alen == alen && memcmp(p->addr, addr, alen) == 0)
            return p;
    }
    return NULL;
}

static void peer_reclaim(orpc_t *r, orpc_peer_t *p);

/*
 * Peers live in one array allocated at open (the application holds pointers
 * to them). When it is full the least recently heard idle peer goes.
 */
static orpc_peer_t *peer_new(orpc_t *r, const uint8_t *addr, size_t alen)
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
        peer_reclaim(r, old);
    }
    cdt_peer_t fa;
    if (cdt_msg_insert(r->ep, addr, alen, &fa) != SHM_OK)
        return NULL;
    if (fa >= r->by_fa_cap) {
        size_t cap = r->by_fa_cap ? r->by_fa_cap : 64;
        while (cap <= fa)
            cap *= 2;
        orpc_peer_t **nb = realloc(r->by_fa, cap * sizeof(*nb));
        if (nb == NULL) {
            cdt_msg_remove(r->ep, fa);
            return NULL;
        }
        memset(nb + r->by_fa_cap, 0, (cap - r->by_fa_cap) * sizeof(*nb));
        r->by_fa = nb;
        r->by_fa_cap = cap;
    }
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
    r->by_fa[fa] = p;
    r->st.peers_live++;
    SHM_DEBUG(RPC, "new peer at address-vector entry %llu (%llu live)", (unsigned long long)fa,
              (unsigned long long)r->st.peers_live);
    return p;
}

static void peer_reclaim(orpc_t *r, orpc_peer_t *p)
{
    int idx = (int)(p - r->peers);
    uint32_t h = addr_hash(p->addr, p->alen);
    int *link = &r->peer_hash[h];
    while (*link >= 0 && *link != idx)
        link = &r->peers[*link].next;
    if (*link == idx)
        *link = p->next;
    cdt_msg_remove(r->ep, p->fa);
    if (p->fa < r->by_fa_cap)
        r->by_fa[p->fa] = NULL;
    p->used = 0;
    p->next = r->peer_free;
    r->peer_free = idx;
    r->st.peers_live--;
    r->st.peers_reclaimed++;
}

/* Forget a peer as soon as nothing refers to it any more. */
static void peer_maybe_reclaim(orpc_t *r, orpc_peer_t *p)
{
    if (p->used && p->refs == 0 && p->inflight == 0 && (p->bye || p->failed))
        peer_reclaim(r, p);
}

/*
 * Who sent a request: FI_SOURCE when the provider gives a real entry (never
 * 0: that is ourselves, and what shm reports for unknown senders), else the
 * address carried in the header, inserted on first sight.
 */
static orpc_peer_t *peer_of_request(orpc_t *r, cdt_peer_t src, const uint8_t *addr,
                                    size_t alen)
{
    if (src != CDT_PEER_NONE && src != 0 && src < r->by_fa_cap) {
        orpc_peer_t *p = r->by_fa[src];
        if (p && p->alen == alen && memcmp(p->addr, addr, alen) == 0)
            return p;
    }
    orpc_peer_t *p = peer_find(r, addr, alen);
    return p ? p : peer_new(r, addr, alen);
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
static void ctl_send(orpc_t *r, orpc_peer_t *p, int type, uint64_t req_id, int status,
                     const uint8_t *auth)
{
    rpc_ctl_t *c = ctl_get(r);
    if (c == NULL)
        return;
    rpc_hdr_t h = {.type = (uint8_t)type, .req_id = req_id, .status = status};
    memcpy(h.auth, auth, RPC_AUTH_LEN);
    if (type == RPC_T_BYE) {
        h.addr = r->self_addr;
        h.addr_len = r->self_alen;
    }
    size_t hl = rpc_wire_encode(c->hdr, sizeof(c->hdr), &h);
    shm_status_t st = SHM_ERR_AGAIN;
    for (int tries = 0; tries < 1000 && st == SHM_ERR_AGAIN; tries++)
        st = cdt_msg_send(r->ep, p->fa, c->hdr, hl, NULL, 0, c);
    if (st != SHM_OK) {
        c->busy = 0;
        return;
    }
    c->peer = p;
    p->inflight++;
}

static void ctl_done(orpc_t *r, rpc_ctl_t *c, int failed)
{
    orpc_peer_t *p = c->peer;
    c->busy = 0;
    c->peer = NULL;
    if (p) {
        p->inflight--;
        if (failed)
            p->failed = 1;
        peer_maybe_reclaim(r, p);
    }
}

/* --------------------------------------------------------------- server */

static const rpc_handler_t *handler_find(const orpc_t *r, uint64_t id)
{
    for (unsigned i = 0; i < RPC_NHANDLERS; i++) {
        const rpc_handler_t *h = &r->handlers[(id + i) & (RPC_NHANDLERS - 1)];
        if (!h->used)
            return NULL;
        if (h->id == id)
            return h;
    }
    return NULL;
}

static void fifo_push(struct orpc_call **head, struct orpc_call **tail, struct orpc_call *c)
{
    c->next = NULL;
    if (*tail)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
}

static struct orpc_call *fifo_pop(struct orpc_call **head, struct orpc_call **tail)
{
    struct orpc_call *c = *head;
    if (c) {
        *head = c->next;
        if (*head == NULL)
            *tail = NULL;
    }
    return c;
}

static void peer_maybe_reclaim(orpc_t *r, orpc_peer_t *p);

static void call_release_input(orpc_t *r, struct orpc_call *c)
{
    if (c->rbuf) {
        c->rbuf->refs--;
        rpc_rbuf_maybe_repost(r, c->rbuf);
        c->rbuf = NULL;
    }
    free(c->in_heap);
    c->in_heap = NULL;
    c->in = NULL;
}

void rpc_call_free(orpc_t *r, struct orpc_call *c)
{
    orpc_peer_t *p = c->peer;
    call_release_input(r, c);
    free(c->out_heap);
    c->out_heap = NULL;
    if (p) {
        p->inflight--;
        peer_maybe_reclaim(r, p);
        c->peer = NULL;
    }
    if (c->bulk_done < c->bulk_issued) {
        c->zombie = 1; /* its transfers may still complete into its context */
        return;
    }
    c->zombie = 0;
    c->state = RPC_CALL_FREE;
    c->next = r->call_free;
    r->call_free = c;
    r->st.calls_live--;
}

static void server_on_req(orpc_t *r, rpc_rbuf_t *b, const rpc_hdr_t *h, cdt_peer_t src)
{
    if (!r->listen) {
        r->st.malformed++;
        return;
    }
    if (!rpc_auth_equal(h->auth, r->auth)) {
        r->st.rejected_auth++;
        SHM_DEBUG(RPC, "request without the service key dropped");
        return;
    }
    orpc_peer_t *p = peer_of_request(r, src, h->addr, h->addr_len);
    if (p == NULL) {
        r->st.malformed++;
        return;
    }
    p->last_ns = rpc_now_ns();
    p->bye = 0;
    const rpc_handler_t *hd = handler_find(r, h->rpc_id);
    if (hd == NULL) {
        r->st.no_handler++;
        ctl_send(r, p, RPC_T_RESP, h->req_id, ORPC_ENOENT, r->auth);
        return;
    }
    struct orpc_call *c = r->call_free;
    if (c == NULL) {
        r->st.busy++;
        ctl_send(r, p, RPC_T_RESP, h->req_id, ORPC_EBUSY, r->auth);
        return;
    }
    r->call_free = c->next;
    c->state = RPC_CALL_QUEUED;
    c->peer = p;
    c->h = hd;
    c->req_id = h->req_id;
    /* A request's status field says how large a response its sender can take
     * (a larger one would not fit its receive buffers). */
    c->resp_max = h->status > 0 && (size_t)h->status < r->max_resp ? (size_t)h->status
                                                                     : r->max_resp;
    c->arrival_ns = p->last_ns;
    c->in_len = h->payload_len;
    c->bulk_err = 0;
    c->bulk_issued = c->bulk_done = c->bulk_deadline = 0;
    c->zombie = 0;
    c->rbuf = NULL;
    /* Never let the last posted buffer be pinned by slow handlers: copy. */
    if (r->nposted <= 1 && c->in_len > 0) {
        if (c->in_len <= RPC_INLINE) {
            memcpy(c->in_inl, h->payload, c->in_len);
            c->in = c->in_inl;
        } else if ((c->in_heap = malloc(c->in_len)) != NULL) {
            memcpy(c->in_heap, h->payload, c->in_len);
            c->in = c->in_heap;
        } else {
            c->in = h->payload;
            c->rbuf = b;
            b->refs++;
        }
        if (c->rbuf == NULL)
            r->st.copied++;
    } else {
        c->in = h->payload;
        c->rbuf = b;
        b->refs++;
    }
    p->inflight++;
    r->st.requests++;
    r->st.calls_live++;
    if (hd->flags & ORPC_HANDLER_QUEUED)
        fifo_push(&r->queued_head, &r->queued_tail, c);
    else
        fifo_push(&r->ready_head, &r->ready_tail, c);
}

static void server_on_bye(orpc_t *r, const rpc_hdr_t *h, cdt_peer_t src)
{
    if (!r->listen || !rpc_auth_equal(h->auth, r->auth)) {
        r->st.rejected_auth++;
        return;
    }
    orpc_peer_t *p = NULL;
    if (src != CDT_PEER_NONE && src != 0 && src < r->by_fa_cap)
        p = r->by_fa[src];
    if (p == NULL || p->alen != h->addr_len || memcmp(p->addr, h->addr, p->alen) != 0)
        p = peer_find(r, h->addr, h->addr_len);
    if (p) {
        p->bye = 1;
        peer_maybe_reclaim(r, p);
    }
}

/* --------------------------------------------------------------- client */

static void req_free(orpc_t *r, struct orpc_req *q)
{
    orpc_peer_t *p = q->peer;
    q->state = RPC_REQ_FREE;
    q->peer = NULL;
    q->next_free = r->req_free;
    r->req_free = (int)q->idx;
    if (p) {
        p->inflight--;
        peer_maybe_reclaim(r, p);
    }
}

static void client_on_resp(orpc_t *r, const rpc_hdr_t *h)
{
    uint32_t idx = (uint32_t)h->req_id, gen = (uint32_t)(h->req_id >> 32);
    if (idx >= (uint32_t)r->nreqs) {
        r->st.malformed++;
        return;
    }
    struct orpc_req *q = &r->reqs[idx];
    if (q->state != RPC_REQ_ACTIVE || q->gen != gen || q->answered) {
        r->st.late_responses++;
        return;
    }
    if (!rpc_auth_equal(h->auth, q->peer->auth)) {
        r->st.rejected_auth++;
        return;
    }
    size_t n = h->payload_len < q->out_cap ? h->payload_len : q->out_cap;
    if (n)
        memcpy(q->out, h->payload, n);
    q->out_len = h->payload_len;
    q->status = h->status;
    q->answered = 1;
    q->peer->last_ns = rpc_now_ns();
    r->st.calls++;
}

/* ---------------------------------------------------------------- events */

/* An authenticated request that cannot be served is told why (ERANGE, EPROTO). */
static void refuse_request(orpc_t *r, const rpc_hdr_t *h, cdt_peer_t src, int status)
{
    if (!r->listen || h->type != RPC_T_REQ || h->addr_len == 0 || h->addr_len > RPC_ADDR_MAX ||
        !rpc_auth_equal(h->auth, r->auth))
        return;
    orpc_peer_t *p = peer_of_request(r, src, h->addr, h->addr_len);
    if (p)
        ctl_send(r, p, RPC_T_RESP, h->req_id, status, r->auth);
}

static void on_recv(orpc_t *r, rpc_rbuf_t *b, const cdt_msg_event_t *e)
{
    if (e->len > 0) {
        rpc_hdr_t h;
        size_t maxp = r->max_req > r->max_resp ? r->max_req : r->max_resp;
        const void *msg = e->buf ? e->buf : b->buf;
        rpc_rbuf_note_end(b, msg, e->len);
        rpc_wire_rc_t rc = rpc_wire_decode(msg, e->len, maxp, &h);
        if (rc == RPC_WIRE_OK && h.type == RPC_T_REQ && h.payload_len > r->max_req)
            rc = RPC_WIRE_TOO_BIG;
        if (rc == RPC_WIRE_OK) {
            if (h.type == RPC_T_REQ)
                server_on_req(r, b, &h, e->src);
            else if (h.type == RPC_T_RESP)
                client_on_resp(r, &h);
            else
                server_on_bye(r, &h, e->src);
        } else {
            if (rc == RPC_WIRE_TOO_BIG)
                r->st.oversized++;
            else
                r->st.malformed++;
            SHM_DEBUG(RPC, "message of %zu bytes dropped: %s", e->len, rpc_wire_rc_str(rc));
            /* A well-formed, authenticated header gets told why. */
            if (rc == RPC_WIRE_TOO_BIG || rc == RPC_WIRE_LEN_BAD)
                refuse_request(r, &h, e->src,
                               rc == RPC_WIRE_TOO_BIG ? ORPC_ERANGE : ORPC_EPROTO);
        }
    }
    if (e->released || !b->multi) {
        b->posted = 0;
        r->nposted--;
        rpc_rbuf_maybe_repost(r, b);
    }
}

static void on_error(orpc_t *r, const cdt_msg_event_t *e)
{
    int kind = e->ctx ? *(int *)e->ctx : 0;
    switch (kind) {
    case RPC_OBJ_RBUF: {
        rpc_rbuf_t *b = e->ctx;
        if (e->err == SHM_ERR_RANGE) {
            /* Cut: larger than the buffer and its overflow area. Its header
             * came (the buffer holds at least msg_max): refuse it by name. */
            r->st.truncated++;
            const void *msg = e->buf ? e->buf : b->buf;
            rpc_hdr_t h;
            b->overflowed = r->rbuf_overflow > 0;
            rpc_wire_rc_t rc = rpc_wire_decode(msg, RPC_HDR_MAX, 0, &h);
            if ((rc == RPC_WIRE_TOO_BIG || rc == RPC_WIRE_LEN_BAD) && h.type == RPC_T_REQ) {
                r->st.oversized++;
                refuse_request(r, &h, CDT_PEER_NONE, ORPC_ERANGE);
            }
        } else if (e->err != SHM_ERR_CANCELED) {
            r->st.malformed++;
        }
        if (e->released || !b->multi) {
            b->posted = 0;
            r->nposted--;
            rpc_rbuf_maybe_repost(r, b);
        }
        break;
    }
    case RPC_OBJ_REQ: {
        struct orpc_req *q = e->ctx;
        q->sent = 1;
        if (q->state == RPC_REQ_ZOMBIE) {
            req_free(r, q);
        } else if (!q->answered) {
            q->answered = 1;
            q->status = ORPC_EPEER;
            q->peer->failed = 1;
        }
        break;
    }
    case RPC_OBJ_CALL: {
        struct orpc_call *c = e->ctx;
        if (c->peer)
            c->peer->failed = 1;
        rpc_call_free(r, c);
        break;
    }
    case RPC_OBJ_BULK: {
        struct orpc_call *c = (struct orpc_call *)((char *)e->ctx -
                                                   offsetof(struct orpc_call, bulk_kind));
        c->bulk_done++;
        c->bulk_err = ORPC_EFABRIC; /* a transfer of this call failed */
        r->st.bulk_errors++;
        if (c->zombie && c->bulk_done >= c->bulk_issued)
            rpc_call_free(r, c);
        break;
    }
    case RPC_OBJ_CTL:
        ctl_done(r, e->ctx, 1);
        break;
    default: {
        /* shm reports a failed read of a dead peer's memory without its
         * context. With one call transferring it must be that one's. */
        struct orpc_call *only = NULL;
        int active = 0;
        for (int i = 0; i < r->ncalls; i++)
            if (r->calls[i].bulk_done < r->calls[i].bulk_issued) {
                only = &r->calls[i];
                active++;
            }
        SHM_DEBUG(RPC, "completion error with no context (%d calls transferring)", active);
        r->rma_errs_seen++;
        r->st.bulk_errors++;
        if (active == 1) {
            only->bulk_done++;
            only->bulk_err = ORPC_EFABRIC;
            if (only->zombie && only->bulk_done >= only->bulk_issued)
                rpc_call_free(r, only);
        }
        break;
    }
    }
}

int rpc_harvest(orpc_t *r)
{
    cdt_msg_event_t ev[16];
    int n = cdt_msg_poll(r->ep, ev, 16);
    for (int i = 0; i < n; i++) {
        cdt_msg_event_t *e = &ev[i];
        if (e->kind == CDT_MSG_ERROR) {
            on_error(r, e);
            continue;
        }
        int kind = *(int *)e->ctx;
        if (e->kind == CDT_MSG_RECV && kind == RPC_OBJ_RBUF) {
            on_recv(r, e->ctx, e);
        } else if (kind == RPC_OBJ_REQ) {
            struct orpc_req *q = e->ctx;
            q->sent = 1;
            if (q->state == RPC_REQ_ZOMBIE)
                req_free(r, q);
        } else if (kind == RPC_OBJ_CALL) {
            r->st.responses++;
            rpc_call_free(r, e->ctx);
        } else if (kind == RPC_OBJ_BULK) {
            struct orpc_call *c = (struct orpc_call *)((char *)e->ctx -
                                                       offsetof(struct orpc_call, bulk_kind));
            c->bulk_done++;
            if (c->zombie && c->bulk_done >= c->bulk_issued)
                rpc_call_free(r, c);
        } else if (kind == RPC_OBJ_CTL) {
            ctl_done(r, e->ctx, 0);
        }
    }
    return n;
}

/* Runs the handlers that became ready (never nested inside a handler). */
static int dispatch(orpc_t *r)
{
    int n = 0;
    if (rpc_depth_tls)
        return 0;
    struct orpc_call *c;
    while ((c = fifo_pop(&r->ready_head, &r->ready_tail)) != NULL) {
        c->state = RPC_CALL_RUNNING;
        rpc_depth_tls++;
        c->h->fn(c, c->in, c->in_len, c->h->arg);
        rpc_depth_tls--;
        n++;
    }
    return n;
}

/* Idle clients are forgotten, so a server's memory stays flat. */
static void sweep(orpc_t *r, uint64_t now)
{
    if (now - r->last_sweep_ns < 200000000ull)
        return;
    r->last_sweep_ns = now;
    for (int i = 0; i < r->npeers; i++) {
        orpc_peer_t *p = &r->peers[i];
        if (p->used && p->refs == 0 && p->inflight == 0 && now - p->last_ns > r->peer_idle_ns)
            peer_reclaim(r, p);
    }
}

static void resend(orpc_t *r);

static int progress_once(orpc_t *r)
{
    int n = 0, k;
    if (r->resend_head)
        resend(r);
    while ((k = rpc_harvest(r)) > 0)
        n += k;
    n += dispatch(r);
    sweep(r, rpc_now_ns());
    return n;
}

static void *progress_main(void *arg)
{
    orpc_t *r = arg;
    rpc_idle_t idle = RPC_IDLE_INIT;
    while (!r->thr_stop) {
        /* The provider's own work (e.g. rxm serving a peer's read) runs
         * without our lock, so application calls are not held up by it. */
        cdt_msg_progress(r->ep);
        rpc_lock(r);
        int n = progress_once(r);
        rpc_unlock(r);
        if (n)
            rpc_idle_reset(&idle);
        else
            rpc_idle(&idle);
    }
    return NULL;
}

/* ------------------------------------------------------------ instances */

RPC_EXPORT void orpc_opts_init(orpc_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->progress_thread = -1;
    o->multi_recv = -1;
    o->mr_cache = -1;
}

static int open_endpoint(orpc_t *r, const char *prov)
{
    cdt_msg_cfg_t cfg = {.provider = prov, .thread_safe = r->use_thread};
    shm_status_t st = cdt_msg_open(&cfg, &r->ep);
    if (st != SHM_OK)
        return rpc_rc(st);
    snprintf(r->prov, sizeof(r->prov), "%s", cdt_msg_provider(r->ep));
    size_t alen = sizeof(r->self_addr);
    if ((st = cdt_msg_name(r->ep, r->self_addr, &alen)) != SHM_OK)
        return rpc_rc(st);
    r->self_alen = (uint8_t)alen;
    int rc = rpc_pool_init(r);
    if (rc != ORPC_OK)
        return rc;
    if (r->use_thread) {
        if (pthread_create(&r->thr, NULL, progress_main, r) != 0)
            return ORPC_ENOMEM;
        r->thr_running = 1;
    }
    SHM_INFO(RPC, "%s instance on %s (%s, %s domain)", r->listen ? "server" : "client", r->prov,
             r->multi_recv ? "multi-recv" : "one buffer per request",
             cdt_msg_in_pe_domain(r->ep) ? "the PE's" : "own");
    return ORPC_OK;
}

static int setup_auth(orpc_t *r, const orpc_opts_t *o)
{
    const char *file = o->auth_key_file;
    if ((file == NULL || *file == '\0') && shm_env_g.RPC_AUTH_FILE && *shm_env_g.RPC_AUTH_FILE)
        file = shm_env_g.RPC_AUTH_FILE;
    if ((file == NULL || *file == '\0') && shm_env_g.RPC_AUTH_KEY && *shm_env_g.RPC_AUTH_KEY) {
        if (rpc_auth_parse_hex(shm_env_g.RPC_AUTH_KEY, r->auth) != ORPC_OK) {
            shm_error("SHMEM_RPC_AUTH_KEY must be 32 hex digits");
            return ORPC_EAUTH;
        }
        return ORPC_OK;
    }
    int rc = rpc_auth_random(r->auth);
    if (rc != ORPC_OK)
        return rc;
    if (file && *file)
        snprintf(r->auth_path, sizeof(r->auth_path), "%s", file);
    else
        snprintf(r->auth_path, sizeof(r->auth_path), "/tmp/orpc-%u-%d.key", (unsigned)getuid(),
                 (int)getpid());
    if ((rc = rpc_auth_write_file(r->auth_path, r->auth)) != ORPC_OK)
        return rc;
    r->auth_written = 1;
    return ORPC_OK;
}

RPC_EXPORT int orpc_open(const orpc_opts_t *opts, orpc_t **rpc_p)
{
    orpc_opts_t dflt;
    if (opts == NULL) {
        orpc_opts_init(&dflt);
        opts = &dflt;
    }
    if (rpc_p == NULL)
        return ORPC_EINVAL;
    pthread_once(&env_once_g, env_load_once);
    if (!env_ok_g)
        return ORPC_EINVAL;
    orpc_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return ORPC_ENOMEM;
    r->listen = opts->listen;
    r->multi_recv = opts->multi_recv >= 0 ? opts->multi_recv : shm_env_g.RPC_MULTI_RECV;
    r->mr_cache_on = opts->mr_cache >= 0 ? opts->mr_cache : shm_env_g.RPC_MR_CACHE;
    r->use_thread =
        opts->progress_thread >= 0 ? opts->progress_thread : shm_env_g.RPC_PROGRESS_THREAD;
    r->locking = r->use_thread;
    r->max_req = shm_env_g.RPC_MAX_REQ;
    r->max_resp = shm_env_g.RPC_MAX_RESP;
    r->msg_max = RPC_HDR_MAX + (r->max_req > r->max_resp ? r->max_req : r->max_resp);
    /* What our receive buffers take, told to servers in every request. */
    r->resp_cap = (int32_t)(r->msg_max - RPC_HDR_MAX < INT32_MAX ? r->msg_max - RPC_HDR_MAX
                                                                  : INT32_MAX);
    r->timeout_ms = (int)shm_env_g.RPC_TIMEOUT;
    r->bulk_ttl_ms = (int)shm_env_g.RPC_BULK_TTL;
    r->mr_cache_max = (int)shm_env_g.RPC_MR_CACHE_MAX;
    r->peer_idle_ns = (uint64_t)(shm_env_g.RPC_PEER_IDLE > 0 ? shm_env_g.RPC_PEER_IDLE : 1) *
                      1000000ull;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&r->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    memset(r->peer_hash, 0xff, sizeof(r->peer_hash));
    r->peer_free = -1;
    r->req_free = -1;

    long n = shm_env_g.RPC_MAX_INFLIGHT > 0 ? shm_env_g.RPC_MAX_INFLIGHT : 256;
    int rc = ORPC_ENOMEM;
    r->nreqs = (int)n;
    r->reqs = calloc((size_t)n, sizeof(*r->reqs));
    if (r->reqs == NULL)
        goto fail;
    for (int i = r->nreqs - 1; i >= 0; i--) {
        r->reqs[i].kind = RPC_OBJ_REQ;
        r->reqs[i].idx = (uint32_t)i;
        r->reqs[i].rpc = r;
        r->reqs[i].next_free = r->req_free;
        r->req_free = i;
    }
    if (r->listen) {
        r->ncalls = (int)n;
        r->calls = calloc((size_t)n, sizeof(*r->calls));
        if (r->calls == NULL)
            goto fail;
        for (int i = r->ncalls - 1; i >= 0; i--) {
            r->calls[i].kind = RPC_OBJ_CALL;
            r->calls[i].bulk_kind = RPC_OBJ_BULK;
            r->calls[i].rpc = r;
            r->calls[i].next = r->call_free;
            r->call_free = &r->calls[i];
        }
    }
    for (int i = 0; i < RPC_NCTL; i++)
        r->ctl[i].kind = RPC_OBJ_CTL;
    r->npeers = RPC_MAX_PEERS;
    if ((r->peers = calloc(RPC_MAX_PEERS, sizeof(*r->peers))) == NULL)
        goto fail;
    for (int i = RPC_MAX_PEERS - 1; i >= 0; i--) {
        r->peers[i].next = r->peer_free;
        r->peer_free = i;
    }
    if (r->listen) {
        if ((rc = setup_auth(r, opts)) != ORPC_OK)
            goto fail;
        const char *prov = opts->provider && *opts->provider ? opts->provider
                                                             : shm_env_g.RPC_PROVIDER;
        if ((rc = open_endpoint(r, prov)) != ORPC_OK)
            goto fail;
    } else if (opts->provider && *opts->provider) {
        if ((rc = open_endpoint(r, opts->provider)) != ORPC_OK)
            goto fail;
    }
    *rpc_p = r;
    return ORPC_OK;
fail:
    orpc_close(r);
    return rc;
}

RPC_EXPORT int orpc_close(orpc_t *r)
{
    if (r == NULL)
        return ORPC_EINVAL;
    if (r->thr_running) {
        r->thr_stop = 1;
        pthread_join(r->thr, NULL);
        r->thr_running = 0;
    }
    if (r->ep) {
        /* Say goodbye to the servers we looked up, and let the messages go. */
        for (int i = 0; i < r->npeers; i++) {
            orpc_peer_t *p = &r->peers[i];
            if (p->used && p->refs > 0 && !p->failed) {
                p->refs = 0;
                ctl_send(r, p, RPC_T_BYE, 0, 0, p->auth);
            }
        }
        uint64_t until = rpc_now_ns() + 1000000000ull;
        rpc_idle_t idle = RPC_IDLE_INIT;
        for (;;) {
            int busy = 0;
            for (int i = 0; i < RPC_NCTL; i++)
                busy |= r->ctl[i].busy;
            for (int i = 0; i < r->nreqs && !busy; i++)
                busy |= r->reqs[i].state != RPC_REQ_FREE && !r->reqs[i].sent;
            for (int i = 0; i < r->ncalls && !busy; i++)
                busy |= r->calls[i].state == RPC_CALL_SENDING;
            if (!busy || rpc_now_ns() > until)
                break;
            if (rpc_harvest(r) == 0)
                rpc_idle(&idle);
        }
        rpc_bulk_fini(r);
        cdt_msg_close(r->ep);
    }
    for (int i = 0; i < r->ncalls; i++) {
        free(r->calls[i].in_heap);
        free(r->calls[i].out_heap);
    }
    if (r->auth_written)
        unlink(r->auth_path);
    free(r->calls);
    free(r->reqs);
    free(r->peers);
    free(r->by_fa);
    rpc_pool_fini(r);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return ORPC_OK;
}

/*
 * "orpc://PROV/HEX/max_req=N": a server advertises its request limit, so
 * that a client refuses a larger call itself. (A message larger than every
 * receive buffer a server posted wedges shm 1.17, so it must never be sent.)
 */
#define RPC_OPT_MAX_REQ "/max_req="

RPC_EXPORT int orpc_addr(orpc_t *r, char *buf, size_t len)
{
    if (r == NULL || buf == NULL || r->ep == NULL)
        return ORPC_EINVAL;
    int rc = rpc_rc(cdt_msg_addr_to_str(r->prov, r->self_addr, r->self_alen, buf, len));
    if (rc != ORPC_OK || !r->listen)
        return rc;
    size_t used = strlen(buf);
    int n = snprintf(buf + used, len - used, RPC_OPT_MAX_REQ "%zu", r->max_req);
    if (n < 0 || (size_t)n >= len - used) {
        buf[used] = '\0';
        return ORPC_ERANGE;
    }
    return ORPC_OK;
}

/* Options after the name: "/max_req=N". 0 when absent; -1 when malformed. */
static long long addr_max_req(const char *addr)
{
    const char *o = strstr(addr, RPC_OPT_MAX_REQ);
    if (o == NULL)
        return 0;
    o += strlen(RPC_OPT_MAX_REQ);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(o, &end, 10);
    if (end == o || errno || v == 0 || v > UINT32_MAX ||
        (*end != '\0' && *end != '/' && *end != '\n' && *end != '\r' && *end != ' '))
        return -1;
    return (long long)v;
}

RPC_EXPORT const char *orpc_auth_file(orpc_t *r)
{
    return r->auth_written ? r->auth_path : "";
}

RPC_EXPORT int orpc_register(orpc_t *r, const char *name, orpc_handler_t fn, void *arg,
                             unsigned flags, uint64_t *id_p)
{
    if (r == NULL || name == NULL || fn == NULL)
        return ORPC_EINVAL;
    uint64_t id = rpc_fnv1a(name);
    rpc_lock(r);
    int rc = ORPC_ENOMEM;
    for (unsigned i = 0; i < RPC_NHANDLERS * 3 / 4; i++) {
        rpc_handler_t *h = &r->handlers[(id + i) & (RPC_NHANDLERS - 1)];
        if (h->used && h->id != id)
            continue;
        h->id = id;
        h->fn = fn;
        h->arg = arg;
        h->flags = flags;
        h->used = 1;
        rc = ORPC_OK;
        break;
    }
    rpc_unlock(r);
    if (rc == ORPC_OK && id_p)
        *id_p = id;
    return rc;
}

RPC_EXPORT orpc_t *orpc_call_rpc(orpc_call_t *c)
{
    return c->rpc;
}

RPC_EXPORT int orpc_respond(orpc_call_t *c, int status, const void *out, size_t out_len)
{
    if (c == NULL || c->state == RPC_CALL_FREE || c->state == RPC_CALL_SENDING)
        return ORPC_EINVAL;
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = ORPC_OK;
    if (c->bulk_done < c->bulk_issued && rpc_bulk_wait_locked(r, c) == ORPC_EPEER &&
        status == ORPC_OK)
        status = ORPC_EPEER;
    if (out_len > c->resp_max) {
        shm_error("orpc_respond: response of %zu bytes exceeds the %zu bytes the caller "
                  "can receive (SHMEM_RPC_MAX_RESP); answering ORPC_ERANGE", out_len,
                  c->resp_max);
        status = ORPC_ERANGE;
        out_len = 0;
        rc = ORPC_ERANGE;
    }
    const void *pay = NULL;
    if (out_len > 0 && out_len <= RPC_INLINE) {
        memcpy(c->out_inl, out, out_len);
        pay = c->out_inl;
    } else if (out_len > 0) {
        if ((c->out_heap = malloc(out_len)) == NULL) {
            status = ORPC_ENOMEM;
            out_len = 0;
            rc = ORPC_ENOMEM;
        } else {
            memcpy(c->out_heap, out, out_len);
            pay = c->out_heap;
        }
    }
    /* The arguments may have been the source of the payload: copied now. */
    call_release_input(r, c);
    rpc_hdr_t h = {.type = RPC_T_RESP, .req_id = c->req_id, .status = status,
                   .payload_len = (uint32_t)out_len};
    memcpy(h.auth, r->auth, RPC_AUTH_LEN);
    size_t hl = rpc_wire_encode(c->hdr, sizeof(c->hdr), &h);
    c->state = RPC_CALL_SENDING;
    c->resp_hl = hl;
    c->resp_pay = pay;
    c->resp_len = out_len;
    shm_status_t st = SHM_ERR_AGAIN;
    for (int tries = 0; tries < 4 && st == SHM_ERR_AGAIN; tries++) {
        st = cdt_msg_send(r->ep, c->peer->fa, c->hdr, hl, pay, out_len, c);
        if (st == SHM_ERR_AGAIN)
            rpc_harvest(r);
    }
    if (st == SHM_ERR_AGAIN) {
        /* The provider is full (or the peer gone): retried from progress, so
         * one stuck peer never stops the server. */
        c->send_deadline = rpc_now_ns() + RPC_SEND_PATIENCE_NS;
        fifo_push(&r->resend_head, &r->resend_tail, c);
    } else if (st != SHM_OK) {
        c->peer->failed = 1;
        rpc_call_free(r, c);
        rc = ORPC_EPEER;
    }
    rpc_unlock(r);
    return rc;
}

/* Responses the provider refused for now: try again, give up on dead peers. */
static void resend(orpc_t *r)
{
    struct orpc_call *c, *keep_head = NULL, *keep_tail = NULL;
    uint64_t now = 0;
    while ((c = fifo_pop(&r->resend_head, &r->resend_tail)) != NULL) {
        shm_status_t st = cdt_msg_send(r->ep, c->peer->fa, c->hdr, c->resp_hl, c->resp_pay,
                                       c->resp_len, c);
        if (st == SHM_OK)
            continue;
        if (now == 0)
            now = rpc_now_ns();
        if (st == SHM_ERR_AGAIN && now < c->send_deadline) {
            fifo_push(&keep_head, &keep_tail, c);
            continue;
        }
        SHM_DEBUG(RPC, "response abandoned: peer unreachable");
        c->peer->failed = 1;
        rpc_call_free(r, c);
    }
    r->resend_head = keep_head;
    r->resend_tail = keep_tail;
}

RPC_EXPORT int orpc_progress(orpc_t *r, int timeout_ms)
{
    if (r == NULL)
        return ORPC_EINVAL;
    uint64_t until = rpc_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
    rpc_idle_t idle = RPC_IDLE_INIT;
    for (;;) {
        rpc_lock(r);
        int n = r->ep ? progress_once(r) : 0;
        rpc_unlock(r);
        if (n > 0 || timeout_ms <= 0 || rpc_now_ns() >= until)
            return n;
        rpc_idle(&idle);
    }
}

RPC_EXPORT int orpc_run_queued(orpc_t *r, int max, int timeout_ms)
{
    if (r == NULL)
        return ORPC_EINVAL;
    uint64_t until = rpc_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
    rpc_idle_t idle = RPC_IDLE_INIT;
    int n = 0;
    while (n < max) {
        rpc_lock(r);
        if (!r->thr_running && r->ep)
            progress_once(r);
        struct orpc_call *c = fifo_pop(&r->queued_head, &r->queued_tail);
        if (c)
            c->state = RPC_CALL_RUNNING;
        rpc_unlock(r);
        if (c) {
            rpc_depth_tls++;
            c->h->fn(c, c->in, c->in_len, c->h->arg);
            rpc_depth_tls--;
            n++;
            continue;
        }
        if (n > 0 || timeout_ms <= 0 || rpc_now_ns() >= until)
            break;
        rpc_idle(&idle);
    }
    return n;
}

/* --------------------------------------------------------------- client */

RPC_EXPORT int orpc_lookup(orpc_t *r, const char *addr, const char *auth, orpc_peer_t **peer_p)
{
    if (r == NULL || addr == NULL || peer_p == NULL)
        return ORPC_EINVAL;
    char prov[64];
    uint8_t name[RPC_ADDR_MAX];
    size_t nlen = sizeof(name);
    if (cdt_msg_addr_from_str(addr, prov, sizeof(prov), name, &nlen) != SHM_OK)
        return ORPC_EADDR;
    long long srv_max_req = addr_max_req(addr);
    if (srv_max_req < 0) {
        shm_error("orpc_lookup: '%s': bad max_req option (want max_req=BYTES, 1..2^32-1)",
                  addr);
        return ORPC_EADDR;
    }
    uint8_t key[RPC_AUTH_LEN];
    int rc = rpc_auth_resolve(auth, key);
    if (rc != ORPC_OK)
        return rc;
    rpc_lock(r);
    if (r->ep == NULL && (rc = open_endpoint(r, prov)) != ORPC_OK) {
        rpc_unlock(r);
        return rc;
    }
    if (strcmp(prov, r->prov) != 0) {
        shm_error("server %s is on provider %s, this instance on %s", addr, prov, r->prov);
        rpc_unlock(r);
        return ORPC_EADDR;
    }
    orpc_peer_t *p = peer_find(r, name, nlen);
    if (p == NULL)
        p = peer_new(r, name, nlen);
    if (p == NULL) {
        rpc_unlock(r);
        return ORPC_EADDR;
    }
    memcpy(p->auth, key, RPC_AUTH_LEN);
    p->max_req = (size_t)srv_max_req;
    p->refs++;
    p->bye = 0;
    p->failed = 0;
    rpc_unlock(r);
    *peer_p = p;
    return ORPC_OK;
}

RPC_EXPORT int orpc_peer_release(orpc_peer_t *p)
{
    if (p == NULL || !p->used || p->refs <= 0)
        return ORPC_EINVAL;
    orpc_t *r = p->rpc;
    rpc_lock(r);
    if (--p->refs == 0) {
        if (!p->failed)
            ctl_send(r, p, RPC_T_BYE, 0, 0, p->auth);
        p->bye = 1;
        peer_maybe_reclaim(r, p);
    }
    rpc_unlock(r);
    return ORPC_OK;
}

RPC_EXPORT int orpc_icall(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in, size_t in_len,
                          void *out, size_t out_cap, int timeout_ms, orpc_req_t **req_p)
{
    if (r == NULL || p == NULL || !p->used || req_p == NULL || (in_len && in == NULL) ||
        (out_cap && out == NULL) || p->rpc != r)
        return ORPC_EINVAL;
    /* The server's limit when it advertised one, else ours. */
    size_t limit = p->max_req ? p->max_req : r->max_req;
    if (in_len > limit) {
        shm_error("orpc_icall: request of %zu bytes exceeds the %s limit of %zu bytes "
                  "(SHMEM_RPC_MAX_REQ %s)", in_len, p->max_req ? "server's" : "request",
                  limit, p->max_req ? "of the server, from its address" : "of this process");
        return ORPC_ERANGE;
    }
    if (timeout_ms < 0)
        timeout_ms = r->timeout_ms;
    rpc_lock(r);
    uint64_t now = rpc_now_ns();
    uint64_t deadline = now + (uint64_t)timeout_ms * 1000000ull;
    rpc_idle_t idle = RPC_IDLE_INIT;
    while (r->req_free < 0) {
        /* Every slot in flight: wait for one to come back. */
        if (rpc_harvest(r) == 0) {
            if (rpc_now_ns() > deadline) {
                rpc_unlock(r);
                return ORPC_EBUSY;
            }
            rpc_unlock(r);
            rpc_idle(&idle);
            rpc_lock(r);
        }
    }
    struct orpc_req *q = &r->reqs[r->req_free];
    r->req_free = q->next_free;
    q->gen++;
    q->state = RPC_REQ_ACTIVE;
    q->peer = p;
    q->sent = q->answered = 0;
    q->status = ORPC_OK;
    q->out = out;
    q->out_cap = out_cap;
    q->out_len = 0;
    q->send_ns = now;
    q->deadline_ns = deadline;
    p->inflight++;
    rpc_hdr_t h = {.type = RPC_T_REQ, .rpc_id = id,
                   .req_id = (uint64_t)q->gen << 32 | q->idx,
                   .timeout_ms = (uint32_t)timeout_ms, .payload_len = (uint32_t)in_len,
                   .status = r->resp_cap,
                   .addr = r->self_addr, .addr_len = r->self_alen};
    memcpy(h.auth, p->auth, RPC_AUTH_LEN);
    size_t hl = rpc_wire_encode(q->hdr, sizeof(q->hdr), &h);
    const void *pay = in;
    if (in_len && in_len <= RPC_INLINE) {
        memcpy(q->inl, in, in_len);
        pay = q->inl;
    }
    int rc = ORPC_OK;
    for (;;) {
        shm_status_t st = cdt_msg_send(r->ep, p->fa, q->hdr, hl, pay, in_len, q);
        if (st == SHM_OK)
            break;
        if (st != SHM_ERR_AGAIN || rpc_now_ns() > deadline) {
            rc = st == SHM_ERR_AGAIN ? ORPC_ETIMEDOUT : ORPC_EPEER;
            q->sent = 1;
            req_free(r, q);
            break;
        }
        rpc_harvest(r);
    }
    rpc_unlock(r);
    if (rc == ORPC_OK)
        *req_p = q;
    return rc;
}

static int req_finish(orpc_t *r, struct orpc_req *q, size_t *out_len_p)
{
    int status = q->status;
    if (out_len_p)
        *out_len_p = q->out_len;
    if (status == ORPC_EPEER)
        r->last_failed_send_ns = q->send_ns > r->last_failed_send_ns ? q->send_ns
                                                                     : r->last_failed_send_ns;
    req_free(r, q);
    return status;
}

/* Gives up on a call: its bulk buffers stay registered until their client deadline. */
static int req_timeout(orpc_t *r, struct orpc_req *q)
{
    if (q->send_ns > r->last_failed_send_ns)
        r->last_failed_send_ns = q->send_ns;
    if (!q->sent) {
        /* The provider may still read the arguments: wait for the send to end. */
        uint64_t until = rpc_now_ns() + RPC_SEND_PATIENCE_NS / 2;
        rpc_idle_t idle = RPC_IDLE_INIT;
        while (!q->sent && rpc_now_ns() < until)
            if (rpc_harvest(r) == 0)
                rpc_idle(&idle);
    }
    if (q->sent)
        req_free(r, q);
    else
        q->state = RPC_REQ_ZOMBIE; /* freed by its completion */
    return ORPC_ETIMEDOUT;
}

RPC_EXPORT int orpc_test(orpc_req_t *q, size_t *out_len_p)
{
    if (q == NULL || q->state != RPC_REQ_ACTIVE)
        return ORPC_EINVAL;
    orpc_t *r = q->rpc;
    rpc_lock(r);
    if (!(q->answered && q->sent)) {
        while (rpc_harvest(r) > 0)
            ;
        dispatch(r);
    }
    int rc;
    if (q->answered && q->sent)
        rc = req_finish(r, q, out_len_p);
    else if (rpc_now_ns() > q->deadline_ns)
        rc = req_timeout(r, q);
    else
        rc = ORPC_EAGAIN;
    rpc_unlock(r);
    return rc;
}

RPC_EXPORT int orpc_wait(orpc_req_t *q, size_t *out_len_p)
{
    if (q == NULL || q->state != RPC_REQ_ACTIVE)
        return ORPC_EINVAL;
    orpc_t *r = q->rpc;
    rpc_idle_t idle = RPC_IDLE_INIT;
    for (;;) {
        rpc_lock(r);
        int n = 0;
        if (!(q->answered && q->sent)) {
            n = rpc_harvest(r);
            n += dispatch(r);
        }
        if (q->answered && q->sent) {
            int rc = req_finish(r, q, out_len_p);
            rpc_unlock(r);
            return rc;
        }
        if (rpc_now_ns() > q->deadline_ns) {
            int rc = req_timeout(r, q);
            rpc_unlock(r);
            return rc;
        }
        rpc_unlock(r);
        if (n)
            rpc_idle_reset(&idle);
        else
            rpc_idle(&idle);
    }
}

RPC_EXPORT int orpc_call(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in, size_t in_len,
                         void *out, size_t out_cap, size_t *out_len_p, int timeout_ms)
{
    orpc_req_t *q;
    int rc = orpc_icall(r, p, id, in, in_len, out, out_cap, timeout_ms, &q);
    return rc == ORPC_OK ? orpc_wait(q, out_len_p) : rc;
}

RPC_EXPORT int orpc_stats(orpc_t *r, orpc_stats_t *s)
{
    if (r == NULL || s == NULL)
        return ORPC_EINVAL;
    rpc_lock(r);
    *s = r->st;
    rpc_unlock(r);
    return ORPC_OK;
}
