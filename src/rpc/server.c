// SPDX-License-Identifier: BSD-3-Clause
/*
 * The server side: requests become calls (arguments left in the receive
 * buffer or copied), handlers run from dispatch or orpc_run_queued, and
 * responses go out (retried from progress when the provider is full).
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

/* Nesting of handlers on this thread: handlers never run inside handlers. */
static __thread int rpc_depth_tls;

/* --------------------------------------------------------------- server */

const rpc_handler_t *rpc_handler_find(const orpc_t *r, uint64_t id)
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

static void call_release_input(orpc_t *r, struct orpc_call *c)
{
    if (c->rbuf) {
        c->rbuf->refs--;
        rpc_rbuf_maybe_repost(r, c->rbuf);
        c->rbuf = NULL;
    }
    if (c->state == RPC_CALL_PULLING && c->bulk_done < c->bulk_issued)
        return; /* the pull may still write into in_heap: freed when it ends */
    free(c->in_heap);
    c->in_heap = NULL;
    c->in = NULL;
    r->arg_mem -= c->pulled;
    c->pulled = 0;
}

/* Queues a call whose arguments are in for its handler. */
static void call_ready(orpc_t *r, struct orpc_call *c)
{
    c->state = RPC_CALL_QUEUED;
    if (c->h->flags & ORPC_HANDLER_QUEUED)
        fifo_push(&r->queued_head, &r->queued_tail, c);
    else
        fifo_push(&r->ready_head, &r->ready_tail, c);
}

void rpc_call_bulk_end(orpc_t *r, struct orpc_call *c)
{
    if (c->bulk_done < c->bulk_issued)
        return;
    if (c->zombie) {
        rpc_call_free(r, c);
    } else if (c->state == RPC_CALL_PULLING) {
        int err = c->bulk_err;
        c->bulk_err = 0;
        if (err == ORPC_OK) {
            call_ready(r, c);
            return;
        }
        /* The arguments did not come: the caller is told, the handler never runs. */
        SHM_DEBUG(RPC, "pull of a call's arguments failed: %s", orpc_strerror(err));
        c->state = RPC_CALL_RUNNING;
        if (!c->oneway)
            rpc_ctl_send(r, c->peer, RPC_T_RESP, c->req_id, err, r->auth);
        rpc_call_free(r, c);
    }
}

/*
 * A request whose arguments stay with the caller (RPC_F_ARG_BULK): checked
 * like any descriptor, bounded by SHMEM_RPC_MAX_ARG and SHMEM_RPC_ARG_MEM,
 * then pulled into memory of the call's own. Returns a status for the
 * caller, or ORPC_OK when the pull is under way (or done, for 0 bytes).
 */
static int call_pull_args(orpc_t *r, struct orpc_call *c, const void *wire)
{
    orpc_bulk_desc_t d;
    int rc = rpc_bulk_check(r, c->peer, c->arrival_ns, wire, &d);
    if (rc != ORPC_OK)
        return rc;
    if (!(d.access & ORPC_BULK_READ))
        return ORPC_EPERM;
    if (d.len > r->max_arg) {
        r->st.oversized++;
        SHM_DEBUG(RPC, "argument of %llu bytes above SHMEM_RPC_MAX_ARG (%zu)",
                  (unsigned long long)d.len, r->max_arg);
        return ORPC_ERANGE;
    }
    if (d.len > r->arg_mem_max - (r->arg_mem < r->arg_mem_max ? r->arg_mem : r->arg_mem_max)) {
        r->st.busy++;
        return ORPC_EBUSY;
    }
    if (d.len && (c->in_heap = malloc(d.len)) == NULL)
        return ORPC_ENOMEM;
    c->pulled = d.len;
    r->arg_mem += d.len;
    c->in = c->in_heap;
    c->in_len = d.len;
    c->state = RPC_CALL_PULLING;
    return rpc_bulk_pull_args(r, c, &d, c->in_heap);
}

