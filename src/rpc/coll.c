// SPDX-License-Identifier: BSD-3-Clause
/*
 * Collective calls (orpc_call_all): one request reaches every member of a
 * service (the contexts a joined address names) through a k-ary tree, and
 * one combined result comes back (CaRT's collective RPC, issue 18).
 *
 * The caller sends the request to the root member with RPC_F_COLL: a
 * header (members, this member's number, root, fanout), the joined address
 * and the arguments. A member (rpc_coll_begin, from the request's arrival)
 * copies address and arguments into its tree state, queues its handler,
 * and, from its next progress (rpc_coll_progress), sends the same request
 * to each of its children, numbered in the header, with 1/4 less time than
 * it got. The handler's orpc_respond keeps the member's own part; when it
 * and every child's answer are in (or a child's deadline passed) the
 * member combines them (records sorted by member, or a reduction) and
 * answers its parent. A failure answers the failing status and, in the
 * payload, the lowest failed member, so the caller learns who.
 *
 * Each member keeps the members of the joined addresses it has seen (a few,
 * least recently used replaced): their raw names, to check that a request
 * names this member, and peers looked up on first need. Tree states are
 * recycled, with their buffers.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

#define COLL_FANOUT 4
#define COLL_MEMS 8 /* joined addresses remembered per context (orpc_t.coll_mem) */

/* The members of one joined address, as a context sees them. */
typedef struct rpc_coll_mem {
    char *addr; /* the address (NUL-terminated copy) */
    size_t len;
    int n, busy; /* members; tree states using it */
    uint64_t used;
    orpc_peer_t *p[RPC_COLL_MAX]; /* looked up on first need (one reference each) */
    uint8_t alen[RPC_COLL_MAX];
    uint8_t name[RPC_COLL_MAX][RPC_ADDR_MAX];
} rpc_coll_mem_t;

enum { KID_WAIT = 1, KID_DONE };

typedef struct {
    int member, state, status;
    int32_t failed; /* the member a failed answer names (-1: none) */
    struct orpc_req *q;
    uint32_t gen;
    int zombie; /* given up before its send ended: the request still reads fwd */
    size_t len;
} coll_kid_t;

typedef struct rpc_coll {
    struct rpc_coll *next;
    struct orpc_call *call; /* NULL once answered */
    rpc_coll_mem_t *mem;    /* NULL: one member */
    rpc_coll_hdr_t h;
    uint64_t id;
    int op;
    orpc_combine_t combine;
    void *carg;
    int nkids, forwarded, waiting, kid_timeout_ms;
    coll_kid_t kid[RPC_COLL_MAX];
    int own_done, own_status;
    size_t own_len, cap; /* cap: room for each child's answer */
    uint8_t *fwd, *own, *kbuf, *acc; /* address + arguments; own part; children's; combined */
    size_t fwd_len, fwd_cap, own_cap, kbuf_cap, acc_cap;
} rpc_coll_t;

static uint64_t mem_tick_g;

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return ORPC_OK;
    uint8_t *b = realloc(*buf, need);
    if (b == NULL)
        return ORPC_ENOMEM;
    *buf = b;
    *cap = need;
    return ORPC_OK;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------- members */

static void mem_free(orpc_t *r, rpc_coll_mem_t *m, int unref)
{
    for (int i = 0; unref && i < m->n; i++)
        if (m->p[i])
            rpc_peer_unref(r, m->p[i]);
    free(m->addr);
    free(m);
}

