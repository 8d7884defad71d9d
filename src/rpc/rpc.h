// SPDX-License-Identifier: BSD-3-Clause
/*
 * Internals of data services: instance, peers, requests, calls, receive pool,
 * bulk. Everything on the small-RPC path comes from preallocated pools; the
 * lock is taken only when a progress thread exists.
 */
#ifndef SHM_RPC_RPC_H
#define SHM_RPC_RPC_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "conduit/conduit.h"
#include "ofishmem_rpc.h"
#include "rpc/sq.h"
#include "rpc/wire.h"

#define RPC_EXPORT __attribute__((visibility("default")))

/* Arguments and results up to this size are copied into preallocated slots. */
#define RPC_INLINE 1024
#define RPC_NHANDLERS 256 /* open-addressing table; ids are FNV-1a of names */
#define RPC_NCTL 32       /* control messages in flight (goodbyes, refusals) */
#define RPC_PEER_HASH 1024
#define RPC_MAX_PEERS 1024 /* then the least recently heard idle peer is forgotten */
/* libfabric shm (1.17) keeps a freed peer slot's connection state (the id
 * the old peer gave us, "name sent") and gives the slot to the next address
 * inserted when it was the last one given: a server looked up right after
 * the previous one was forgotten is never told who we are (every send
 * EAGAIN: the staging soak's 60 s stall) or is sent a stale id (a request
 * above the inject size crashed it). So on shm a forgotten peer's entry is
 * freed only once this many more have been forgotten: new addresses take
 * slots never used, until shm's cursor has gone round its 256 slots. */
#define RPC_SHM_KEPT_MAX 8
#define RPC_SHM_SLOTS 256
/* Service contexts of one server instance (each its own endpoint). Their
 * names travel in the address, which stays below ORPC_ADDR_STRLEN. */
#define RPC_MAX_CTX 16
/* Contexts a client takes from one address (joined services: orpc_addr_join). */
#define RPC_MAX_PEER_CTX 64
#define RPC_SEND_PATIENCE_NS (5ull * 1000000000ull)
/* A transfer to a peer that never answers is abandoned this long after its deadline. */
#define RPC_BULK_GRACE_NS (2ull * 1000000000ull)
/* A transfer waiting longer than this makes the server check its client's
 * life (a same-host client's pid), and again at each such interval. */
#define RPC_BULK_PROBE_NS (500ull * 1000000ull)
/* An exposure not registered with the provider (a same-host server copies
 * it) carries key 0 and remote address = address ^ this: never a real
 * one (the provider's address is the same, or an offset below 2^56), so a
 * server that would use the provider refuses it instead of sending a bad
 * key and address. */
#define RPC_BULK_NOREG (1ull << 63)
/* A client's same-host name (no fabric endpoint behind it): "orpc-sq\0",
 * its pid (8 bytes), 8 random bytes. A server puts such a peer in no
 * address vector; it answers it over the same-host queues only. */
#define RPC_SQ_NAME_LEN 24
static inline int rpc_sq_name_is(const uint8_t *a, size_t n)
{
    return n == RPC_SQ_NAME_LEN && memcmp(a, "orpc-sq", 8) == 0;
}

/* Request flags (rpc_hdr_t.flags): bulk descriptors of RPC_BULK_WIRE bytes
 * lead the payload, in this order, when their bit is set. */
#define RPC_F_ARG_BULK 0x1 /* REQ: the arguments, pulled by the server (payload: the descriptor) */
#define RPC_F_OUT_BULK 0x2 /* REQ: the caller's result buffer, for results above the eager limit */
#define RPC_F_PUSHED 0x4   /* RESP: the result was pushed; payload: its full length (u64) */
#define RPC_F_ONEWAY 0x8   /* REQ: no response is sent (orpc_send) */
/* REQ: a collective call (coll.c): the payload starts with rpc_coll_hdr_t
 * and the members' address. RESP: its answer; with a negative status the
 * payload is the u32 number of the member that failed. */
#define RPC_F_COLL 0x10
/* Bytes a request may carry beyond its arguments: the descriptors above. */
#define RPC_REQ_EXTRA (2 * RPC_BULK_WIRE)