void rpc_call_free(orpc_t *r, struct orpc_call *c)
{
    orpc_peer_t *p = c->peer;
    call_release_input(r, c);
    free(c->out_heap);
    c->out_heap = NULL;
    if (p) {
        p->inflight--;
        rpc_peer_maybe_reclaim(r, p);
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

void rpc_server_on_req(orpc_t *r, rpc_rbuf_t *b, const rpc_hdr_t *h, cdt_peer_t src)
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
    orpc_peer_t *p = rpc_peer_of_request(r, src, h->addr, h->addr_len);
    if (p == NULL) {
        r->st.malformed++;
        return;
    }
    p->last_ns = rpc_now_ns();
    p->bye = 0;
    const rpc_handler_t *hd = rpc_handler_find(r, h->rpc_id);
    if (hd == NULL) {
        r->st.no_handler++;
        if (!(h->flags & RPC_F_ONEWAY))
            rpc_ctl_send(r, p, RPC_T_RESP, h->req_id, ORPC_ENOENT, r->auth);
        return;
    }
    struct orpc_call *c = r->call_free;
    if (c == NULL) {
        r->st.busy++;
        if (!(h->flags & RPC_F_ONEWAY))
            rpc_ctl_send(r, p, RPC_T_RESP, h->req_id, ORPC_EBUSY, r->auth);
        return;
    }
    r->call_free = c->next;
    c->state = RPC_CALL_QUEUED;
    c->has_out_desc = 0;
    c->oneway = (h->flags & RPC_F_ONEWAY) != 0;
    c->pulled = 0;
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
    c->bulk_issued = c->bulk_done = c->bulk_deadline = c->bulk_probe_ns = c->bulk_lost_ns = 0;
    c->zombie = 0;
    c->rbuf = NULL;
    c->in = h->payload;
    c->coll = NULL;
    c->coll_rank = -1;
    c->coll_n = 0;
    p->inflight++;
    r->st.requests++;
    r->st.calls_live++;
    if (h->flags & RPC_F_COLL) {
        /* A collective call: its arguments are copied with its tree state. */
        int rc = rpc_coll_begin(r, c, h);
        if (rc != ORPC_OK) {
            c->state = RPC_CALL_RUNNING;
            rpc_ctl_send(r, p, RPC_T_RESP, h->req_id, rc, r->auth);
            rpc_call_free(r, c);
            return;
        }
        call_ready(r, c);
        return;
    }
    if (h->flags & (RPC_F_ARG_BULK | RPC_F_OUT_BULK)) {
        /* Descriptors lead the payload (on_recv checked their count). */
        const uint8_t *w = h->payload;
        int rc = ORPC_OK;
        if (h->flags & RPC_F_OUT_BULK) {
            const uint8_t *ow = w + (h->flags & RPC_F_ARG_BULK ? RPC_BULK_WIRE : 0);
            rc = rpc_bulk_check(r, p, c->arrival_ns, ow, &c->out_desc);
            if (rc == ORPC_OK && !(c->out_desc.access & ORPC_BULK_WRITE))
                rc = ORPC_EPERM;
            c->has_out_desc = rc == ORPC_OK;
        }
        if (rc == ORPC_OK && (h->flags & RPC_F_ARG_BULK))
            rc = call_pull_args(r, c, w);
        if (rc != ORPC_OK) {
            c->state = RPC_CALL_RUNNING;
            if (!c->oneway)
                rpc_ctl_send(r, p, RPC_T_RESP, h->req_id, rc, r->auth);
            rpc_call_free(r, c);
            return;
        }
        if (h->flags & RPC_F_ARG_BULK) {
            if (c->state == RPC_CALL_PULLING && c->bulk_done >= c->bulk_issued)
                call_ready(r, c); /* nothing to pull */
            return;
        }
        size_t extra = h->flags & RPC_F_OUT_BULK ? RPC_BULK_WIRE : 0;
        c->in = h->payload + extra;
        c->in_len = h->payload_len - extra;
    }
    /* Never let the last posted buffer be pinned by slow handlers: copy.
     * (From a same-host queue, b is NULL: always copied.) */
    if ((b == NULL || r->nposted <= 1) && c->in_len > 0) {
        const void *src = c->in;
        if (c->in_len <= RPC_INLINE) {
            memcpy(c->in_inl, src, c->in_len);
            c->in = c->in_inl;
        } else if ((c->in_heap = malloc(c->in_len)) != NULL) {
            memcpy(c->in_heap, src, c->in_len);
            c->in = c->in_heap;
        } else if (b) {
            c->rbuf = b;
            b->refs++;
        } else {
            c->state = RPC_CALL_RUNNING;
            if (!c->oneway)
                rpc_ctl_send(r, p, RPC_T_RESP, h->req_id, ORPC_ENOMEM, r->auth);
            rpc_call_free(r, c);
            return;
        }
        if (c->rbuf == NULL && b)
            r->st.copied++;
    } else {
        c->rbuf = b;
        if (b)
            b->refs++;
    }
    call_ready(r, c);
}

void rpc_server_on_bye(orpc_t *r, const rpc_hdr_t *h, cdt_peer_t src)
{
    if (!r->listen || !rpc_auth_equal(h->auth, r->auth)) {
        r->st.rejected_auth++;
        return;
    }
    orpc_peer_t *p = NULL;
    if (src != CDT_PEER_NONE && src != 0 && src < r->by_fa_cap)
        p = r->by_fa[src];
    if (p == NULL || p->alen != h->addr_len || memcmp(p->addr, h->addr, p->alen) != 0)
        p = rpc_peer_find(r, h->addr, h->addr_len);
    if (p) {
        p->bye = 1;
        rpc_peer_maybe_reclaim(r, p);
    }
}

/* An authenticated request that cannot be served is told why (ERANGE, EPROTO). */
void rpc_refuse_request(orpc_t *r, const rpc_hdr_t *h, cdt_peer_t src, int status)
{
    if (!r->listen || h->type != RPC_T_REQ || h->addr_len == 0 || h->addr_len > RPC_ADDR_MAX ||
        !rpc_auth_equal(h->auth, r->auth))
        return;
    orpc_peer_t *p = rpc_peer_of_request(r, src, h->addr, h->addr_len);
    if (p)
        rpc_ctl_send(r, p, RPC_T_RESP, h->req_id, status, r->auth);
}

/* Runs the handlers that became ready (never nested inside a handler). */
int rpc_dispatch(orpc_t *r)
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

RPC_EXPORT orpc_t *orpc_call_rpc(orpc_call_t *c)
{
    return rpc_top(c->rpc); /* the instance the application opened, not its context */
}

RPC_EXPORT int orpc_respond(orpc_call_t *c, int status, const void *out, size_t out_len)
{
    if (c == NULL || c->state == RPC_CALL_FREE || c->state == RPC_CALL_SENDING)
        return ORPC_EINVAL;
    if (c->coll) /* a collective call: the handler's part, answered with the tree's */
        return rpc_coll_respond(c, status, out, out_len);
    return rpc_respond(c, status, out, out_len, 0);
}

int rpc_respond(struct orpc_call *c, int status, const void *out, size_t out_len, uint8_t xflags)
{
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = ORPC_OK;
    if (c->bulk_done < c->bulk_issued && rpc_bulk_wait_locked(r, c) == ORPC_EPEER &&
        status == ORPC_OK)
        status = ORPC_EPEER;
    if (c->oneway) {
        /* A one-way call: nobody waits for an answer. */
        call_release_input(r, c);
        rpc_call_free(r, c);
        rpc_unlock(r);
        return ORPC_OK;
    }
    const void *pay = NULL;
    uint8_t flags = 0;
    if (out_len > c->resp_max && c->has_out_desc && out_len <= r->max_arg) {
        /* Above the eager limit: pushed into the caller's result buffer (cut
         * to its size, as an eager one is), then the response says how long. */
        size_t n = out_len < c->out_desc.len ? out_len : (size_t)c->out_desc.len;
        int prc = rpc_bulk_push_result(r, c, out, n);
        if (prc == ORPC_OK) {
            for (int i = 0; i < 8; i++)
                c->out_inl[i] = (uint8_t)((uint64_t)out_len >> (8 * i));
            flags = RPC_F_PUSHED;
            pay = c->out_inl;
            out_len = 8;
        } else {
            status = prc;
            out_len = 0;
            rc = prc;
        }
    } else if (out_len > c->resp_max) {
        if (out_len > r->max_arg)
            shm_error("orpc_respond: response of %zu bytes exceeds SHMEM_RPC_MAX_ARG (%zu); "
                      "answering ORPC_ERANGE", out_len, r->max_arg);
        else
            shm_error("orpc_respond: response of %zu bytes exceeds the %zu bytes the caller "
                      "can receive eagerly (SHMEM_RPC_MAX_RESP) and the caller's result buffer "
                      "is no larger; answering ORPC_ERANGE", out_len, c->resp_max);
        status = ORPC_ERANGE;
        out_len = 0;
        rc = ORPC_ERANGE;
    }
    if (flags) {
        /* the payload is the length, in out_inl */
    } else if (out_len > 0 && out_len <= RPC_INLINE) {
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
    rpc_hdr_t h = {.type = RPC_T_RESP, .flags = (uint8_t)(flags | xflags), .req_id = c->req_id,
                   .status = status,
                   .payload_len = (uint32_t)out_len};
    memcpy(h.auth, r->auth, RPC_AUTH_LEN);
    size_t hl = rpc_wire_encode(c->hdr, sizeof(c->hdr), &h);
    c->state = RPC_CALL_SENDING;
    c->resp_hl = hl;
    c->resp_pay = pay;
    c->resp_len = out_len;
    shm_status_t st = SHM_ERR_AGAIN;
    for (int tries = 0; tries < 4 && st == SHM_ERR_AGAIN; tries++) {
        st = rpc_msg_send(r, c->peer, c->hdr, hl, pay, out_len, c);
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
void rpc_resend(orpc_t *r)
{
    struct orpc_call *c, *keep_head = NULL, *keep_tail = NULL;
    uint64_t now = 0;
    while ((c = fifo_pop(&r->resend_head, &r->resend_tail)) != NULL) {
        shm_status_t st = rpc_msg_send(r, c->peer, c->hdr, c->resp_hl, c->resp_pay,
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

RPC_EXPORT int orpc_run_queued(orpc_t *r, int max, int timeout_ms)
{
    if (r == NULL)
        return ORPC_EINVAL;
    uint64_t until = rpc_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
    rpc_idle_t idle = RPC_IDLE_INIT;
    int n = 0;
    int nctx = r->ctxs ? r->nctx : 1;
    unsigned turn = 0;
    while (n < max) {
        /* Service contexts: each in turn, so none starves. */
        struct orpc_call *c = NULL;
        for (int k = 0; k < nctx && c == NULL; k++) {
            orpc_t *x = r->ctxs ? r->ctxs[turn++ % (unsigned)nctx] : r;
            rpc_lock(x);
            if (!x->thr_running && x->ep)
                rpc_progress_once(x);
            c = fifo_pop(&x->queued_head, &x->queued_tail);
            if (c)
                c->state = RPC_CALL_RUNNING;
            rpc_unlock(x);
        }
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
