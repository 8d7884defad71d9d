// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bulk data: the client's exposures (registration cache, deadlines) and the
 * server's checked pulls and pushes. shm checks neither keys nor bounds on
 * RMA, so nothing a descriptor claims is trusted until its tag, owner,
 * access bits, range and deadline have been checked here.
 *
 * Registration is lazy where it may not be needed: while the instance has
 * same-host connections, an exposure only records its memory, and the
 * provider registration (and the key in the descriptor) is made when it is
 * first encoded for a peer whose server does not copy the bytes itself
 * (process_vm_*): a remote server, one that refused the copies at connect
 * time, or a service with any such context. Without same-host connections
 * exposures register at once, as before.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"

/* --------------------------------------------------- registration cache */

static rpc_mr_t *cache_find(orpc_t *r, const char *buf, size_t len, unsigned access)
{
    for (rpc_mr_t *m = r->mrs; m; m = m->next)
        if (buf >= m->base && len <= m->len && (size_t)(buf - m->base) <= m->len - len &&
            (m->access & access) == access)
            return m;
    return NULL;
}

static void mr_unlink_free(orpc_t *r, rpc_mr_t *m)
{
    rpc_mr_t **link = &r->mrs;
    while (*link && *link != m)
        link = &(*link)->next;
    if (*link)
        *link = m->next;
    cdt_bulk_release(r->ep, &m->reg);
    free(m);
    r->nmrs--;
    r->st.mr_live--;
}

/* Keeps at most mr_cache_max unused registrations, dropping the oldest. */
static void cache_trim(orpc_t *r, int limit)
{
    while (r->nmrs > limit) {
        rpc_mr_t *old = NULL;
        for (rpc_mr_t *m = r->mrs; m; m = m->next)
            if (m->refs == 0 && (old == NULL || m->lru < old->lru))
                old = m;
        if (old == NULL)
            return;
        mr_unlink_free(r, old);
    }
}

static orpc_bulk_t *bulk_alloc(orpc_t *r)
{
    orpc_bulk_t *b = r->bulk_free;
    if (b) {
        r->bulk_free = b->next;
        return b;
    }
    return malloc(sizeof(*b));
}

/* One piece of a list exposure, with its own registration. */
struct rpc_bulk_lseg {
    char *buf;
    size_t len;
    rpc_mr_t *mr; /* NULL: symmetric memory or empty */
    cdt_bulk_reg_t reg; /* key (or raw key) and rbase of buf */
};

/*
 * Registers [buf, buf+len) or finds it in the cache; lock held. *mr_p: the
 * cache entry referenced (NULL: nothing to keep); *out: key (or raw key)
 * and rbase of buf.
 */
static int reg_range(orpc_t *r, char *buf, size_t len, unsigned access, rpc_mr_t **mr_p,
                     cdt_bulk_reg_t *out)
{
    *mr_p = NULL;
    rpc_mr_t *m = r->mr_cache_on ? cache_find(r, buf, len, access) : NULL;
    if (m) {
        r->st.mr_cache_hits++;
    } else {
        /* A same-host-only client registers for a peer that needs it: the
         * endpoint opens now. */
        int rc = rpc_need_endpoint(r);
        if (rc != ORPC_OK)
            return rc;
        cdt_bulk_reg_t reg;
        shm_status_t st = cdt_bulk_expose(r->ep, buf, len, access, &reg);
        if (st != SHM_OK)
            return rpc_rc(st);
        if (reg.raw_len > RPC_BULK_RAW_MAX) {
            shm_error("provider %s hands out raw memory keys of %zu bytes; a bulk descriptor "
                      "carries at most %d", r->prov, reg.raw_len, RPC_BULK_RAW_MAX);
            cdt_bulk_release(r->ep, &reg);
            return ORPC_ENOSYS;
        }
        if (reg.mr == NULL) { /* symmetric memory, or nothing: no registration to keep */
            *out = reg;
            return ORPC_OK;
        }
        r->st.mr_cache_misses++;
        if ((m = calloc(1, sizeof(*m))) == NULL) {
            cdt_bulk_release(r->ep, &reg);
            return ORPC_ENOMEM;
        }
        m->base = buf;
        m->len = len;
        m->access = access;
        m->reg = reg;
        m->next = r->mrs;
        r->mrs = m;
        r->nmrs++;
        r->st.mr_live++;
    }
    m->refs++;
    m->lru = ++r->lru_clock;
    *mr_p = m;
    *out = m->reg;
    out->mr = NULL; /* the cache entry owns it */
    out->rbase = m->reg.rbase + (uint64_t)(buf - m->base);
    return ORPC_OK;
}

