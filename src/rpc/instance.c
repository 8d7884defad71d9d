// SPDX-License-Identifier: BSD-3-Clause
/*
 * Data services: status codes, the env table for non-PE processes, idle
 * waiting, and an instance's life: open (pools, endpoint, progress thread),
 * published address, handler registration, statistics, close.
 */
#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "core/state.h"
#include "rpc/rpc.h"

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
    rpc_idle_on(idle, NULL, NULL);
}

void rpc_idle_on(rpc_idle_t *idle, orpc_t *r, rpc_sq_conn_t *c)
{
    if (idle->n++ < 16)
        return;
    if (r && r->sq) {
        rpc_lock(r);
        rpc_sq_check(r);
        rpc_unlock(r);
    }
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
    if (r && r->sq) {
        rpc_sq_sleep(r, c, ns);
        return;
    }
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

/* ------------------------------------------------------------ instances */

static int close_one(orpc_t *r);

RPC_EXPORT void orpc_opts_init(orpc_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->progress_thread = -1;
    o->multi_recv = -1;
    o->mr_cache = -1;
}

static int start_thread(orpc_t *r)
{
    if (!r->use_thread || r->thr_running)
        return ORPC_OK;
    if (pthread_create(&r->thr, NULL, rpc_progress_main, r) != 0)
        return ORPC_ENOMEM;
    r->thr_running = 1;
    return ORPC_OK;
}

/*
 * Messages stay within what the provider takes (its max_msg_size, 64 KiB
 * on some): the eager limits shrink so that a request with its header and
 * descriptors fits, and larger arguments and results go the bulk way, as
 * they do past the limits anyway. Servers advertise the smaller max_req.
 */
static int fit_msg_limits(orpc_t *r)
{
    size_t m = cdt_msg_max_size(r->ep) & ~(size_t)63; /* receive buffers stay aligned */
    if (m >= r->msg_max)
        return ORPC_OK;
    if (m < RPC_HDR_MAX + RPC_REQ_EXTRA + RPC_INLINE) {
        shm_error("provider %s takes messages of at most %zu bytes: too few for a request "
                  "(%d bytes of header and descriptors, then arguments)",
                  r->prov, m, RPC_HDR_MAX + RPC_REQ_EXTRA);
        return ORPC_ENOSYS;
    }
    size_t room = m - RPC_HDR_MAX - RPC_REQ_EXTRA;
    if (r->max_req > room)
        r->max_req = room;
    if (r->max_resp > room)
        r->max_resp = room;
    size_t eager = r->max_req > r->max_resp ? r->max_req : r->max_resp;
    r->msg_max = RPC_HDR_MAX + RPC_REQ_EXTRA + eager;
    r->resp_cap = (int32_t)(eager < INT32_MAX ? eager : INT32_MAX);
    SHM_INFO(RPC, "provider %s takes messages of at most %zu bytes: arguments above %zu and "
                  "results above %zu bytes go by bulk transfer (SHMEM_RPC_MAX_REQ/MAX_RESP "
                  "capped)",
             r->prov, m, r->max_req, r->max_resp);
    return ORPC_OK;
}

int rpc_open_endpoint(orpc_t *r, const char *prov)
{
    /* A client's rxm endpoint without the shared receive context costs ~3 ms
     * instead of ~280 ms (rxm reads this when the endpoint opens); a value the
     * user set stays. */
    if (!r->listen)
        setenv("FI_OFI_RXM_USE_SRX", "0", 0);
    cdt_msg_cfg_t cfg = {.provider = prov, .thread_safe = r->use_thread};
    cdt_msg_ep_t *ep = NULL;
    shm_status_t st = cdt_msg_open(&cfg, &ep);
    if (st != SHM_OK)
        return rpc_rc(st);
    snprintf(r->prov, sizeof(r->prov), "%s", cdt_msg_provider(ep));
    size_t alen = sizeof(r->self_addr);
    if ((st = cdt_msg_name(ep, r->self_addr, &alen)) != SHM_OK) {
        cdt_msg_close(ep);
        return rpc_rc(st);
    }
    r->self_alen = (uint8_t)alen;
    /* Published last: a same-host-only client's progress thread reads it
     * without the lock (rpc_progress_main). */
    __atomic_store_n(&r->ep, ep, __ATOMIC_RELEASE);
    int rc = fit_msg_limits(r);
    if (rc == ORPC_OK)
        rc = rpc_pool_init(r);
    if (rc != ORPC_OK)
        return rc;
    if (r->sq == NULL) /* (a same-host-only client has them already) */
        rpc_sq_open(r); /* same-host queues, unless off or unavailable */
    if ((rc = start_thread(r)) != ORPC_OK)
        return rc;
    SHM_INFO(RPC, "%s instance on %s (%s, %s domain)", r->listen ? "server" : "client", r->prov,
             r->multi_recv ? "multi-recv" : "one buffer per request",
             cdt_msg_in_pe_domain(r->ep) ? "the PE's" : "own");
    return ORPC_OK;
}

/* The name a same-host-only client gives itself (rpc_sq_name_is). */
static int make_sq_name(orpc_t *r)
{
    uint8_t *n = r->sq_self;
    memcpy(n, "orpc-sq", 8);
    uint64_t pid = (uint64_t)getpid();
    memcpy(n + 8, &pid, 8);
    if (getrandom(n + 16, 8, 0) != 8)
        return ORPC_EFABRIC;
    r->sq_self_alen = RPC_SQ_NAME_LEN;
    return ORPC_OK;
}

int rpc_open_client(orpc_t *r, const char *prov, const char *addr)
{
    if (r->ep || r->sq)
        return ORPC_OK;
    /* A server on this host that offers its queues: no fabric yet (opening
     * one loads and initialises libfabric and its providers: ~0.2 s here). */
    if (rpc_sq_addr_local(addr)) {
        snprintf(r->prov, sizeof(r->prov), "%s", prov);
        rpc_sq_open(r);
        if (r->sq && make_sq_name(r) == ORPC_OK) {
            int rc = start_thread(r);
            if (rc != ORPC_OK)
                return rc;
            SHM_INFO(RPC, "client instance: same-host queues only, no fabric endpoint "
                          "until a peer needs one");
            return ORPC_OK;
        }
        r->sq_self_alen = 0; /* the queues are off or unavailable: the provider */
    }
    return rpc_open_endpoint(r, prov);
}

int rpc_need_endpoint(orpc_t *r)
{
    if (r->ep)
        return ORPC_OK;
    SHM_INFO(RPC, "client instance: a peer needs the fabric (%s): opening its endpoint",
             r->prov);
    return rpc_open_endpoint(r, r->prov);
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

/* One instance; a service context (parent set) shares its owner's key. */
static int open_one(const orpc_opts_t *opts, orpc_t *parent, int idx, orpc_t **rpc_p)
{
    orpc_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return ORPC_ENOMEM;
    r->parent = parent;
    r->ctx_idx = idx;
    r->listen = opts->listen;
    r->multi_recv = opts->multi_recv >= 0 ? opts->multi_recv : shm_env_g.RPC_MULTI_RECV;
    r->mr_cache_on = opts->mr_cache >= 0 ? opts->mr_cache : shm_env_g.RPC_MR_CACHE;
    r->use_thread =
        opts->progress_thread >= 0 ? opts->progress_thread : shm_env_g.RPC_PROGRESS_THREAD;
    r->locking = r->use_thread;
    r->max_req = shm_env_g.RPC_MAX_REQ;
    r->max_resp = shm_env_g.RPC_MAX_RESP;
    r->max_arg = shm_env_g.RPC_MAX_ARG;
    r->arg_mem_max = shm_env_g.RPC_ARG_MEM;
    size_t eager = r->max_req > r->max_resp ? r->max_req : r->max_resp;
    r->msg_max = RPC_HDR_MAX + RPC_REQ_EXTRA + eager;
    /* What our receive buffers take, told to servers in every request. */
    r->resp_cap = (int32_t)(eager < INT32_MAX ? eager : INT32_MAX);
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
        if (parent)
            memcpy(r->auth, parent->auth, RPC_AUTH_LEN);
        else if ((rc = setup_auth(r, opts)) != ORPC_OK)
            goto fail;
        const char *prov = opts->provider && *opts->provider ? opts->provider
                                                             : shm_env_g.RPC_PROVIDER;
        if ((rc = rpc_open_endpoint(r, prov)) != ORPC_OK)
            goto fail;
    } else if (opts->provider && *opts->provider) {
        if ((rc = rpc_open_endpoint(r, opts->provider)) != ORPC_OK)
            goto fail;
    }
    *rpc_p = r;
    return ORPC_OK;
fail:
    close_one(r);
    return rc;
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
    long nctx = opts->contexts > 0 ? opts->contexts : shm_env_g.RPC_CONTEXTS;
    if (!opts->listen)
        nctx = 1; /* a client's calls go out of one endpoint */
    if (nctx < 1 || nctx > RPC_MAX_CTX) {
        shm_error("orpc_open: %ld service contexts (%s); want 1..%d", nctx,
                  opts->contexts > 0 ? "opts.contexts" : "SHMEM_RPC_CONTEXTS", RPC_MAX_CTX);
        return ORPC_EINVAL;
    }
    orpc_t *r;
    int rc = open_one(opts, NULL, 0, &r);
    if (rc != ORPC_OK || nctx == 1) {
        if (rc == ORPC_OK)
            *rpc_p = r;
        return rc;
    }
    if ((r->ctxs = calloc((size_t)nctx, sizeof(*r->ctxs))) == NULL) {
        orpc_close(r);
        return ORPC_ENOMEM;
    }
    r->ctxs[0] = r;
    r->nctx = 1;
    /* The other contexts on the provider context 0 got. */
    orpc_opts_t o = *opts;
    o.provider = r->prov;
    for (int i = 1; i < nctx; i++) {
        if ((rc = open_one(&o, r, i, &r->ctxs[i])) != ORPC_OK) {
            orpc_close(r);
            return rc;
        }
        r->nctx++;
    }
    *rpc_p = r;
    return ORPC_OK;
}

RPC_EXPORT int orpc_close(orpc_t *r)
{
    if (r == NULL || r->parent)
        return ORPC_EINVAL; /* a context closes with its instance */
    if (r->ctxs) {
        /* Every context's thread stops first, so none serves while the others close. */
        for (int i = 0; i < r->nctx; i++)
            rpc_thread_stop(r->ctxs[i]);
        /* Collective calls' peers, while every context is open to tell them apart. */
        for (int i = 0; i < r->nctx; i++)
            rpc_coll_close(r->ctxs[i]);
        for (int i = 1; i < r->nctx; i++)
            close_one(r->ctxs[i]);
        free(r->ctxs);
        r->ctxs = NULL;
    }
    return close_one(r);
}

void rpc_thread_stop(orpc_t *r)
{
    if (r->thr_running) {
        r->thr_stop = 1;
        pthread_join(r->thr, NULL);
        r->thr_running = 0;
    }
}

static int close_one(orpc_t *r)
{
    rpc_thread_stop(r);
    if (r->ep || r->sq) {
        rpc_coll_close(r);
        /* Say goodbye to the servers we looked up, and let the messages go. */
        for (int i = 0; i < r->npeers; i++) {
            orpc_peer_t *p = &r->peers[i];
            if (p->used && p->refs > 0 && !p->failed) {
                p->refs = 0;
                if (p->talked) /* else it does not know us */
                    rpc_ctl_send(r, p, RPC_T_BYE, 0, 0, p->auth);
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
        rpc_sq_close(r);
        rpc_bulk_fini(r);
        if (r->ep)
            cdt_msg_close(r->ep);
    }
    for (int i = 0; i < r->ncalls; i++) {
        free(r->calls[i].in_heap);
        free(r->calls[i].out_heap);
    }
    if (r->auth_written)
        unlink(r->auth_path);
    rpc_coll_fini(r);
    free(r->calls);
    free(r->reqs);
    for (int i = 0; r->peers && i < r->npeers; i++) /* service handles */
        if (r->peers[i].used && r->peers[i].svc) {
            free(r->peers[i].svc->ctxp);
            free(r->peers[i].svc->coll_addr);
            free(r->peers[i].svc);
        }
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
    /* Same-host clients find the server's queues from "/sq=HOST.NAME". */
    if ((rc = rpc_sq_addr_opt(r, buf, len)) != ORPC_OK || r->ctxs == NULL)
        return rc;
    /* The other service contexts: "/ctx=NAME1[.Q1],...". */
    return rpc_ctx_addr_opt(r, buf, len);
}

/* Options after the name: "/max_req=N". 0 when absent; -1 when malformed. */
long long rpc_addr_max_req(const char *addr)
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

static int register_one(orpc_t *r, const char *name, orpc_handler_t fn, void *arg,
                        unsigned flags, uint64_t *id_p);

RPC_EXPORT int orpc_register(orpc_t *r, const char *name, orpc_handler_t fn, void *arg,
                             unsigned flags, uint64_t *id_p)
{
    if (r == NULL || name == NULL || fn == NULL)
        return ORPC_EINVAL;
    /* A handler of the instance serves on every context. */
    int n = r->ctxs ? r->nctx : 1;
    for (int i = 0; i < n; i++) {
        int rc = register_one(r->ctxs ? r->ctxs[i] : r, name, fn, arg, flags, id_p);
        if (rc != ORPC_OK)
            return rc;
    }
    return ORPC_OK;
}

static int register_one(orpc_t *r, const char *name, orpc_handler_t fn, void *arg,
                        unsigned flags, uint64_t *id_p)
{
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
        h->coll_op = ORPC_COLL_GATHER;
        h->combine = NULL;
        h->combine_arg = NULL;
        rc = ORPC_OK;
        break;
    }
    rpc_unlock(r);
    if (rc == ORPC_OK && id_p)
        *id_p = id;
    return rc;
}

int rpc_stats_one(orpc_t *r, orpc_stats_t *s)
{
    rpc_lock(r);
    *s = r->st;
    s->samehost_live = (uint64_t)rpc_sq_nconns(r);
    rpc_unlock(r);
    return ORPC_OK;
}

RPC_EXPORT int orpc_stats(orpc_t *r, orpc_stats_t *s)
{
    if (r == NULL || s == NULL)
        return ORPC_EINVAL;
    if (r->ctxs == NULL)
        return rpc_stats_one(r, s);
    /* Service contexts: every counter is the sum of theirs. */
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < r->nctx; i++) {
        orpc_stats_t one;
        rpc_stats_one(r->ctxs[i], &one);
        uint64_t *d = (uint64_t *)s;
        const uint64_t *o = (const uint64_t *)&one;
        for (size_t k = 0; k < sizeof(*s) / sizeof(uint64_t); k++)
            d[k] += o[k];
    }
    return ORPC_OK;
}
