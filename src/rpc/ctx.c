// SPDX-License-Identifier: BSD-3-Clause
/*
 * Service contexts: a server instance made of N whole instances (each its
 * own endpoint, receive buffers, same-host queue set, lock and progress
 * thread) behind one address. The address names context 0 as any server's
 * does and appends "/ctx=NAME1[.Q1],NAME2[.Q2],...": the other contexts'
 * endpoint names (hex) and same-host queue sets (16 hex digits, on the host
 * of context 0's "/sq=HOST.Q0"). A client looks every context up as a peer
 * of its own and spreads its calls over them (round robin, or by key).
 * orpc_addr_join makes one such address of several servers' (a parallel
 * service: the PEs of a SHMEM job, each with its contexts).
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

#define CTX_OPT "/ctx="
#define SQ_OPT "/sq="

/* ---------------------------------------------------------------- server */

/* Appends "/ctx=..." naming contexts 1..N-1 to context 0's address in buf. */
int rpc_ctx_addr_opt(orpc_t *r, char *buf, size_t len)
{
    size_t used = strlen(buf);
    char one[ORPC_ADDR_STRLEN];
    const char *sep = CTX_OPT;
    for (int i = 1; i < r->nctx; i++) {
        int rc = orpc_addr(r->ctxs[i], one, sizeof(one));
        if (rc != ORPC_OK)
            return rc;
        const char *h = strchr(one + 7, '/'); /* after "orpc://PROV" */
        if (h == NULL)
            return ORPC_EADDR;
        h++;
        int hl = (int)strcspn(h, "/");
        const char *q = strstr(one, SQ_OPT);
        const char *qn = q ? strchr(q, '.') : NULL;
        int n = qn ? snprintf(buf + used, len - used, "%s%.*s.%.16s", sep, hl, h, qn + 1)
                   : snprintf(buf + used, len - used, "%s%.*s", sep, hl, h);
        if (n < 0 || (size_t)n >= len - used) {
            buf[used] = '\0';
            return ORPC_ERANGE;
        }
        used += (size_t)n;
        sep = ",";
    }
    return ORPC_OK;
}

RPC_EXPORT int orpc_contexts(orpc_t *r)
{
    if (r == NULL)
        return ORPC_EINVAL;
    return r->ctxs ? r->nctx : 1;
}

static orpc_t *ctx_of(orpc_t *r, int ctx)
{
    if (r == NULL || ctx < 0 || ctx >= (r->ctxs ? r->nctx : 1))
        return NULL;
    return r->ctxs ? r->ctxs[ctx] : r;
}

RPC_EXPORT int orpc_progress_context(orpc_t *r, int ctx, int timeout_ms)
{
    orpc_t *c = ctx_of(r, ctx);
    if (c == NULL) {
        if (r)
            shm_error("orpc_progress_context: no context %d (the instance has %d)", ctx,
                      orpc_contexts(r));
        return ORPC_EINVAL;
    }
    return rpc_progress_one(c, timeout_ms);
}

RPC_EXPORT int orpc_context_stats(orpc_t *r, int ctx, orpc_stats_t *s)
{
    orpc_t *c = ctx_of(r, ctx);
    if (c == NULL || s == NULL)
        return ORPC_EINVAL;
    return rpc_stats_one(c, s);
}

RPC_EXPORT int orpc_call_context(orpc_call_t *call)
{
    return call ? call->rpc->ctx_idx : ORPC_EINVAL;
}

/* ---------------------------------------------------------------- client */

/* The contexts of one service, as looked up: if some know this client by
 * its same-host name and some by its fabric one, all get the fabric one
 * (the endpoint opened now where it was not). Lock held. */
static int same_name_everywhere(orpc_t *r, orpc_peer_t **subs, int n)
{
    int sq_named = 0;
    for (int i = 0; i < n; i++)
        sq_named += subs[i]->sq_self;
    if (sq_named == 0 || sq_named == n)
        return ORPC_OK;
    for (int i = 0; i < n; i++) {
        if (subs[i]->talked && subs[i]->sq_self)
            continue; /* (shared with an earlier lookup: it keeps its name) */
        subs[i]->sq_self = 0;
        int rc = rpc_peer_to_fabric(r, subs[i]);
        if (rc != ORPC_OK)
            return rc;
    }
    return ORPC_OK;
}

