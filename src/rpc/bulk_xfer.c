// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bulk data, the server's side: descriptors checked (tag, owner, access,
 * range, deadline) and transfers between a range of a remote descriptor
 * (contiguous, a list of segments, or strided rows) and local memory (one
 * buffer or a list). A transfer is cut where either side's pieces end; each
 * piece is one provider transfer (fragmented by the RMA engine, all in
 * flight) or one entry of a process_vm_readv/writev batch (same host).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/log.h"
#include "rpc/rpc.h"

static int peer_dead_now(orpc_t *r, orpc_peer_t *p);

static int refuse(orpc_t *r, int rc, const char *why)
{
    r->st.bulk_refused++;
    SHM_DEBUG(RPC, "bulk refused: %s", why);
    return rc;
}

RPC_EXPORT int orpc_bulk_decode_n(orpc_call_t *c, const void *wire, size_t avail,
                                  orpc_bulk_desc_t *d)
{
    if (c == NULL || wire == NULL || d == NULL || c->state != RPC_CALL_RUNNING)
        return ORPC_EINVAL;
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = rpc_bulk_check_n(r, c->peer, c->arrival_ns, wire, avail, d);
    rpc_unlock(r);
    return rc;
}

RPC_EXPORT int orpc_bulk_decode(orpc_call_t *c, const void *wire, orpc_bulk_desc_t *d)
{
    return orpc_bulk_decode_n(c, wire, ORPC_BULK_DESC_SIZE, d);
}

RPC_EXPORT size_t orpc_bulk_wire_size(const void *wire, size_t avail)
{
    return rpc_bulk_wire_size(wire, avail);
}

int rpc_bulk_check(orpc_t *r, orpc_peer_t *p, uint64_t arrival_ns, const void *wire,
                   orpc_bulk_desc_t *d)
{
    return rpc_bulk_check_n(r, p, arrival_ns, wire, RPC_BULK_WIRE, d);
}

int rpc_bulk_check_n(orpc_t *r, orpc_peer_t *p, uint64_t arrival_ns, const void *wire,
                     size_t avail, orpc_bulk_desc_t *d)
{
    rpc_bulk_wire_t w;
    int rc = ORPC_OK;
    switch (rpc_bulk_decode_n(wire, avail, r->auth, &w)) {
    case RPC_BULK_OK: break;
    case RPC_BULK_TAG_BAD: rc = refuse(r, ORPC_EAUTH, "tag"); break;
    case RPC_BULK_ACCESS_BAD: rc = refuse(r, ORPC_EPERM, "access bits"); break;
    case RPC_BULK_RANGE_BAD: rc = refuse(r, ORPC_ERANGE, "range wraps"); break;
    case RPC_BULK_TTL_BAD: rc = refuse(r, ORPC_EEXPIRED, "expired when sent"); break;
    case RPC_BULK_SHORT:
        rc = refuse(r, ORPC_ERANGE, "descriptor longer than the bytes given "
                                    "(a scatter-gather one: orpc_bulk_decode_n)");
        break;
    case RPC_BULK_SEGS_BAD:
        rc = rpc_bulk_wire_size(wire, avail) == 0 && avail >= 16
                 ? refuse(r, ORPC_ERANGE, "more segments than ORPC_BULK_SEG_MAX")
                 : refuse(r, ORPC_EPROTO, "shape disagrees with the length");
        break;
    case RPC_BULK_KEYS_BAD: rc = refuse(r, ORPC_EPROTO, "raw memory keys malformed"); break;
    default: rc = refuse(r, ORPC_EPROTO, "not a descriptor"); break;
    }
    /* Only the caller's own memory: never RMA into a third process. A
     * raw-key descriptor carries the owner's keyed hash instead. */
    if (rc == ORPC_OK && (w.raw_len ? w.owner_tag != rpc_bulk_owner_tag(r->auth, p->addr, p->alen)
                                    : w.owner_len != p->alen ||
                                          memcmp(w.owner, p->addr, w.owner_len) != 0))
        rc = refuse(r, ORPC_EPERM, "owner is not the caller");
    if (rc != ORPC_OK)
        return rc;
    d->deadline = arrival_ns + (uint64_t)w.ttl_ms * 1000000ull;
    /* FI_MR_RAW: each raw key mapped here, the key fields become the mapped keys. */
    uint64_t mapped[RPC_BULK_SEG_MAX];
    for (unsigned k = 0; k < w.nkeys && rc == ORPC_OK; k++) {
        rc = rpc_rawmap_get(r, &w.rawkey[k], w.raw_len, d->deadline, &mapped[k]);
        if (rc != ORPC_OK)
            return refuse(r, rc, rc == ORPC_EAGAIN ? "too many raw memory keys mapped"
                                                   : "raw memory key not mapped by the provider");
    }
    d->addr = w.addr;
    d->len = w.len;
    d->key = w.raw_len ? mapped[w.key] : w.key;
    d->rbase = w.rbase;
    d->access = w.access;
    d->owner_len = p->alen; /* checked equal to the descriptor's */
    memcpy(d->owner, p->addr, p->alen);
    d->kind = w.kind;
    d->nseg = w.kind == RPC_BULK_LIST ? w.nseg : 0;
    d->rows = w.rows;
    d->row_bytes = w.row_bytes;
    d->pitch = w.pitch;
    for (unsigned i = 0; i < d->nseg; i++) {
        d->seg[i].addr = w.seg[i].addr;
        d->seg[i].len = w.seg[i].len;
        d->seg[i].key = w.raw_len ? mapped[w.seg[i].key] : w.seg[i].key;
        d->seg[i].rbase = w.seg[i].rbase;
    }
    return ORPC_OK;
}