/* Drops one reference to a cache entry (NULL: none). */
static void mr_unref(orpc_t *r, rpc_mr_t *m)
{
    if (m == NULL)
        return;
    m->refs--;
    m->lru = ++r->lru_clock;
    if (!r->mr_cache_on && m->refs == 0)
        mr_unlink_free(r, m);
    else
        cache_trim(r, r->mr_cache_max);
}

static int expose_check(orpc_t *r, orpc_bulk_t **bulk_p, unsigned access, const char *what)
{
    if (r == NULL || bulk_p == NULL || access == 0 || (access & ~(unsigned)ORPC_BULK_RW))
        return ORPC_EINVAL;
    if (r->ep == NULL && r->sq == NULL) {
        shm_error("%s: look a server up first (the endpoint opens then)", what);
        return ORPC_EINVAL;
    }
    return ORPC_OK;
}

/* A fresh exposure (lock held); NULL: no memory. */
static orpc_bulk_t *bulk_new(orpc_t *r, char *buf, size_t len, unsigned access, int ttl_ms)
{
    orpc_bulk_t *b = bulk_alloc(r);
    if (b == NULL)
        return NULL;
    memset(b, 0, sizeof(*b));
    b->rpc = r;
    b->buf = buf;
    b->len = len;
    b->access = access;
    b->ttl_ms = ttl_ms > 0 ? ttl_ms : r->bulk_ttl_ms;
    b->start_ns = rpc_now_ns();
    return b;
}

static void bulk_unalloc(orpc_t *r, orpc_bulk_t *b)
{
    b->next = r->bulk_free;
    r->bulk_free = b;
}

/* Raw keys (FI_MR_RAW): the table of a list's distinct keys, each segment's
 * key field its index (w->raw_len 0: 64-bit keys, w untouched). -1: keys
 * of different sizes. */
static int list_raw_keys(const orpc_bulk_t *b, rpc_bulk_wire_t *w)
{
    w->raw_len = 0;
    w->nkeys = 0;
    for (size_t i = 0; i < b->nseg; i++) {
        const cdt_bulk_reg_t *g = &b->segs[i].reg;
        if (b->segs[i].len == 0 || g->raw_len == 0)
            continue;
        if (w->raw_len && g->raw_len != w->raw_len)
            return -1;
        w->raw_len = (uint8_t)g->raw_len;
        unsigned k = 0;
        while (k < w->nkeys && (w->rawkey[k].base != g->raw_base ||
                                memcmp(w->rawkey[k].key, g->raw, g->raw_len) != 0))
            k++;
        if (k == w->nkeys) {
            w->rawkey[k].base = g->raw_base;
            memcpy(w->rawkey[k].key, g->raw, g->raw_len);
            w->nkeys++;
        }
    }
    if (w->raw_len)
        for (size_t i = 0; i < b->nseg; i++) {
            const cdt_bulk_reg_t *g = &b->segs[i].reg;
            unsigned k = 0;
            while (b->segs[i].len && k < w->nkeys &&
                   (w->rawkey[k].base != g->raw_base ||
                    memcmp(w->rawkey[k].key, g->raw, g->raw_len) != 0))
                k++;
            w->seg[i].key = k < w->nkeys ? k : 0;
        }
    return 0;
}