/* The members of the joined address a[0..len) (lock held), or NULL. */
static rpc_coll_mem_t *mem_get(orpc_t *r, const uint8_t *a, size_t len)
{
    int slot = -1;
    for (int i = 0; i < COLL_MEMS; i++) {
        rpc_coll_mem_t *m = r->coll_mem[i];
        if (m && m->len == len && memcmp(m->addr, a, len) == 0) {
            m->used = __atomic_add_fetch(&mem_tick_g, 1, __ATOMIC_RELAXED);
            return m;
        }
    }
    /* A free slot, else the least recently used one no call uses now. */
    for (int i = 0; i < COLL_MEMS && (slot < 0 || r->coll_mem[slot]); i++) {
        rpc_coll_mem_t *m = r->coll_mem[i];
        if (m == NULL || (m->busy == 0 && (slot < 0 || r->coll_mem[slot]->used > m->used)))
            slot = i;
    }
    if (slot < 0)
        return NULL; /* every table in use by calls in flight */
    rpc_coll_mem_t *m = calloc(1, sizeof(*m));
    if (m == NULL || (m->addr = malloc(len + 1)) == NULL) {
        free(m);
        return NULL;
    }
    memcpy(m->addr, a, len);
    m->addr[len] = '\0';
    m->len = len;
    m->n = strlen(m->addr) == len ? rpc_ctx_member(m->addr, -1, NULL, 0) : ORPC_EADDR;
    char one[ORPC_ADDR_STRLEN], prov[64];
    for (int i = 0; i < m->n && m->n <= RPC_COLL_MAX; i++) {
        size_t nl = RPC_ADDR_MAX;
        if (rpc_ctx_member(m->addr, i, one, sizeof(one)) < 0 ||
            cdt_msg_addr_from_str(one, prov, sizeof(prov), m->name[i], &nl) != SHM_OK ||
            strcmp(prov, r->prov) != 0) {
            m->n = ORPC_EADDR;
            break;
        }
        m->alen[i] = (uint8_t)nl;
    }
    if (m->n < 1 || m->n > RPC_COLL_MAX) {
        SHM_DEBUG(RPC, "collective call with a bad member address dropped");
        mem_free(r, m, 0);
        return NULL;
    }
    if (r->coll_mem[slot])
        mem_free(r, r->coll_mem[slot], 1);
    m->used = __atomic_add_fetch(&mem_tick_g, 1, __ATOMIC_RELAXED);
    r->coll_mem[slot] = m;
    return m;
}

/* Member i's peer, looked up on first need (lock held). */
static orpc_peer_t *mem_peer(orpc_t *r, rpc_coll_mem_t *m, int i)
{
    if (m->p[i] == NULL) {
        char one[ORPC_ADDR_STRLEN];
        orpc_peer_t *p = NULL;
        if (rpc_ctx_member(m->addr, i, one, sizeof(one)) > i &&
            rpc_peer_lookup(r, one, r->auth, &p) == ORPC_OK)
            m->p[i] = p;
    }
    return m->p[i];
}

/* ---------------------------------------------------------- tree states */

static void coll_put(orpc_t *r, rpc_coll_t *k)
{
    if (k->mem)
        k->mem->busy--;
    k->mem = NULL;
    k->next = r->coll_free;
    r->coll_free = k;
}