/*
 * Walks the remote side from a logical offset: each step is the longest
 * contiguous piece (client address, remote address for RMA, key) there.
 */
typedef struct {
    const orpc_bulk_desc_t *d;
    uint64_t off;      /* CONTIG: offset; LIST: offset in seg; STRIDED: column */
    unsigned seg;      /* LIST: segment */
    uint64_t row;      /* STRIDED: row */
} rwalk_t;

static void rwalk_init(rwalk_t *w, const orpc_bulk_desc_t *d, uint64_t off)
{
    memset(w, 0, sizeof(*w));
    w->d = d;
    if (d->kind == ORPC_BULK_LIST) {
        while (w->seg < d->nseg && off >= d->seg[w->seg].len) {
            off -= d->seg[w->seg].len;
            w->seg++;
        }
        w->off = off;
    } else if (d->kind == ORPC_BULK_STRIDED) {
        if (d->row_bytes) {
            w->row = off / d->row_bytes;
            w->off = off % d->row_bytes;
        }
    } else {
        w->off = off;
    }
}

/* Bytes of the piece at the walk's position (0: at the end). */
static uint64_t rwalk_piece(const rwalk_t *w, uint64_t *addr, uint64_t *raddr, uint64_t *key)
{
    const orpc_bulk_desc_t *d = w->d;
    if (d->kind == ORPC_BULK_LIST) {
        if (w->seg >= d->nseg)
            return 0;
        *addr = d->seg[w->seg].addr + w->off;
        *raddr = d->seg[w->seg].rbase + w->off;
        *key = d->seg[w->seg].key;
        return d->seg[w->seg].len - w->off;
    }
    if (d->kind == ORPC_BULK_STRIDED) {
        if (w->row >= d->rows)
            return 0;
        uint64_t at = w->row * d->pitch + w->off;
        *addr = d->addr + at;
        *raddr = d->rbase + at;
        *key = d->key;
        return d->row_bytes - w->off;
    }
    *addr = d->addr + w->off;
    *raddr = d->rbase + w->off;
    *key = d->key;
    return d->len - w->off;
}