/* Every object whose address travels as a libfabric op context starts with its kind. */
typedef enum { RPC_OBJ_RBUF = 1, RPC_OBJ_REQ, RPC_OBJ_CALL, RPC_OBJ_CTL, RPC_OBJ_BULK } rpc_obj_kind_t;

typedef struct {
    int kind;      /* RPC_OBJ_RBUF */
    char *buf;
    size_t len;
    int multi;     /* FI_MULTI_RECV buffer */
    int posted;    /* the provider may still write into it */
    int refs;      /* calls whose arguments lie in it */
    int overflowed; /* a message reached into the overflow area behind it */
} rpc_rbuf_t;

struct orpc_peer {
    orpc_t *rpc;
    uint8_t addr[RPC_ADDR_MAX];
    uint8_t alen;
    uint8_t used;
    uint8_t bye;          /* it said goodbye, or we did */
    uint8_t failed;       /* a send to it failed */
    uint8_t talked;       /* client side: a request went to it (else it does not know us) */
    uint8_t sq_gone;      /* its same-host connection ended: it is dead, send nothing */
    uint8_t sq_self;      /* client side: it knows us by our same-host name (sq_self) */
    cdt_peer_t fa;        /* CDT_PEER_NONE: not in the address vector (same-host only) */
    rpc_sq_conn_t *sq;    /* same-host queues to it (NULL: through the provider) */
    uint8_t auth[RPC_AUTH_LEN]; /* client side: the service's key */
    size_t max_req;       /* client side: the server's request limit (0: not advertised) */
    int refs;             /* lookups the application holds */
    int inflight;         /* calls served for it + requests and control messages to it */
    /* Client side, a server with several contexts: the handle orpc_lookup
     * returns is a service handle (allocated apart, in no table, nctx > 1)
     * holding one reference to the peer of each context; calls through it
     * go round robin. A context-0 peer points back to its handle (svc). */
    orpc_peer_t **ctxp;
    int nctx;
    unsigned rr;
    orpc_peer_t *svc;
    char *coll_addr;      /* a service handle: the address looked up (collective calls) */
    int next;             /* hash chain / free list (index, -1 ends) */
    uint64_t last_ns;
};

enum { RPC_REQ_FREE = 0, RPC_REQ_ACTIVE, RPC_REQ_ZOMBIE };

struct orpc_req {
    int kind;             /* RPC_OBJ_REQ */
    int state;
    uint32_t idx, gen;
    orpc_t *rpc;
    orpc_peer_t *peer;
    int sent, answered;
    int responded;        /* the server answered (not a local failure) */
    int status;
    void *out;
    size_t out_cap, out_len;
    uint64_t send_ns, deadline_ns;
    int next_free;
    struct orpc_bulk *arg_bulk, *out_bulk; /* the library's own exposures for this call */
    int32_t *coll_failed_p; /* a collective call: the failed member an answer names */
    void *pay_heap;       /* payload memory the request owns (freed with it) */
    uint8_t hdr[RPC_HDR_MAX + RPC_REQ_EXTRA]; /* header, then the descriptors of flags */
    uint8_t inl[RPC_INLINE];
};

/* PULLING: its arguments are being pulled; dispatched when they are in. */
enum { RPC_CALL_FREE = 0, RPC_CALL_PULLING, RPC_CALL_QUEUED, RPC_CALL_RUNNING, RPC_CALL_SENDING };

typedef struct rpc_handler {
    uint64_t id;
    orpc_handler_t fn;
    void *arg;
    unsigned flags;
    int used;
    int coll_op;            /* ORPC_COLL_*: how collective calls combine results */
    orpc_combine_t combine;
    void *combine_arg;
} rpc_handler_t;

