// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bulk data: the client's exposures (registration cache, deadlines) and the
 * server's checked pulls and pushes. shm checks neither keys nor bounds on
 * RMA, so nothing a descriptor claims is trusted until its tag, owner,
 * access bits, range and deadline have been checked here.
 */
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

RPC_EXPORT int orpc_bulk_expose(orpc_t *r, void *buf, size_t len, unsigned access, int ttl_ms,
                                orpc_bulk_t **bulk_p)
{
    if (r == NULL || bulk_p == NULL || (len && buf == NULL) || access == 0 ||
        (access & ~(unsigned)ORPC_BULK_RW))
        return ORPC_EINVAL;
    if (r->ep == NULL) {
        shm_error("orpc_bulk_expose: look a server up first (the endpoint opens then)");
        return ORPC_EINVAL;
    }
    rpc_lock(r);
    int rc = ORPC_OK;
    orpc_bulk_t *b = bulk_alloc(r);
    if (b == NULL) {
        rpc_unlock(r);
        return ORPC_ENOMEM;
    }
    memset(b, 0, sizeof(*b));
    b->rpc = r;
    b->buf = buf;
    b->len = len;
    b->access = access;
    b->ttl_ms = ttl_ms > 0 ? ttl_ms : r->bulk_ttl_ms;
    b->start_ns = rpc_now_ns();
    rpc_mr_t *m = r->mr_cache_on ? cache_find(r, buf, len, access) : NULL;
    if (m) {
        r->st.mr_cache_hits++;
    } else {
        cdt_bulk_reg_t reg;
        shm_status_t st = cdt_bulk_expose(r->ep, buf, len, access, &reg);
        if (st != SHM_OK) {
            rc = rpc_rc(st);
            goto fail;
        }
        if (reg.mr == NULL) { /* symmetric memory, or nothing: no registration to keep */
            b->reg = reg;
            goto out;
        }
        r->st.mr_cache_misses++;
        if ((m = calloc(1, sizeof(*m))) == NULL) {
            cdt_bulk_release(r->ep, &reg);
            rc = ORPC_ENOMEM;
            goto fail;
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
    b->mr = m;
    b->reg.key = m->reg.key;
    b->reg.rbase = m->reg.rbase + (uint64_t)(b->buf - m->base);
out:
    rpc_unlock(r);
    *bulk_p = b;
    return ORPC_OK;
fail:
    b->next = r->bulk_free;
    r->bulk_free = b;
    rpc_unlock(r);
    return rc;
}

RPC_EXPORT int orpc_bulk_encode(orpc_bulk_t *b, orpc_peer_t *p, void *out)
{
    if (b == NULL || p == NULL || out == NULL || p->rpc != b->rpc)
        return ORPC_EINVAL;
    orpc_t *r = b->rpc;
    uint64_t now = rpc_now_ns();
    uint64_t end = b->start_ns + (uint64_t)b->ttl_ms * 1000000ull;
    if (now >= end)
        return ORPC_EEXPIRED;
    rpc_bulk_wire_t w = {.addr = (uint64_t)(uintptr_t)b->buf, .len = b->len, .key = b->reg.key,
                         .rbase = b->reg.rbase, .access = (uint8_t)b->access,
                         .owner_len = r->self_alen};
    /* What is left of the lifetime, rounded down: the server's deadline
     * (its arrival + this) stays before ours (start + 2 x ttl). */
    w.ttl_ms = (uint32_t)((end - now) / 1000000ull);
    if (w.ttl_ms == 0)
        return ORPC_EEXPIRED;
    memcpy(w.owner, r->self_addr, r->self_alen);
    rpc_bulk_encode(out, &w, p->auth);
    if (b->first_enc_ns == 0)
        b->first_enc_ns = now;
    return ORPC_OK;
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

void rpc_bulk_drop(orpc_t *r, orpc_bulk_t *b)
{
    rpc_mr_t *m = b->mr;
    if (m) {
        m->refs--;
        m->lru = ++r->lru_clock;
        if (!r->mr_cache_on && m->refs == 0)
            mr_unlink_free(r, m);
        else
            cache_trim(r, r->mr_cache_max);
    }
    b->next = r->bulk_free;
    r->bulk_free = b;
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
    rpc_unlock(r);
    return busy ? ORPC_EAGAIN : ORPC_OK;
}

void rpc_bulk_fini(orpc_t *r)
{
    rpc_bulk_reap(r, 1);
    while (r->mrs)
        mr_unlink_free(r, r->mrs);
    while (r->bulk_free) {
        orpc_bulk_t *b = r->bulk_free;
        r->bulk_free = b->next;
        free(b);
    }
}

/* ----------------------------------------------------------- server side */

static int refuse(orpc_t *r, int rc, const char *why)
{
    r->st.bulk_refused++;
    SHM_DEBUG(RPC, "bulk refused: %s", why);
    return rc;
}

RPC_EXPORT int orpc_bulk_decode(orpc_call_t *c, const void *wire, orpc_bulk_desc_t *d)
{
    if (c == NULL || wire == NULL || d == NULL || c->state != RPC_CALL_RUNNING)
        return ORPC_EINVAL;
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = rpc_bulk_check(r, c->peer, c->arrival_ns, wire, d);
    rpc_unlock(r);
    return rc;
}

int rpc_bulk_check(orpc_t *r, orpc_peer_t *p, uint64_t arrival_ns, const void *wire,
                   orpc_bulk_desc_t *d)
{
    rpc_bulk_wire_t w;
    int rc = ORPC_OK;
    switch (rpc_bulk_decode(wire, r->auth, &w)) {
    case RPC_BULK_OK: break;
    case RPC_BULK_TAG_BAD: rc = refuse(r, ORPC_EAUTH, "tag"); break;
    case RPC_BULK_ACCESS_BAD: rc = refuse(r, ORPC_EPERM, "access bits"); break;
    case RPC_BULK_RANGE_BAD: rc = refuse(r, ORPC_ERANGE, "range wraps"); break;
    case RPC_BULK_TTL_BAD: rc = refuse(r, ORPC_EEXPIRED, "expired when sent"); break;
    default: rc = refuse(r, ORPC_EPROTO, "not a descriptor"); break;
    }
    /* Only the caller's own memory: never RMA into a third process. */
    if (rc == ORPC_OK && (w.owner_len != p->alen || memcmp(w.owner, p->addr, w.owner_len) != 0))
        rc = refuse(r, ORPC_EPERM, "owner is not the caller");
    if (rc != ORPC_OK)
        return rc;
    d->addr = w.addr;
    d->len = w.len;
    d->key = w.key;
    d->rbase = w.rbase;
    d->access = w.access;
    d->deadline = arrival_ns + (uint64_t)w.ttl_ms * 1000000ull;
    d->owner_len = w.owner_len;
    memcpy(d->owner, w.owner, w.owner_len);
    return ORPC_OK;
}

static int bulk_issue(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off, void *buf,
                      size_t len, int is_get)
{
    /* PULLING: the library pulls a call's arguments before its handler runs. */
    if (c == NULL || d == NULL || (len && buf == NULL) ||
        (c->state != RPC_CALL_RUNNING && c->state != RPC_CALL_PULLING))
        return ORPC_EINVAL;
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = ORPC_OK;
    if (!rpc_bulk_range_ok(d->len, off, len))
        rc = refuse(r, ORPC_ERANGE, "outside the descriptor");
    else if (!(d->access & (is_get ? ORPC_BULK_READ : ORPC_BULK_WRITE)))
        rc = refuse(r, ORPC_EPERM, is_get ? "not readable" : "not writable");
    else if (rpc_now_ns() > d->deadline)
        rc = refuse(r, ORPC_EEXPIRED, "past the deadline");
    else if (d->owner_len != c->peer->alen || memcmp(d->owner, c->peer->addr, d->owner_len))
        rc = refuse(r, ORPC_EPERM, "owner is not the caller");
    /* Same host: a copy into or out of the client (process_vm_*), done at
     * once; ORPC_ENOSYS where that is not allowed: through the provider. */
    int sqrc = ORPC_ENOSYS;
    if (rc == ORPC_OK && len > 0 && (c->peer->sq || c->peer->sq_gone))
        sqrc = c->peer->sq ? rpc_sq_bulk(c->peer->sq, is_get, buf, d->addr + off, len)
                           : ORPC_EPEER;
    if (sqrc == ORPC_OK) {
        r->st.bulk_bytes += len;
    } else if (sqrc != ORPC_ENOSYS) {
        r->st.bulk_errors++;
        rc = c->bulk_err = sqrc;
    } else if (rc == ORPC_OK && len > 0) {
        uint64_t nf = 0;
        shm_status_t st = is_get ? cdt_bulk_get(r->ep, c->peer->fa, buf, d->rbase + off, d->key,
                                                len, &c->bulk_kind, &nf)
                                 : cdt_bulk_put(r->ep, c->peer->fa, buf, d->rbase + off, d->key,
                                                len, &c->bulk_kind, &nf);
        c->bulk_issued += nf;
        if (d->deadline > c->bulk_deadline)
            c->bulk_deadline = d->deadline;
        if (st != SHM_OK) {
            r->st.bulk_errors++;
            rc = c->bulk_err = ORPC_EFABRIC;
        } else {
            r->st.bulk_bytes += len;
        }
    }
    rpc_unlock(r);
    return rc;
}

/*
 * Waits for this call's fragments only (each reports to the CQ), so a
 * transfer to a dead peer holds up nobody else. Past the descriptors'
 * deadline plus a grace the peer is given up: the call answers EPEER and is
 * kept aside (a zombie) until the provider ends its transfers.
 */
int rpc_bulk_wait_locked(orpc_t *r, struct orpc_call *c)
{
    rpc_idle_t idle = RPC_IDLE_INIT;
    while (c->bulk_done < c->bulk_issued) {
        if (rpc_harvest(r) > 0) {
            rpc_idle_reset(&idle);
            continue;
        }
        if (rpc_now_ns() > c->bulk_deadline + RPC_BULK_GRACE_NS) {
            SHM_DEBUG(RPC, "bulk transfers of a call overran their deadline: peer given up");
            c->peer->failed = 1;
            r->st.bulk_errors++;
            return c->bulk_err = ORPC_EPEER;
        }
        rpc_unlock(r);
        rpc_idle(&idle);
        rpc_lock(r);
    }
    int rc = c->bulk_err;
    c->bulk_err = 0;
    return rc;
}

int rpc_bulk_pull_args(orpc_t *r, struct orpc_call *c, const orpc_bulk_desc_t *d, void *buf)
{
    (void)r;
    return bulk_issue(c, d, 0, buf, d->len, 1);
}

int rpc_bulk_push_result(orpc_t *r, struct orpc_call *c, const void *buf, size_t len)
{
    int rc = bulk_issue(c, &c->out_desc, 0, (void *)buf, len, 0);
    int wrc = c->bulk_done < c->bulk_issued || c->bulk_err ? rpc_bulk_wait_locked(r, c)
                                                           : ORPC_OK;
    return rc != ORPC_OK ? rc : wrc;
}

RPC_EXPORT int orpc_bulk_iget(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off, void *dst,
                              size_t len)
{
    return bulk_issue(c, d, off, dst, len, 1);
}

RPC_EXPORT int orpc_bulk_iput(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                              const void *src, size_t len)
{
    return bulk_issue(c, d, off, (void *)src, len, 0);
}

RPC_EXPORT int orpc_bulk_wait(orpc_call_t *c)
{
    if (c == NULL || c->state != RPC_CALL_RUNNING)
        return ORPC_EINVAL;
    if (c->bulk_done >= c->bulk_issued && c->bulk_err == 0)
        return ORPC_OK;
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = rpc_bulk_wait_locked(r, c);
    rpc_unlock(r);
    return rc;
}

RPC_EXPORT int orpc_bulk_test(orpc_call_t *c)
{
    if (c == NULL || c->state != RPC_CALL_RUNNING)
        return ORPC_EINVAL;
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = ORPC_EAGAIN;
    if (c->bulk_done < c->bulk_issued)
        rpc_harvest(r);
    if (c->bulk_done >= c->bulk_issued) {
        rc = c->bulk_err;
        c->bulk_err = 0;
    } else if (rpc_now_ns() > c->bulk_deadline + RPC_BULK_GRACE_NS) {
        c->peer->failed = 1;
        rc = ORPC_EPEER;
    }
    rpc_unlock(r);
    return rc;
}

RPC_EXPORT int orpc_bulk_get(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off, void *dst,
                             size_t len)
{
    int rc = bulk_issue(c, d, off, dst, len, 1);
    int wrc = c ? orpc_bulk_wait(c) : ORPC_OK;
    return rc != ORPC_OK ? rc : wrc;
}

RPC_EXPORT int orpc_bulk_put(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                             const void *src, size_t len)
{
    int rc = bulk_issue(c, d, off, (void *)src, len, 0);
    int wrc = c ? orpc_bulk_wait(c) : ORPC_OK;
    return rc != ORPC_OK ? rc : wrc;
}
