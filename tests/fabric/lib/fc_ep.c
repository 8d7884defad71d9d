// SPDX-License-Identifier: BSD-3-Clause
/*
 * Endpoints: bindings, enable, names, options, and the remote half of every
 * RMA and atomic (fc_remote), which reads the target's registry and holds
 * the transfer to the profile's rules on keys, addresses, endpoints and
 * authorization keys before translating it for the real provider.
 */
#include <stdlib.h>
#include <string.h>

#include "fc.h"

fc_ep_t *fc_eps_g;

static struct fi_ops ep_fi_ops;

fc_ep_t *fc_ep_of(struct fid *fid)
{
    if (fid == NULL || fid->fclass != FI_CLASS_EP || fid->ops != &ep_fi_ops)
        return NULL;
    return container_of(fid, fc_ep_t, ep.fid);
}

/* ---- the remote side of RMA and atomics ------------------------------ */

static int auth_equal(const fc_ep_t *ep, const fc_peer_t *peer)
{
    if (ep->dom->prof->auth == FC_AUTH_CXI_VNI) /* the VNI isolates; svc_id is local */
        return ep->auth_len >= 6 && peer->auth_len >= 6 &&
               memcmp(ep->auth + 4, peer->auth + 4, 2) == 0;
    return ep->auth_len == peer->auth_len && memcmp(ep->auth, peer->auth, ep->auth_len) == 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n && i < 16; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * (n < 16 ? n : 16)] = '\0';
}

static int auth_check(fc_ep_t *ep, const fc_peer_t *peer, const char *what)
{
    if (ep->dom->prof->auth == FC_AUTH_NONE || auth_equal(ep, peer))
        return 0;
    char a[40], b[40];
    hex(ep->auth, ep->auth_len, a);
    hex(peer->auth, peer->auth_len, b);
    fc_violation(FC_RULE_AUTH_KEY,
                 "%s: this endpoint's authorization key (%s) differs from the peer's (%s, pid "
                 "%u); %s endpoints with different keys cannot communicate",
                 what, a, b, peer->pid, ep->dom->prof->prov_name);
    return FI_EACCES;
}

fc_peer_t *fc_ep_peer(fc_ep_t *ep, fi_addr_t dest, const char *what, int *rc)
{
    fc_peer_t *peer = fc_av_peer(ep->av, dest, what);
    if (peer == NULL) {
        *rc = -FI_EINVAL;
        return NULL;
    }
    *rc = auth_check(ep, peer, what);
    return *rc ? NULL : peer;
}

