// SPDX-License-Identifier: BSD-3-Clause
/*
 * The client side: lookups, calls (request slots from a preallocated pool),
 * responses, and waiting for them with the deadline rule.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

/* --------------------------------------------------------------- client */

/* The library's own exposures of a call: released once the server answered
 * (it ends its transfers before it does), else kept by the deadline rule. */
static void req_release_bulk(orpc_t *r, struct orpc_req *q, int answered)
{
    orpc_bulk_t *b[2] = {q->arg_bulk, q->out_bulk};
    q->arg_bulk = q->out_bulk = NULL;
    for (int i = 0; i < 2; i++)
        if (b[i] && answered)
            rpc_bulk_drop(r, b[i]);
        else if (b[i])
            rpc_bulk_defer(r, b[i]);
}

void rpc_req_free(orpc_t *r, struct orpc_req *q)
{
    orpc_peer_t *p = q->peer;
    if (q->arg_bulk || q->out_bulk)
        req_release_bulk(r, q, q->responded);
    q->state = RPC_REQ_FREE;
    q->peer = NULL;
    if (q->pay_heap) { /* a collective call's payload */
        free(q->pay_heap);
        q->pay_heap = NULL;
    }
    q->coll_failed_p = NULL;
    q->next_free = r->req_free;
    r->req_free = (int)q->idx;
    if (p) {
        p->inflight--;
        rpc_peer_maybe_reclaim(r, p);
    }
}

void rpc_client_on_resp(orpc_t *r, const rpc_hdr_t *h)
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
    q->status = h->status;
    if ((h->flags & RPC_F_COLL) && h->status < 0) {
        /* A collective call failed: the payload names the member. */
        if (h->payload_len == 4 && q->coll_failed_p)
            *q->coll_failed_p = (int32_t)((uint32_t)h->payload[0] | (uint32_t)h->payload[1] << 8 |
                                          (uint32_t)h->payload[2] << 16 |
                                          (uint32_t)h->payload[3] << 24);
        q->out_len = 0;
    } else if (h->flags & RPC_F_PUSHED) {
        /* The result is already in out; the payload says its full length. */
        if (q->out_bulk == NULL || h->payload_len != 8) {
            r->st.malformed++;
            q->status = ORPC_EPROTO;
            q->out_len = 0;
        } else {
            uint64_t full = 0;
            for (int i = 0; i < 8; i++)
                full |= (uint64_t)h->payload[i] << (8 * i);
            q->out_len = (size_t)full;
        }
    } else {
        size_t n = h->payload_len < q->out_cap ? h->payload_len : q->out_cap;
        if (n)
            memcpy(q->out, h->payload, n);
        q->out_len = h->payload_len;
    }
    q->responded = 1;
    q->answered = 1;
    q->peer->last_ns = q->send_ns; /* recent enough for idleness, without a clock read */
    r->st.calls++;
}

/* ---------------------------------------------------------------- events */
/* --------------------------------------------------------------- client */

/* A peer for a server address, one more reference (lock held, endpoint open). */
int rpc_peer_lookup(orpc_t *r, const char *addr, const uint8_t key[RPC_AUTH_LEN],
                    orpc_peer_t **peer_p)
{
    char prov[64];
    uint8_t name[RPC_ADDR_MAX];
    size_t nlen = sizeof(name);
    if (cdt_msg_addr_from_str(addr, prov, sizeof(prov), name, &nlen) != SHM_OK)
        return ORPC_EADDR;
    long long srv_max_req = rpc_addr_max_req(addr);
    if (srv_max_req < 0) {
        shm_error("orpc_lookup: '%s': bad max_req option (want max_req=BYTES, 1..2^32-1)",
                  addr);
        return ORPC_EADDR;
    }
    if (strcmp(prov, r->prov) != 0) {
        shm_error("server %s is on provider %s, this instance on %s", addr, prov, r->prov);
        return ORPC_EADDR;
    }
    orpc_peer_t *p = rpc_peer_find(r, name, nlen);
    if (p == NULL) {
        p = rpc_peer_new(r, name, nlen);
        if (p && r->av_inserts > RPC_SHM_SLOTS && !r->shm_wrap_warned++ &&
            strcmp(r->prov, "shm") == 0)
            SHM_WARN(RPC, "orpc_lookup: this instance has taken more than %d libfabric shm "
                          "peer slots: shm 1.17 reuses freed ones now, with the old peer's "
                          "connection state, so a server looked up may not be reachable "
                          "(calls time out) or may be sent a stale id",
                     RPC_SHM_SLOTS);
    }
    if (p == NULL)
        return ORPC_EADDR;
    memcpy(p->auth, key, RPC_AUTH_LEN);
    p->max_req = (size_t)srv_max_req;
    p->refs++;
    p->bye = 0;
    p->failed = 0;
    p->sq_gone = 0;
    /* Same host: the server's queues, when its address offers them. */
    if (r->sq && p->sq == NULL && (p->sq = rpc_sq_connect(r, addr, p->max_req)) != NULL)
        p->sq->peer = p;
    int rc = rpc_peer_route(r, p);
    if (rc != ORPC_OK) {
        rpc_peer_unref(r, p);
        return rc;
    }
    *peer_p = p;
    return ORPC_OK;
}

