// SPDX-License-Identifier: BSD-3-Clause
/*
 * Atomics: fi_query_atomic and the *valid calls answer from the profile's
 * table (fc_profiles.c); an atomic outside it fails as the provider's
 * would, with -FI_EOPNOTSUPP, and is logged. What is in the table is
 * checked like any transfer and carried by the real provider's atomics.
 */
#include <stdlib.h>
#include <string.h>

#include "fc.h"

static int amo_kind(uint64_t flags)
{
    return (flags & FI_COMPARE_ATOMIC) ? FC_AMO_COMPARE
           : (flags & FI_FETCH_ATOMIC) ? FC_AMO_FETCH : FC_AMO_PLAIN;
}

static int in_table(const fc_profile_t *p, int kind, enum fi_datatype dt, enum fi_op op)
{
    return (unsigned)dt < FI_DATATYPE_LAST && (unsigned)op < FI_ATOMIC_OP_LAST &&
           (p->amo->dt[kind][op] >> dt) & 1;
}

static size_t amo_count(const fc_profile_t *p, int kind, enum fi_datatype dt)
{
    if (p->amo->max_bytes == 0)
        return 1;
    size_t per = fc_datatype_size(dt) * (kind == FC_AMO_COMPARE ? 2 : 1);
    size_t n = p->amo->max_bytes / per;
    return n ? n : 1;
}

int fc_query_atomic(fc_domain_t *dom, enum fi_datatype dt, enum fi_op op,
                    struct fi_atomic_attr *attr, uint64_t flags)
{
    int kind = amo_kind(flags);
    if (!in_table(dom->prof, kind, dt, op))
        return -FI_EOPNOTSUPP;
    attr->size = fc_datatype_size(dt);
    attr->count = amo_count(dom->prof, kind, dt);
    return 0;
}

static const char *const op_names[FI_ATOMIC_OP_LAST] = {
    "FI_MIN", "FI_MAX", "FI_SUM", "FI_PROD", "FI_LOR", "FI_LAND", "FI_BOR", "FI_BAND",
    "FI_LXOR", "FI_BXOR", "FI_ATOMIC_READ", "FI_ATOMIC_WRITE", "FI_CSWAP", "FI_CSWAP_NE",
    "FI_CSWAP_LE", "FI_CSWAP_LT", "FI_CSWAP_GE", "FI_CSWAP_GT", "FI_MSWAP"};
static const char *const dt_names[FI_DATATYPE_LAST] = {
    "FI_INT8", "FI_UINT8", "FI_INT16", "FI_UINT16", "FI_INT32", "FI_UINT32", "FI_INT64",
    "FI_UINT64", "FI_FLOAT", "FI_DOUBLE", "FI_FLOAT_COMPLEX", "FI_DOUBLE_COMPLEX",
    "FI_LONG_DOUBLE", "FI_LONG_DOUBLE_COMPLEX"};

static const char *kind_name(int kind)
{
    return kind == FC_AMO_COMPARE ? "compare" : kind == FC_AMO_FETCH ? "fetch" : "plain";
}

typedef struct {
    const struct fi_ioc *iov;
    void **desc;
    size_t count;
} ioc_t;

static size_t ioc_elems(const ioc_t *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->count; i++)
        n += v->iov[i].count;
    return n;
}

static int ioc_local(fc_ep_t *ep, const ioc_t *v, size_t dsz, uint64_t need, const char *what)
{
    for (size_t i = 0; i < v->count; i++) {
        if (v->iov[i].addr == NULL)
            continue; /* FI_ATOMIC_READ's operand */
        int e = fc_local_check(ep, v->iov[i].addr, v->iov[i].count * dsz,
                               v->desc ? v->desc[i] : NULL, need, what);
        if (e)
            return e;
    }
    return 0;
}