struct orpc_call {
    int kind;             /* RPC_OBJ_CALL */
    int state;
    orpc_t *rpc;
    orpc_peer_t *peer;
    const rpc_handler_t *h;
    rpc_rbuf_t *rbuf;     /* arguments lie in this receive buffer (NULL: copied) */
    const void *in;
    size_t in_len;
    void *in_heap, *out_heap;
    uint64_t req_id;
    size_t resp_max;      /* largest response payload the caller can receive */
    size_t pulled;        /* bytes of in_heap counted in the instance's arg_mem */
    int has_out_desc;     /* the caller exposed its result buffer (out_desc) */
    int oneway;           /* no response (orpc_send) */
    orpc_bulk_desc_t out_desc;
    uint64_t arrival_ns;
    int bulk_kind;        /* RPC_OBJ_BULK: op context of this call's transfers */
    int bulk_err;
    int zombie;           /* answered, but transfers still out: freed when they end */
    uint64_t bulk_issued, bulk_done, bulk_deadline;
    uint64_t bulk_busy_ns;  /* when the transfers now in flight began (bulk_raw.c) */
    uint64_t bulk_probe_ns; /* next check of the client's life (0: not waiting yet) */
    uint64_t bulk_lost_ns;  /* when the client was found dead (0: not) */
    uint64_t send_deadline; /* response waiting for the provider (resend list) */
    size_t resp_hl, resp_len;
    const void *resp_pay;
    struct rpc_coll *coll; /* a collective call being served (coll.c) */
    int coll_rank, coll_n; /* its member number (-1: none) and members */
    struct orpc_call *next;
    uint8_t hdr[RPC_HDR_MAX];
    uint8_t in_inl[RPC_INLINE];
    uint8_t out_inl[RPC_INLINE];
};

typedef struct {
    int kind;             /* RPC_OBJ_CTL */
    int busy;
    orpc_peer_t *peer;
    uint8_t hdr[RPC_HDR_MAX];
} rpc_ctl_t;

/* A registration of the bulk cache (or a private one when the cache is off). */
typedef struct rpc_mr {
    char *base;
    size_t len;
    unsigned access;
    cdt_bulk_reg_t reg;
    int refs;
    uint64_t lru;
    struct rpc_mr *next;
} rpc_mr_t;

struct orpc_bulk {
    orpc_t *rpc;
    char *buf;
    size_t len;
    unsigned access;
    int ttl_ms;
    uint64_t start_ns, first_enc_ns;
    cdt_bulk_reg_t reg;   /* key (or raw key), rbase of buf */
    rpc_mr_t *mr;         /* NULL: symmetric memory or empty */
    int registered;       /* with the provider (lazy while same-host servers copy: bulk.c) */
    struct orpc_bulk *lz_prev, *lz_next; /* on the instance's bulk_lazy while not registered */
    int lazy;
    uint64_t release_ns;  /* deferred release (the library's own exposures) */
    struct orpc_bulk *next;
    /* Scatter-gather (bulk.c, issue 18): kind RPC_BULK_LIST: nseg segments
     * in segs (each its own registration); RPC_BULK_STRIDED: buf/len/mr/reg
     * above cover the span of rows x row_bytes every pitch bytes. */
    int kind;
    size_t nseg;
    struct rpc_bulk_lseg *segs;
    size_t rows, row_bytes, pitch;
    size_t size_told;     /* orpc_bulk_encoded_size's answer (0: not asked) */
};

struct orpc {
    cdt_msg_ep_t *ep;
    /* Service contexts: the instance the application opened holds them all
     * (ctxs[0] is itself); each is a whole instance with its own endpoint,
     * receive buffers, same-host queue set, lock and progress thread. */
    struct orpc *parent;  /* context > 0: the instance that owns it */
    struct orpc **ctxs;   /* NULL: one context */
    int nctx, ctx_idx;
    rpc_sq_t *sq;         /* same-host transport (NULL: off) */
    rpc_sq_conn_t *sq_from; /* the connection the message being handled came through */
    void **sq_sent;       /* sends the rings took, their completions not yet handled */
    int sq_nsent;
    unsigned sq_tick, sweep_tick; /* provider polls skipped; progress calls since a sweep */
    int prov_heard;       /* the provider gave events since the progress thread last looked */
    uint64_t prov_last_ns; /* when it last saw that (progress.c thread_idle) */
    int listen, multi_recv, mr_cache_on, use_thread;
    char prov[64];
    uint8_t self_addr[RPC_ADDR_MAX];
    uint8_t self_alen;
    /* A client whose first servers were on this host over the same-host
     * queues opens no fabric endpoint until a peer needs one (instance.c,
     * rpc_need_endpoint); it names itself to those servers by this
     * (RPC_SQ_NAME_LEN bytes: rpc_sq_name_is) for the rest of its life. */
    uint8_t sq_self[RPC_SQ_NAME_LEN];
    uint8_t sq_self_alen;
    uint8_t auth[RPC_AUTH_LEN];
    char auth_path[256];
    int auth_written;
    size_t max_req, max_resp, msg_max;
    size_t max_arg;       /* largest argument or result moved by the library's bulk path */
    size_t arg_mem, arg_mem_max; /* bytes of pulled arguments held now / at most */
    int32_t resp_cap;     /* largest response payload we can receive */
    int timeout_ms, bulk_ttl_ms, mr_cache_max;
    uint64_t peer_idle_ns;