/* Bytes of b's descriptor as it is registered now. */
static size_t bulk_wire_bytes(const orpc_bulk_t *b)
{
    if (b->kind != RPC_BULK_LIST)
        return b->kind == RPC_BULK_STRIDED ? RPC_BULK_WIRE + RPC_BULK_SEG_WIRE : RPC_BULK_WIRE;
    static __thread rpc_bulk_wire_t w; /* large: not on the stack */
    w.kind = RPC_BULK_LIST;
    w.nseg = (uint32_t)b->nseg;
    if (list_raw_keys(b, &w) != 0)
        return 0;
    return rpc_bulk_wire_len(&w);
}

static void lsegs_unref(orpc_t *r, orpc_bulk_t *b);

/* A list's registration: segments close together (the span at most 1/8
 * larger than their sum) share one over the span (one cache entry, one
 * region for the provider); others are registered one by one. Raw keys of
 * as many registrations as do not fit a descriptor (RPC_BULK_WIRE_MAX):
 * one over the span after all. Lock held. */
static int reg_list(orpc_t *r, orpc_bulk_t *b)
{
    struct rpc_bulk_lseg *ls = b->segs;
    char *lo = NULL, *hi = NULL;
    size_t nonempty = 0;
    for (size_t i = 0; i < b->nseg; i++) {
        if (ls[i].len == 0)
            continue;
        nonempty++;
        if (lo == NULL || ls[i].buf < lo)
            lo = ls[i].buf;
        if (hi == NULL || ls[i].buf + ls[i].len > hi)
            hi = ls[i].buf + ls[i].len;
    }
    int span = nonempty > 1 && (size_t)(hi - lo) <= b->len + b->len / 8;
    for (int pass = 0; pass < 2; pass++) {
        cdt_bulk_reg_t sr;
        /* A provider that touches the pages may refuse a span with holes: then one by one. */
        if (span && reg_range(r, lo, (size_t)(hi - lo), b->access, &b->mr, &sr) != ORPC_OK)
            span = 0;
        if (span) {
            for (size_t i = 0; i < b->nseg; i++) {
                ls[i].reg = sr;
                ls[i].reg.rbase = ls[i].len ? sr.rbase + (uint64_t)(ls[i].buf - lo) : 0;
            }
            return ORPC_OK;
        }
        if (pass == 1)
            break;
        for (size_t i = 0; i < b->nseg; i++) {
            int rc = reg_range(r, ls[i].buf, ls[i].len, b->access, &ls[i].mr, &ls[i].reg);
            if (rc != ORPC_OK)
                return rc; /* those registered are dropped with the exposure */
        }
        size_t need = bulk_wire_bytes(b);
        if (need > 0 && need <= RPC_BULK_WIRE_MAX)
            return ORPC_OK;
        lsegs_unref(r, b);
        span = nonempty > 1;
    }
    shm_error("a list of %zu segments on provider %s: their raw memory keys do not fit one "
              "descriptor (%d bytes), nor does one registration cover them all",
              b->nseg, r->prov, RPC_BULK_WIRE_MAX);
    return ORPC_ERANGE;
}

/* Live unregistered exposures are listed, so that orpc_mr_cache_evict
 * reports their memory as busy as it does registered ones. */
static void lazy_link(orpc_t *r, orpc_bulk_t *b)
{
    b->lz_prev = NULL;
    b->lz_next = r->bulk_lazy;
    if (r->bulk_lazy)
        r->bulk_lazy->lz_prev = b;
    r->bulk_lazy = b;
    b->lazy = 1;
}

static void lazy_unlink(orpc_t *r, orpc_bulk_t *b)
{
    if (!b->lazy)
        return;
    if (b->lz_prev)
        b->lz_prev->lz_next = b->lz_next;
    else
        r->bulk_lazy = b->lz_next;
    if (b->lz_next)
        b->lz_next->lz_prev = b->lz_prev;
    b->lazy = 0;
}