/*
 * The handle for the server at addr whose context 0 is p (lock held, one
 * reference to p taken): p itself for a one-context server; else a service
 * handle holding p and a peer for each other context (each one reference).
 */
int rpc_ctx_lookup(orpc_t *r, orpc_peer_t *p, const char *addr, orpc_peer_t **svc_p)
{
    const char *o = strstr(addr, CTX_OPT);
    if (o == NULL) {
        *svc_p = p;
        return ORPC_OK;
    }
    if (p->svc) { /* looked up before: the same handle */
        p->svc->refs++;
        rpc_peer_unref(r, p);
        *svc_p = p->svc;
        return ORPC_OK;
    }
    /* Every other context's own address, as its instance would print it. */
    int n = rpc_ctx_member(addr, -1, NULL, 0), got = 1;
    int rc = n < 2 ? ORPC_EADDR : ORPC_OK;
    orpc_peer_t *subs[RPC_MAX_PEER_CTX];
    subs[0] = p;
    for (int i = 1; rc == ORPC_OK && i < n; i++) {
        char one[ORPC_ADDR_STRLEN];
        orpc_peer_t *s = NULL;
        if (rpc_ctx_member(addr, i, one, sizeof(one)) < 0)
            rc = ORPC_EADDR;
        else if ((rc = rpc_peer_lookup(r, one, p->auth, &s)) == ORPC_OK)
            subs[got++] = s;
    }
    /* One name for us over the whole service (a descriptor encoded for the
     * handle goes to any context): the same-host one only when every
     * context knows us by it. */
    if (rc == ORPC_OK)
        rc = same_name_everywhere(r, subs, got);
    orpc_peer_t *svc = NULL;
    if (rc == ORPC_OK && ((svc = calloc(1, sizeof(*svc))) == NULL ||
                          (svc->ctxp = malloc((size_t)n * sizeof(*svc->ctxp))) == NULL)) {
        free(svc);
        rc = ORPC_ENOMEM;
    }
    if (rc != ORPC_OK) {
        if (rc != ORPC_ENOMEM)
            shm_error("orpc_lookup: bad context list in '%s'", addr);
        for (int i = 1; i < got; i++)
            rpc_peer_unref(r, subs[i]);
        return rc == ORPC_ENOMEM ? rc : ORPC_EADDR;
    }
    /* The service handle: what calls and descriptors need of a peer. */
    svc->rpc = r;
    svc->used = 1;
    svc->refs = 1;
    memcpy(svc->auth, p->auth, RPC_AUTH_LEN);
    svc->max_req = p->max_req;
    memcpy(svc->ctxp, subs, (size_t)n * sizeof(*subs));
    svc->nctx = n;
    svc->coll_addr = strdup(addr);
    if (svc->coll_addr)
        svc->coll_addr[strcspn(svc->coll_addr, "\n\r ")] = '\0';
    p->svc = svc;
    *svc_p = svc;
    return ORPC_OK;
}

/* One reference less to a service handle: at none, its contexts go too. */
void rpc_ctx_unref(orpc_t *r, orpc_peer_t *svc)
{
    if (--svc->refs > 0)
        return;
    svc->ctxp[0]->svc = NULL;
    for (int i = 0; i < svc->nctx; i++)
        rpc_peer_unref(r, svc->ctxp[i]);
    free(svc->ctxp);
    free(svc->coll_addr);
    free(svc);
}

RPC_EXPORT int orpc_peer_contexts(orpc_peer_t *p)
{
    if (p == NULL || !p->used)
        return ORPC_EINVAL;
    return p->nctx > 1 ? p->nctx : 1;
}

/* A 64-bit finalizer (murmur3's): neighbouring keys spread over the contexts. */
static uint64_t key_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

RPC_EXPORT orpc_peer_t *orpc_peer_key(orpc_peer_t *p, uint64_t key)
{
    if (p == NULL || p->nctx <= 1)
        return p;
    return p->ctxp[key_mix(key) % (uint64_t)p->nctx];
}

