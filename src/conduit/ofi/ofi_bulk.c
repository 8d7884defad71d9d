// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bulk data for data services: short-lived registrations of a client's
 * buffers, and the server's one-sided pulls and pushes on the same RMA
 * engine (fragments, counters) that carries shmem_put/shmem_get.
 */
#include <stdlib.h>
#include <sys/random.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "conduit/ofi/ofi_msg.h"
#include "core/log.h"
#include "conduit/ofi/ofi_plan.h"
#include "heap/heap.h"

/*
 * Requested keys must be unique in a domain and should not be guessable:
 * a random base (far from the PE segments' keys 1, 2...) plus a counter.
 */
static uint64_t next_key(const cdt_msg_dom_t *dom)
{
    static uint64_t base_g, ctr_g;
    uint64_t b = __atomic_load_n(&base_g, __ATOMIC_RELAXED);
    if (b == 0) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof(r), 0) != sizeof(r))
            r = (uint64_t)(uintptr_t)&r * 0x9e3779b97f4a7c15ull;
        r |= 1ull << 20;
        __atomic_compare_exchange_n(&base_g, &b, r, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        b = __atomic_load_n(&base_g, __ATOMIC_RELAXED);
    }
    uint64_t k = b + (__atomic_add_fetch(&ctr_g, 1, __ATOMIC_RELAXED) << 8);
    if (dom->key_bits < 64)
        k &= (1ull << dom->key_bits) - 1;
    return k < 0x100 ? k + 0x100 : k;
}