/* b exposes memory in [lo, hi). */
static int bulk_overlaps(const orpc_bulk_t *b, const char *lo, const char *hi)
{
    if (b->kind != RPC_BULK_LIST)
        return b->len && b->buf < hi && lo < b->buf + b->len;
    for (size_t i = 0; i < b->nseg; i++)
        if (b->segs[i].len && b->segs[i].buf < hi && lo < b->segs[i].buf + b->segs[i].len)
            return 1;
    return 0;
}

/* Registers an exposure with the provider (once); lock held. */
static int bulk_register(orpc_t *r, orpc_bulk_t *b)
{
    if (b->registered)
        return ORPC_OK;
    int rc = b->kind == RPC_BULK_LIST
                 ? reg_list(r, b)
                 : reg_range(r, b->buf, b->len, b->access, &b->mr, &b->reg);
    if (rc == ORPC_OK) {
        b->registered = 1;
        lazy_unlink(r, b);
    }
    return rc;
}

/*
 * At expose time: registers now, unless the instance talks to same-host
 * servers, whose copies need no registration (then at the first encode for
 * a peer that needs it). Unregistered, a descriptor carries key 0 and
 * remote addresses marked RPC_BULK_NOREG. Lock held.
 */
static int bulk_reg_now(orpc_t *r, orpc_bulk_t *b)
{
    b->reg.key = 0;
    b->reg.raw_len = 0;
    b->reg.rbase = (uint64_t)(uintptr_t)b->buf ^ RPC_BULK_NOREG;
    if (r->sq && rpc_sq_nconns(r) > 0) {
        lazy_link(r, b);
        return ORPC_OK;
    }
    return bulk_register(r, b);
}

/* The server behind p copies this client's bulk data itself (every context
 * of a service handle): no registration needed. Lock held. */
static int peer_copies(const orpc_peer_t *p)
{
    if (p->nctx > 1) {
        for (int i = 0; i < p->nctx; i++)
            if (!rpc_sq_copies(p->ctxp[i]->sq))
                return 0;
        return 1;
    }
    return rpc_sq_copies(p->sq);
}

RPC_EXPORT int orpc_bulk_expose(orpc_t *r, void *buf, size_t len, unsigned access, int ttl_ms,
                                orpc_bulk_t **bulk_p)
{
    int rc = expose_check(r, bulk_p, access, "orpc_bulk_expose");
    if (rc != ORPC_OK || (len && buf == NULL))
        return rc != ORPC_OK ? rc : ORPC_EINVAL;
    rpc_lock(r);
    orpc_bulk_t *b = bulk_new(r, buf, len, access, ttl_ms);
    if (b == NULL) {
        rpc_unlock(r);
        return ORPC_ENOMEM;
    }
    rc = bulk_reg_now(r, b);
    if (rc != ORPC_OK)
        bulk_unalloc(r, b);
    rpc_unlock(r);
    if (rc == ORPC_OK)
        *bulk_p = b;
    return rc;
}

