// SPDX-License-Identifier: BSD-3-Clause
/*
 * Progress: completions of the message endpoint become receives, errors and
 * transfer ends; the progress thread and orpc_progress drive them.
 */
#include <sched.h>
#include <stddef.h>
#include <time.h>

#include "core/log.h"
#include "rpc/rpc.h"

/* ---------------------------------------------------------------- events */

/* One message, from a receive buffer (b) or a same-host queue (b NULL: the
 * request's arguments are copied out, the ring slot goes back at once). */
static void on_msg(orpc_t *r, rpc_rbuf_t *b, const void *msg, size_t len, cdt_peer_t src)
{
    rpc_hdr_t h;
    size_t maxp = (r->max_req > r->max_resp ? r->max_req : r->max_resp) + RPC_REQ_EXTRA;
    rpc_wire_rc_t rc = rpc_wire_decode(msg, len, maxp, &h);
    if (rc == RPC_WIRE_OK && h.type == RPC_T_REQ) {
        /* The descriptors of its flags lead the payload; the rest is arguments. */
        size_t extra = (h.flags & RPC_F_ARG_BULK ? RPC_BULK_WIRE : 0) +
                       (h.flags & RPC_F_OUT_BULK ? RPC_BULK_WIRE : 0);
        if (h.payload_len < extra ||
            ((h.flags & RPC_F_ARG_BULK) && h.payload_len != extra) ||
            (h.flags & ~(unsigned)(RPC_F_ARG_BULK | RPC_F_OUT_BULK | RPC_F_ONEWAY | RPC_F_COLL)) ||
            ((h.flags & RPC_F_COLL) && (h.flags & ~(unsigned)RPC_F_COLL)))
            rc = RPC_WIRE_LEN_BAD;
        else if (h.payload_len - extra > r->max_req)
            rc = RPC_WIRE_TOO_BIG;
    }
    if (rc == RPC_WIRE_OK) {
        if (h.type == RPC_T_REQ)
            rpc_server_on_req(r, b, &h, src);
        else if (h.type == RPC_T_RESP)
            rpc_client_on_resp(r, &h);
        else
            rpc_server_on_bye(r, &h, src);
    } else {
        if (rc == RPC_WIRE_TOO_BIG)
            r->st.oversized++;
        else
            r->st.malformed++;
        SHM_DEBUG(RPC, "message of %zu bytes dropped: %s", len, rpc_wire_rc_str(rc));
        /* A well-formed, authenticated header gets told why. */
        if (rc == RPC_WIRE_TOO_BIG || rc == RPC_WIRE_LEN_BAD)
            rpc_refuse_request(r, &h, src, rc == RPC_WIRE_TOO_BIG ? ORPC_ERANGE : ORPC_EPROTO);
    }
}

void rpc_sq_msg(orpc_t *r, rpc_sq_conn_t *c, const void *msg, size_t len)
{
    r->sq_from = c;
    on_msg(r, NULL, msg, len, CDT_PEER_NONE);
    r->sq_from = NULL;
}

/* A same-host connection ended (the other process is gone, or wrote garbage). */
void rpc_sq_lost(orpc_t *r, rpc_sq_conn_t *c)
{
    orpc_peer_t *p = c->peer;
    c->peer = NULL;
    if (p == NULL || p->sq != c)
        return;
    p->sq = NULL;
    p->sq_gone = 1;
    p->failed = 1;
    /* Our calls to it end now, not at their deadlines. */
    for (int i = 0; i < r->nreqs; i++) {
        struct orpc_req *q = &r->reqs[i];
        if (q->state == RPC_REQ_ACTIVE && q->peer == p && !q->answered) {
            q->answered = 1;
            q->status = ORPC_EPEER;
        }
    }
    rpc_peer_maybe_reclaim(r, p);
}

static void on_recv(orpc_t *r, rpc_rbuf_t *b, const cdt_msg_event_t *e)
{
    if (e->len > 0) {
        const void *msg = e->buf ? e->buf : b->buf;
        rpc_rbuf_note_end(b, msg, e->len);
        on_msg(r, b, msg, e->len, e->src);
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
                rpc_refuse_request(r, &h, CDT_PEER_NONE, ORPC_ERANGE);
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
            rpc_req_free(r, q);
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
        rpc_call_bulk_end(r, c);
        break;
    }
    case RPC_OBJ_CTL:
        rpc_ctl_done(r, e->ctx, 1);
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
            rpc_call_bulk_end(r, only);
        }
        break;
    }
    }
}

/* A send is complete (the provider's event, or a same-host ring took it). */
static void on_sent(orpc_t *r, void *ctx)
{
    int kind = *(int *)ctx;
    if (kind == RPC_OBJ_REQ) {
        struct orpc_req *q = ctx;
        q->sent = 1;
        if (q->state == RPC_REQ_ZOMBIE)
            rpc_req_free(r, q);
    } else if (kind == RPC_OBJ_CALL) {
        r->st.responses++;
        rpc_call_free(r, ctx);
    } else if (kind == RPC_OBJ_CTL) {
        rpc_ctl_done(r, ctx, 0);
    }
}

