// SPDX-License-Identifier: BSD-3-Clause
/*
 * RMA, message and tagged transfers. Each call is checked (endpoint state,
 * queue depth, limits, context, local descriptors, the remote registration)
 * and then posted to the real provider in its *msg form with our context
 * and explicit flags. Injected data is copied first, so the provider
 * underneath never sees FI_INJECT and its own inject limit never matters.
 */
#include <stdlib.h>
#include <string.h>

#include "fc.h"

/* Completion levels and data the real provider takes from us as they are. */
#define PASS_TX (FI_REMOTE_CQ_DATA | FI_DELIVERY_COMPLETE | FI_TRANSMIT_COMPLETE | \
                 FI_INJECT_COMPLETE)
#define PASS_RX (FI_MULTI_RECV)

int fc_bounce(fc_op_t *op, const struct iovec *iov, size_t count, struct iovec *out)
{
    size_t total = 0;
    for (size_t i = 0; i < count; i++)
        total += iov[i].iov_len;
    op->bounce = malloc(total ? total : 1);
    if (op->bounce == NULL)
        return -FI_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        memcpy((char *)op->bounce + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    out->iov_base = op->bounce;
    out->iov_len = total;
    return 0;
}

/* FI_FENCE: the provider underneath does not order; wait for what is ahead. */
static void fence(fc_ep_t *ep)
{
    while (ep->tx_inflight > 0) {
        FC_UNLOCK();
        sched_yield();
        FC_LOCK();
        fc_ep_progress(ep);
    }
}

static int over_limits(fc_ep_t *ep, const char *what, size_t iovs, size_t iov_lim, size_t total,
                       int inject)
{
    const char *prov = ep->dom->prof->prov_name;
    if (iovs > iov_lim) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu IO vectors, %s takes %zu (iov_limit)", what, iovs,
                     prov, iov_lim);
        return -FI_EINVAL;
    }
    if (total > ep->max_msg_size) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu bytes, above %s's max_msg_size %zu", what, total,
                     prov, ep->max_msg_size);
        return -FI_EMSGSIZE;
    }
    if (inject && total > ep->inject_size) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu bytes injected, above %s's inject_size %zu", what,
                     total, prov, ep->inject_size);
        return -FI_EMSGSIZE;
    }
    return 0;
}

/* ---- RMA ------------------------------------------------------------- */

