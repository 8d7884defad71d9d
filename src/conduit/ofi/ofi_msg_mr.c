// SPDX-License-Identifier: BSD-3-Clause
/*
 * The provider's contract on message endpoints (data services, atomics by
 * active message): what ofi_msg.c and ofi_bulk.c need where the provider
 * asks for more than buffers and a context pointer (docs/PROVIDERS.md).
 *
 *  - FI_CONTEXT/FI_CONTEXT2, or FI_MR_LOCAL: every operation that completes
 *    into the CQ carries a wrapper of ours (msg_ctx_t: the provider's
 *    context memory first, then the caller's context and what the
 *    operation holds), from a pool; the completion gives the caller's
 *    context back and the wrapper returns to the pool. A multi-recv
 *    buffer's wrapper lives until the provider releases the buffer.
 *  - FI_MR_LOCAL: a send that is not injected goes from a registered copy
 *    (pooled by size class); receive buffers are registered when first
 *    posted and kept (the layer above reposts the same ones); a bulk
 *    transfer's local buffer is registered for it, each fragment holding a
 *    reference, and released with the last one.
 *  - FI_MR_ENDPOINT: every registration bound to this endpoint and enabled.
 *  - FI_AV_MAP: peers are indices into a table of ours, so that the layer
 *    above keeps indexing them (rpc/peer.c's by_fa).
 * Where the provider asks none of this, ep->mc is NULL and none of it runs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "conduit/ofi/ofi_msg.h"
#include "core/log.h"

#define CTX_CHUNK 256
#define SBUF_MIN_SHIFT 7   /* send copies of 128 B ... */
#define SBUF_CLASSES 18    /* ... to 16 MiB, each class its own registrations */
#define RECV_REGS 64

typedef struct msg_reg {
    struct fid_mr *mr;
    void *desc;
    int refs;
} msg_reg_t;

typedef struct sbuf {
    struct sbuf *next;
    struct fid_mr *mr;
    void *desc;
    int cls;
    /* the copy follows, 16-byte aligned */
} sbuf_t;
#define SBUF_DATA(b) ((char *)(b) + 48)

typedef struct msg_ctx {
    struct fi_context2 fi;  /* the provider's: first */
    void *user;
    msg_reg_t *reg;         /* a bulk transfer's registration: one reference */
    sbuf_t *sbuf;           /* a send's registered copy */
    int multi;              /* a multi-recv buffer's: lives until the buffer is released */
    struct iovec iov[2];    /* FI_ASYNC_IOV: a send's pieces, until it completes */
    void *desc[2];
    struct msg_ctx *next;
} msg_ctx_t;

struct cdt_msg_contract {
    pthread_mutex_t lock;
    msg_ctx_t *free_ctx;
    void **chunks;
    size_t nchunks;
    sbuf_t *free_sbuf[SBUF_CLASSES];
    struct {
        void *buf;
        size_t len;
        struct fid_mr *mr;
    } recv[RECV_REGS];
    int nrecv;
    fi_addr_t *map;         /* FI_AV_MAP: index -> fi_addr_t (FI_ADDR_NOTAVAIL: free) */
    size_t map_cap;
};

static uint64_t msg_key(void)
{
    static uint64_t next = 0x20000;
    return __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
}