int fc_remote(fc_ep_t *ep, fi_addr_t dest, uint64_t addr, size_t len, uint64_t key, uint64_t need,
              const char *what, fi_addr_t *real_dest, uint64_t *real_addr, uint64_t *real_key)
{
    fc_domain_t *dom = ep->dom;
    const char *prov = dom->prof->prov_name;
    int rc;
    fc_peer_t *peer = fc_ep_peer(ep, dest, what, &rc);
    if (peer == NULL)
        return rc;
    uint64_t tkey = key;
    if (dom->mr_mode & FI_MR_RAW) {
        fc_rawmap_t *m = dom->rawmaps;
        while (m && m->local_key != key)
            m = m->next;
        if (m == NULL) {
            fc_violation(FC_RULE_MR_RAW,
                         "%s: key 0x%llx was not returned by fi_mr_map_raw; under FI_MR_RAW "
                         "the target's fi_mr_raw_attr key must be mapped here first",
                         what, (unsigned long long)key);
            return FI_EACCES;
        }
        if (m->pid != peer->pid || m->nonce != peer->nonce) {
            fc_violation(FC_RULE_MR_KEY, "%s: key 0x%llx was mapped from a raw key of process "
                         "%u, not of the target (pid %u)", what, (unsigned long long)key,
                         m->pid, peer->pid);
            return FI_EACCES;
        }
        tkey = m->key;
    } else if (key == FI_KEY_NOTAVAIL) {
        fc_violation(FC_RULE_MR_ENDPOINT,
                     "%s: key FI_KEY_NOTAVAIL (fi_mr_key read before fi_mr_enable%s?)", what,
                     (dom->mr_mode & FI_MR_ENDPOINT) ? "" : ", or of a raw MR");
        return FI_EACCES;
    }
    fc_regent_t e;
    rc = fc_reg_lookup(peer->pid, peer->nonce, peer->dom_id, tkey, 0, &e);
    if (rc == -FI_EHOSTDOWN)
        return FI_EIO; /* the target is gone: an error, not a contract matter */
    if (rc != 0) {
        fc_regent_t r;
        if ((dom->mr_mode & FI_MR_PROV_KEY) &&
            fc_reg_lookup(peer->pid, peer->nonce, peer->dom_id, tkey, 1, &r) == 0)
            fc_violation(FC_RULE_PROV_KEY,
                         "%s: key 0x%llx is the key the target requested at fi_mr_reg of its MR "
                         "(0x%llx, %llu bytes); %s sets FI_MR_PROV_KEY: the key is what "
                         "fi_mr_key returns (0x%llx)",
                         what, (unsigned long long)tkey, (unsigned long long)r.base,
                         (unsigned long long)r.len, prov, (unsigned long long)r.key);
        else
            fc_violation(FC_RULE_MR_KEY,
                         "%s: key 0x%llx was not handed out by the target (pid %u, domain %u), "
                         "or its MR is closed", what, (unsigned long long)tkey, peer->pid,
                         peer->dom_id);
        return FI_EACCES;
    }
    if (dom->mr_mode & FI_MR_ENDPOINT) {
        if (e.state != FC_REG_ENABLED) {
            fc_violation(FC_RULE_MR_ENDPOINT,
                         "%s: the target's MR (key 0x%llx) is not enabled; %s needs fi_mr_bind "
                         "to an endpoint and fi_mr_enable before remote access",
                         what, (unsigned long long)tkey, prov);
            return FI_EACCES;
        }
        if (e.ep_id != peer->ep_id) {
            fc_violation(FC_RULE_MR_ENDPOINT,
                         "%s: the target's MR (key 0x%llx) is bound to its endpoint %u, and "
                         "was reached through its endpoint %u (FI_MR_ENDPOINT: an MR is "
                         "reachable only through the endpoint it is bound to)",
                         what, (unsigned long long)tkey, e.ep_id, peer->ep_id);
            return FI_EACCES;
        }
    }
    if ((e.access & need) != need) {
        fc_violation(FC_RULE_MR_ACCESS,
                     "%s: the target registered the MR (key 0x%llx) without %s access",
                     what, (unsigned long long)tkey,
                     (need & FI_REMOTE_WRITE) && !(e.access & FI_REMOTE_WRITE)
                         ? "FI_REMOTE_WRITE" : "FI_REMOTE_READ");
        return FI_EACCES;
    }
    int virt = (dom->mr_mode & FI_MR_VIRT_ADDR) != 0;
    int in_off = addr <= e.len && len <= e.len - addr;
    int in_virt = addr >= e.base && addr - e.base <= e.len && len <= e.len - (addr - e.base);
    uint64_t off;
    if (virt ? in_virt : in_off) {
        off = virt ? addr - e.base : addr;
    } else if (virt ? in_off : in_virt) {
        if (virt)
            fc_violation(FC_RULE_VIRT_ADDR,
                         "%s: address 0x%llx is an offset into the target's MR (key 0x%llx), "
                         "and %s sets FI_MR_VIRT_ADDR: address its memory by virtual address "
                         "(base 0x%llx + offset)",
                         what, (unsigned long long)addr, (unsigned long long)tkey, prov,
                         (unsigned long long)e.base);
        else
            fc_violation(FC_RULE_VIRT_ADDR,
                         "%s: address 0x%llx is the target's virtual address; %s does not set "
                         "FI_MR_VIRT_ADDR, so MRs are addressed by 0-based offset (here 0x%llx)",
                         what, (unsigned long long)addr, prov,
                         (unsigned long long)(addr - e.base));
        return FI_EACCES;
    } else {
        fc_violation(FC_RULE_MR_RANGE,
                     "%s: [0x%llx, +%zu) is outside the target's MR (key 0x%llx: %s 0x%llx, "
                     "%llu bytes)",
                     what, (unsigned long long)addr, len, (unsigned long long)tkey,
                     virt ? "base" : "virtual base, offsets from 0 on", (unsigned long long)e.base,
                     (unsigned long long)e.len);
        return FI_EACCES;
    }
    *real_dest = peer->real;
    *real_addr = e.real_base + off;
    *real_key = e.real_key;
    return 0;
}