static void rwalk_advance(rwalk_t *w, uint64_t n)
{
    const orpc_bulk_desc_t *d = w->d;
    w->off += n;
    if (d->kind == ORPC_BULK_LIST) {
        while (w->seg < d->nseg && w->off >= d->seg[w->seg].len) {
            w->off -= d->seg[w->seg].len;
            w->seg++;
        }
    } else if (d->kind == ORPC_BULK_STRIDED && w->off >= d->row_bytes) {
        w->row++;
        w->off = 0;
    }
}

/* A descriptor a handler may have filled itself: its shape must be sane. */
static int desc_sane(const orpc_bulk_desc_t *d)
{
    if (d->kind == ORPC_BULK_CONTIG)
        return 1;
    if (d->kind == ORPC_BULK_LIST) {
        if (d->nseg > ORPC_BULK_SEG_MAX)
            return 0;
        uint64_t sum = 0;
        for (unsigned i = 0; i < d->nseg; i++) {
            if (sum + d->seg[i].len < sum)
                return 0;
            sum += d->seg[i].len;
        }
        return sum == d->len;
    }
    return d->kind == ORPC_BULK_STRIDED && d->len == d->rows * d->row_bytes &&
           (d->row_bytes == 0 || d->len / d->row_bytes == d->rows);
}

/* Pieces handed to process_vm_* per call. */
#define SQ_BATCH 64

/* Same host: copies a batch of pieces at once. */
static int flush_sq(orpc_call_t *c, int is_get, struct iovec *liov, struct iovec *riov, int nb,
                    int *flushed)
{
    int rc = rpc_sq_bulkv(c->peer->sq, is_get, liov, riov, nb);
    if (rc == ORPC_ENOSYS && *flushed)
        rc = ORPC_EFABRIC; /* refused after a part went: not a fallback */
    *flushed = 1;
    return rc;
}

/* Provider: issues a batch of pieces, several to an operation where it takes them. */
static int flush_fab(orpc_t *r, orpc_call_t *c, const orpc_bulk_desc_t *d, int is_get,
                     const cdt_bulk_piece_t *pcs, int nb)
{
    uint64_t nf = 0;
    if (c->bulk_done >= c->bulk_issued) /* the first in flight (bulk_raw.c) */
        c->bulk_busy_ns = rpc_now_ns();
    shm_status_t st = cdt_bulk_xferv(r->ep, c->peer->fa, is_get, pcs, (size_t)nb, &c->bulk_kind,
                                     &nf);
    c->bulk_issued += nf;
    if (d->deadline > c->bulk_deadline)
        c->bulk_deadline = d->deadline;
    return st == SHM_OK ? ORPC_OK : ORPC_EFABRIC;
}

/*
 * Transfers [off, off + total of loc) of d between the client and the nloc
 * local pieces. Checks first; then the same host copies at once
 * (process_vm_*; ORPC_ENOSYS where that is not allowed: through the
 * provider), and the provider gets one transfer per piece, all in flight.
 */