/* The same-host queues: sends they took, then messages in them. */
static int sq_harvest(orpc_t *r)
{
    int n = r->sq_nsent;
    while (r->sq_nsent > 0)
        on_sent(r, r->sq_sent[--r->sq_nsent]);
    return n + rpc_sq_poll(r);
}

int rpc_harvest(orpc_t *r)
{
    cdt_msg_event_t ev[16];
    if (r->bulk_deferred)
        rpc_bulk_reap(r, 0);
    int m = 0;
    if (r->sq) {
        m = sq_harvest(r);
        r->harvest_more = m > 0;
        /* With same-host peers the provider is polled every 16th time only:
         * its poll costs several ring polls (locks, a clock read), and
         * remote peers wait at most 15 ring polls longer. */
        if (rpc_sq_nconns(r) > 0 && (++r->sq_tick & 15) != 0)
            return m;
    }
    if (r->ep == NULL) /* a same-host-only client */
        return m;
    int n = cdt_msg_poll(r->ep, ev, 16);
    if (n > 0)
        r->prov_heard = 1; /* for the progress thread's sleep (thread_idle) */
    for (int i = 0; i < n; i++) {
        cdt_msg_event_t *e = &ev[i];
        if (e->kind == CDT_MSG_ERROR) {
            on_error(r, e);
            continue;
        }
        int kind = *(int *)e->ctx;
        if (e->kind == CDT_MSG_RECV && kind == RPC_OBJ_RBUF) {
            on_recv(r, e->ctx, e);
        } else if (kind == RPC_OBJ_REQ || kind == RPC_OBJ_CALL || kind == RPC_OBJ_CTL) {
            on_sent(r, e->ctx);
        } else if (kind == RPC_OBJ_BULK) {
            struct orpc_call *c = (struct orpc_call *)((char *)e->ctx -
                                                       offsetof(struct orpc_call, bulk_kind));
            c->bulk_done++;
            rpc_call_bulk_end(r, c);
        } else if (kind == RPC_OBJ_CTL) {
            rpc_ctl_done(r, e->ctx, 0);
        }
    }
    /* Fewer than a full batch: the provider had no more when it was read
     * (an error entry comes alone, whatever follows it). */
    r->harvest_more = m > 0 || n == 16 || (n > 0 && ev[n - 1].kind == CDT_MSG_ERROR);
    return n + m;
}

/* Idle clients are forgotten, so a server's memory stays flat. */
static void sweep(orpc_t *r, uint64_t now)
{
    if (now - r->last_sweep_ns < 200000000ull)
        return;
    r->last_sweep_ns = now;
    if (r->nrawmaps) /* raw keys of descriptors past their deadlines */
        rpc_rawmap_reclaim(r, now, 0);
    for (int i = 0; i < r->npeers; i++) {
        orpc_peer_t *p = &r->peers[i];
        if (p->used && p->refs == 0 && p->inflight == 0 && now - p->last_ns > r->peer_idle_ns)
            rpc_peer_reclaim(r, p);
    }
    /* Arguments whose pull overran its deadline: the caller is given up. */
    for (int i = 0; i < r->ncalls; i++) {
        struct orpc_call *c = &r->calls[i];
        if (c->state == RPC_CALL_PULLING && !c->zombie &&
            rpc_bulk_give_up(r, c, now)) {
            SHM_DEBUG(RPC, "pull of a call's arguments: the caller is dead or overran the "
                           "deadline: peer given up");
            c->peer->failed = 1;
            r->st.bulk_errors++;
            rpc_call_free(r, c);
        }
    }
}

int rpc_progress_once(orpc_t *r)
{
    int n = 0, k;
    if (r->resend_head)
        rpc_resend(r);
    /* Read again only after a full batch: on tcp an empty read of the
     * provider is a poll(2) (and the read of its wakeup pipe), and it
     * would stand between a request and its handler. */
    do {
        k = rpc_harvest(r);
        n += k;
    } while (k > 0 && r->harvest_more);
    if (r->coll_live) /* collective calls: forward, collect, answer */
        n += rpc_coll_progress(r);
    n += rpc_dispatch(r);
    /* The clock is read when idle, or every 256th busy progress. */
    if (n == 0 || (++r->sweep_tick & 255) == 0)
        sweep(r, rpc_now_ns());
    return n;
}

/* ------------------------------------------------- the thread's idleness */

/*
 * A progress thread that found nothing. With work out that needs this
 * process's progress (transfers, responses or requests in flight on the
 * provider: tcp;ofi_rxm moves data only while we poll): the waits' own
 * policy (rpc_idle_on: yield for RPC_IDLE_YIELD_NS, then sleep). With none,
 * it yields as long only when its last idle stretch was shorter (a busy
 * context: the next call comes soon, a sleeper's wake-up would cost it);
 * after a longer one (a context called now and then) it yields
 * RPC_THR_SPIN_NS and then sleeps: 4 contexts called 150 times a second
 * yielded 26-42 % of a core away in 2 ms stretches. A same-host client's
 * message wakes the sleeper (the doorbell); the provider is polled after
 * each sleep, every RPC_THR_SLEEP1_NS during the first
 * RPC_THR_SLEEP1_FOR_NS of its quiet, then as rpc_idle_on does. With
 * same-host queues the provider's quiet counts from its own last event, so
 * a context that only same-host clients call sleeps 1 ms at a time.
 */