static ssize_t amo_post(fc_ep_t *ep, int kind, const struct fi_msg_atomic *msg,
                        const ioc_t *cmp, const ioc_t *res, uint64_t flags, int inject_call,
                        const char *name)
{
    const fc_profile_t *p = ep->dom->prof;
    enum fi_datatype dt = msg->datatype;
    enum fi_op aop = msg->op;
    size_t dsz = fc_datatype_size(dt);
    ioc_t opnd = {msg->msg_iov, msg->desc, msg->iov_count};
    size_t elems = ioc_elems(&opnd);
    char what[112];
    snprintf(what, sizeof(what), "%s (%s %s on %s, %zu element%s)", name, kind_name(kind),
             (unsigned)aop < FI_ATOMIC_OP_LAST && op_names[aop] ? op_names[aop] : "?",
             (unsigned)dt < FI_DATATYPE_LAST && dt_names[dt] ? dt_names[dt] : "?", elems,
             elems == 1 ? "" : "s");
    int inject = inject_call || (flags & FI_INJECT);
    if (msg->rma_iov_count != 1 || dsz == 0)
        return fc_post_rc(what, -FI_EINVAL);
    FC_LOCK();
    ssize_t rc = fc_ep_can_post(ep, 1, what);
    if (rc != 0)
        goto out;
    if (!in_table(p, kind, dt, aop)) {
        fc_violation(FC_RULE_ATOMIC,
                     "%s: not in %s's atomic table (fi_query_atomic answers -FI_EOPNOTSUPP)",
                     what, p->prov_name);
        rc = -FI_EOPNOTSUPP;
        goto out;
    }
    size_t maxn = amo_count(p, kind, dt);
    if (elems > maxn || msg->rma_iov[0].count != elems) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu elements, %s carries %zu per atomic", what, elems,
                     p->prov_name, maxn);
        rc = -FI_EINVAL;
        goto out;
    }
    if (msg->iov_count > ep->tx_iov_limit) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu IO vectors, %s takes %zu", what, msg->iov_count,
                     p->prov_name, ep->tx_iov_limit);
        rc = -FI_EINVAL;
        goto out;
    }
    if (inject && elems * dsz > ep->inject_size) {
        fc_violation(FC_RULE_LIMIT, "%s: %zu bytes injected, above %s's inject_size %zu", what,
                     elems * dsz, p->prov_name, ep->inject_size);
        rc = -FI_EMSGSIZE;
        goto out;
    }
    fc_op_t *op = fc_op_new(ep, kind == FC_AMO_PLAIN ? FC_OP_ATOMIC
                                : kind == FC_AMO_FETCH ? FC_OP_FETCH : FC_OP_CSWAP, 1);
    if (op == NULL) {
        rc = -FI_ENOMEM;
        goto out;
    }
    snprintf(op->what, sizeof(op->what), "%s", what);
    op->cq_flags = FI_ATOMIC | (kind == FC_AMO_PLAIN ? FI_WRITE : FI_READ);
    op->len = elems * dsz;
    op->data = msg->data;
    op->report = !inject_call && ep->tx_cq && (!ep->tx_sel || (flags & FI_COMPLETION));
    if (!inject_call && (rc = fc_op_ctx_begin(op, msg->context, op->report)) != 0)
        goto free_op;
    int e = inject ? 0 : ioc_local(ep, &opnd, dsz, FI_WRITE, what);
    if (!e && cmp)
        e = ioc_local(ep, cmp, dsz, FI_WRITE, what);
    if (!e && res)
        e = ioc_local(ep, res, dsz, FI_READ, what);
    if (e) {
        fc_op_fail_now(op, e);
        FC_UNLOCK();
        return 0;
    }
    fc_op_snap(op, msg->msg_iov, msg->iov_count, sizeof(struct fi_ioc));
    fc_op_snap(op, msg->desc, msg->iov_count, sizeof(void *));
    if (cmp)
        fc_op_snap(op, cmp->iov, cmp->count, sizeof(struct fi_ioc));
    if (res)
        fc_op_snap(op, res->iov, res->count, sizeof(struct fi_ioc));
    uint64_t need = kind == FC_AMO_PLAIN ? FI_REMOTE_WRITE
                    : aop == FI_ATOMIC_READ ? FI_REMOTE_READ : FI_REMOTE_READ | FI_REMOTE_WRITE;
    struct fi_rma_ioc rioc = msg->rma_iov[0];
    fi_addr_t rdest;
    e = fc_remote(ep, msg->addr, rioc.addr, elems * dsz, rioc.key, need, what, &rdest, &rioc.addr,
                  &rioc.key);
    if (e < 0) {
        rc = e;
        goto free_op;
    }
    if (e > 0) {
        fc_op_fail_now(op, e);
        FC_UNLOCK();
        return 0;
    }
    struct fi_msg_atomic rm = *msg;
    rm.desc = NULL;
    rm.addr = rdest;
    rm.rma_iov = &rioc;
    rm.context = &op->real_ctx;
    struct fi_ioc bioc;
    if (inject) {
        /* the operand only: the provider takes no other buffer at inject */
        size_t at = 0;
        op->bounce = malloc((elems * dsz) != 0 ? elems * dsz : 1);
        if (op->bounce == NULL) {
            rc = -FI_ENOMEM;
            goto free_op;
        }
        for (size_t i = 0; i < msg->iov_count; i++) {
            size_t n = msg->msg_iov[i].count * dsz;
            if (msg->msg_iov[i].addr)
                memcpy((char *)op->bounce + at, msg->msg_iov[i].addr, n);
            at += n;
        }
        bioc = (struct fi_ioc){.addr = op->bounce, .count = elems};
        rm.msg_iov = &bioc;
        rm.iov_count = 1;
    }
    uint64_t rflags = (flags & (FI_DELIVERY_COMPLETE | FI_TRANSMIT_COMPLETE |
                                FI_INJECT_COMPLETE | FI_REMOTE_CQ_DATA)) | FI_COMPLETION;
    if (kind == FC_AMO_PLAIN)
        rc = fi_atomicmsg(ep->real, &rm, rflags);
    else if (kind == FC_AMO_FETCH)
        rc = fi_fetch_atomicmsg(ep->real, &rm, (struct fi_ioc *)res->iov, NULL, res->count,
                                rflags);
    else
        rc = fi_compare_atomicmsg(ep->real, &rm, cmp->iov, NULL, cmp->count,
                                  (struct fi_ioc *)res->iov, NULL, res->count, rflags);
    if (rc == -FI_EOPNOTSUPP || rc == -FI_ENOSYS)
        fc_note("%s: in %s's table, but the provider underneath (%s) cannot do it", what,
                p->prov_name, fc_g.underlying);
    if (rc != 0)
        goto free_op;