RPC_EXPORT int orpc_bulk_expose_sg(orpc_t *r, const orpc_seg_t *segs, size_t nseg,
                                   unsigned access, int ttl_ms, orpc_bulk_t **bulk_p)
{
    int rc = expose_check(r, bulk_p, access, "orpc_bulk_expose_sg");
    if (rc != ORPC_OK)
        return rc;
    if (segs == NULL || nseg == 0)
        return ORPC_EINVAL;
    if (nseg > ORPC_BULK_SEG_MAX) {
        shm_error("orpc_bulk_expose_sg: %zu segments, at most %d in one descriptor "
                  "(ORPC_BULK_SEG_MAX)", nseg, ORPC_BULK_SEG_MAX);
        return ORPC_ERANGE;
    }
    size_t total = 0;
    for (size_t i = 0; i < nseg; i++) {
        uintptr_t a = (uintptr_t)segs[i].base;
        if (segs[i].len && (segs[i].base == NULL || a + segs[i].len < a)) {
            shm_error("orpc_bulk_expose_sg: segment %zu (%p, %zu bytes) is not memory", i,
                      segs[i].base, segs[i].len);
            return ORPC_EINVAL;
        }
        if (total + segs[i].len < total || segs[i].len > (1ull << 56))
            return ORPC_ERANGE;
        total += segs[i].len;
    }
    if (total > (1ull << 56))
        return ORPC_ERANGE;
    struct rpc_bulk_lseg *ls = calloc(nseg, sizeof(*ls));
    if (ls == NULL)
        return ORPC_ENOMEM;
    rpc_lock(r);
    orpc_bulk_t *b = bulk_new(r, segs[0].base, total, access, ttl_ms);
    if (b == NULL) {
        rpc_unlock(r);
        free(ls);
        return ORPC_ENOMEM;
    }
    b->kind = RPC_BULK_LIST;
    b->segs = ls;
    for (size_t i = 0; i < nseg; i++) {
        ls[i].buf = segs[i].base;
        ls[i].len = segs[i].len;
        ls[i].reg.rbase = (uint64_t)(uintptr_t)ls[i].buf ^ RPC_BULK_NOREG;
    }
    b->nseg = nseg;
    rc = bulk_reg_now(r, b);
    if (rc != ORPC_OK) {
        rpc_bulk_drop(r, b);
        rpc_unlock(r);
        return rc;
    }
    rpc_unlock(r);
    *bulk_p = b;
    return ORPC_OK;
}

RPC_EXPORT int orpc_bulk_expose_strided(orpc_t *r, void *base, size_t rows, size_t row_bytes,
                                        size_t pitch, unsigned access, int ttl_ms,
                                        orpc_bulk_t **bulk_p)
{
    int rc = expose_check(r, bulk_p, access, "orpc_bulk_expose_strided");
    if (rc != ORPC_OK)
        return rc;
    const size_t lim = (size_t)1 << 56;
    if (rows > 1 && pitch < row_bytes) {
        shm_error("orpc_bulk_expose_strided: pitch %zu < row_bytes %zu: rows overlap", pitch,
                  row_bytes);
        return ORPC_EINVAL;
    }
    if (rows > lim || row_bytes > lim || pitch > lim ||
        (row_bytes && rows > lim / row_bytes) ||
        (rows > 1 && pitch > (lim - row_bytes) / (rows - 1)))
        return ORPC_ERANGE;
    size_t span = rows && row_bytes ? (rows - 1) * pitch + row_bytes : 0;
    if (span && (base == NULL || (uintptr_t)base + span < (uintptr_t)base))
        return ORPC_EINVAL;
    rpc_lock(r);
    orpc_bulk_t *b = bulk_new(r, base, span, access, ttl_ms);
    if (b == NULL) {
        rpc_unlock(r);
        return ORPC_ENOMEM;
    }
    b->kind = RPC_BULK_STRIDED;
    b->rows = rows;
    b->row_bytes = row_bytes;
    b->pitch = pitch;
    rc = bulk_reg_now(r, b);
    if (rc != ORPC_OK)
        bulk_unalloc(r, b);
    rpc_unlock(r);
    if (rc == ORPC_OK)
        *bulk_p = b;
    return rc;
}

/*
 * A list registered under raw keys (FI_MR_RAW) encodes to more bytes than
 * the same list unregistered (its further keys): the answer is kept, and an
 * encode that would write more is refused (bulk_encode_locked).
 */
RPC_EXPORT size_t orpc_bulk_encoded_size(const orpc_bulk_t *b)
{
    if (b == NULL)
        return 0;
    orpc_t *r = b->rpc;
    rpc_lock(r);
    size_t n = bulk_wire_bytes(b);
    if (b->kind == RPC_BULK_LIST)
        ((orpc_bulk_t *)b)->size_told = n;
    rpc_unlock(r);
    return n;
}