int rpc_coll_begin(orpc_t *r, struct orpc_call *c, const rpc_hdr_t *h)
{
    rpc_coll_hdr_t ch;
    if (rpc_coll_decode(h->payload, h->payload_len, &ch) != RPC_WIRE_OK) {
        r->st.malformed++;
        return ORPC_EPROTO;
    }
    rpc_coll_t *k = r->coll_free;
    if (k)
        r->coll_free = k->next;
    else if ((k = calloc(1, sizeof(*k))) == NULL)
        return ORPC_ENOMEM;
    size_t body = h->payload_len - RPC_COLL_HDR;
    k->cap = r->max_resp;
    k->mem = NULL;
    int nk[RPC_COLL_MAX];
    k->nkids = rpc_coll_children(ch.rank, ch.root, ch.n, ch.fanout, nk);
    int rc = grow(&k->fwd, &k->fwd_cap, body ? body : 1);
    if (rc == ORPC_OK && k->nkids)
        rc = grow(&k->kbuf, &k->kbuf_cap, (size_t)k->nkids * k->cap);
    if (rc != ORPC_OK) {
        coll_put(r, k);
        return rc;
    }
    memcpy(k->fwd, h->payload + RPC_COLL_HDR, body);
    k->fwd_len = body;
    if (ch.n > 1) {
        rpc_coll_mem_t *m = mem_get(r, k->fwd, ch.addr_len);
        /* The address must name as many members, this one at its number. */
        if (m == NULL || m->n != ch.n || m->alen[ch.rank] != r->self_alen ||
            memcmp(m->name[ch.rank], r->self_addr, r->self_alen) != 0) {
            SHM_DEBUG(RPC, "collective call refused: its address does not name this context "
                           "as member %u of %u", ch.rank, ch.n);
            r->st.malformed++;
            coll_put(r, k);
            return m ? ORPC_EPROTO : ORPC_EBUSY;
        }
        k->mem = m;
        m->busy++;
    }
    k->h = ch;
    k->id = h->rpc_id;
    k->op = c->h->coll_op;
    k->combine = c->h->combine;
    k->carg = c->h->combine_arg;
    for (int i = 0; i < k->nkids; i++) {
        k->kid[i].member = nk[i];
        k->kid[i].state = 0;
        k->kid[i].failed = -1;
        k->kid[i].zombie = 0;
        k->kid[i].q = NULL;
    }
    /* Each level gives its children 1/4 less time, so a child's silence is
     * reported before this member's own deadline. */
    k->kid_timeout_ms = (int)(h->timeout_ms - h->timeout_ms / 4);
    if (k->kid_timeout_ms < 1)
        k->kid_timeout_ms = 1;
    k->forwarded = k->nkids == 0;
    k->waiting = 0;
    k->own_done = 0;
    k->call = c;
    c->coll = k;
    c->coll_rank = ch.rank;
    c->coll_n = ch.n;
    c->in = k->fwd + ch.addr_len;
    c->in_len = body - ch.addr_len;
    k->next = r->coll_live;
    r->coll_live = k;
    return ORPC_OK;
}

static void coll_forward(orpc_t *r, rpc_coll_t *k)
{
    uint8_t pre[RPC_COLL_HDR];
    k->forwarded = 1;
    for (int i = 0; i < k->nkids; i++) {
        coll_kid_t *d = &k->kid[i];
        rpc_coll_hdr_t ch = k->h;
        ch.rank = (uint16_t)d->member;
        rpc_coll_encode(pre, &ch);
        orpc_peer_t *p = mem_peer(r, k->mem, d->member);
        struct orpc_req *q = NULL;
        int rc = p ? rpc_req_start_coll(r, p, k->id, pre, sizeof(pre), k->fwd, k->fwd_len, NULL,
                                        k->kbuf + (size_t)i * k->cap, k->cap, k->kid_timeout_ms,
                                        &d->failed, &q)
                   : ORPC_EPEER;
        if (rc == ORPC_OK) {
            d->q = q;
            d->gen = q->gen;
            d->state = KID_WAIT;
            k->waiting++;
        } else {
            SHM_DEBUG(RPC, "collective call: member %d not reached: %s", d->member,
                      orpc_strerror(rc));
            d->state = KID_DONE;
            d->status = rc;
            d->failed = d->member;
        }
    }
}

/* Children's answers in, or their deadlines past. */
static int coll_collect(orpc_t *r, rpc_coll_t *k, uint64_t now)
{
    int n = 0;
    for (int i = 0; i < k->nkids; i++) {
        coll_kid_t *d = &k->kid[i];
        struct orpc_req *q = d->q;
        if (d->state != KID_WAIT)
            continue;
        if (q->answered && q->sent) {
            d->status = q->status;
            d->len = q->out_len;
            if (d->status >= 0 && d->len > k->cap)
                d->status = ORPC_ERANGE;
            rpc_req_free(r, q);
        } else if (now > q->deadline_ns) {
            SHM_DEBUG(RPC, "collective call: member %d did not answer in %d ms", d->member,
                      k->kid_timeout_ms);
            d->status = ORPC_ETIMEDOUT;
            if (q->sent) {
                rpc_req_free(r, q);
            } else {
                q->state = RPC_REQ_ZOMBIE; /* freed by its completion */
                d->zombie = 1;
            }
        } else {
            continue;
        }
        if (d->status < 0 && d->failed < 0)
            d->failed = d->member; /* it failed itself (or refused the call) */
        d->state = KID_DONE;
        k->waiting--;
        n++;
    }
    return n;
}