RPC_EXPORT int orpc_lookup(orpc_t *r, const char *addr, const char *auth, orpc_peer_t **peer_p)
{
    if (r == NULL || addr == NULL || peer_p == NULL)
        return ORPC_EINVAL;
    char prov[64];
    uint8_t name[RPC_ADDR_MAX];
    size_t nlen = sizeof(name);
    if (cdt_msg_addr_from_str(addr, prov, sizeof(prov), name, &nlen) != SHM_OK)
        return ORPC_EADDR;
    uint8_t key[RPC_AUTH_LEN];
    int rc = rpc_auth_resolve(auth, key);
    if (rc != ORPC_OK)
        return rc;
    rpc_lock(r);
    if ((rc = rpc_open_client(r, prov, addr)) != ORPC_OK) {
        rpc_unlock(r);
        return rc;
    }
    orpc_peer_t *p = NULL, *svc = NULL;
    rc = rpc_peer_lookup(r, addr, key, &p);
    /* A server with several contexts: one peer for each, behind one handle. */
    if (rc == ORPC_OK && (rc = rpc_ctx_lookup(r, p, addr, &svc)) != ORPC_OK)
        rpc_peer_unref(r, p);
    rpc_unlock(r);
    if (rc == ORPC_OK)
        *peer_p = svc;
    return rc;
}

/* One reference less: at none, a goodbye and the peer is forgotten (lock held). */
void rpc_peer_unref(orpc_t *r, orpc_peer_t *p)
{
    if (--p->refs == 0) {
        /* A server we never called does not know us: no goodbye (on shm a
         * first message from a process that is gone crashed the server). */
        if (!p->failed && p->talked)
            rpc_ctl_send(r, p, RPC_T_BYE, 0, 0, p->auth);
        p->bye = 1;
        rpc_peer_maybe_reclaim(r, p);
    }
}

RPC_EXPORT int orpc_peer_release(orpc_peer_t *p)
{
    if (p == NULL || !p->used || p->refs <= 0)
        return ORPC_EINVAL;
    orpc_t *r = p->rpc;
    rpc_lock(r);
    if (p->nctx > 1)
        rpc_ctx_unref(r, p);
    else
        rpc_peer_unref(r, p);
    rpc_unlock(r);
    return ORPC_OK;
}

/* A collective call's extras (rpc_req_start_coll); NULL for any other. */
typedef struct {
    const void *pre;
    size_t prelen;
    void *pay_heap;
    int32_t *failed_p;
} req_ext_t;