static int bulk_issue_v(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                        const orpc_seg_t *loc, size_t nloc, int is_get)
{
    /* PULLING: the library pulls a call's arguments before its handler runs. */
    if (c == NULL || d == NULL || (nloc && loc == NULL) ||
        (c->state != RPC_CALL_RUNNING && c->state != RPC_CALL_PULLING))
        return ORPC_EINVAL;
    uint64_t len = 0;
    for (size_t i = 0; i < nloc; i++) {
        if (loc[i].len && loc[i].base == NULL)
            return ORPC_EINVAL;
        if (len + loc[i].len < len)
            return ORPC_ERANGE;
        len += loc[i].len;
    }
    orpc_t *r = c->rpc;
    rpc_lock(r);
    int rc = ORPC_OK;
    if (!desc_sane(d))
        rc = refuse(r, ORPC_EINVAL, "descriptor altered after decode");
    else if (!rpc_bulk_range_ok(d->len, off, len))
        rc = refuse(r, ORPC_ERANGE, "outside the descriptor");
    else if (!(d->access & (is_get ? ORPC_BULK_READ : ORPC_BULK_WRITE)))
        rc = refuse(r, ORPC_EPERM, is_get ? "not readable" : "not writable");
    else if (rpc_now_ns() > d->deadline)
        rc = refuse(r, ORPC_EEXPIRED, "past the deadline");
    else if (d->owner_len != c->peer->alen || memcmp(d->owner, c->peer->addr, d->owner_len))
        rc = refuse(r, ORPC_EPERM, "owner is not the caller");
    if (rc != ORPC_OK || len == 0) {
        rpc_unlock(r);
        return rc;
    }
    int sq = c->peer->sq || c->peer->sq_gone ? 1 : 0;
    if (sq && c->peer->sq == NULL) {
        r->st.bulk_errors++;
        rc = c->bulk_err = ORPC_EPEER;
        rpc_unlock(r);
        return rc;
    }
    struct iovec liov[SQ_BATCH], riov[SQ_BATCH];
    cdt_bulk_piece_t pcs[SQ_BATCH];
    int nb = 0, flushed = 0, noreg = 0;
    uint64_t issued0 = c->bulk_issued;
    for (int pass = sq ? 0 : 1; pass < 2 && rc == ORPC_OK; pass++) {
        rwalk_t w;
        rwalk_init(&w, d, off);
        size_t li = 0;
        uint64_t lo = 0, left = len;
        nb = 0;
        while (left > 0 && rc == ORPC_OK) {
            while (loc[li].len == lo) {
                li++;
                lo = 0;
            }
            uint64_t addr = 0, raddr = 0, key = 0;
            uint64_t n = rwalk_piece(&w, &addr, &raddr, &key);
            if (n > loc[li].len - lo)
                n = loc[li].len - lo;
            char *lp = (char *)loc[li].base + lo;
            if (pass == 1 && raddr == (addr ^ RPC_BULK_NOREG)) {
                noreg = 1; /* exposed for a same-host server that copies: no key */
                rc = ORPC_EPERM;
                break;
            }
            /* A piece that continues the last one on both sides joins it
             * (adjacent segments, full-width rows): fewer copies and ops. */
            int joins = 0;
            if (nb > 0 && pass == 0) {
                struct iovec *l = &liov[nb - 1], *m = &riov[nb - 1];
                joins = (char *)l->iov_base + l->iov_len == lp &&
                        (uint64_t)(uintptr_t)m->iov_base + m->iov_len == addr;
                if (joins)
                    l->iov_len += n, m->iov_len += n;
            } else if (nb > 0) {
                cdt_bulk_piece_t *q = &pcs[nb - 1];
                joins = (char *)q->local + q->len == lp && q->raddr + q->len == raddr &&
                        q->key == key;
                if (joins)
                    q->len += n;
            }
            if (!joins && nb == SQ_BATCH) {
                rc = pass == 0 ? flush_sq(c, is_get, liov, riov, nb, &flushed)
                               : flush_fab(r, c, d, is_get, pcs, nb);
                nb = 0;
            }
            if (!joins && rc == ORPC_OK) {
                if (pass == 0) {
                    liov[nb] = (struct iovec){.iov_base = lp, .iov_len = n};
                    riov[nb] = (struct iovec){.iov_base = (void *)(uintptr_t)addr, .iov_len = n};
                } else {
                    pcs[nb] = (cdt_bulk_piece_t){.local = lp, .raddr = raddr, .key = key, .len = n};
                }
                nb++;
            }
            if (n == left && rc == ORPC_OK) {
                rc = pass == 0 ? flush_sq(c, is_get, liov, riov, nb, &flushed)
                               : flush_fab(r, c, d, is_get, pcs, nb);
                nb = 0;
            }
            lo += n;
            left -= n;
            rwalk_advance(&w, n);
        }
        if (pass == 0 && rc == ORPC_ENOSYS)
            rc = ORPC_OK; /* process_vm_* not allowed here: the provider, from the start */
        else if (pass == 0)
            break;
    }
    if (noreg && c->bulk_issued == issued0) {
        /* Nothing went: a refusal like the checks above, not a failed transfer. */
        rc = refuse(r, ORPC_EPERM, "descriptor not registered with the provider");
        SHM_WARN(RPC, "a bulk descriptor made for a same-host server that copies (no "
                 "provider registration) came through the provider: the client must "
                 "encode it for this server");
        rpc_unlock(r);
        return rc;
    }
    if (rc == ORPC_OK) {
        r->st.bulk_bytes += len;
    } else {
        if (rc == ORPC_EFABRIC && peer_dead_now(r, c->peer))
            rc = ORPC_EPEER; /* refused at once: tcp;ofi_rxm on a dead client's connection */
        r->st.bulk_errors++;
        c->bulk_err = rc;
    }
    rpc_unlock(r);
    return rc;
}

