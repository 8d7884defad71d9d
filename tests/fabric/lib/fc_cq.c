// SPDX-License-Identifier: BSD-3-Clause
/*
 * Completion queues and counters the app sees. Their contents are made by
 * fc_op.c from the real completions; reading either drives the progress of
 * the endpoints bound to it (the real provider runs with manual progress).
 * No wait objects are handed out: fi_cq_open and fi_cntr_open refuse
 * FI_WAIT_FD and friends with -FI_ENOSYS, as a provider without them does,
 * and FI_GETWAIT answers -FI_ENODATA; fi_cq_sread and fi_cntr_wait poll
 * (on a counter opened with FI_WAIT_UNSPEC or FI_WAIT_YIELD).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fc.h"

static struct fi_ops cq_fi_ops, cntr_fi_ops;

fc_cq_t *fc_cq_of(struct fid *fid)
{
    if (fid == NULL || fid->fclass != FI_CLASS_CQ || fid->ops != &cq_fi_ops)
        return NULL;
    return container_of(fid, fc_cq_t, cq.fid);
}

fc_cntr_t *fc_cntr_of(struct fid *fid)
{
    if (fid == NULL || fid->fclass != FI_CLASS_CNTR || fid->ops != &cntr_fi_ops)
        return NULL;
    return container_of(fid, fc_cntr_t, cntr.fid);
}

static void eps_add(fc_ep_t ***eps, size_t *n, size_t *cap, fc_ep_t *ep)
{
    for (size_t i = 0; i < *n; i++)
        if ((*eps)[i] == ep)
            return;
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        fc_ep_t **ne = realloc(*eps, nc * sizeof(*ne));
        if (ne == NULL)
            return;
        *eps = ne;
        *cap = nc;
    }
    (*eps)[(*n)++] = ep;
}

static void eps_del(fc_ep_t **eps, size_t *n, fc_ep_t *ep)
{
    for (size_t i = 0; i < *n; i++)
        if (eps[i] == ep) {
            eps[i] = eps[--*n];
            return;
        }
}

void fc_cq_attach(fc_cq_t *cq, fc_ep_t *ep)
{
    eps_add(&cq->eps, &cq->neps, &cq->epcap, ep);
}

void fc_cq_detach(fc_cq_t *cq, fc_ep_t *ep)
{
    eps_del(cq->eps, &cq->neps, ep);
}

void fc_cntr_attach(fc_cntr_t *c, fc_ep_t *ep)
{
    eps_add(&c->eps, &c->neps, &c->epcap, ep);
}

void fc_cntr_detach(fc_cntr_t *c, fc_ep_t *ep)
{
    eps_del(c->eps, &c->neps, ep);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- CQ -------------------------------------------------------------- */

static size_t entry_size(enum fi_cq_format f)
{
    switch (f) {
    case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED: return sizeof(struct fi_cq_tagged_entry);
    default: return sizeof(struct fi_cq_entry);
    }
}