#define RPC_THR_SPIN_NS 50000ull
#define RPC_THR_SLEEP1_NS 50000L
#define RPC_THR_SLEEP1_FOR_NS 2000000ull

/* Anything in flight that the provider moves only while we poll (lock held). */
static int work_out(orpc_t *r)
{
    if (r->resend_head || r->coll_live || r->bulk_deferred)
        return 1;
    for (int i = 0; i < RPC_NCTL; i++)
        if (r->ctl[i].busy)
            return 1;
    for (int i = 0; i < r->ncalls; i++) {
        const struct orpc_call *c = &r->calls[i];
        if (c->state == RPC_CALL_SENDING || c->state == RPC_CALL_PULLING ||
            c->bulk_done < c->bulk_issued)
            return 1;
    }
    for (int i = 0; i < r->nreqs; i++)
        if (r->reqs[i].state != RPC_REQ_FREE)
            return 1;
    return 0;
}

/* last_gap: how long the thread's previous idle stretch lasted. */
static void thread_idle(orpc_t *r, rpc_idle_t *idle, uint64_t last_gap)
{
    if (idle->n < 16) {
        idle->n++;
        return;
    }
    uint64_t now = rpc_now_ns();
    if (idle->since == 0)
        idle->since = now;
    uint64_t idle_ns = now - idle->since;
    if (idle_ns < (last_gap < RPC_IDLE_YIELD_NS ? RPC_IDLE_YIELD_NS : RPC_THR_SPIN_NS)) {
        sched_yield();
        return;
    }
    rpc_lock(r);
    int out = work_out(r);
    if (r->prov_heard) {
        r->prov_heard = 0;
        r->prov_last_ns = now;
    }
    rpc_unlock(r);
    if (out) {
        rpc_idle_on(idle, r, NULL);
        return;
    }
    uint64_t quiet = idle_ns;
    if (r->sq && now - r->prov_last_ns > quiet)
        quiet = now - r->prov_last_ns; /* same-host messages ring the doorbell */
    long ns = quiet < RPC_THR_SLEEP1_FOR_NS ? RPC_THR_SLEEP1_NS
              : quiet < 200000000ull        ? 200000
                                            : 1000000;
    if (r->sq) {
        rpc_sq_sleep(r, NULL, ns);
        return;
    }
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

void *rpc_progress_main(void *arg)
{
    orpc_t *r = arg;
    rpc_idle_t idle = RPC_IDLE_INIT;
    uint64_t last_gap = 0;
    while (!r->thr_stop) {
        /* The provider's own work (e.g. rxm serving a peer's read) runs
         * without our lock, so application calls are not held up by it. */
        cdt_msg_ep_t *ep = __atomic_load_n(&r->ep, __ATOMIC_ACQUIRE);
        if (ep) /* (a same-host-only client has none, until a peer needs one) */
            cdt_msg_progress(ep);
        rpc_lock(r);
        int n = rpc_progress_once(r);
        rpc_unlock(r);
        if (n) {
            /* (work right after work, e.g. a response's completion, is no gap) */
            if (idle.since)
                last_gap = rpc_now_ns() - idle.since;
            rpc_idle_reset(&idle);
        } else {
            thread_idle(r, &idle, last_gap);
        }
    }
    return NULL;
}

RPC_EXPORT int orpc_progress(orpc_t *r, int timeout_ms)
{
    if (r == NULL)
        return ORPC_EINVAL;
    if (r->ctxs == NULL)
        return rpc_progress_one(r, timeout_ms);
    /* Service contexts: each polled in turn, until one had something. */
    uint64_t until = timeout_ms > 0 ? rpc_now_ns() + (uint64_t)timeout_ms * 1000000ull : 0;
    rpc_idle_t idle = RPC_IDLE_INIT;
    for (;;) {
        int n = 0;
        for (int i = 0; i < r->nctx; i++)
            n += rpc_progress_one(r->ctxs[i], 0);
        if (n > 0 || timeout_ms <= 0 || rpc_now_ns() >= until)
            return n;
        rpc_idle(&idle);
    }
}

int rpc_progress_one(orpc_t *r, int timeout_ms)
{
    /* No clock read for a single poll (timeout 0): it costs as much as the poll. */
    uint64_t until = timeout_ms > 0 ? rpc_now_ns() + (uint64_t)timeout_ms * 1000000ull : 0;
    rpc_idle_t idle = RPC_IDLE_INIT;
    for (;;) {
        rpc_lock(r);
        int n = r->ep || r->sq ? rpc_progress_once(r) : 0;
        rpc_unlock(r);
        if (n > 0 || timeout_ms <= 0 || rpc_now_ns() >= until)
            return n;
        rpc_idle_on(&idle, r, NULL);
    }
}