shm_status_t cdt_bulk_expose(cdt_msg_ep_t *ep, void *buf, size_t len, unsigned access,
                             cdt_bulk_reg_t *reg_p)
{
    cdt_msg_dom_t *dom = ep->dom;
    size_t off;
    int seg;
    if (dom->mr_raw && len > 0) {
        /* TODO(raw keys on the wire): a descriptor carries a 64-bit key. */
        shm_error("bulk exposure on provider %s: it wants raw memory keys (FI_MR_RAW), and a "
                  "bulk descriptor carries a 64-bit key",
                  dom->prov);
        return SHM_ERR_NOSYS;
    }
    /* Symmetric memory of this PE is registered already, in this domain
     * (not where registrations belong to an endpoint: the PE's is bound to
     * its default endpoint, which data-service peers do not address). */
    if (dom->is_pe && !dom->mr_endpoint && len > 0 &&
        (seg = shm_heap_xlate(buf, len, &off)) >= 0 && cdt_ofi_g.mr[seg] != NULL) {
        reg_p->mr = NULL;
        reg_p->key = fi_mr_key(cdt_ofi_g.mr[seg]);
        reg_p->rbase = dom->virt_addr ? (uint64_t)(uintptr_t)buf : off;
        return SHM_OK;
    }
    if (len == 0) {
        reg_p->mr = NULL;
        reg_p->key = 0;
        reg_p->rbase = (uint64_t)(uintptr_t)buf;
        return SHM_OK;
    }
    uint64_t acc = ((access & CDT_BULK_READ) ? FI_REMOTE_READ : 0) |
                   ((access & CDT_BULK_WRITE) ? FI_REMOTE_WRITE : 0);
    struct fid_mr *mr = NULL;
    int rc = -FI_ENOKEY;
    for (int tries = 0; tries < 8 && rc == -FI_ENOKEY; tries++)
        rc = fi_mr_reg(dom->domain, buf, len, acc, 0, next_key(dom), 0, &mr, NULL);
    if (rc == 0 && dom->mr_endpoint) {
        /* Bound to the endpoint peers address and enabled before its key is given out. */
        rc = fi_mr_bind(mr, &ep->ctx.ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(mr);
        if (rc != 0)
            fi_close(&mr->fid);
    }
    if (rc != 0) {
        shm_error("fi_mr_reg of %zu bytes failed on provider %s: %s", len, dom->prov,
                  fi_strerror(-rc));
        return cdt_msg_status(rc);
    }
    reg_p->mr = mr;
    reg_p->key = fi_mr_key(mr);
    reg_p->rbase = dom->virt_addr ? (uint64_t)(uintptr_t)buf : 0;
    return SHM_OK;
}

void cdt_bulk_release(cdt_msg_ep_t *ep, cdt_bulk_reg_t *reg)
{
    (void)ep;
    if (reg->mr)
        fi_close(&((struct fid_mr *)reg->mr)->fid);
    reg->mr = NULL;
}

/* One contiguous bulk transfer (a piece of a vector one too). */
static ssize_t bulk_one(cdt_msg_ep_t *ep, cdt_peer_t peer, int is_get, void *local,
                        uint64_t raddr, uint64_t key, size_t len, void *ctx)
{
    cdt_ofi_xfer_t x = {.pe = -1, .user = ctx, .mep = ep,
                        .max_frag = ep->dom->info->ep_attr->max_msg_size};
    /* FI_MR_LOCAL: registered for this transfer; each fragment keeps it alive. */
    shm_status_t st = cdt_msg_bulk_desc(ep, local, len, is_get ? FI_READ : FI_WRITE, &x.desc,
                                        &x.mreg);
    if (st != SHM_OK)
        return st == SHM_ERR_NOMEM ? -FI_ENOMEM : -FI_EIO;
    ssize_t rc = cdt_ofi_rma_frags(&ep->ctx, is_get, local, raddr, key, len,
                                   cdt_msg_av_addr(ep, peer), &x);
    cdt_msg_bulk_unref(ep, x.mreg);
    return rc;
}

shm_status_t cdt_bulk_get(cdt_msg_ep_t *ep, cdt_peer_t peer, void *dst, uint64_t raddr,
                          uint64_t key, size_t len, void *ctx, uint64_t *nfrags_p)
{
    uint64_t before = ep->ctx.get_issued;
    ssize_t rc = bulk_one(ep, peer, 1, dst, raddr, key, len, ctx);
    *nfrags_p = ep->ctx.get_issued - before;
    if (rc != 0)
        SHM_DEBUG(RPC, "bulk get of %zu bytes: %s", len, fi_strerror((int)-rc));
    return cdt_msg_status((int)rc);
}

shm_status_t cdt_bulk_put(cdt_msg_ep_t *ep, cdt_peer_t peer, const void *src, uint64_t raddr,
                          uint64_t key, size_t len, void *ctx, uint64_t *nfrags_p)
{
    uint64_t before = ep->ctx.put_issued;
    ssize_t rc = bulk_one(ep, peer, 0, (void *)src, raddr, key, len, ctx);
    *nfrags_p = ep->ctx.put_issued - before;
    if (rc != 0)
        SHM_DEBUG(RPC, "bulk put of %zu bytes: %s", len, fi_strerror((int)-rc));
    return cdt_msg_status((int)rc);
}

/* Pieces one RMA operation carries at most (its iov arrays are on the stack). */
#define BULK_IOV_CAP 8

shm_status_t cdt_bulk_xferv(cdt_msg_ep_t *ep, cdt_peer_t peer, int is_get,
                            const cdt_bulk_piece_t *p, size_t n, void *ctx, uint64_t *nops_p)
{
    cdt_ctx_t *c = &ep->ctx;
    const struct fi_info *info = ep->dom->info;
    size_t lim = __atomic_load_n(&ep->bulk_iov_lim, __ATOMIC_RELAXED);
    if (lim == 0) {
        lim = info->tx_attr->iov_limit < info->tx_attr->rma_iov_limit
                  ? info->tx_attr->iov_limit : info->tx_attr->rma_iov_limit;
        if (lim > BULK_IOV_CAP)
            lim = BULK_IOV_CAP;
        /* FI_MR_LOCAL, FI_CONTEXT: one piece per operation, each with its own
         * registration and context (bulk_one). */
        if (lim == 0 || cdt_ofi_prov_row(ep->dom->prov)->rma_iov_slow || ep->mc != NULL)
            lim = 1;
        __atomic_store_n(&ep->bulk_iov_lim, lim, __ATOMIC_RELAXED); /* same value from any thread */
    }
    size_t frag = cdt_ofi_fast_g.frag_size ? cdt_ofi_fast_g.frag_size : cdt_plan_frag_size(0, 0);
    /* *msg calls take their flags here, not from the endpoint's defaults. */
    uint64_t flags = info->tx_attr->op_flags & (FI_COMPLETION | FI_DELIVERY_COMPLETE);
    uint64_t *issued = is_get ? &c->get_issued : &c->put_issued;
    uint64_t before = *issued;
    ssize_t rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        if (p[i].len >= frag || lim == 1) {
            rc = bulk_one(ep, peer, is_get, p[i].local, p[i].raddr, p[i].key, p[i].len, ctx);
            i++;
            continue;
        }
        struct iovec iov[BULK_IOV_CAP];
        struct fi_rma_iov riov[BULK_IOV_CAP];
        size_t k = 0, bytes = 0;
        while (i + k < n && k < lim && p[i + k].key == p[i].key && p[i + k].len < frag &&
               bytes + p[i + k].len <= frag) {
            iov[k] = (struct iovec){.iov_base = p[i + k].local, .iov_len = p[i + k].len};
            riov[k] = (struct fi_rma_iov){.addr = p[i + k].raddr, .len = p[i + k].len,
                                          .key = p[i + k].key};
            bytes += p[i + k].len;
            k++;
        }
        struct fi_msg_rma msg = {.msg_iov = iov, .desc = NULL, .iov_count = k, .addr = peer,
                                 .rma_iov = riov, .rma_iov_count = k, .context = ctx};
        cdt_ofi_count(c, issued, 1); /* before the issue: see cdt_ofi_count */
        for (;;) {
            rc = is_get ? fi_readmsg(c->ep, &msg, flags) : fi_writemsg(c->ep, &msg, flags);
            if (rc != -FI_EAGAIN)
                break;
            (void)fi_cq_read(c->cq, NULL, 0); /* drives progress; errors are harvested later */
        }
        if (rc != 0)
            cdt_ofi_count(c, issued, (uint64_t)-1); /* not issued after all */
        i += k;
    }
    *nops_p = *issued - before;
    if (rc != 0)
        SHM_DEBUG(RPC, "bulk %s of %zu pieces: %s", is_get ? "get" : "put", n,
                  fi_strerror((int)-rc));
    return cdt_msg_status((int)rc);
}