/* A request given up unsent still reads fwd: the state waits for it. */
static int coll_draining(orpc_t *r, rpc_coll_t *k)
{
    int busy = 0;
    for (int i = 0; i < k->nkids; i++) {
        coll_kid_t *d = &k->kid[i];
        if (d->zombie && d->q->gen == d->gen && d->q->state == RPC_REQ_ZOMBIE)
            busy = 1;
        else
            d->zombie = 0;
    }
    (void)r;
    return busy;
}

typedef struct {
    uint32_t m;
    int32_t st;
    const void *d;
    uint32_t l;
} coll_rec_t;

/* Gathers own and children's records, sorted by member, into acc. */
static int coll_gather(rpc_coll_t *k, size_t max, size_t *len, int *fail)
{
    coll_rec_t e[RPC_COLL_MAX];
    int ne = 0;
    e[ne++] = (coll_rec_t){k->h.rank, k->own_status, k->own, (uint32_t)k->own_len};
    for (int i = 0; i < k->nkids; i++) {
        coll_kid_t *d = &k->kid[i];
        const uint8_t *b = k->kbuf + (size_t)i * k->cap;
        size_t pos = 0;
        coll_rec_t x;
        int rc;
        while ((rc = rpc_coll_rec_next(b, d->len, &pos, &x.m, &x.st, &x.d, &x.l)) > 0) {
            if (x.m >= k->h.n || ne == RPC_COLL_MAX) {
                rc = -1;
                break;
            }
            e[ne++] = x;
        }
        if (rc < 0) {
            *fail = d->member;
            return ORPC_EPROTO;
        }
    }
    /* Insertion sort by member (at most 64); a member twice is malformed. */
    size_t total = 0;
    for (int i = 1; i < ne; i++)
        for (int j = i; j > 0 && e[j - 1].m >= e[j].m; j--) {
            if (e[j - 1].m == e[j].m) {
                *fail = (int)e[j].m;
                return ORPC_EPROTO;
            }
            coll_rec_t t = e[j];
            e[j] = e[j - 1];
            e[j - 1] = t;
        }
    for (int i = 0; i < ne; i++)
        total += RPC_COLL_REC + e[i].l;
    if (total > max) {
        shm_error("orpc_call_all: the results of %d members take %zu bytes, above the %zu a "
                  "response can carry (SHMEM_RPC_MAX_RESP)", ne, total, max);
        *fail = k->h.rank;
        return ORPC_ERANGE;
    }
    if (grow(&k->acc, &k->acc_cap, total ? total : 1) != ORPC_OK) {
        *fail = k->h.rank;
        return ORPC_ENOMEM;
    }
    size_t pos = 0;
    for (int i = 0; i < ne; i++) {
        rpc_coll_rec_put(k->acc + pos, e[i].m, e[i].st, e[i].l);
        if (e[i].l)
            memcpy(k->acc + pos + RPC_COLL_REC, e[i].d, e[i].l);
        pos += RPC_COLL_REC + e[i].l;
    }
    *len = total;
    return ORPC_OK;
}