    pthread_mutex_t lock;
    int locking;
    pthread_t thr;
    volatile int thr_stop;
    int thr_running;

    char *rbuf_mem;       /* nrbufs x (buffer + overflow), one mapping */
    size_t rbuf_map_len, rbuf_overflow;
    rpc_rbuf_t *rbufs;
    int nrbufs, nposted;

    rpc_handler_t handlers[RPC_NHANDLERS];

    orpc_peer_t *peers;
    int npeers, peer_free;
    int peer_hash[RPC_PEER_HASH];
    orpc_peer_t **by_fa;
    size_t by_fa_cap;
    cdt_peer_t kept[RPC_SHM_KEPT_MAX]; /* forgotten peers' entries, oldest first (shm) */
    int nkept, shm_wrap_warned;
    uint64_t av_inserts;  /* new addresses inserted (shm: slots taken) */

    struct orpc_req *reqs;
    int nreqs, req_free;
    uint64_t last_failed_send_ns;

    struct orpc_call *calls;
    int ncalls;
    struct orpc_call *call_free;
    struct orpc_call *ready_head, *ready_tail;
    struct orpc_call *queued_head, *queued_tail;
    struct orpc_call *resend_head, *resend_tail;
    rpc_ctl_t ctl[RPC_NCTL];

    rpc_mr_t *mrs;
    int nmrs;
    uint64_t lru_clock;
    orpc_bulk_t *bulk_free;
    orpc_bulk_t *bulk_deferred; /* own exposures kept until their client deadline */
    orpc_bulk_t *bulk_lazy;     /* live exposures not registered (orpc_mr_cache_evict sees them) */
    uint64_t rma_errs_seen;
    struct rpc_rawmap **rawmaps; /* raw keys of clients mapped here (bulk_raw.c), hashed */
    int nrawmaps;

    orpc_stats_t st;
    uint64_t last_sweep_ns;
    int harvest_more; /* the last rpc_harvest may have left events (a full batch) */

    /* Collective calls being served (coll.c), spare ones, and the member
     * tables of the joined addresses they came with. */
    struct rpc_coll *coll_live, *coll_free;
    struct rpc_coll_mem *coll_mem[8];
};

static inline uint64_t rpc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void rpc_lock(orpc_t *r)
{
    if (r->locking)
        pthread_mutex_lock(&r->lock);
}

static inline void rpc_unlock(orpc_t *r)
{
    if (r->locking)
        pthread_mutex_unlock(&r->lock);
}

/* The instance the application opened (a context's owner, else itself). */
static inline orpc_t *rpc_top(orpc_t *r)
{
    return r->parent ? r->parent : r;
}

/* Status translation: the one place shm_status_t becomes ORPC_E*. */
int rpc_rc(shm_status_t st);

/* Reads and handles up to a batch of network events (no handler runs). */
int rpc_harvest(orpc_t *r);
/*
 * Waits a little when a poll found nothing: spin, then yield for up to
 * RPC_IDLE_YIELD_NS, then sleep, longer the longer it lasts. The yield phase
 * is timed, not counted: a transfer that needs this process's progress
 * (tcp;ofi_rxm moves a server's push into our memory only while we poll)
 * must not find it asleep; a 20 us nanosleep takes >100 us on a VM.
 */