static ssize_t rma_post(fc_ep_t *ep, int is_read, const struct fi_msg_rma *msg, uint64_t flags,
                        int inject_call, const char *name)
{
    size_t total = 0, rtotal = 0;
    for (size_t i = 0; i < msg->iov_count; i++)
        total += msg->msg_iov[i].iov_len;
    for (size_t i = 0; i < msg->rma_iov_count; i++)
        rtotal += msg->rma_iov[i].len;
    char what[96];
    snprintf(what, sizeof(what), "%s of %zu bytes (addr 0x%llx, key 0x%llx)", name, total,
             msg->rma_iov_count ? (unsigned long long)msg->rma_iov[0].addr : 0ull,
             msg->rma_iov_count ? (unsigned long long)msg->rma_iov[0].key : 0ull);
    int inject = inject_call || (flags & FI_INJECT);
    if (total != rtotal || (is_read && inject) || msg->rma_iov_count > 8)
        return fc_post_rc(what, -FI_EINVAL);
    FC_LOCK();
    ssize_t rc = fc_ep_can_post(ep, 1, what);
    if (rc == 0 && msg->rma_iov_count > ep->rma_iov_limit) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu remote IO vectors, %s takes %zu (rma_iov_limit)",
                     what, msg->rma_iov_count, ep->dom->prof->prov_name, ep->rma_iov_limit);
        rc = -FI_EINVAL;
    }
    if (rc == 0)
        rc = over_limits(ep, what, msg->iov_count, ep->tx_iov_limit, total, inject);
    if (rc != 0) {
        FC_UNLOCK();
        return fc_post_rc(what, rc);
    }
    if (flags & FI_FENCE)
        fence(ep);
    fc_op_t *op = fc_op_new(ep, is_read ? FC_OP_READ : FC_OP_WRITE, 1);
    if (op == NULL) {
        FC_UNLOCK();
        return -FI_ENOMEM;
    }
    snprintf(op->what, sizeof(op->what), "%s", what);
    op->cq_flags = FI_RMA | (is_read ? FI_READ : FI_WRITE);
    op->len = total;
    op->data = msg->data;
    op->report = !inject_call && ep->tx_cq && (!ep->tx_sel || (flags & FI_COMPLETION));
    if (!inject_call && (rc = fc_op_ctx_begin(op, msg->context, op->report)) != 0)
        goto free_op;
    uint64_t need = is_read ? FI_READ : FI_WRITE;
    for (size_t i = 0; !inject && i < msg->iov_count; i++) {
        int e = fc_local_check(ep, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len,
                               msg->desc ? msg->desc[i] : NULL, need, what);
        if (e) {
            fc_op_fail_now(op, e);
            FC_UNLOCK();
            return 0;
        }
    }
    fc_op_snap(op, msg->msg_iov, msg->iov_count, sizeof(struct iovec));
    fc_op_snap(op, msg->desc, msg->iov_count, sizeof(void *));
    fc_op_snap(op, msg->rma_iov, msg->rma_iov_count, sizeof(struct fi_rma_iov));
    struct fi_rma_iov riov[8];
    fi_addr_t rdest = FI_ADDR_NOTAVAIL;
    uint64_t rneed = is_read ? FI_REMOTE_READ : FI_REMOTE_WRITE;
    for (size_t i = 0; i < msg->rma_iov_count; i++) {
        riov[i].len = msg->rma_iov[i].len;
        int e = fc_remote(ep, msg->addr, msg->rma_iov[i].addr, msg->rma_iov[i].len,
                          msg->rma_iov[i].key, rneed, what, &rdest, &riov[i].addr, &riov[i].key);
        if (e < 0) {
            rc = e;
            goto free_op;
        }
        if (e > 0) {
            fc_op_fail_now(op, e);
            FC_UNLOCK();
            return 0;
        }
    }
    struct iovec bounce;
    struct fi_msg_rma rm = {.msg_iov = msg->msg_iov, .desc = NULL, .iov_count = msg->iov_count,
                            .addr = rdest, .rma_iov = riov, .rma_iov_count = msg->rma_iov_count,
                            .context = &op->real_ctx, .data = msg->data};
    if (inject) {
        if ((rc = fc_bounce(op, msg->msg_iov, msg->iov_count, &bounce)) != 0)
            goto free_op;
        rm.msg_iov = &bounce;
        rm.iov_count = 1;
    }
    uint64_t rflags = (flags & PASS_TX) | FI_COMPLETION;
    rc = is_read ? fi_readmsg(ep->real, &rm, rflags) : fi_writemsg(ep->real, &rm, rflags);
    if (rc != 0)
        goto free_op;
    FC_UNLOCK();
    return 0;
free_op:
    fc_op_free(op);
    FC_UNLOCK();
    return fc_post_rc(what, rc);
}

static fc_ep_t *EP(struct fid_ep *e)
{
    return container_of(e, fc_ep_t, ep);
}

static ssize_t rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
                        uint64_t addr, uint64_t key, void *context)
{
    struct iovec iov = {buf, len};
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {&iov, &desc, 1, src, &r, 1, context, 0};
    return rma_post(EP(ep), 1, &m, EP(ep)->tx_op_flags, 0, "fi_read");
}

static ssize_t rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                         fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
    size_t len = 0;
    for (size_t i = 0; i < count; i++)
        len += iov[i].iov_len;
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {iov, desc, count, src, &r, 1, context, 0};
    return rma_post(EP(ep), 1, &m, EP(ep)->tx_op_flags, 0, "fi_readv");
}

static ssize_t rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return rma_post(EP(ep), 1, msg, flags, 0, "fi_readmsg");
}

static ssize_t rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                         fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
    struct iovec iov = {(void *)buf, len};
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {&iov, &desc, 1, dest, &r, 1, context, 0};
    return rma_post(EP(ep), 0, &m, EP(ep)->tx_op_flags, 0, "fi_write");
}

static ssize_t rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                          fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
    size_t len = 0;
    for (size_t i = 0; i < count; i++)
        len += iov[i].iov_len;
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {iov, desc, count, dest, &r, 1, context, 0};
    return rma_post(EP(ep), 0, &m, EP(ep)->tx_op_flags, 0, "fi_writev");
}