/* Reduces own and children's results into acc; *status: the largest status. */
static int coll_reduce(rpc_coll_t *k, size_t max, size_t *len, int *fail, int *status)
{
    size_t n = k->own_len;
    if (grow(&k->acc, &k->acc_cap, max > n ? max : n ? n : 1) != ORPC_OK) {
        *fail = k->h.rank;
        return ORPC_ENOMEM;
    }
    memcpy(k->acc, k->own, n);
    if (k->op != ORPC_COLL_COMBINE && n % 8) {
        shm_error("orpc_call_all: member %u answered %zu bytes for an int64 reduction "
                  "(not a multiple of 8)", k->h.rank, n);
        *fail = k->h.rank;
        return ORPC_EPROTO;
    }
    for (int i = 0; i < k->nkids; i++) {
        coll_kid_t *d = &k->kid[i];
        const uint8_t *b = k->kbuf + (size_t)i * k->cap;
        if (d->status > *status)
            *status = d->status;
        if (k->op == ORPC_COLL_COMBINE) {
            int rc = k->combine(k->acc, &n, max, b, d->len, k->carg);
            if (rc < 0 || n > max) {
                *fail = d->member;
                return rc < 0 ? rc : ORPC_ERANGE;
            }
            continue;
        }
        if (d->len != n) {
            shm_error("orpc_call_all: member %d answered %zu bytes for an int64 reduction, "
                      "member %u %zu", d->member, d->len, k->h.rank, n);
            *fail = d->member;
            return ORPC_EPROTO;
        }
        for (size_t o = 0; o < n; o += 8) {
            int64_t a = (int64_t)get64(k->acc + o), v = (int64_t)get64(b + o);
            if (k->op == ORPC_COLL_SUM_I64)
                a = (int64_t)((uint64_t)a + (uint64_t)v);
            else if (k->op == ORPC_COLL_MIN_I64)
                a = v < a ? v : a;
            else
                a = v > a ? v : a;
            put64(k->acc + o, (uint64_t)a);
        }
    }
    *len = n;
    return ORPC_OK;
}

/* Own part and every child in: combine and answer the parent (lock held). */
static void coll_finish(orpc_t *r, rpc_coll_t *k)
{
    struct orpc_call *c = k->call;
    int fail = -1, status = 0, rc = ORPC_OK;
    if (k->own_status < 0) {
        fail = k->h.rank;
        rc = k->own_status;
    }
    for (int i = 0; i < k->nkids; i++) {
        coll_kid_t *d = &k->kid[i];
        if (d->status < 0 && (fail < 0 || d->failed < fail)) {
            fail = d->failed;
            rc = d->status;
        }
    }
    size_t len = 0;
    if (fail < 0 && k->op == ORPC_COLL_GATHER)
        rc = coll_gather(k, c->resp_max, &len, &fail);
    else if (fail < 0) {
        status = k->own_status;
        rc = coll_reduce(k, c->resp_max, &len, &fail, &status);
    }
    k->call = NULL;
    c->coll = NULL;
    if (fail >= 0) {
        uint8_t f[4] = {(uint8_t)fail, (uint8_t)(fail >> 8), (uint8_t)(fail >> 16),
                        (uint8_t)(fail >> 24)};
        rpc_respond(c, rc < 0 ? rc : ORPC_EPROTO, f, sizeof(f), RPC_F_COLL);
    } else {
        rpc_respond(c, status, k->acc, len, RPC_F_COLL);
    }
}

int rpc_coll_progress(orpc_t *r)
{
    /* Taken off the instance while walked: answering may harvest new ones. */
    rpc_coll_t *list = r->coll_live, *next;
    r->coll_live = NULL;
    uint64_t now = 0;
    int n = 0;
    for (rpc_coll_t *k = list; k; k = next) {
        next = k->next;
        if (k->call && !k->forwarded) {
            coll_forward(r, k);
            n++;
        }
        if (k->waiting) {
            if (now == 0)
                now = rpc_now_ns();
            n += coll_collect(r, k, now);
        }
        if (k->call && k->forwarded && k->waiting == 0 && k->own_done) {
            coll_finish(r, k);
            n++;
        }
        if (k->call == NULL && !coll_draining(r, k)) {
            coll_put(r, k);
        } else {
            k->next = r->coll_live;
            r->coll_live = k;
        }
    }
    return n;
}