typedef struct rpc_idle {
    unsigned n;     /* polls that found nothing */
    uint64_t since; /* when the yield phase began (0: not yet) */
} rpc_idle_t;
#define RPC_IDLE_INIT {0, 0}
#define RPC_IDLE_YIELD_NS 2000000ull
void rpc_idle(rpc_idle_t *idle);
/* The same, sleeping on a same-host doorbell when there is one (c: the
 * connection waited on; NULL: any, for a server), and noticing dead servers. */
void rpc_idle_on(rpc_idle_t *idle, orpc_t *r, rpc_sq_conn_t *c);
static inline void rpc_idle_reset(rpc_idle_t *idle)
{
    idle->n = 0;
    idle->since = 0;
}

/*
 * The one place a message leaves an instance (request, response, control).
 * The only other wire paths are rpc_harvest (receives and completions) and
 * bulk_issue in bulk.c (transfers): a per-peer transport hooks in there.
 */
static inline shm_status_t rpc_msg_send(orpc_t *r, orpc_peer_t *p, const void *hdr, size_t hl,
                                        const void *pay, size_t len, void *ctx)
{
    if (p->sq) {
        /* Same host: into the peer's ring, done at once (the completion is
         * handled by the next harvest, like the provider's). */
        int k = rpc_sq_send(p->sq, hdr, hl, pay, len);
        if (k == 0) {
            r->sq_sent[r->sq_nsent++] = ctx;
            return SHM_OK;
        }
        if (k == 1)
            return SHM_ERR_AGAIN;
        if (k == -2)
            return SHM_ERR_FABRIC;
        /* Too large for the ring: through the provider. */
    } else if (p->sq_gone) {
        return SHM_ERR_FABRIC;
    }
    if (p->fa == CDT_PEER_NONE) /* a same-host-only peer: no provider route */
        return SHM_ERR_FABRIC;
    return cdt_msg_send(r->ep, p->fa, hdr, hl, pay, len, ctx);
}

/* Instances (instance.c). */
int rpc_open_endpoint(orpc_t *r, const char *prov);
/* A client's first lookup (lock held): the same-host queues alone when addr
 * offers them (no fabric endpoint), else the endpoint on prov. */
int rpc_open_client(orpc_t *r, const char *prov, const char *addr);
/* The fabric endpoint, opened now if this client has none yet (lock held). */
int rpc_need_endpoint(orpc_t *r);
/* How this client names itself to p (its same-host name or its endpoint's). */
static inline const uint8_t *rpc_self_name(const orpc_t *r, const orpc_peer_t *p,
                                           uint8_t *alen_p)
{
    if (p->nctx > 1) /* a service handle: as its contexts know us */
        p = p->ctxp[0];
    if (p->sq_self) {
        *alen_p = r->sq_self_alen;
        return r->sq_self;
    }
    *alen_p = r->self_alen;
    return r->self_addr;
}
/* Stops an instance's progress thread, if it has one. */
void rpc_thread_stop(orpc_t *r);
/* orpc_stats of one context. */
int rpc_stats_one(orpc_t *r, orpc_stats_t *s);
/* Options after the name: "/max_req=N". 0 when absent; -1 when malformed. */
long long rpc_addr_max_req(const char *addr);

/* Peers and control messages (peer.c). */
orpc_peer_t *rpc_peer_find(orpc_t *r, const uint8_t *addr, size_t alen);
orpc_peer_t *rpc_peer_new(orpc_t *r, const uint8_t *addr, size_t alen);
/* A peer made while there was no endpoint, or named by a client's same-host
 * name, is in no address vector: put it there (lock held, endpoint open). */
int rpc_peer_to_fabric(orpc_t *r, orpc_peer_t *p);
/* Client: how a server just looked up is reached (same-host name, or the
 * fabric: the endpoint opened now if needed). Lock held. */
int rpc_peer_route(orpc_t *r, orpc_peer_t *p);
void rpc_peer_reclaim(orpc_t *r, orpc_peer_t *p);
/* Forget a peer as soon as nothing refers to it any more. */
void rpc_peer_maybe_reclaim(orpc_t *r, orpc_peer_t *p);
orpc_peer_t *rpc_peer_of_request(orpc_t *r, cdt_peer_t src, const uint8_t *addr, size_t alen);
/* A header-only message: a refusal (RESP with status) or a goodbye. Best effort. */
void rpc_ctl_send(orpc_t *r, orpc_peer_t *p, int type, uint64_t req_id, int status,
                  const uint8_t *auth);