int fc_ep_can_post(fc_ep_t *ep, int is_tx, const char *what)
{
    if (!ep->enabled) {
        fc_violation(FC_RULE_EP_STATE, "%s on an endpoint that is not enabled (fi_enable)", what);
        return -FI_EOPBADSTATE;
    }
    if (is_tx ? ep->tx_inflight >= ep->tx_size : ep->rx_inflight >= ep->rx_size)
        return -FI_EAGAIN; /* the queue is full: the app retries (not a violation) */
    if (fc_eagain_now())
        return -FI_EAGAIN;
    return 0;
}

/* ---- fid ops --------------------------------------------------------- */

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    int rc = 0;
    FC_LOCK();
    if (ep->enabled) {
        rc = -FI_EINVAL;
        goto out;
    }
    switch (bfid->fclass) {
    case FI_CLASS_AV:
        ep->av = container_of(bfid, fc_av_t, av.fid);
        rc = fi_ep_bind(ep->real, &ep->av->real->fid, 0);
        break;
    case FI_CLASS_CQ: {
        fc_cq_t *cq = fc_cq_of(bfid);
        if (cq == NULL || (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))) {
            rc = -FI_EINVAL;
            break;
        }
        if (flags & FI_TRANSMIT) {
            ep->tx_cq = cq;
            ep->tx_sel = (flags & FI_SELECTIVE_COMPLETION) != 0;
        }
        if (flags & FI_RECV) {
            ep->rx_cq = cq;
            ep->rx_sel = (flags & FI_SELECTIVE_COMPLETION) != 0;
        }
        fc_cq_attach(cq, ep);
        break;
    }
    case FI_CLASS_CNTR: {
        fc_cntr_t *c = fc_cntr_of(bfid);
        if (c == NULL) {
            rc = -FI_EINVAL;
            break;
        }
        if (flags & FI_SEND)
            ep->c_send = c;
        if (flags & FI_RECV)
            ep->c_recv = c;
        if (flags & FI_READ)
            ep->c_read = c;
        if (flags & FI_WRITE)
            ep->c_write = c;
        if (flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) {
            if (flags & FI_REMOTE_READ)
                ep->c_rread = c;
            if (flags & FI_REMOTE_WRITE)
                ep->c_rwrite = c;
            rc = fi_ep_bind(ep->real, &c->real->fid, flags & (FI_REMOTE_READ | FI_REMOTE_WRITE));
        }
        fc_cntr_attach(c, ep);
        break;
    }
    default:
        rc = -FI_ENOSYS;
    }
out:
    FC_UNLOCK();
    return rc;
}

static int ep_enable(fc_ep_t *ep)
{
    if (ep->enabled)
        return 0;
    if (ep->av == NULL)
        return -FI_ENOAV;
    int rc = fi_enable(ep->real);
    if (rc == 0)
        ep->enabled = 1;
    return rc;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    int rc = 0;
    FC_LOCK();
    switch (command) {
    case FI_ENABLE:
        rc = ep_enable(ep);
        break;
    case FI_GETOPSFLAG: {
        uint64_t *f = arg;
        *f = (*f & FI_RECV) ? ep->rx_op_flags : ep->tx_op_flags;
        break;
    }
    case FI_SETOPSFLAG: {
        uint64_t *f = arg;
        if (*f & FI_RECV)
            ep->rx_op_flags = *f & ~(uint64_t)FI_RECV;
        else
            ep->tx_op_flags = *f & ~(uint64_t)FI_TRANSMIT;
        break;
    }
    default:
        rc = -FI_ENOSYS;
    }
    FC_UNLOCK();
    return rc;
}

static int ep_close(struct fid *fid)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    FC_LOCK();
    if ((ep->dom->mr_mode & FI_MR_ENDPOINT) && ep->nbound_mrs > 0) {
        fc_violation(FC_RULE_MR_ENDPOINT,
                     "fi_close of endpoint %u while %zu MRs are still bound to it (fi_mr.3: "
                     "\"the MR must be closed before the endpoint\")",
                     ep->id, ep->nbound_mrs);
        FC_UNLOCK();
        return -FI_EBUSY;
    }
    if (ep->tx_cq)
        fc_cq_detach(ep->tx_cq, ep);
    if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
        fc_cq_detach(ep->rx_cq, ep);
    fc_cntr_t *cs[] = {ep->c_send, ep->c_recv, ep->c_read, ep->c_write, ep->c_rread, ep->c_rwrite};
    for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
        if (cs[i])
            fc_cntr_detach(cs[i], ep);
    int rc = fi_close(&ep->real->fid);
    while (ep->ops)
        fc_op_free(ep->ops); /* the provider dropped them with the endpoint */
    fi_close(&ep->pcq->fid);
    for (fc_ep_t **pp = &fc_eps_g; *pp; pp = &(*pp)->next_all)
        if (*pp == ep) {
            *pp = ep->next_all;
            break;
        }
    FC_UNLOCK();
    free(ep);
    return rc;
}