int rpc_coll_respond(struct orpc_call *c, int status, const void *out, size_t out_len)
{
    orpc_t *r = c->rpc;
    rpc_lock(r);
    rpc_coll_t *k = c->coll;
    if (k == NULL || k->own_done) {
        rpc_unlock(r);
        return ORPC_EINVAL;
    }
    if (c->bulk_done < c->bulk_issued)
        rpc_bulk_wait_locked(r, c);
    int rc = ORPC_OK;
    if (out_len > k->cap) {
        shm_error("orpc_respond: a member's part of a collective call's result is %zu bytes, "
                  "above SHMEM_RPC_MAX_RESP (%zu); answering ORPC_ERANGE", out_len, k->cap);
        status = rc = ORPC_ERANGE;
        out_len = 0;
    } else if (grow(&k->own, &k->own_cap, out_len ? out_len : 1) != ORPC_OK) {
        status = rc = ORPC_ENOMEM;
        out_len = 0;
    }
    if (out_len)
        memcpy(k->own, out, out_len);
    k->own_len = out_len;
    k->own_status = status;
    k->own_done = 1;
    if (k->forwarded && k->waiting == 0)
        coll_finish(r, k); /* every child is in: answer now */
    rpc_unlock(r);
    return rc;
}

/* A context of this process's instance (no goodbye: it may be closed already). */
static int is_sibling(orpc_t *r, const orpc_peer_t *p)
{
    orpc_t *t = rpc_top(r);
    int n = t->ctxs ? t->nctx : 1;
    for (int i = 0; i < n; i++) {
        orpc_t *x = t->ctxs ? t->ctxs[i] : t;
        if (x && x->self_alen == p->alen && memcmp(x->self_addr, p->addr, p->alen) == 0)
            return 1;
    }
    return 0;
}

void rpc_coll_close(orpc_t *r)
{
    for (int i = 0; i < COLL_MEMS; i++) {
        rpc_coll_mem_t *m = r->coll_mem[i];
        if (m == NULL)
            continue;
        for (int k = 0; k < m->n; k++)
            if (m->p[k] && is_sibling(r, m->p[k]))
                m->p[k]->talked = 0; /* (shm crashes sending to a closed endpoint of ours) */
        mem_free(r, m, 1);
        r->coll_mem[i] = NULL;
    }
}

void rpc_coll_fini(orpc_t *r)
{
    rpc_coll_t *lists[2] = {r->coll_live, r->coll_free};
    for (int l = 0; l < 2; l++)
        for (rpc_coll_t *k = lists[l], *next; k; k = next) {
            next = k->next;
            free(k->fwd);
            free(k->own);
            free(k->kbuf);
            free(k->acc);
            free(k);
        }
    r->coll_live = r->coll_free = NULL;
    /* The peers went with the instance (goodbyes said at close). */
    for (int i = 0; i < COLL_MEMS; i++) {
        if (r->coll_mem[i])
            mem_free(r, r->coll_mem[i], 0);
        r->coll_mem[i] = NULL;
    }
}

/* ------------------------------------------------------------------ API */

RPC_EXPORT int orpc_register_coll(orpc_t *r, const char *name, orpc_handler_t fn, void *arg,
                                  unsigned flags, int op, orpc_combine_t combine,
                                  void *combine_arg, uint64_t *id_p)
{
    if (op < ORPC_COLL_GATHER || op > ORPC_COLL_COMBINE ||
        (op == ORPC_COLL_COMBINE) != (combine != NULL)) {
        shm_error("orpc_register_coll: op %d %s a combine callback", op,
                  op == ORPC_COLL_COMBINE ? "needs" : "takes no");
        return ORPC_EINVAL;
    }
    uint64_t id;
    int rc = orpc_register(r, name, fn, arg, flags, &id);
    if (rc != ORPC_OK)
        return rc;
    int n = orpc_contexts(r);
    for (int i = 0; i < n; i++) {
        orpc_t *x = r->ctxs ? r->ctxs[i] : r;
        rpc_lock(x);
        rpc_handler_t *h = (rpc_handler_t *)rpc_handler_find(x, id);
        if (h) {
            h->coll_op = op;
            h->combine = combine;
            h->combine_arg = combine_arg;
        }
        rpc_unlock(x);
    }
    if (id_p)
        *id_p = id;
    return ORPC_OK;
}

RPC_EXPORT void orpc_coll_opts_init(orpc_coll_opts_t *o)
{
    o->root = 0;
    o->fanout = COLL_FANOUT;
    o->failed = -1;
    o->members = 0;
}