out:
    FC_UNLOCK();
    return fc_post_rc(what, rc);
free_op:
    fc_op_free(op);
    FC_UNLOCK();
    return fc_post_rc(what, rc);
}

static fc_ep_t *EP(struct fid_ep *e)
{
    return container_of(e, fc_ep_t, ep);
}

#define ONE_MSG(m, ioc, rioc, buf_, count_, desc_, dest, addr_, key_, dt, op_, ctx)          \
    struct fi_ioc ioc = {.addr = (void *)(buf_), .count = (count_)};                         \
    struct fi_rma_ioc rioc = {.addr = (addr_), .count = (count_), .key = (key_)};            \
    struct fi_msg_atomic m = {.msg_iov = &ioc, .desc = (desc_), .iov_count = 1,              \
                              .addr = (dest), .rma_iov = &rioc, .rma_iov_count = 1,          \
                              .datatype = (dt), .op = (op_), .context = (ctx)}

static size_t elems_of(const struct fi_ioc *iov, size_t count)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        n += iov[i].count;
    return n;
}

static ssize_t a_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                       fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
                       enum fi_op op, void *context)
{
    void *d[1] = {desc};
    ONE_MSG(m, ioc, rioc, buf, count, d, dest, addr, key, dt, op, context);
    return amo_post(EP(ep), FC_AMO_PLAIN, &m, NULL, NULL, EP(ep)->tx_op_flags, 0, "fi_atomic");
}

static ssize_t a_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                        fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
                        enum fi_op op, void *context)
{
    struct fi_rma_ioc rioc = {.addr = addr, .count = elems_of(iov, count), .key = key};
    struct fi_msg_atomic m = {.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
                              .rma_iov = &rioc, .rma_iov_count = 1, .datatype = dt, .op = op,
                              .context = context};
    return amo_post(EP(ep), FC_AMO_PLAIN, &m, NULL, NULL, EP(ep)->tx_op_flags, 0, "fi_atomicv");
}

static ssize_t a_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
    return amo_post(EP(ep), FC_AMO_PLAIN, msg, NULL, NULL, flags, 0, "fi_atomicmsg");
}

static ssize_t a_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest,
                        uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
    ONE_MSG(m, ioc, rioc, buf, count, NULL, dest, addr, key, dt, op, NULL);
    return amo_post(EP(ep), FC_AMO_PLAIN, &m, NULL, NULL,
                    (EP(ep)->tx_op_flags & FI_DELIVERY_COMPLETE) | FI_INJECT, 1,
                    "fi_inject_atomic");
}

static ssize_t a_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                           void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
                           uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
    void *d[1] = {desc}, *rd[1] = {result_desc};
    ONE_MSG(m, ioc, rioc, buf, count, d, dest, addr, key, dt, op, context);
    struct fi_ioc r = {.addr = result, .count = count};
    ioc_t res = {&r, rd, 1};
    return amo_post(EP(ep), FC_AMO_FETCH, &m, NULL, &res, EP(ep)->tx_op_flags, 0,
                    "fi_fetch_atomic");
}