static ssize_t rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return rma_post(EP(ep), 0, msg, flags, 0, "fi_writemsg");
}

static ssize_t rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
                          uint64_t addr, uint64_t key)
{
    struct iovec iov = {(void *)buf, len};
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {&iov, NULL, 1, dest, &r, 1, NULL, 0};
    return rma_post(EP(ep), 0, &m, (EP(ep)->tx_op_flags & PASS_TX) | FI_INJECT, 1,
                    "fi_inject_write");
}

static ssize_t rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                             uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
                             void *context)
{
    struct iovec iov = {(void *)buf, len};
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {&iov, &desc, 1, dest, &r, 1, context, data};
    return rma_post(EP(ep), 0, &m, EP(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, 0, "fi_writedata");
}

static ssize_t rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
                              fi_addr_t dest, uint64_t addr, uint64_t key)
{
    struct iovec iov = {(void *)buf, len};
    struct fi_rma_iov r = {addr, len, key};
    struct fi_msg_rma m = {&iov, NULL, 1, dest, &r, 1, NULL, data};
    return rma_post(EP(ep), 0, &m,
                    (EP(ep)->tx_op_flags & PASS_TX) | FI_INJECT | FI_REMOTE_CQ_DATA, 1,
                    "fi_inject_writedata");
}

struct fi_ops_rma fc_rma_ops = {
    .size = sizeof(struct fi_ops_rma),
    .read = rma_read,
    .readv = rma_readv,
    .readmsg = rma_readmsg,
    .write = rma_write,
    .writev = rma_writev,
    .writemsg = rma_writemsg,
    .inject = rma_inject,
    .writedata = rma_writedata,
    .injectdata = rma_injectdata,
};

/* ---- messages, tagged or not ----------------------------------------- */

typedef struct {
    const struct iovec *iov;
    void **desc;
    size_t count;
    fi_addr_t addr;
    uint64_t tag, ignore;
    void *context;
    uint64_t data;
} msg_args_t;