void rpc_ctl_done(orpc_t *r, rpc_ctl_t *c, int failed);

/* Server (server.c). */
void rpc_server_on_req(orpc_t *r, rpc_rbuf_t *b, const rpc_hdr_t *h, cdt_peer_t src);
void rpc_server_on_bye(orpc_t *r, const rpc_hdr_t *h, cdt_peer_t src);
/* An authenticated request that cannot be served is told why (ERANGE, EPROTO). */
void rpc_refuse_request(orpc_t *r, const rpc_hdr_t *h, cdt_peer_t src, int status);
/* A call's transfers all ended: frees a zombie, dispatches pulled arguments. */
void rpc_call_bulk_end(orpc_t *r, struct orpc_call *c);
/* Transfers of c wait (now): is its client dead? Past each RPC_BULK_PROBE_NS
 * of waiting, on a pid-named same-host provider (libfabric shm), its pid is
 * checked. Sets peer->failed. */
int rpc_bulk_peer_lost(orpc_t *r, struct orpc_call *c, uint64_t now);
/* Give c's transfers up (now)? Past the deadline + grace, or RPC_BULK_PROBE_NS
 * after its client was found dead (the provider may still end them first). */
int rpc_bulk_give_up(orpc_t *r, struct orpc_call *c, uint64_t now);
/* Runs the handlers that became ready (never nested inside a handler). */
int rpc_dispatch(orpc_t *r);
/* Responses the provider refused for now: try again, give up on dead peers. */
void rpc_resend(orpc_t *r);

/* Client (client.c). */
void rpc_req_free(orpc_t *r, struct orpc_req *q);
/* A peer for a server address, one more reference (lock held). */
int rpc_peer_lookup(orpc_t *r, const char *addr, const uint8_t key[RPC_AUTH_LEN],
                    orpc_peer_t **peer_p);
/* One reference less: at none, a goodbye and the peer is forgotten. */
void rpc_peer_unref(orpc_t *r, orpc_peer_t *p);

/* Service contexts (ctx.c). */
/* Appends "/ctx=..." naming contexts 1..N-1 to context 0's address. */
int rpc_ctx_addr_opt(orpc_t *r, char *buf, size_t len);
/* The handle for the server at addr whose context 0 is p (lock held): p
 * itself, or a service handle over every context (p's reference moves to it). */
int rpc_ctx_lookup(orpc_t *r, orpc_peer_t *p, const char *addr, orpc_peer_t **svc_p);
/* One reference less to a service handle: at none, its contexts go too. */
void rpc_ctx_unref(orpc_t *r, orpc_peer_t *svc);
void rpc_client_on_resp(orpc_t *r, const rpc_hdr_t *h);
/* Member i of the service at addr into one (i < 0: none); the member count or ORPC_EADDR. */
int rpc_ctx_member(const char *addr, int i, char *one, size_t len);

/* Collective calls (coll.c). */
/* A request with RPC_F_COLL: its tree state, arguments set for the handler. */
int rpc_coll_begin(orpc_t *r, struct orpc_call *c, const rpc_hdr_t *h);
/* Forwards to children, collects their answers, answers when all are in. */
int rpc_coll_progress(orpc_t *r);
/* orpc_respond of a collective call's handler: its own part of the result. */
int rpc_coll_respond(struct orpc_call *c, int status, const void *out, size_t out_len);
/* Closing: the members' peers are released (goodbyes, except to our own contexts). */
void rpc_coll_close(orpc_t *r);
void rpc_coll_fini(orpc_t *r);
/* The answer of a call (orpc_respond's body); xflags: RPC_F_COLL. */
int rpc_respond(struct orpc_call *c, int status, const void *out, size_t out_len,
                uint8_t xflags);
const rpc_handler_t *rpc_handler_find(const orpc_t *r, uint64_t id);
/* Starts a request whose payload leads with pre (prelen bytes, after the
 * header: RPC_F_COLL), then pay. Owns pay_heap (freed with the request)
 * once it returns ORPC_OK; failed_p gets a collective answer's failed member. */