/* Encodes b for p; lock held (the registration, where p needs one). */
int rpc_bulk_encode_locked(orpc_bulk_t *b, orpc_peer_t *p, void *out)
{
    orpc_t *r = b->rpc;
    uint64_t now = rpc_now_ns();
    uint64_t end = b->start_ns + (uint64_t)b->ttl_ms * 1000000ull;
    if (now >= end)
        return ORPC_EEXPIRED;
    if (!b->registered && !peer_copies(p)) {
        int rc = bulk_register(r, b);
        if (rc != ORPC_OK)
            return rc;
    }
    uint8_t self_len;
    const uint8_t *self = rpc_self_name(r, p, &self_len);
    static __thread rpc_bulk_wire_t w; /* large: not on the stack */
    memset(&w, 0, offsetof(rpc_bulk_wire_t, seg));
    w.addr = (uint64_t)(uintptr_t)b->buf;
    w.len = b->len;
    w.key = b->reg.key;
    w.rbase = b->reg.rbase;
    w.access = (uint8_t)b->access;
    w.owner_len = self_len;
    w.kind = (uint8_t)b->kind;
    if (b->kind == RPC_BULK_LIST) {
        w.key = w.rbase = 0;
        w.nseg = (uint32_t)b->nseg;
        for (size_t i = 0; i < b->nseg; i++)
            w.seg[i] = (rpc_bulk_seg_t){.addr = (uint64_t)(uintptr_t)b->segs[i].buf,
                                        .len = b->segs[i].len, .key = b->segs[i].reg.key,
                                        .rbase = b->segs[i].reg.rbase};
        if (list_raw_keys(b, &w) != 0)
            return ORPC_EPROTO;
        if (b->size_told && rpc_bulk_wire_len(&w) != b->size_told) {
            shm_error("orpc_bulk_encode: the list's descriptor is %zu bytes now that it is "
                      "registered under raw memory keys (provider %s), not the %zu that "
                      "orpc_bulk_encoded_size said before; ask it again",
                      rpc_bulk_wire_len(&w), r->prov, b->size_told);
            return ORPC_ERANGE; /* until it is asked again */
        }
    } else if (b->reg.raw_len) { /* FI_MR_RAW: the key is index 0 of the raw keys */
        w.key = 0;
        w.raw_len = (uint8_t)b->reg.raw_len;
        w.nkeys = 1;
        w.rawkey[0].base = b->reg.raw_base;
        memcpy(w.rawkey[0].key, b->reg.raw, b->reg.raw_len);
    }
    if (b->kind == RPC_BULK_STRIDED) {
        w.len = b->rows * b->row_bytes;
        w.rows = b->rows;
        w.row_bytes = b->row_bytes;
        w.pitch = b->pitch;
    }
    /* What is left of the lifetime, rounded down: the server's deadline
     * (its arrival + this) stays before ours (start + 2 x ttl). */
    w.ttl_ms = (uint32_t)((end - now) / 1000000ull);
    if (w.ttl_ms == 0)
        return ORPC_EEXPIRED;
    memcpy(w.owner, self, self_len);
    if (rpc_bulk_encode(out, &w, p->auth) != 0)
        return ORPC_ERANGE; /* raw keys that do not fit: reg_range and reg_list prevent it */
    if (b->first_enc_ns == 0)
        b->first_enc_ns = now;
    return ORPC_OK;
}

RPC_EXPORT int orpc_bulk_encode(orpc_bulk_t *b, orpc_peer_t *p, void *out)
{
    if (b == NULL || p == NULL || out == NULL || p->rpc != b->rpc)
        return ORPC_EINVAL;
    orpc_t *r = b->rpc;
    rpc_lock(r);
    int rc = rpc_bulk_encode_locked(b, p, out);
    rpc_unlock(r);
    return rc;
}