/* Takes up to count entries (they are prefixes of the tagged entry). */
static ssize_t cq_take(fc_cq_t *cq, void *buf, size_t count, fi_addr_t *src)
{
    fc_progress_all_of(cq->eps, cq->neps);
    size_t es = entry_size(cq->fmt), n = 0;
    while (n < count && cq->count > 0 && !cq->q[cq->head].is_err) {
        fc_cqe_t *e = &cq->q[cq->head];
        memcpy((char *)buf + n * es, &e->e, es);
        if (src)
            src[n] = e->src;
        cq->head = (cq->head + 1) % cq->cap;
        cq->count--;
        n++;
    }
    if (n > 0)
        return (ssize_t)n;
    return cq->count > 0 && cq->q[cq->head].is_err ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t cq_read(struct fid_cq *cqf, void *buf, size_t count)
{
    fc_cq_t *cq = container_of(cqf, fc_cq_t, cq);
    FC_LOCK();
    ssize_t rc = cq_take(cq, buf, count, NULL);
    FC_UNLOCK();
    return rc;
}

static ssize_t cq_readfrom(struct fid_cq *cqf, void *buf, size_t count, fi_addr_t *src)
{
    fc_cq_t *cq = container_of(cqf, fc_cq_t, cq);
    FC_LOCK();
    ssize_t rc = cq_take(cq, buf, count, src);
    FC_UNLOCK();
    return rc;
}

static ssize_t cq_readerr(struct fid_cq *cqf, struct fi_cq_err_entry *buf, uint64_t flags)
{
    (void)flags;
    fc_cq_t *cq = container_of(cqf, fc_cq_t, cq);
    FC_LOCK();
    ssize_t rc = -FI_EAGAIN;
    if (cq->count > 0 && cq->q[cq->head].is_err) {
        const struct fi_cq_err_entry *e = &cq->q[cq->head].err;
        buf->op_context = e->op_context;
        buf->flags = e->flags;
        buf->len = e->len;
        buf->buf = e->buf;
        buf->data = e->data;
        buf->tag = e->tag;
        buf->olen = e->olen;
        buf->err = e->err;
        buf->prov_errno = e->prov_errno;
        buf->err_data_size = 0; /* no provider data */
        cq->head = (cq->head + 1) % cq->cap;
        cq->count--;
        rc = 1;
    }
    FC_UNLOCK();
    return rc;
}

static ssize_t cq_sreadfrom(struct fid_cq *cqf, void *buf, size_t count, fi_addr_t *src,
                            const void *cond, int timeout)
{
    (void)cond;
    fc_cq_t *cq = container_of(cqf, fc_cq_t, cq);
    uint64_t end = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;
    for (;;) {
        FC_LOCK();
        ssize_t rc = cq_take(cq, buf, count, src);
        FC_UNLOCK();
        if (rc != -FI_EAGAIN)
            return rc;
        if (now_ms() >= end)
            return -FI_EAGAIN;
        sched_yield();
    }
}

static ssize_t cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond, int timeout)
{
    return cq_sreadfrom(cq, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *cq)
{
    (void)cq;
    return 0;
}

static const char *cq_strerror(struct fid_cq *cqf, int prov_errno, const void *err_data,
                               char *buf, size_t len)
{
    fc_cq_t *cq = container_of(cqf, fc_cq_t, cq);
    const char *s;
    if (prov_errno == FC_PROV_ERRNO)
        s = "failed by fabcheck: the contract rule broken is on the fabcheck[...] line on stderr";
    else if (cq->neps > 0 && cq->eps[0]->pcq)
        s = fi_cq_strerror(cq->eps[0]->pcq, prov_errno, err_data, NULL, 0);
    else
        s = fc_g.strerror(prov_errno);
    if (buf && len) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    snprintf(cq->errbuf, sizeof(cq->errbuf), "%s", s);
    return cq->errbuf;
}

static struct fi_ops_cq cq_ops = {
    .size = sizeof(struct fi_ops_cq),
    .read = cq_read,
    .readfrom = cq_readfrom,
    .readerr = cq_readerr,
    .sread = cq_sread,
    .sreadfrom = cq_sreadfrom,
    .signal = cq_signal,
    .strerror = cq_strerror,
};

static int cq_close(struct fid *fid)
{
    fc_cq_t *cq = container_of(fid, fc_cq_t, cq.fid);
    FC_LOCK();
    for (fc_ep_t *ep = fc_eps_g; ep; ep = ep->next_all) {
        if (ep->tx_cq == cq)
            ep->tx_cq = NULL;
        if (ep->rx_cq == cq)
            ep->rx_cq = NULL;
    }
    FC_UNLOCK();
    free(cq->q);
    free(cq->eps);
    free(cq);
    return 0;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
    (void)fid, (void)arg;
    return command == FI_GETWAIT ? -FI_ENODATA : -FI_ENOSYS; /* no wait object, like util */
}

static struct fi_ops cq_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = cq_close,
    .bind = fc_no_bind,
    .control = cq_control,
    .ops_open = fc_no_ops_open,
};

int fc_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cqp,
               void *context)
{
    fc_domain_t *dom = container_of(domain, fc_domain_t, dom);
    if (attr == NULL)
        return -FI_EINVAL;
    if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
        attr->wait_obj != FI_WAIT_YIELD)
        return -FI_ENOSYS;
    if (attr->format > FI_CQ_FORMAT_TAGGED)
        return -FI_ENOSYS;
    fc_cq_t *cq = calloc(1, sizeof(*cq));
    if (cq == NULL)
        return -FI_ENOMEM;
    cq->dom = dom;
    cq->fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
    cq->cq.fid.fclass = FI_CLASS_CQ;
    cq->cq.fid.context = context;
    cq->cq.fid.ops = &cq_fi_ops;
    cq->cq.ops = &cq_ops;
    *cqp = &cq->cq;
    return 0;
}

/* ---- counters -------------------------------------------------------- */

static uint64_t cntr_value(fc_cntr_t *c)
{
    fc_progress_all_of(c->eps, c->neps);
    return c->val + fi_cntr_read(c->real);
}