static struct fi_ops ep_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = ep_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = fc_no_ops_open,
};

/* ---- endpoint ops ---------------------------------------------------- */

static ssize_t ep_cancel(fid_t fid, void *context)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    ssize_t rc = -FI_ENOENT;
    FC_LOCK();
    for (fc_op_t *op = ep->ops; op; op = op->next)
        if (op->app_ctx == context) {
            rc = fi_cancel(&ep->real->fid, &op->real_ctx);
            break;
        }
    FC_UNLOCK();
    return rc;
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    return fi_getopt(&ep->real->fid, level, optname, optval, optlen);
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    return fi_setopt(&ep->real->fid, level, optname, optval, optlen);
}

static int ep_txrx_ctx(struct fid_ep *sep, int index, void *attr, struct fid_ep **ep, void *ctx)
{
    (void)sep, (void)index, (void)attr, (void)ep, (void)ctx;
    return -FI_ENOSYS;
}

static int ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **ep,
                     void *ctx)
{
    return ep_txrx_ctx(sep, index, attr, ep, ctx);
}

static int ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **ep,
                     void *ctx)
{
    return ep_txrx_ctx(sep, index, attr, ep, ctx);
}

static ssize_t ep_rx_size_left(struct fid_ep *epf)
{
    fc_ep_t *ep = container_of(epf, fc_ep_t, ep);
    return ep->rx_inflight >= ep->rx_size ? 0 : (ssize_t)(ep->rx_size - ep->rx_inflight);
}

static ssize_t ep_tx_size_left(struct fid_ep *epf)
{
    fc_ep_t *ep = container_of(epf, fc_ep_t, ep);
    return ep->tx_inflight >= ep->tx_size ? 0 : (ssize_t)(ep->tx_size - ep->tx_inflight);
}

static struct fi_ops_ep ep_ops = {
    .size = sizeof(struct fi_ops_ep),
    .cancel = ep_cancel,
    .getopt = ep_getopt,
    .setopt = ep_setopt,
    .tx_ctx = ep_tx_ctx,
    .rx_ctx = ep_rx_ctx,
    .rx_size_left = ep_rx_size_left,
    .tx_size_left = ep_tx_size_left,
};

/* ---- names ----------------------------------------------------------- */

static int cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
    fc_ep_t *ep = container_of(fid, fc_ep_t, ep.fid);
    uint8_t real[128];
    size_t rl = sizeof(real);
    int rc = fi_getname(&ep->real->fid, real, &rl);
    if (rc != 0)
        return rc;
    size_t hl = sizeof(fc_name_t) + ep->auth_len;
    size_t need = hl + rl;
    if (*addrlen < need) {
        *addrlen = need;
        return -FI_ETOOSMALL;
    }
    fc_name_t h = {.magic = FC_NAME_MAGIC, .real_len = (uint16_t)rl, .hdr_len = (uint8_t)hl,
                   .auth_len = (uint8_t)ep->auth_len, .pid = fc_reg_pid(),
                   .dom_id = ep->dom->id, .ep_id = ep->id, .nonce = fc_reg_nonce()};
    memcpy(addr, &h, sizeof(h));
    memcpy((uint8_t *)addr + sizeof(h), ep->auth, ep->auth_len);
    memcpy((uint8_t *)addr + hl, real, rl);
    *addrlen = need;
    return 0;
}

static int cm_setname(fid_t fid, void *addr, size_t addrlen)
{
    (void)fid, (void)addr, (void)addrlen;
    return -FI_ENOSYS;
}

static int cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
    (void)ep, (void)addr, (void)addrlen;
    return -FI_ENOSYS;
}