RPC_EXPORT int orpc_bulk_release(orpc_bulk_t *b)
{
    if (b == NULL)
        return ORPC_EINVAL;
    orpc_t *r = b->rpc;
    rpc_lock(r);
    /* A call that may have carried it failed without an answer: the server
     * may still touch it until its deadline, so keep it until ours. */
    if (b->first_enc_ns && r->last_failed_send_ns >= b->first_enc_ns) {
        uint64_t until = b->start_ns + 2ull * (uint64_t)b->ttl_ms * 1000000ull;
        rpc_idle_t idle = RPC_IDLE_INIT;
        SHM_DEBUG(RPC, "bulk %p: a call failed, held until its client deadline", (void *)b->buf);
        while (rpc_now_ns() < until) {
            int n = rpc_harvest(r);
            rpc_unlock(r);
            if (n == 0)
                rpc_idle(&idle);
            rpc_lock(r);
        }
    }
    rpc_bulk_drop(r, b);
    rpc_unlock(r);
    return ORPC_OK;
}

/* Drops the segments' own registrations (not the span's). */
static void lsegs_unref(orpc_t *r, orpc_bulk_t *b)
{
    for (size_t i = 0; i < b->nseg; i++) {
        mr_unref(r, b->segs[i].mr);
        b->segs[i].mr = NULL;
    }
}

void rpc_bulk_drop(orpc_t *r, orpc_bulk_t *b)
{
    lazy_unlink(r, b);
    mr_unref(r, b->mr);
    b->mr = NULL;
    lsegs_unref(r, b);
    free(b->segs);
    b->segs = NULL;
    b->nseg = 0;
    bulk_unalloc(r, b);
}

/* A call that carried it failed without an answer: the server may touch it
 * until its deadline, so it stays registered until ours (start + 2 x ttl). */
void rpc_bulk_defer(orpc_t *r, orpc_bulk_t *b)
{
    b->release_ns = b->start_ns + 2ull * (uint64_t)b->ttl_ms * 1000000ull;
    b->next = r->bulk_deferred;
    r->bulk_deferred = b;
}

void rpc_bulk_reap(orpc_t *r, int force)
{
    uint64_t now = rpc_now_ns();
    for (orpc_bulk_t **link = &r->bulk_deferred; *link;) {
        orpc_bulk_t *b = *link;
        if (force || now >= b->release_ns) {
            *link = b->next;
            rpc_bulk_drop(r, b);
        } else {
            link = &b->next;
        }
    }
}

RPC_EXPORT int orpc_mr_cache_evict(orpc_t *r, const void *buf, size_t len)
{
    if (r == NULL)
        return ORPC_EINVAL;
    rpc_lock(r);
    const char *lo = buf, *hi = lo + len;
    int busy = 0;
    for (rpc_mr_t *m = r->mrs, *next; m; m = next) {
        next = m->next;
        if (m->base < hi && lo < m->base + m->len) {
            if (m->refs == 0)
                mr_unlink_free(r, m);
            else
                busy = 1;
        }
    }
    /* Exposed without a registration (a same-host server copies): as busy. */
    for (orpc_bulk_t *b = r->bulk_lazy; b && !busy; b = b->lz_next)
        busy = bulk_overlaps(b, lo, hi);
    rpc_unlock(r);
    return busy ? ORPC_EAGAIN : ORPC_OK;
}

void rpc_bulk_fini(orpc_t *r)
{
    rpc_rawmap_fini(r); /* before the endpoint (and maybe its domain) closes */
    rpc_bulk_reap(r, 1);
    while (r->mrs)
        mr_unlink_free(r, r->mrs);
    while (r->bulk_free) {
        orpc_bulk_t *b = r->bulk_free;
        r->bulk_free = b->next;
        free(b);
    }
}