static int bulk_issue(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off, void *buf,
                      size_t len, int is_get)
{
    if (len && buf == NULL)
        return ORPC_EINVAL;
    orpc_seg_t one = {.base = buf, .len = len};
    return bulk_issue_v(c, d, off, &one, 1, is_get);
}

/* Process pid has exited: no such process, or a zombie not yet reaped. */
static int pid_gone(int pid)
{
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[40], st[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    size_t n = fread(st, 1, sizeof(st) - 1, f);
    fclose(f);
    st[n] = '\0';
    const char *e = strrchr(st, ')'); /* the name may hold spaces and parentheses */
    return e != NULL && e[1] == ' ' && (e[2] == 'Z' || e[2] == 'X');
}

/*
 * A transfer failed (the provider's error): was it that the client died?
 * Known for a same-host (pid-named) client only, by its pid; lock held.
 * Elsewhere the provider's ORPC_EFABRIC stands.
 */
static int peer_dead_now(orpc_t *r, orpc_peer_t *p)
{
    if (p == NULL)
        return 0;
    if (p->failed || p->sq_gone)
        return 1;
    int pid = cdt_msg_peer_pid(r->ep, p->addr, p->alen);
    if (pid <= 0)
        return 0;
    /* The provider's error can come while the process is still exiting
     * (its memory gone first): give it a moment to become a zombie. */
    for (int i = 0; i < 100; i++) {
        if (pid_gone(pid))
            return p->failed = 1;
        rpc_unlock(r);
        usleep(1000);
        rpc_lock(r);
    }
    return 0;
}

/*
 * A client that dies during a transfer mostly makes the provider report an
 * error (shm: the copy from a dead process fails; tcp;ofi_rxm: the reset
 * connection), but not always. So a transfer that waits checks a same-host
 * (pid-named) client's pid every RPC_BULK_PROBE_NS. (A ping was tried for
 * other providers: on tcp;ofi_rxm a send to a dead peer starts a
 * reconnection that holds it and the sends behind it for seconds.)
 */
int rpc_bulk_peer_lost(orpc_t *r, struct orpc_call *c, uint64_t now)
{
    orpc_peer_t *p = c->peer;
    if (p == NULL)
        return 0;
    if (p->failed || p->sq_gone)
        return 1;
    if (p->sq == NULL && cdt_msg_peer_pid(r->ep, p->addr, p->alen) <= 0)
        return 0; /* not pid-named: nothing to check */
    if (c->bulk_probe_ns == 0 || now < c->bulk_probe_ns) {
        if (c->bulk_probe_ns == 0)
            c->bulk_probe_ns = now + RPC_BULK_PROBE_NS;
        return 0;
    }
    c->bulk_probe_ns = now + RPC_BULK_PROBE_NS;
    int pid = cdt_msg_peer_pid(r->ep, p->addr, p->alen);
    if (pid > 0 && pid_gone(pid)) {
        SHM_DEBUG(RPC, "bulk transfer waits on process %d, which is gone", pid);
        p->failed = 1;
        return 1;
    }
    return p->failed;
}

int rpc_bulk_give_up(orpc_t *r, struct orpc_call *c, uint64_t now)
{
    if (now > c->bulk_deadline + RPC_BULK_GRACE_NS)
        return 1;
    if (!rpc_bulk_peer_lost(r, c, now))
        return 0;
    if (c->bulk_lost_ns == 0)
        c->bulk_lost_ns = now;
    return now - c->bulk_lost_ns > RPC_BULK_PROBE_NS;
}

/*
 * Waits for this call's fragments only (each reports to the CQ), so a
 * transfer to a dead peer holds up nobody else. A dead client (found by
 * rpc_bulk_peer_lost, within about 2 x RPC_BULK_PROBE_NS), or one silent
 * past the descriptors' deadline plus a grace, is given up: the call answers
 * EPEER and is kept aside (a zombie) until the provider ends its transfers.
 */
int rpc_bulk_wait_locked(orpc_t *r, struct orpc_call *c)
{
    rpc_idle_t idle = RPC_IDLE_INIT;
    while (c->bulk_done < c->bulk_issued) {
        /* Checked on every turn: other clients' traffic must not hide it. */
        int busy = rpc_harvest(r) > 0;
        if (c->bulk_done >= c->bulk_issued)
            break;
        uint64_t now = rpc_now_ns();
        if (rpc_bulk_give_up(r, c, now)) {
            SHM_DEBUG(RPC, "bulk transfers of a call: %s: peer given up",
                      c->bulk_lost_ns ? "the client is dead" : "past their deadline");
            c->peer->failed = 1;
            c->bulk_probe_ns = c->bulk_lost_ns = 0;
            r->st.bulk_errors++;
            return c->bulk_err = ORPC_EPEER;
        }
        if (busy) {
            rpc_idle_reset(&idle);
            continue;
        }
        rpc_unlock(r);
        rpc_idle(&idle);
        rpc_lock(r);
    }
    c->bulk_probe_ns = c->bulk_lost_ns = 0;
    int rc = c->bulk_err;
    c->bulk_err = 0;
    if (rc == ORPC_EFABRIC && peer_dead_now(r, c->peer))
        rc = ORPC_EPEER;
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
        c->bulk_probe_ns = c->bulk_lost_ns = 0;
        if (rc == ORPC_EFABRIC && peer_dead_now(r, c->peer))
            rc = ORPC_EPEER;
    } else if (rpc_bulk_give_up(r, c, rpc_now_ns())) {
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

RPC_EXPORT int orpc_bulk_igetv(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                               const orpc_seg_t *dst, size_t ndst)
{
    return bulk_issue_v(c, d, off, dst, ndst, 1);
}

RPC_EXPORT int orpc_bulk_iputv(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                               const orpc_seg_t *src, size_t nsrc)
{
    return bulk_issue_v(c, d, off, src, nsrc, 0);
}

RPC_EXPORT int orpc_bulk_getv(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                              const orpc_seg_t *dst, size_t ndst)
{
    int rc = bulk_issue_v(c, d, off, dst, ndst, 1);
    int wrc = c ? orpc_bulk_wait(c) : ORPC_OK;
    return rc != ORPC_OK ? rc : wrc;
}

RPC_EXPORT int orpc_bulk_putv(orpc_call_t *c, const orpc_bulk_desc_t *d, size_t off,
                              const orpc_seg_t *src, size_t nsrc)
{
    int rc = bulk_issue_v(c, d, off, src, nsrc, 0);
    int wrc = c ? orpc_bulk_wait(c) : ORPC_OK;
    return rc != ORPC_OK ? rc : wrc;
}