RPC_EXPORT int orpc_call_key(orpc_t *r, orpc_peer_t *p, uint64_t key, uint64_t id,
                             const void *in, size_t in_len, void *out, size_t out_cap,
                             size_t *out_len_p, int timeout_ms)
{
    return orpc_call(r, orpc_peer_key(p, key), id, in, in_len, out, out_cap, out_len_p,
                     timeout_ms);
}

/*
 * Member i of the service at addr (one server's or a joined address): its
 * own address, as its instance would print it, into one (member 0: addr
 * itself). Returns the number of members (1 without "/ctx="), or
 * ORPC_EADDR; i < 0 (or one NULL) only counts them.
 */
int rpc_ctx_member(const char *addr, int i, char *one, size_t len)
{
    const char *o = strstr(addr, CTX_OPT);
    const char *slash = strncmp(addr, "orpc://", 7) == 0 ? strchr(addr + 7, '/') : NULL;
    if (slash == NULL)
        return ORPC_EADDR;
    if (i == 0 && one && snprintf(one, len, "%s", addr) >= (int)len)
        return ORPC_EADDR;
    if (o == NULL)
        return 1;
    o += strlen(CTX_OPT);
    const char *q = strstr(addr, SQ_OPT);
    const char *host = q ? q + strlen(SQ_OPT) : NULL;
    size_t hostl = host ? strcspn(host, ".") : 0;
    if (host && host[hostl] != '.')
        return ORPC_EADDR;
    const char *mr = strstr(addr, "/max_req=");
    int mrl = mr ? (int)(1 + strcspn(mr + 1, "/\n\r ")) : 0;
    int n = 1;
    while (*o && *o != '/' && *o != '\n' && *o != '\r' && *o != ' ') {
        size_t nl = strcspn(o, ".,/\n\r ");
        size_t ql = 0;
        const char *qn = NULL;
        if (o[nl] == '.') {
            qn = o + nl + 1;
            ql = strcspn(qn, ",/\n\r ");
        }
        if (n == RPC_MAX_PEER_CTX || nl == 0 || (qn && (ql != 16 || host == NULL)))
            return ORPC_EADDR;
        if (n == i && one) {
            int k = snprintf(one, len, "%.*s%.*s%.*s", (int)(slash + 1 - addr), addr, (int)nl,
                             o, mrl, mr ? mr : "");
            if (qn && k > 0 && (size_t)k < len)
                k += snprintf(one + k, len - (size_t)k, SQ_OPT "%.*s.%.16s", (int)hostl, host,
                              qn);
            if (k < 0 || (size_t)k >= len)
                return ORPC_EADDR;
        }
        n++;
        o += nl + (qn ? 1 + ql : 0);
        if (*o == ',')
            o++;
    }
    return n;
}

/* ---------------------------------------------------------- joined services */

/* The parts of an address string of ours. */
typedef struct {
    const char *pre;  /* "orpc://PROV/" */
    int prel;
    const char *name; /* context 0's endpoint name (hex) */
    int namel;
    const char *host, *q0; /* "/sq=HOST.Q0" (NULL: none) */
    int hostl;
    const char *ctx;  /* after "/ctx=" (NULL: one context) */
    int ctxl;
    long long max_req;
} addr_parts_t;

static int addr_split(const char *a, addr_parts_t *p)
{
    memset(p, 0, sizeof(*p));
    const char *slash = strncmp(a, "orpc://", 7) == 0 ? strchr(a + 7, '/') : NULL;
    if (slash == NULL)
        return ORPC_EADDR;
    p->pre = a;
    p->prel = (int)(slash + 1 - a);
    p->name = slash + 1;
    p->namel = (int)strcspn(p->name, "/\n\r ");
    if (p->namel == 0 || (p->max_req = rpc_addr_max_req(a)) < 0)
        return ORPC_EADDR;
    const char *q = strstr(a, SQ_OPT);
    if (q) {
        p->host = q + strlen(SQ_OPT);
        p->hostl = (int)strcspn(p->host, ".");
        if (p->host[p->hostl] != '.' || strspn(p->host + p->hostl + 1, "0123456789abcdef") != 16)
            return ORPC_EADDR;
        p->q0 = p->host + p->hostl + 1;
    }
    const char *c = strstr(a, CTX_OPT);
    if (c) {
        p->ctx = c + strlen(CTX_OPT);
        p->ctxl = (int)strcspn(p->ctx, "/\n\r ");
    }
    return ORPC_OK;
}