static ssize_t msg_post(fc_ep_t *ep, int is_recv, int tagged, const msg_args_t *a,
                        uint64_t flags, int inject_call, const char *name)
{
    size_t total = 0;
    for (size_t i = 0; i < a->count; i++)
        total += a->iov[i].iov_len;
    char what[96];
    snprintf(what, sizeof(what), "%s of %zu bytes", name, total);
    int inject = !is_recv && (inject_call || (flags & FI_INJECT));
    FC_LOCK();
    ssize_t rc = fc_ep_can_post(ep, !is_recv, what);
    if (rc == 0)
        rc = over_limits(ep, what, a->count, is_recv ? ep->rx_iov_limit : ep->tx_iov_limit,
                         (is_recv && (flags & FI_MULTI_RECV)) ? 0 : total, inject);
    if (rc != 0) {
        FC_UNLOCK();
        return fc_post_rc(what, rc);
    }
    if (!is_recv && (flags & FI_FENCE))
        fence(ep);
    enum fc_op_kind kind = is_recv ? (tagged ? FC_OP_TRECV : FC_OP_RECV)
                                   : (tagged ? FC_OP_TSEND : FC_OP_SEND);
    fc_op_t *op = fc_op_new(ep, kind, !is_recv);
    if (op == NULL) {
        FC_UNLOCK();
        return -FI_ENOMEM;
    }
    snprintf(op->what, sizeof(op->what), "%s", what);
    op->cq_flags = (tagged ? FI_TAGGED : FI_MSG) | (is_recv ? FI_RECV : FI_SEND);
    op->len = total;
    op->buf = is_recv && a->count ? a->iov[0].iov_base : NULL;
    op->data = a->data;
    op->tag = a->tag;
    op->multi = is_recv && (flags & FI_MULTI_RECV);
    fc_cq_t *cq = is_recv ? ep->rx_cq : ep->tx_cq;
    int sel = is_recv ? ep->rx_sel : ep->tx_sel;
    op->report = !inject_call && cq && (!sel || (flags & FI_COMPLETION));
    if (!inject_call && (rc = fc_op_ctx_begin(op, a->context, op->report)) != 0)
        goto free_op;
    for (size_t i = 0; !inject && i < a->count; i++) {
        int e = fc_local_check(ep, a->iov[i].iov_base, a->iov[i].iov_len,
                               a->desc ? a->desc[i] : NULL, is_recv ? FI_RECV : FI_SEND, what);
        if (e) {
            fc_op_fail_now(op, e);
            FC_UNLOCK();
            return 0;
        }
    }
    fc_op_snap(op, a->iov, a->count, sizeof(struct iovec));
    fc_op_snap(op, a->desc, a->count, sizeof(void *));
    fi_addr_t raddr = FI_ADDR_UNSPEC;
    if (!is_recv || a->addr != FI_ADDR_UNSPEC) {
        int e;
        fc_peer_t *peer = fc_ep_peer(ep, a->addr, what, &e);
        if (peer == NULL) {
            if (e < 0) {
                rc = e;
                goto free_op;
            }
            fc_op_fail_now(op, e);
            FC_UNLOCK();
            return 0;
        }
        raddr = peer->real;
    }
    struct iovec bounce;
    const struct iovec *iov = a->iov;
    size_t count = a->count;
    if (inject) {
        if ((rc = fc_bounce(op, a->iov, a->count, &bounce)) != 0)
            goto free_op;
        iov = &bounce;
        count = 1;
    }
    uint64_t rflags = (flags & (is_recv ? PASS_RX : PASS_TX)) | FI_COMPLETION;
    if (tagged) {
        struct fi_msg_tagged m = {.msg_iov = iov, .iov_count = count, .addr = raddr,
                                  .tag = a->tag, .ignore = a->ignore,
                                  .context = &op->real_ctx, .data = a->data};
        rc = is_recv ? fi_trecvmsg(ep->real, &m, rflags) : fi_tsendmsg(ep->real, &m, rflags);
    } else {
        struct fi_msg m = {.msg_iov = iov, .iov_count = count, .addr = raddr,
                           .context = &op->real_ctx, .data = a->data};
        rc = is_recv ? fi_recvmsg(ep->real, &m, rflags) : fi_sendmsg(ep->real, &m, rflags);
    }
    if (rc != 0)
        goto free_op;
    FC_UNLOCK();
    return 0;
free_op:
    fc_op_free(op);
    FC_UNLOCK();
    return fc_post_rc(what, rc);
}

static ssize_t m_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
                      void *context)
{
    struct iovec iov = {buf, len};
    msg_args_t a = {&iov, &desc, 1, src, 0, 0, context, 0};
    return msg_post(EP(ep), 1, 0, &a, EP(ep)->rx_op_flags, 0, "fi_recv");
}

static ssize_t m_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                       fi_addr_t src, void *context)
{
    msg_args_t a = {iov, desc, count, src, 0, 0, context, 0};
    return msg_post(EP(ep), 1, 0, &a, EP(ep)->rx_op_flags, 0, "fi_recvv");
}

static ssize_t m_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
    msg_args_t a = {msg->msg_iov, msg->desc, msg->iov_count, msg->addr, 0, 0, msg->context,
                    msg->data};
    return msg_post(EP(ep), 1, 0, &a, flags, 0, "fi_recvmsg");
}

static ssize_t m_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                      fi_addr_t dest, void *context)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, &desc, 1, dest, 0, 0, context, 0};
    return msg_post(EP(ep), 0, 0, &a, EP(ep)->tx_op_flags, 0, "fi_send");
}

static ssize_t m_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                       fi_addr_t dest, void *context)
{
    msg_args_t a = {iov, desc, count, dest, 0, 0, context, 0};
    return msg_post(EP(ep), 0, 0, &a, EP(ep)->tx_op_flags, 0, "fi_sendv");
}

static ssize_t m_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
    msg_args_t a = {msg->msg_iov, msg->desc, msg->iov_count, msg->addr, 0, 0, msg->context,
                    msg->data};
    return msg_post(EP(ep), 0, 0, &a, flags, 0, "fi_sendmsg");
}

static ssize_t m_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, NULL, 1, dest, 0, 0, NULL, 0};
    return msg_post(EP(ep), 0, 0, &a, (EP(ep)->tx_op_flags & PASS_TX) | FI_INJECT, 1,
                    "fi_inject");
}