static int msg_reg(cdt_msg_ep_t *ep, void *buf, size_t len, uint64_t access, struct fid_mr **mr_p)
{
    struct fid_mr *mr = NULL;
    int rc = fi_mr_reg(ep->dom->domain, buf, len, access, 0, msg_key(), 0, &mr, NULL);
    if (rc == 0 && ep->dom->mr_endpoint) {
        rc = fi_mr_bind(mr, &ep->ctx.ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(mr);
        if (rc != 0)
            fi_close(&mr->fid);
    }
    if (rc == 0)
        *mr_p = mr;
    else
        shm_error("FI_MR_LOCAL: registering %zu bytes for a message endpoint failed on "
                  "provider %s: %s",
                  len, ep->dom->prov, fi_strerror(-rc));
    return rc;
}

shm_status_t cdt_msg_contract_open(cdt_msg_ep_t *ep)
{
    const cdt_msg_dom_t *d = ep->dom;
    if (!d->mr_local && d->ctx_size == 0 && !d->av_map && !d->async_iov && !d->iov1)
        return SHM_OK;
    cdt_msg_contract_t *mc = calloc(1, sizeof(*mc));
    if (mc == NULL)
        return SHM_ERR_NOMEM;
    pthread_mutex_init(&mc->lock, NULL);
    ep->mc = mc;
    return SHM_OK;
}

void cdt_msg_contract_close(cdt_msg_ep_t *ep)
{
    cdt_msg_contract_t *mc = ep->mc;
    if (mc == NULL)
        return;
    for (int i = 0; i < mc->nrecv; i++)
        fi_close(&mc->recv[i].mr->fid);
    for (int c = 0; c < SBUF_CLASSES; c++)
        while (mc->free_sbuf[c]) {
            sbuf_t *b = mc->free_sbuf[c];
            mc->free_sbuf[c] = b->next;
            if (b->mr)
                fi_close(&b->mr->fid);
            free(b);
        }
    for (size_t i = 0; i < mc->nchunks; i++)
        free(mc->chunks[i]);
    free(mc->chunks);
    free(mc->map);
    pthread_mutex_destroy(&mc->lock);
    free(mc);
    ep->mc = NULL;
}

/* ---- contexts ------------------------------------------------------------ */

/* Operations carry wrappers of ours (not the caller's context itself). */
static int msg_wraps(const cdt_msg_ep_t *ep)
{
    return ep->dom->mr_local || ep->dom->ctx_size != 0 || ep->dom->async_iov || ep->dom->iov1;
}

static msg_ctx_t *ctx_take(cdt_msg_contract_t *mc, void *user)
{
    pthread_mutex_lock(&mc->lock);
    if (mc->free_ctx == NULL) {
        msg_ctx_t *c = calloc(CTX_CHUNK, sizeof(*c));
        void **cs = c ? realloc(mc->chunks, (mc->nchunks + 1) * sizeof(*cs)) : NULL;
        if (cs == NULL) {
            free(c);
            pthread_mutex_unlock(&mc->lock);
            shm_fatal("message endpoint: out of memory for operation contexts");
        }
        mc->chunks = cs;
        mc->chunks[mc->nchunks++] = c;
        for (int i = 0; i < CTX_CHUNK; i++) {
            c[i].next = mc->free_ctx;
            mc->free_ctx = &c[i];
        }
    }
    msg_ctx_t *c = mc->free_ctx;
    mc->free_ctx = c->next;
    pthread_mutex_unlock(&mc->lock);
    memset(c, 0, sizeof(*c));
    c->user = user;
    return c;
}

static void reg_unref_locked(msg_reg_t *r)
{
    if (r && --r->refs == 0) {
        fi_close(&r->mr->fid);
        free(r);
    }
}

static void ctx_give(cdt_msg_contract_t *mc, msg_ctx_t *c)
{
    pthread_mutex_lock(&mc->lock);
    reg_unref_locked(c->reg);
    if (c->sbuf) {
        c->sbuf->next = mc->free_sbuf[c->sbuf->cls];
        mc->free_sbuf[c->sbuf->cls] = c->sbuf;
    }
    c->next = mc->free_ctx;
    mc->free_ctx = c;
    pthread_mutex_unlock(&mc->lock);
}

void *cdt_msg_opctx_get(cdt_msg_ep_t *ep, void *user)
{
    if (ep->mc == NULL || !msg_wraps(ep))
        return user;
    return ctx_take(ep->mc, user);
}

void *cdt_msg_opctx_put(cdt_msg_ep_t *ep, void *op_context)
{
    if (ep->mc == NULL || !msg_wraps(ep) || op_context == NULL)
        return op_context;
    msg_ctx_t *c = op_context;
    void *user = c->user;
    ctx_give(ep->mc, c);
    return user;
}

void *cdt_msg_recv_opctx(cdt_msg_ep_t *ep, void *user, int multi)
{
    void *oc = cdt_msg_opctx_get(ep, user);
    if (oc != user)
        ((msg_ctx_t *)oc)->multi = multi;
    return oc;
}

void cdt_msg_keep_iov(cdt_msg_ep_t *ep, void *op_context, struct iovec **iov_p, void ***desc_p)
{
    (void)ep;
    msg_ctx_t *c = op_context;
    memcpy(c->iov, *iov_p, sizeof(c->iov));
    memcpy(c->desc, *desc_p, sizeof(c->desc));
    *iov_p = c->iov;
    *desc_p = c->desc;
}

int cdt_msg_recv_single(cdt_msg_ep_t *ep, void *op_context)
{
    if (ep->mc == NULL || !msg_wraps(ep) || op_context == NULL)
        return 0;
    return !((msg_ctx_t *)op_context)->multi;
}

void *cdt_msg_recv_user(cdt_msg_ep_t *ep, void *op_context, int released)
{
    if (ep->mc == NULL || !msg_wraps(ep) || op_context == NULL)
        return op_context;
    if (released)
        return cdt_msg_opctx_put(ep, op_context);
    return ((msg_ctx_t *)op_context)->user;
}

/* ---- registered memory ------------------------------------------------ */

shm_status_t cdt_msg_send_buf(cdt_msg_ep_t *ep, const void *hdr, size_t hdrlen, const void *pay,
                              size_t paylen, void *user, struct iovec *iov, void **desc_p,
                              void **oc_p)
{
    cdt_msg_contract_t *mc = ep->mc;
    size_t len = hdrlen + paylen;
    int cls = 0;
    while (cls < SBUF_CLASSES - 1 && ((size_t)1 << (SBUF_MIN_SHIFT + cls)) < len)
        cls++;
    size_t cap = (size_t)1 << (SBUF_MIN_SHIFT + cls);
    sbuf_t *b = NULL;
    if (len <= cap) {
        pthread_mutex_lock(&mc->lock);
        b = mc->free_sbuf[cls];
        if (b)
            mc->free_sbuf[cls] = b->next;
        pthread_mutex_unlock(&mc->lock);
    } else {
        cap = len; /* beyond the largest class: a copy of its own, not pooled */
    }
    if (b == NULL) {
        b = aligned_alloc(64, 64 + ((cap + 63) & ~(size_t)63));
        if (b == NULL)
            return SHM_ERR_NOMEM;
        memset(b, 0, 64 + cap); /* FI_MR_ALLOCATED: backed before it is registered */
        if (ep->dom->mr_local) {
            if (msg_reg(ep, SBUF_DATA(b), cap, FI_SEND, &b->mr) != 0) {
                free(b);
                return SHM_ERR_FABRIC;
            }
            b->desc = fi_mr_desc(b->mr);
        }
        b->cls = cls;
    }
    memcpy(SBUF_DATA(b), hdr, hdrlen);
    if (paylen)
        memcpy(SBUF_DATA(b) + hdrlen, pay, paylen);
    msg_ctx_t *c = ctx_take(mc, user);
    c->sbuf = b;
    iov->iov_base = SBUF_DATA(b);
    iov->iov_len = len;
    *desc_p = b->desc;
    *oc_p = c;
    return SHM_OK;
}

void *cdt_msg_recv_desc(cdt_msg_ep_t *ep, void *buf, size_t len)
{
    cdt_msg_contract_t *mc = ep->mc;
    if (mc == NULL || !ep->dom->mr_local)
        return NULL;
    pthread_mutex_lock(&mc->lock);
    void *desc = NULL;
    for (int i = 0; i < mc->nrecv && desc == NULL; i++)
        if (mc->recv[i].buf == buf && mc->recv[i].len >= len)
            desc = fi_mr_desc(mc->recv[i].mr);
    if (desc == NULL && mc->nrecv < RECV_REGS) {
        struct fid_mr *mr;
        if (msg_reg(ep, buf, len, FI_RECV, &mr) == 0) {
            mc->recv[mc->nrecv].buf = buf;
            mc->recv[mc->nrecv].len = len;
            mc->recv[mc->nrecv++].mr = mr;
            desc = fi_mr_desc(mr);
        }
    }
    pthread_mutex_unlock(&mc->lock);
    if (desc == NULL)
        shm_error("FI_MR_LOCAL: no registration for a receive buffer of %zu bytes on provider "
                  "%s (at most %d are kept)",
                  len, ep->dom->prov, RECV_REGS);
    return desc;
}

shm_status_t cdt_msg_bulk_desc(cdt_msg_ep_t *ep, void *buf, size_t len, uint64_t access,
                               void **desc_p, void **reg_p)
{
    *desc_p = *reg_p = NULL;
    if (ep->mc == NULL || !ep->dom->mr_local || len == 0)
        return SHM_OK;
    msg_reg_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return SHM_ERR_NOMEM;
    if (msg_reg(ep, buf, len, access, &r->mr) != 0) {
        free(r);
        return SHM_ERR_FABRIC;
    }
    r->desc = fi_mr_desc(r->mr);
    r->refs = 1; /* the transfer's own, until its fragments are issued */
    *desc_p = r->desc;
    *reg_p = r;
    return SHM_OK;
}

void cdt_msg_bulk_ref(cdt_msg_ep_t *ep, void *reg, void *op_context)
{
    if (reg == NULL || op_context == NULL)
        return;
    pthread_mutex_lock(&ep->mc->lock);
    ((msg_reg_t *)reg)->refs++;
    ((msg_ctx_t *)op_context)->reg = reg;
    pthread_mutex_unlock(&ep->mc->lock);
}

void cdt_msg_bulk_unref(cdt_msg_ep_t *ep, void *reg)
{
    if (reg == NULL)
        return;
    pthread_mutex_lock(&ep->mc->lock);
    reg_unref_locked(reg);
    pthread_mutex_unlock(&ep->mc->lock);
}

/* ---- FI_AV_MAP ---------------------------------------------------------- */

shm_status_t cdt_msg_av_add(cdt_msg_ep_t *ep, fi_addr_t fa, cdt_peer_t *peer_p)
{
    cdt_msg_contract_t *mc = ep->mc;
    pthread_mutex_lock(&mc->lock);
    size_t i = 0;
    while (i < mc->map_cap && mc->map[i] != FI_ADDR_NOTAVAIL)
        i++;
    if (i == mc->map_cap) {
        size_t cap = mc->map_cap ? 2 * mc->map_cap : 64;
        fi_addr_t *m = realloc(mc->map, cap * sizeof(*m));
        if (m == NULL) {
            pthread_mutex_unlock(&mc->lock);
            return SHM_ERR_NOMEM;
        }
        for (size_t k = mc->map_cap; k < cap; k++)
            m[k] = FI_ADDR_NOTAVAIL;
        mc->map = m;
        mc->map_cap = cap;
    }
    mc->map[i] = fa;
    pthread_mutex_unlock(&mc->lock);
    *peer_p = i;
    return SHM_OK;
}

void cdt_msg_av_del(cdt_msg_ep_t *ep, cdt_peer_t peer)
{
    cdt_msg_contract_t *mc = ep->mc;
    pthread_mutex_lock(&mc->lock);
    if (peer < mc->map_cap)
        mc->map[peer] = FI_ADDR_NOTAVAIL;
    pthread_mutex_unlock(&mc->lock);
}

fi_addr_t cdt_msg_av_addr(cdt_msg_ep_t *ep, cdt_peer_t peer)
{
    if (ep->mc == NULL || !ep->dom->av_map)
        return (fi_addr_t)peer;
    cdt_msg_contract_t *mc = ep->mc;
    pthread_mutex_lock(&mc->lock); /* the table may be growing */
    fi_addr_t fa = peer < mc->map_cap ? mc->map[peer] : FI_ADDR_NOTAVAIL;
    pthread_mutex_unlock(&mc->lock);
    return fa;
}

cdt_peer_t cdt_msg_av_index(cdt_msg_ep_t *ep, fi_addr_t fa)
{
    if (ep->mc == NULL || !ep->dom->av_map || fa == FI_ADDR_NOTAVAIL)
        return (cdt_peer_t)fa;
    cdt_msg_contract_t *mc = ep->mc;
    cdt_peer_t found = CDT_PEER_NONE;
    pthread_mutex_lock(&mc->lock);
    for (size_t i = 0; i < mc->map_cap && found == CDT_PEER_NONE; i++)
        if (mc->map[i] == fa)
            found = i;
    pthread_mutex_unlock(&mc->lock);
    return found;
}