static ssize_t a_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
                            size_t count, struct fi_ioc *resultv, void **result_desc,
                            size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
                            enum fi_datatype dt, enum fi_op op, void *context)
{
    struct fi_rma_ioc rioc = {.addr = addr, .count = elems_of(iov, count), .key = key};
    struct fi_msg_atomic m = {.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
                              .rma_iov = &rioc, .rma_iov_count = 1, .datatype = dt, .op = op,
                              .context = context};
    ioc_t res = {resultv, result_desc, result_count};
    return amo_post(EP(ep), FC_AMO_FETCH, &m, NULL, &res, EP(ep)->tx_op_flags, 0,
                    "fi_fetch_atomicv");
}

static ssize_t a_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
                              struct fi_ioc *resultv, void **result_desc, size_t result_count,
                              uint64_t flags)
{
    ioc_t res = {resultv, result_desc, result_count};
    return amo_post(EP(ep), FC_AMO_FETCH, msg, NULL, &res, flags, 0, "fi_fetch_atomicmsg");
}

static ssize_t a_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
                           const void *compare, void *compare_desc, void *result,
                           void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                           enum fi_datatype dt, enum fi_op op, void *context)
{
    void *d[1] = {desc}, *cd[1] = {compare_desc}, *rd[1] = {result_desc};
    ONE_MSG(m, ioc, rioc, buf, count, d, dest, addr, key, dt, op, context);
    struct fi_ioc c = {.addr = (void *)compare, .count = count};
    struct fi_ioc r = {.addr = result, .count = count};
    ioc_t cmp = {&c, cd, 1}, res = {&r, rd, 1};
    return amo_post(EP(ep), FC_AMO_COMPARE, &m, &cmp, &res, EP(ep)->tx_op_flags, 0,
                    "fi_compare_atomic");
}

static ssize_t a_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
                            size_t count, const struct fi_ioc *comparev, void **compare_desc,
                            size_t compare_count, struct fi_ioc *resultv, void **result_desc,
                            size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
                            enum fi_datatype dt, enum fi_op op, void *context)
{
    struct fi_rma_ioc rioc = {.addr = addr, .count = elems_of(iov, count), .key = key};
    struct fi_msg_atomic m = {.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
                              .rma_iov = &rioc, .rma_iov_count = 1, .datatype = dt, .op = op,
                              .context = context};
    ioc_t cmp = {comparev, compare_desc, compare_count}, res = {resultv, result_desc, result_count};
    return amo_post(EP(ep), FC_AMO_COMPARE, &m, &cmp, &res, EP(ep)->tx_op_flags, 0,
                    "fi_compare_atomicv");
}

static ssize_t a_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
                              const struct fi_ioc *comparev, void **compare_desc,
                              size_t compare_count, struct fi_ioc *resultv, void **result_desc,
                              size_t result_count, uint64_t flags)
{
    ioc_t cmp = {comparev, compare_desc, compare_count}, res = {resultv, result_desc, result_count};
    return amo_post(EP(ep), FC_AMO_COMPARE, msg, &cmp, &res, flags, 0, "fi_compare_atomicmsg");
}

static int valid(struct fid_ep *ep, int kind, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    const fc_profile_t *p = EP(ep)->dom->prof;
    if (!in_table(p, kind, dt, op))
        return -FI_EOPNOTSUPP;
    *count = amo_count(p, kind, dt);
    return 0;
}

static int a_writevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    return valid(ep, FC_AMO_PLAIN, dt, op, count);
}

static int a_readwritevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    return valid(ep, FC_AMO_FETCH, dt, op, count);
}

static int a_compwritevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
    return valid(ep, FC_AMO_COMPARE, dt, op, count);
}

struct fi_ops_atomic fc_atomic_ops = {
    .size = sizeof(struct fi_ops_atomic),
    .write = a_write,
    .writev = a_writev,
    .writemsg = a_writemsg,
    .inject = a_inject,
    .readwrite = a_readwrite,
    .readwritev = a_readwritev,
    .readwritemsg = a_readwritemsg,
    .compwrite = a_compwrite,
    .compwritev = a_compwritev,
    .compwritemsg = a_compwritemsg,
    .writevalid = a_writevalid,
    .readwritevalid = a_readwritevalid,
    .compwritevalid = a_compwritevalid,
};