static int cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t len)
{
    (void)ep, (void)addr, (void)param, (void)len;
    return -FI_ENOSYS;
}

static int cm_listen(struct fid_pep *pep)
{
    (void)pep;
    return -FI_ENOSYS;
}

static int cm_accept(struct fid_ep *ep, const void *param, size_t len)
{
    (void)ep, (void)param, (void)len;
    return -FI_ENOSYS;
}

static int cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t len)
{
    (void)pep, (void)handle, (void)param, (void)len;
    return -FI_ENOSYS;
}

static int cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
    (void)ep, (void)flags;
    return -FI_ENOSYS;
}

static int cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
                   void *context)
{
    (void)ep, (void)addr, (void)flags, (void)mc, (void)context;
    return -FI_ENOSYS;
}

static struct fi_ops_cm cm_ops = {
    .size = sizeof(struct fi_ops_cm),
    .setname = cm_setname,
    .getname = cm_getname,
    .getpeer = cm_getpeer,
    .connect = cm_connect,
    .listen = cm_listen,
    .accept = cm_accept,
    .reject = cm_reject,
    .shutdown = cm_shutdown,
    .join = cm_join,
};

/* ---- open ------------------------------------------------------------ */

static size_t lim(size_t app, size_t prof)
{
    return app && app < prof ? app : prof;
}

int fc_endpoint_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp,
                     void *context)
{
    fc_domain_t *dom = container_of(domain, fc_domain_t, dom);
    const fc_profile_t *p = dom->prof;
    if (info == NULL)
        info = dom->info;
    uint64_t need = p->mode;
    if (p->mode_msg_only && !(info->caps & (FI_MSG | FI_TAGGED)))
        need = 0;
    if (need & ~info->mode)
        return -FI_ENODATA;
    fc_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return -FI_ENOMEM;
    ep->dom = dom;
    FC_LOCK();
    int rc = fc_domain_auth(dom, info, ep->auth, &ep->auth_len, "fi_endpoint");
    FC_UNLOCK();
    if (rc != 0)
        goto fail;
    rc = fi_endpoint(dom->real, dom->real_info, &ep->real, NULL);
    if (rc != 0)
        goto fail;
    struct fi_cq_attr qa = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    rc = fi_cq_open(dom->real, &qa, &ep->pcq, NULL);
    if (rc == 0)
        rc = fi_ep_bind(ep->real, &ep->pcq->fid, FI_TRANSMIT | FI_RECV);
    if (rc != 0) {
        fi_close(&ep->real->fid);
        if (ep->pcq)
            fi_close(&ep->pcq->fid);
        goto fail;
    }
    ep->caps = info->caps;
    ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
    ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
    ep->tx_size = lim(info->tx_attr ? info->tx_attr->size : 0, p->tx_size);
    ep->rx_size = lim(info->rx_attr ? info->rx_attr->size : 0, p->rx_size);
    ep->inject_size = info->tx_attr && info->tx_attr->inject_size < p->inject_size
                          ? info->tx_attr->inject_size : p->inject_size;
    ep->tx_iov_limit = lim(info->tx_attr ? info->tx_attr->iov_limit : 0, p->tx_iov_limit);
    ep->rx_iov_limit = lim(info->rx_attr ? info->rx_attr->iov_limit : 0, p->rx_iov_limit);
    ep->rma_iov_limit = lim(info->tx_attr ? info->tx_attr->rma_iov_limit : 0, p->rma_iov_limit);
    ep->max_msg_size = lim(info->ep_attr ? info->ep_attr->max_msg_size : 0, p->max_msg_size);
    ep->has_source = (dom->real_info->caps & FI_SOURCE) != 0;
    ep->id = fc_new_id();
    ep->ep.fid.fclass = FI_CLASS_EP;
    ep->ep.fid.context = context;
    ep->ep.fid.ops = &ep_fi_ops;
    ep->ep.ops = &ep_ops;
    ep->ep.cm = &cm_ops;
    ep->ep.msg = &fc_msg_ops;
    ep->ep.rma = &fc_rma_ops;
    ep->ep.tagged = &fc_tagged_ops;
    ep->ep.atomic = &fc_atomic_ops;
    FC_LOCK();
    ep->next_all = fc_eps_g;
    fc_eps_g = ep;
    FC_UNLOCK();
    *epp = &ep->ep;
    return 0;
fail:
    free(ep);
    return rc;
}