static uint64_t cntr_errors(fc_cntr_t *c)
{
    return c->err + fi_cntr_readerr(c->real);
}

static uint64_t cntr_read(struct fid_cntr *cf)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    FC_LOCK();
    uint64_t v = cntr_value(c);
    FC_UNLOCK();
    return v;
}

static uint64_t cntr_readerr(struct fid_cntr *cf)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    FC_LOCK();
    fc_progress_all_of(c->eps, c->neps);
    uint64_t v = cntr_errors(c);
    FC_UNLOCK();
    return v;
}

static int cntr_add(struct fid_cntr *cf, uint64_t value)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    FC_LOCK();
    c->val += value;
    FC_UNLOCK();
    return 0;
}

static int cntr_set(struct fid_cntr *cf, uint64_t value)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    FC_LOCK();
    fi_cntr_set(c->real, 0);
    c->val = value;
    FC_UNLOCK();
    return 0;
}

static int cntr_adderr(struct fid_cntr *cf, uint64_t value)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    FC_LOCK();
    c->err += value;
    FC_UNLOCK();
    return 0;
}

static int cntr_seterr(struct fid_cntr *cf, uint64_t value)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    FC_LOCK();
    fi_cntr_seterr(c->real, 0);
    c->err = value;
    FC_UNLOCK();
    return 0;
}

static int cntr_wait(struct fid_cntr *cf, uint64_t threshold, int timeout)
{
    fc_cntr_t *c = container_of(cf, fc_cntr_t, cntr);
    if (!c->can_wait)
        return -FI_ENOSYS; /* FI_WAIT_NONE: "the user will not block" (fi_cntr.3) */
    uint64_t end = timeout >= 0 ? now_ms() + (uint64_t)timeout : UINT64_MAX;
    FC_LOCK();
    uint64_t errs = cntr_errors(c);
    for (;;) {
        if (cntr_value(c) >= threshold) {
            FC_UNLOCK();
            return 0;
        }
        if (cntr_errors(c) != errs) {
            FC_UNLOCK();
            return -FI_EAVAIL;
        }
        if (now_ms() >= end) {
            FC_UNLOCK();
            return -FI_ETIMEDOUT;
        }
        FC_UNLOCK();
        sched_yield();
        FC_LOCK();
    }
}

static struct fi_ops_cntr cntr_ops = {
    .size = sizeof(struct fi_ops_cntr),
    .read = cntr_read,
    .readerr = cntr_readerr,
    .add = cntr_add,
    .set = cntr_set,
    .wait = cntr_wait,
    .adderr = cntr_adderr,
    .seterr = cntr_seterr,
};

static int cntr_close(struct fid *fid)
{
    fc_cntr_t *c = container_of(fid, fc_cntr_t, cntr.fid);
    FC_LOCK();
    for (fc_ep_t *ep = fc_eps_g; ep; ep = ep->next_all) {
        fc_cntr_t **cs[] = {&ep->c_send, &ep->c_recv, &ep->c_read, &ep->c_write, &ep->c_rread,
                            &ep->c_rwrite};
        for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
            if (*cs[i] == c)
                *cs[i] = NULL;
    }
    FC_UNLOCK();
    int rc = fi_close(&c->real->fid);
    free(c->eps);
    free(c);
    return rc;
}

static struct fi_ops cntr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = cntr_close,
    .bind = fc_no_bind,
    .control = fc_no_control,
    .ops_open = fc_no_ops_open,
};

int fc_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cp,
                 void *context)
{
    fc_domain_t *dom = container_of(domain, fc_domain_t, dom);
    if (attr && attr->events != FI_CNTR_EVENTS_COMP)
        return -FI_ENOSYS;
    if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
        attr->wait_obj != FI_WAIT_YIELD)
        return -FI_ENOSYS;
    fc_cntr_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -FI_ENOMEM;
    struct fi_cntr_attr ra = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    int rc = fi_cntr_open(dom->real, &ra, &c->real, NULL);
    if (rc != 0) {
        free(c);
        return rc;
    }
    c->dom = dom;
    c->can_wait = attr == NULL || attr->wait_obj != FI_WAIT_NONE;
    c->cntr.fid.fclass = FI_CLASS_CNTR;
    c->cntr.fid.context = context;
    c->cntr.fid.ops = &cntr_fi_ops;
    c->cntr.ops = &cntr_ops;
    *cp = &c->cntr;
    return 0;
}