/* Appends s[0..n) to buf (used bytes in *u); ORPC_ERANGE when it does not fit. */
static int put(char *buf, size_t len, size_t *u, const char *s, size_t n)
{
    if (*u + n + 1 > len)
        return ORPC_ERANGE;
    memcpy(buf + *u, s, n);
    *u += n;
    buf[*u] = '\0';
    return ORPC_OK;
}

RPC_EXPORT int orpc_addr_join(const char *const *addrs, int n, char *buf, size_t len)
{
    if (addrs == NULL || n < 1 || buf == NULL || len == 0)
        return ORPC_EINVAL;
    addr_parts_t b, a;
    for (int i = 0; i < n; i++)
        if (addrs[i] == NULL || addr_split(addrs[i], i ? &a : &b) != ORPC_OK) {
            shm_error("orpc_addr_join: address %d is not a server address of ours", i);
            return ORPC_EADDR;
        }
    /* The smallest request limit of them all is everyone's. */
    long long mr = b.max_req;
    for (int i = 1; i < n; i++) {
        addr_split(addrs[i], &a);
        if (a.prel != b.prel || memcmp(a.pre, b.pre, (size_t)b.prel) != 0) {
            shm_error("orpc_addr_join: address %d is on another provider (%.*s)", i, a.prel,
                      a.pre);
            return ORPC_EADDR;
        }
        if (a.max_req && (mr == 0 || a.max_req < mr))
            mr = a.max_req;
    }
    size_t u = 0;
    char num[64];
    int rc = put(buf, len, &u, b.pre, (size_t)b.prel);
    if (rc == ORPC_OK)
        rc = put(buf, len, &u, b.name, (size_t)b.namel);
    if (rc == ORPC_OK && mr > 0) {
        snprintf(num, sizeof(num), "/max_req=%lld", mr);
        rc = put(buf, len, &u, num, strlen(num));
    }
    if (rc == ORPC_OK && b.host) {
        rc = put(buf, len, &u, SQ_OPT, strlen(SQ_OPT));
        if (rc == ORPC_OK)
            rc = put(buf, len, &u, b.host, (size_t)b.hostl + 17);
    }
    int count = 1;
    const char *sep = CTX_OPT;
    for (int i = 0; i < n && rc == ORPC_OK; i++) {
        addr_split(addrs[i], &a);
        /* Queue sets only of servers on the host of the first (the rest
         * through the provider); context 0 of every other server first. */
        int same = b.host && a.host && a.hostl == b.hostl &&
                   memcmp(a.host, b.host, (size_t)b.hostl) == 0;
        const char *o = a.ctx;
        int left = a.ctxl;
        for (int first = i > 0; rc == ORPC_OK && (first || left > 0); first = 0) {
            const char *nm;
            int nl, ql = 0;
            const char *qn = NULL;
            if (first) {
                nm = a.name;
                nl = a.namel;
                qn = a.q0;
                ql = a.q0 ? 16 : 0;
            } else {
                int el = (int)strcspn(o, ",");
                if (el > left)
                    el = left;
                nm = o;
                nl = (int)strcspn(o, ".,");
                if (nl > el)
                    nl = el;
                if (nl < el) {
                    qn = o + nl + 1;
                    ql = el - nl - 1;
                }
                o += el + (el < left);
                left -= el + (el < left);
            }
            if (++count > RPC_MAX_PEER_CTX) {
                shm_error("orpc_addr_join: more than %d contexts", RPC_MAX_PEER_CTX);
                return ORPC_ERANGE;
            }
            rc = put(buf, len, &u, sep, strlen(sep));
            sep = ",";
            if (rc == ORPC_OK)
                rc = put(buf, len, &u, nm, (size_t)nl);
            if (rc == ORPC_OK && same && qn && ql == 16) {
                rc = put(buf, len, &u, ".", 1);
                if (rc == ORPC_OK)
                    rc = put(buf, len, &u, qn, 16);
            }
        }
    }
    return rc;
}