static ssize_t m_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                          uint64_t data, fi_addr_t dest, void *context)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, &desc, 1, dest, 0, 0, context, data};
    return msg_post(EP(ep), 0, 0, &a, EP(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, 0,
                    "fi_senddata");
}

static ssize_t m_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
                            fi_addr_t dest)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, NULL, 1, dest, 0, 0, NULL, data};
    return msg_post(EP(ep), 0, 0, &a,
                    (EP(ep)->tx_op_flags & PASS_TX) | FI_INJECT | FI_REMOTE_CQ_DATA, 1,
                    "fi_injectdata");
}

struct fi_ops_msg fc_msg_ops = {
    .size = sizeof(struct fi_ops_msg),
    .recv = m_recv,
    .recvv = m_recvv,
    .recvmsg = m_recvmsg,
    .send = m_send,
    .sendv = m_sendv,
    .sendmsg = m_sendmsg,
    .inject = m_inject,
    .senddata = m_senddata,
    .injectdata = m_injectdata,
};

static ssize_t t_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
                      uint64_t tag, uint64_t ignore, void *context)
{
    struct iovec iov = {buf, len};
    msg_args_t a = {&iov, &desc, 1, src, tag, ignore, context, 0};
    return msg_post(EP(ep), 1, 1, &a, EP(ep)->rx_op_flags, 0, "fi_trecv");
}

static ssize_t t_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                       fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
    msg_args_t a = {iov, desc, count, src, tag, ignore, context, 0};
    return msg_post(EP(ep), 1, 1, &a, EP(ep)->rx_op_flags, 0, "fi_trecvv");
}

static ssize_t t_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    msg_args_t a = {msg->msg_iov, msg->desc, msg->iov_count, msg->addr, msg->tag, msg->ignore,
                    msg->context, msg->data};
    return msg_post(EP(ep), 1, 1, &a, flags, 0, "fi_trecvmsg");
}

static ssize_t t_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                      fi_addr_t dest, uint64_t tag, void *context)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, &desc, 1, dest, tag, 0, context, 0};
    return msg_post(EP(ep), 0, 1, &a, EP(ep)->tx_op_flags, 0, "fi_tsend");
}

static ssize_t t_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
                       fi_addr_t dest, uint64_t tag, void *context)
{
    msg_args_t a = {iov, desc, count, dest, tag, 0, context, 0};
    return msg_post(EP(ep), 0, 1, &a, EP(ep)->tx_op_flags, 0, "fi_tsendv");
}

static ssize_t t_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    msg_args_t a = {msg->msg_iov, msg->desc, msg->iov_count, msg->addr, msg->tag, 0,
                    msg->context, msg->data};
    return msg_post(EP(ep), 0, 1, &a, flags, 0, "fi_tsendmsg");
}

static ssize_t t_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
                        uint64_t tag)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, NULL, 1, dest, tag, 0, NULL, 0};
    return msg_post(EP(ep), 0, 1, &a, (EP(ep)->tx_op_flags & PASS_TX) | FI_INJECT, 1,
                    "fi_tinject");
}

static ssize_t t_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
                          uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, &desc, 1, dest, tag, 0, context, data};
    return msg_post(EP(ep), 0, 1, &a, EP(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, 0,
                    "fi_tsenddata");
}

static ssize_t t_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
                            fi_addr_t dest, uint64_t tag)
{
    struct iovec iov = {(void *)buf, len};
    msg_args_t a = {&iov, NULL, 1, dest, tag, 0, NULL, data};
    return msg_post(EP(ep), 0, 1, &a,
                    (EP(ep)->tx_op_flags & PASS_TX) | FI_INJECT | FI_REMOTE_CQ_DATA, 1,
                    "fi_tinjectdata");
}

struct fi_ops_tagged fc_tagged_ops = {
    .size = sizeof(struct fi_ops_tagged),
    .recv = t_recv,
    .recvv = t_recvv,
    .recvmsg = t_recvmsg,
    .send = t_send,
    .sendv = t_sendv,
    .sendmsg = t_sendmsg,
    .inject = t_inject,
    .senddata = t_senddata,
    .injectdata = t_injectdata,
};