static int req_start(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in, size_t in_len,
                     void *out, size_t out_cap, int timeout_ms, uint8_t flags,
                     orpc_req_t **req_p, req_ext_t *x)
{
    if (r == NULL || p == NULL || !p->used || req_p == NULL || (in_len && in == NULL) ||
        (out_cap && out == NULL) || p->rpc != r)
        return ORPC_EINVAL;
    if (p->nctx > 1) /* a server with several contexts: the next one */
        p = p->ctxp[__atomic_fetch_add(&p->rr, 1, __ATOMIC_RELAXED) % (unsigned)p->nctx];
    if (in_len > r->max_arg) {
        shm_error("orpc_icall: argument of %zu bytes exceeds SHMEM_RPC_MAX_ARG (%zu bytes)",
                  in_len, r->max_arg);
        return ORPC_ERANGE;
    }
    if (timeout_ms < 0)
        timeout_ms = r->timeout_ms;
    /*
     * Above the eager limit (the server's, from its address, else ours) the
     * arguments stay here, exposed for the server to pull; a result buffer
     * larger than the eager result limit is exposed for the server to push.
     * Both live as long as the call (the deadline rule when it fails).
     */
    size_t limit = p->max_req ? p->max_req : r->max_req;
    if (x) /* collective: eager only (orpc_call_all checked the size) */
        limit = SIZE_MAX, out_cap = out_cap < r->max_resp ? out_cap : r->max_resp;
    orpc_bulk_t *ab = NULL, *ob = NULL;
    int rc = ORPC_OK;
    if (in_len > limit && (flags & RPC_F_ONEWAY)) {
        shm_error("orpc_send: one-way arguments of %zu bytes exceed the eager limit of %zu "
                  "bytes (SHMEM_RPC_MAX_REQ); use orpc_call", in_len, limit);
        return ORPC_ERANGE;
    }
    if (in_len > limit) {
        flags |= RPC_F_ARG_BULK;
        rc = orpc_bulk_expose(r, (void *)(uintptr_t)in, in_len, ORPC_BULK_READ, timeout_ms, &ab);
    }
    if (rc == ORPC_OK && out_cap > r->max_resp) {
        flags |= RPC_F_OUT_BULK;
        rc = orpc_bulk_expose(r, out, out_cap, ORPC_BULK_WRITE, timeout_ms, &ob);
    }
    rpc_lock(r);
    if (rc != ORPC_OK) {
        if (ab)
            rpc_bulk_drop(r, ab);
        rpc_unlock(r);
        return rc;
    }
    uint64_t now = rpc_now_ns();
    uint64_t deadline = now + (uint64_t)timeout_ms * 1000000ull;
    rpc_idle_t idle = RPC_IDLE_INIT;
    while (r->req_free < 0) {
        /* Every slot in flight: wait for one to come back. */
        if (rpc_harvest(r) == 0) {
            if (rpc_now_ns() > deadline) {
                if (ab)
                    rpc_bulk_drop(r, ab);
                if (ob)
                    rpc_bulk_drop(r, ob);
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
    q->sent = q->answered = q->responded = 0;
    q->arg_bulk = ab;
    q->out_bulk = ob;
    q->status = ORPC_OK;
    q->out = out;
    q->out_cap = out_cap;
    q->out_len = 0;
    q->coll_failed_p = x ? x->failed_p : NULL;
    if (x) { /* the request owns its payload memory from here on */
        q->pay_heap = x->pay_heap;
        x->pay_heap = NULL;
        flags |= RPC_F_COLL;
    }
    q->send_ns = now;
    q->deadline_ns = deadline;
    p->inflight++;
    size_t extra = (ab ? RPC_BULK_WIRE : 0) + (ob ? RPC_BULK_WIRE : 0);
    size_t pay_len = ab ? 0 : in_len;
    if (x) /* the collective header follows the wire header, like descriptors */
        extra = x->prelen;
    uint8_t h_alen;
    const uint8_t *h_addr = rpc_self_name(r, p, &h_alen);
    rpc_hdr_t h = {.type = RPC_T_REQ, .flags = flags, .rpc_id = id,
                   .req_id = (uint64_t)q->gen << 32 | q->idx,
                   .timeout_ms = (uint32_t)timeout_ms,
                   .payload_len = (uint32_t)(extra + pay_len), .status = r->resp_cap,
                   .addr = h_addr, .addr_len = h_alen};
    memcpy(h.auth, p->auth, RPC_AUTH_LEN);
    size_t hl = rpc_wire_encode(q->hdr, sizeof(q->hdr), &h);
    /* The descriptors follow the header in the same piece of the message. */
    if (ab && rc == ORPC_OK)
        rc = rpc_bulk_encode_locked(ab, p, q->hdr + hl);
    if (ob && rc == ORPC_OK)
        rc = rpc_bulk_encode_locked(ob, p, q->hdr + hl + (ab ? RPC_BULK_WIRE : 0));
    if (x)
        memcpy(q->hdr + hl, x->pre, x->prelen);
    hl += extra;
    const void *pay = pay_len ? in : NULL;
    if (pay_len && pay_len <= RPC_INLINE) {
        memcpy(q->inl, in, pay_len);
        pay = q->inl;
    }
    if (rc != ORPC_OK) {
        q->sent = 1;
        q->responded = 1; /* never sent: release the exposures now */
        rpc_req_free(r, q);
        rpc_unlock(r);
        return rc;
    }
    for (;;) {
        shm_status_t st = rpc_msg_send(r, p, q->hdr, hl, pay, pay_len, q);
        if (st == SHM_OK) {
            p->talked = 1;
            break;
        }
        if (st != SHM_ERR_AGAIN || rpc_now_ns() > deadline) {
            rc = st == SHM_ERR_AGAIN ? ORPC_ETIMEDOUT : ORPC_EPEER;
            q->sent = 1;
            rpc_req_free(r, q);
            break;
        }
        rpc_harvest(r);
    }
    rpc_unlock(r);
    if (rc == ORPC_OK)
        *req_p = q;
    return rc;
}

RPC_EXPORT int orpc_icall(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in, size_t in_len,
                          void *out, size_t out_cap, int timeout_ms, orpc_req_t **req_p)
{
    return req_start(r, p, id, in, in_len, out, out_cap, timeout_ms, 0, req_p, NULL);
}

int rpc_req_start_coll(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *pre, size_t prelen,
                       const void *pay, size_t pay_len, void *pay_heap, void *out,
                       size_t out_cap, int timeout_ms, int32_t *failed_p, struct orpc_req **q_p)
{
    req_ext_t x = {.pre = pre, .prelen = prelen, .pay_heap = pay_heap, .failed_p = failed_p};
    if (prelen > RPC_REQ_EXTRA)
        return ORPC_EINVAL;
    int rc = req_start(r, p, id, pay, pay_len, out, out_cap, timeout_ms, 0, q_p, &x);
    free(x.pay_heap); /* not taken: the request never started */
    return rc;
}

RPC_EXPORT int orpc_send(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in, size_t in_len)
{
    orpc_req_t *q;
    int rc = req_start(r, p, id, in, in_len, NULL, 0, -1, RPC_F_ONEWAY, &q, NULL);
    if (rc != ORPC_OK)
        return rc;
    /* No answer comes: done when the provider is done with the arguments. */
    rpc_lock(r);
    rpc_idle_t idle = RPC_IDLE_INIT;
    while (!q->sent && rpc_now_ns() < q->deadline_ns) {
        if (rpc_harvest(r) == 0) {
            rpc_unlock(r);
            rpc_idle(&idle);
            rpc_lock(r);
        }
    }
    if (!q->sent) {
        rc = ORPC_ETIMEDOUT;
        q->state = RPC_REQ_ZOMBIE; /* freed by its completion */
    } else {
        rc = q->answered ? q->status : ORPC_OK; /* answered here: the send failed */
        q->responded = 1;
        rpc_req_free(r, q);
    }
    rpc_unlock(r);
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
    rpc_req_free(r, q);
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
        rpc_req_free(r, q);
    else
        q->state = RPC_REQ_ZOMBIE; /* freed by its completion */
    return ORPC_ETIMEDOUT;
}

RPC_EXPORT int orpc_cancel(orpc_req_t *q)
{
    if (q == NULL || q->state != RPC_REQ_ACTIVE)
        return ORPC_EINVAL;
    orpc_t *r = q->rpc;
    rpc_lock(r);
    if (q->answered && q->sent)
        req_finish(r, q, NULL);
    else
        req_timeout(r, q); /* a late answer is dropped; exposures by the deadline rule */
    rpc_unlock(r);
    return ORPC_OK;
}

RPC_EXPORT int orpc_test(orpc_req_t *q, size_t *out_len_p)
{
    if (q == NULL || q->state != RPC_REQ_ACTIVE)
        return ORPC_EINVAL;
    orpc_t *r = q->rpc;
    rpc_lock(r);
    if (!(q->answered && q->sent)) {
        /* Once more only after a full batch (an empty provider read is a
         * system call on tcp, between the answer and the caller). */
        while (rpc_harvest(r) > 0 && r->harvest_more)
            ;
        rpc_dispatch(r);
    }
    int rc;
    if (q->answered && q->sent)
        rc = req_finish(r, q, out_len_p);
    else if (rpc_now_ns() > q->deadline_ns)
        rc = req_timeout(r, q);
    else
        rc = ORPC_EAGAIN;
    if (rc == ORPC_EAGAIN && r->sq)
        rpc_sq_check(r); /* a dead same-host server fails the call now */
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
            n += rpc_dispatch(r);
        }
        if (q->answered && q->sent) {
            int rc = req_finish(r, q, out_len_p);
            rpc_unlock(r);
            return rc;
        }
        /* The clock every 16th empty poll (a read costs as much as a ring poll). */
        if (n == 0 && ((idle.n & 15) == 15 || idle.since) && rpc_now_ns() > q->deadline_ns) {
            int rc = req_timeout(r, q);
            rpc_unlock(r);
            return rc;
        }
        /* Asleep, wake when its server answers (without a progress thread,
         * nobody else frees the connection meanwhile). */
        rpc_sq_conn_t *c = r->locking ? NULL : q->peer->sq;
        rpc_unlock(r);
        if (n)
            rpc_idle_reset(&idle);
        else
            rpc_idle_on(&idle, r, c);
    }
}

RPC_EXPORT int orpc_call(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in, size_t in_len,
                         void *out, size_t out_cap, size_t *out_len_p, int timeout_ms)
{
    orpc_req_t *q;
    int rc = orpc_icall(r, p, id, in, in_len, out, out_cap, timeout_ms, &q);
    return rc == ORPC_OK ? orpc_wait(q, out_len_p) : rc;
}