int rpc_req_start_coll(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *pre, size_t prelen,
                       const void *pay, size_t pay_len, void *pay_heap, void *out,
                       size_t out_cap, int timeout_ms, int32_t *failed_p, struct orpc_req **q_p);

/* Progress (progress.c). */
int rpc_progress_once(orpc_t *r);
/* orpc_progress of one context. */
int rpc_progress_one(orpc_t *r, int timeout_ms);
void *rpc_progress_main(void *arg);

/* Receive pool (pool.c). */
int rpc_pool_init(orpc_t *r);
void rpc_pool_fini(orpc_t *r);
/* Posts a buffer again once the provider and every call are done with it. */
void rpc_rbuf_maybe_repost(orpc_t *r, rpc_rbuf_t *b);
/* Notes a message that reached into the overflow area behind its buffer. */
void rpc_rbuf_note_end(rpc_rbuf_t *b, const void *msg, size_t len);

/* Auth (auth.c). */
int rpc_auth_parse_hex(const char *hex, uint8_t key[RPC_AUTH_LEN]);
void rpc_auth_to_hex(const uint8_t key[RPC_AUTH_LEN], char hex[2 * RPC_AUTH_LEN + 1]);
int rpc_auth_random(uint8_t key[RPC_AUTH_LEN]);
int rpc_auth_write_file(const char *path, const uint8_t key[RPC_AUTH_LEN]);
int rpc_auth_read_file(const char *path, uint8_t key[RPC_AUTH_LEN]);
/* Key for a lookup: hex, "@path", or NULL for the environment. */
int rpc_auth_resolve(const char *spec, uint8_t key[RPC_AUTH_LEN]);

/* Bulk (bulk.c: client exposures; bulk_xfer.c: server transfers). */
void rpc_bulk_fini(orpc_t *r);
/* Checks a descriptor from a request of peer p that arrived at arrival_ns. */
int rpc_bulk_check(orpc_t *r, orpc_peer_t *p, uint64_t arrival_ns, const void *wire,
                   orpc_bulk_desc_t *d);
/* The same for a descriptor of any kind within avail bytes (bulk_xfer.c). */
int rpc_bulk_check_n(orpc_t *r, orpc_peer_t *p, uint64_t arrival_ns, const void *wire,
                     size_t avail, orpc_bulk_desc_t *d);
/* Starts pulling a call's arguments (state RPC_CALL_PULLING) into buf. */
int rpc_bulk_pull_args(orpc_t *r, struct orpc_call *c, const orpc_bulk_desc_t *d, void *buf);
/* Pushes a result into the caller's buffer (c->out_desc) and waits for it. */
int rpc_bulk_push_result(orpc_t *r, struct orpc_call *c, const void *buf, size_t len);
/* orpc_bulk_encode with the lock held (the library's own exposures, client.c). */
int rpc_bulk_encode_locked(orpc_bulk_t *b, orpc_peer_t *p, void *out);
/* The library's own exposures: released now, or kept until start + 2 x ttl. */
void rpc_bulk_drop(orpc_t *r, orpc_bulk_t *b);
void rpc_bulk_defer(orpc_t *r, orpc_bulk_t *b);
/* Releases deferred exposures whose time has come (all of them when force). */
void rpc_bulk_reap(orpc_t *r, int force);
int rpc_bulk_wait_locked(orpc_t *r, struct orpc_call *c);
/* Raw memory keys (bulk_raw.c): a client's raw key mapped for transfers
 * under descriptors usable until deadline (lock held); ORPC_EAGAIN when
 * too many are in use. */
int rpc_rawmap_get(orpc_t *r, const rpc_bulk_rawkey_t *k, size_t len, uint64_t deadline,
                   uint64_t *key_p);
/* Unmaps mappings nothing can use any more (every one: force). */
void rpc_rawmap_reclaim(orpc_t *r, uint64_t now, int force);
void rpc_rawmap_fini(orpc_t *r);
/* Returns a call to the pool (or keeps it as a zombie while transfers are out). */
void rpc_call_free(orpc_t *r, struct orpc_call *c);

#endif /* SHM_RPC_RPC_H */