RPC_EXPORT int orpc_call_all(orpc_t *r, orpc_peer_t *p, uint64_t id, const void *in,
                             size_t in_len, void *out, size_t out_cap, size_t *out_len_p,
                             int timeout_ms, orpc_coll_opts_t *opts)
{
    if (opts)
        opts->failed = -1;
    if (r == NULL || p == NULL || !p->used || p->rpc != r || (in_len && in == NULL) ||
        (out_cap && out == NULL))
        return ORPC_EINVAL;
    int n = p->nctx > 1 ? p->nctx : 1;
    int root = opts ? opts->root : 0;
    int fanout = opts && opts->fanout > 0 ? opts->fanout : COLL_FANOUT;
    if (opts)
        opts->members = n;
    if (root < 0 || root >= n) {
        shm_error("orpc_call_all: root %d is not a member (the service has %d)", root, n);
        return ORPC_EINVAL;
    }
    if (fanout > n - 1)
        fanout = n > 1 ? n - 1 : 1;
    const char *addr = n > 1 ? p->coll_addr : "";
    if (addr == NULL)
        return ORPC_ENOMEM;
    size_t alen = strlen(addr);
    orpc_peer_t *to = n > 1 ? p->ctxp[root] : p;
    size_t limit = to->max_req ? to->max_req : r->max_req;
    if (RPC_COLL_HDR + alen + in_len > limit) {
        shm_error("orpc_call_all: %zu bytes of arguments and %zu of the members' address "
                  "exceed the request limit of %zu bytes (SHMEM_RPC_MAX_REQ)", in_len, alen,
                  limit);
        return ORPC_ERANGE;
    }
    uint8_t *pay = malloc(alen + in_len + 1);
    if (pay == NULL)
        return ORPC_ENOMEM;
    memcpy(pay, addr, alen);
    if (in_len)
        memcpy(pay + alen, in, in_len);
    rpc_coll_hdr_t ch = {.n = (uint16_t)n, .rank = (uint16_t)root, .root = (uint16_t)root,
                         .fanout = (uint16_t)fanout, .addr_len = (uint32_t)alen};
    uint8_t pre[RPC_COLL_HDR];
    rpc_coll_encode(pre, &ch);
    if (timeout_ms < 0)
        timeout_ms = r->timeout_ms;
    int32_t failed = -1;
    struct orpc_req *q = NULL;
    int rc = rpc_req_start_coll(r, to, id, pre, sizeof(pre), pay, alen + in_len, pay, out,
                                out_cap, timeout_ms, &failed, &q);
    if (rc == ORPC_OK)
        rc = orpc_wait(q, out_len_p);
    if (rc < 0 && failed < 0)
        failed = root; /* the root itself failed, refused or did not answer */
    if (rc < 0)
        SHM_DEBUG(RPC, "orpc_call_all: member %d failed: %s", (int)failed, orpc_strerror(rc));
    if (opts)
        opts->failed = rc < 0 ? (int)failed : -1;
    return rc;
}

RPC_EXPORT int orpc_coll_next(const void *out, size_t out_len, size_t *pos, int *member,
                              int *status, const void **data, size_t *len)
{
    if (pos == NULL || (out == NULL && out_len))
        return ORPC_EINVAL;
    uint32_t m = 0, l = 0;
    int32_t st = 0;
    const void *d = NULL;
    int rc = rpc_coll_rec_next(out, out_len, pos, &m, &st, &d, &l);
    if (rc < 0)
        return ORPC_EPROTO;
    if (rc > 0) {
        if (member)
            *member = (int)m;
        if (status)
            *status = st;
        if (data)
            *data = d;
        if (len)
            *len = l;
    }
    return rc;
}

RPC_EXPORT int orpc_call_member(orpc_call_t *c)
{
    return c ? c->coll_rank : ORPC_EINVAL;
}

RPC_EXPORT int orpc_call_members(orpc_call_t *c)
{
    return c ? c->coll_n : ORPC_EINVAL;
}
