// SPDX-License-Identifier: BSD-3-Clause
/*
 * Memory registration under a profile: keys as the profile hands them out
 * (the provider's own, the requested ones, or raw keys that peers map),
 * FI_MR_ENDPOINT's bind-then-enable, FI_MR_ALLOCATED's mapped memory, and
 * the descriptor checks of FI_MR_LOCAL. Each MR also lives in the
 * registry (fc_registry.c) that peers check their transfers against, and
 * is registered with the real provider underneath.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fc.h"

#define FC_MR_MAGIC 0x4d52u
#define RAW_MAGIC 0x52415746u /* "FWAR" */
#define RAW_KEY_SIZE 24

typedef struct {
    uint32_t magic, pid;
    uint64_t nonce;
    uint64_t key;
} raw_key_t;

/* Live MRs, so that a descriptor can be told from garbage. */
static fc_mr_t **live;
static size_t live_cap, live_n;

static size_t live_slot(const void *p)
{
    uint64_t x = (uintptr_t)p;
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & (live_cap - 1);
}

static void live_add(fc_mr_t *mr)
{
    if (live_n * 2 >= live_cap) {
        size_t oc = live_cap;
        fc_mr_t **old = live;
        live_cap = oc ? 2 * oc : 256;
        live = calloc(live_cap, sizeof(*live));
        live_n = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i] && old[i] != (fc_mr_t *)1)
                live_add(old[i]);
        free(old);
    }
    size_t i = live_slot(mr);
    while (live[i] && live[i] != (fc_mr_t *)1)
        i = (i + 1) & (live_cap - 1);
    live[i] = mr;
    live_n++;
}

static int live_has(const void *p)
{
    if (live_cap == 0)
        return 0;
    for (size_t i = live_slot(p);; i = (i + 1) & (live_cap - 1)) {
        if (live[i] == NULL)
            return 0;
        if (live[i] == p)
            return 1;
    }
}

static void live_del(fc_mr_t *mr)
{
    for (size_t i = live_slot(mr);; i = (i + 1) & (live_cap - 1)) {
        if (live[i] == NULL)
            return;
        if (live[i] == mr) {
            live[i] = (fc_mr_t *)1; /* tombstone */
            return;
        }
    }
}

/* Is [p, p+len) mapped? mincore fails with ENOMEM on any unmapped page. */
static int mapped(const void *p, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    uintptr_t end = (uintptr_t)p + len;
    static unsigned char vec[16384];
    while (a < end) {
        size_t chunk = (size_t)(end - a);
        if (chunk > sizeof(vec) * (size_t)pg)
            chunk = sizeof(vec) * (size_t)pg;
        if (mincore((void *)a, chunk, vec) != 0 && errno == ENOMEM)
            return 0;
        a += (chunk + (size_t)pg - 1) & ~(size_t)(pg - 1);
    }
    return 1;
}

static size_t key_bytes(const fc_domain_t *dom)
{
    return dom->info->domain_attr->mr_key_size;
}

/* A provider key: unique in the domain, within mr_key_size, and unlike the
 * small numbers apps request (so a requested key used in its place shows). */
static uint64_t prov_key(fc_domain_t *dom)
{
    size_t kb = key_bytes(dom);
    for (;;) {
        uint64_t n = ++dom->next_prov_key;
        uint64_t k = kb >= 8 ? (0xfab1c00000000000ull | (n << 12) | 0xa5)
                             : ((0x40000000ull | (n << 6) | 0x25) & 0xffffffffull);
        if (!fc_reg_key_used(dom->id, k))
            return k;
    }
}

static int mr_close(struct fid *fid)
{
    fc_mr_t *mr = container_of(fid, fc_mr_t, mr.fid);
    FC_LOCK();
    if (mr->ep)
        mr->ep->nbound_mrs--;
    fc_reg_remove(mr->slot);
    live_del(mr);
    FC_UNLOCK();
    int rc = fi_close(&mr->real->fid);
    free(mr);
    return rc;
}

static void reg_entry(const fc_mr_t *mr, fc_regent_t *e)
{
    memset(e, 0, sizeof(*e));
    e->state = mr->enabled ? FC_REG_ENABLED : FC_REG_REGISTERED;
    e->dom_id = mr->dom->id;
    e->ep_id = mr->ep ? mr->ep->id : 0;
    e->key = mr->key;
    e->req_key = mr->req_key;
    e->base = mr->base;
    e->len = mr->len;
    e->access = mr->access;
    e->real_key = fi_mr_key(mr->real);
    e->real_base = (mr->dom->real_mr_mode & FI_MR_VIRT_ADDR) ? mr->base : 0;
}

static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    fc_mr_t *mr = container_of(fid, fc_mr_t, mr.fid);
    if (bfid->fclass == FI_CLASS_CNTR)
        return -FI_ENOSYS; /* counters on MRs (FI_RMA_EVENT) are not carried */
    if (bfid->fclass != FI_CLASS_EP || flags != 0)
        return -FI_EINVAL;
    fc_ep_t *ep = fc_ep_of(bfid);
    if (ep == NULL)
        return -FI_EINVAL;
    FC_LOCK();
    int rc = 0;
    if (!(mr->dom->mr_mode & FI_MR_ENDPOINT)) {
        /* nothing to bind to: MRs belong to the domain */
    } else if (mr->enabled) {
        rc = -FI_EINVAL; /* fi_mr.3: bound before being enabled */
    } else if (ep->dom != mr->dom) {
        rc = -FI_EINVAL;
    } else {
        if (mr->ep)
            mr->ep->nbound_mrs--;
        mr->ep = ep;
        ep->nbound_mrs++;
        fc_regent_t e;
        reg_entry(mr, &e);
        fc_reg_update(mr->slot, &e);
    }
    FC_UNLOCK();
    return rc;
}

static int mr_raw_attr(fc_mr_t *mr, struct fi_mr_raw_attr *a)
{
    if ((mr->dom->mr_mode & FI_MR_ENDPOINT) && !mr->enabled)
        return -FI_EINVAL;
    if (a->key_size == NULL)
        return -FI_EINVAL;
    if (*a->key_size < RAW_KEY_SIZE) {
        *a->key_size = RAW_KEY_SIZE;
        return -FI_ETOOSMALL;
    }
    raw_key_t rk = {.magic = RAW_MAGIC, .pid = fc_reg_pid(), .nonce = fc_reg_nonce(),
                    .key = mr->key};
    memcpy(a->raw_key, &rk, sizeof(rk));
    *a->key_size = RAW_KEY_SIZE;
    if (a->base_addr)
        *a->base_addr = mr->base;
    return 0;
}

static int mr_control(struct fid *fid, int command, void *arg)
{
    fc_mr_t *mr = container_of(fid, fc_mr_t, mr.fid);
    int rc = 0;
    FC_LOCK();
    switch (command) {
    case FI_ENABLE:
        if (!(mr->dom->mr_mode & FI_MR_ENDPOINT) || mr->enabled)
            break;
        if (mr->ep == NULL) {
            fc_violation(FC_RULE_MR_ENDPOINT,
                         "fi_mr_enable of MR %p (%p, %zu bytes) before fi_mr_bind to an endpoint",
                         (void *)mr, (void *)mr->base, mr->len);
            rc = -FI_EINVAL;
            break;
        }
        mr->enabled = 1;
        if (!(mr->dom->mr_mode & FI_MR_RAW))
            mr->mr.key = mr->key;
        fc_regent_t e;
        reg_entry(mr, &e);
        fc_reg_update(mr->slot, &e);
        break;
    case FI_GET_RAW_MR:
        rc = mr_raw_attr(mr, arg);
        break;
    case FI_REFRESH:
        break;
    default:
        rc = -FI_ENOSYS;
    }
    FC_UNLOCK();
    return rc;
}

static struct fi_ops mr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = mr_close,
    .bind = mr_bind,
    .control = mr_control,
    .ops_open = fc_no_ops_open,
};

static int mr_register(fc_domain_t *dom, const struct iovec *iov, size_t count, uint64_t access,
                       uint64_t offset, uint64_t requested_key, uint64_t flags,
                       struct fid_mr **mrp, void *context)
{
    uint64_t mode = dom->mr_mode;
    if (count > dom->prof->mr_iov_limit) {
        fc_violation(FC_RULE_LIMIT, "fi_mr_regv: %zu iovecs, %s takes %zu", count,
                     dom->prof->prov_name, dom->prof->mr_iov_limit);
        return -FI_EINVAL;
    }
    if (count != 1) {
        fc_note("fi_mr_regv with %zu iovecs: the checker registers one range per MR", count);
        return -FI_ENOSYS;
    }
    if (offset != 0)
        return -FI_EINVAL; /* fi_mr.3 "The offset parameter ... must be 0" */
    const void *buf = iov[0].iov_base;
    size_t len = iov[0].iov_len;
    if ((mode & FI_MR_ALLOCATED) && len && !mapped(buf, len)) {
        fc_violation(FC_RULE_MR_ALLOCATED,
                     "fi_mr_reg of %p (%zu bytes): memory not mapped, and %s needs "
                     "FI_MR_ALLOCATED (registered memory backed by pages)",
                     buf, len, dom->prof->prov_name);
        return -FI_EFAULT;
    }
    uint64_t key;
    if (mode & (FI_MR_PROV_KEY | FI_MR_RAW)) {
        key = prov_key(dom);
    } else {
        size_t kb = key_bytes(dom);
        if (kb < 8 && (requested_key >> (8 * kb)) != 0) {
            fc_violation(FC_RULE_PROV_KEY,
                         "fi_mr_reg: requested key 0x%llx does not fit mr_key_size %zu of %s",
                         (unsigned long long)requested_key, kb, dom->prof->prov_name);
            return -FI_EKEYREJECTED;
        }
        if (fc_reg_key_used(dom->id, requested_key))
            return -FI_ENOKEY; /* fi_mr.3: the app picks another */
        key = requested_key;
    }
    fc_mr_t *mr = calloc(1, sizeof(*mr));
    if (mr == NULL)
        return -FI_ENOMEM;
    /* The real MR allows everything locally; the profile's access is checked
     * by us. Keys underneath are ours to choose where the provider asks. */
    uint64_t raccess = access | FI_READ | FI_WRITE | FI_SEND | FI_RECV;
    int rc;
    do {
        rc = fi_mr_reg(dom->real, buf, len, raccess, 0, dom->next_real_key++, 0, &mr->real,
                       NULL);
    } while (rc == -FI_ENOKEY);
    if (rc != 0) {
        free(mr);
        return rc;
    }
    mr->dom = dom;
    mr->access = access;
    mr->base = (uintptr_t)buf;
    mr->len = len;
    mr->req_key = requested_key;
    mr->key = key;
    mr->enabled = !(mode & FI_MR_ENDPOINT);
    mr->mr.fid.fclass = FI_CLASS_MR;
    mr->mr.fid.context = context;
    mr->mr.fid.ops = &mr_fi_ops;
    mr->mr.mem_desc = mr;
    mr->mr.key = (mr->enabled && !(mode & FI_MR_RAW)) ? key : FI_KEY_NOTAVAIL;
    fc_regent_t e;
    reg_entry(mr, &e);
    int slot = fc_reg_add(&e);
    if (slot < 0) {
        fc_note("fi_mr_reg: the registry is full");
        fi_close(&mr->real->fid);
        free(mr);
        return -FI_ENOSPC;
    }
    mr->slot = (uint32_t)slot;
    live_add(mr);
    (void)flags;
    *mrp = &mr->mr;
    return 0;
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
                  uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    fc_domain_t *dom = container_of(fid, fc_domain_t, dom.fid);
    FC_LOCK();
    int rc = mr_register(dom, &iov, 1, access, offset, requested_key, flags, mr, context);
    FC_UNLOCK();
    return rc;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
                   uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
                   void *context)
{
    fc_domain_t *dom = container_of(fid, fc_domain_t, dom.fid);
    FC_LOCK();
    int rc = mr_register(dom, iov, count, access, offset, requested_key, flags, mr, context);
    FC_UNLOCK();
    return rc;
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
                      struct fid_mr **mr)
{
    fc_domain_t *dom = container_of(fid, fc_domain_t, dom.fid);
    if (attr->iface != FI_HMEM_SYSTEM)
        return -FI_ENOSYS;
    FC_LOCK();
    int rc = mr_register(dom, attr->mr_iov, attr->iov_count, attr->access, attr->offset,
                         attr->requested_key, flags, mr, attr->context);
    FC_UNLOCK();
    return rc;
}

struct fi_ops_mr fc_mr_ops = {
    .size = sizeof(struct fi_ops_mr),
    .reg = mr_reg,
    .regv = mr_regv,
    .regattr = mr_regattr,
};

int fc_domain_mr_control(fc_domain_t *dom, int command, void *arg)
{
    if (command == FI_MAP_RAW_MR) {
        struct fi_mr_map_raw *m = arg;
        raw_key_t rk;
        if (m->key_size != RAW_KEY_SIZE || m->raw_key == NULL) {
            fc_violation(FC_RULE_MR_RAW, "fi_mr_map_raw: a %zu-byte key, not one of the %d-byte "
                         "keys fi_mr_raw_attr hands out", m->key_size, RAW_KEY_SIZE);
            return -FI_EINVAL;
        }
        memcpy(&rk, m->raw_key, sizeof(rk));
        if (rk.magic != RAW_MAGIC) {
            fc_violation(FC_RULE_MR_RAW, "fi_mr_map_raw: bytes that fi_mr_raw_attr did not "
                         "hand out");
            return -FI_EINVAL;
        }
        if (!(dom->mr_mode & FI_MR_RAW)) {
            *m->key = rk.key; /* fi_mr.3: "may be called on any valid key" */
            return 0;
        }
        fc_rawmap_t *e = calloc(1, sizeof(*e));
        if (e == NULL)
            return -FI_ENOMEM;
        e->local_key = 0x7a00000000000000ull | dom->next_map_key++;
        e->pid = rk.pid;
        e->nonce = rk.nonce;
        e->key = rk.key;
        e->next = dom->rawmaps;
        dom->rawmaps = e;
        *m->key = e->local_key;
        return 0;
    }
    /* FI_UNMAP_KEY */
    uint64_t key = *(uint64_t *)arg;
    for (fc_rawmap_t **pp = &dom->rawmaps; *pp; pp = &(*pp)->next) {
        if ((*pp)->local_key == key) {
            fc_rawmap_t *e = *pp;
            *pp = e->next;
            free(e);
            return 0;
        }
    }
    return (dom->mr_mode & FI_MR_RAW) ? -FI_ENOENT : 0;
}

int fc_local_check(fc_ep_t *ep, const void *buf, size_t len, void *desc, uint64_t need,
                   const char *what)
{
    fc_domain_t *dom = ep->dom;
    int local = (dom->mr_mode & FI_MR_LOCAL) != 0;
    if (len == 0)
        return 0;
    if (desc == NULL) {
        if (!local)
            return 0;
        fc_violation(FC_RULE_MR_LOCAL,
                     "%s: local buffer %p (%zu bytes) has no descriptor, and %s sets "
                     "FI_MR_LOCAL (fi_mr_desc of an MR covering it)",
                     what, buf, len, dom->prof->prov_name);
        return FI_EACCES;
    }
    /* fi_mr.3: the desc "must be either valid or NULL", FI_MR_LOCAL or not */
    if (!live_has(desc)) {
        fc_violation(FC_RULE_MR_LOCAL, "%s: descriptor %p of buffer %p (%zu bytes) is not "
                     "fi_mr_desc of a live MR", what, desc, buf, len);
        return FI_EACCES;
    }
    fc_mr_t *mr = desc;
    if (mr->dom != dom) {
        fc_violation(FC_RULE_MR_LOCAL, "%s: descriptor %p belongs to another domain", what, desc);
        return FI_EACCES;
    }
    if ((uintptr_t)buf < mr->base || (uintptr_t)buf + len > mr->base + mr->len) {
        fc_violation(FC_RULE_MR_LOCAL,
                     "%s: buffer %p (%zu bytes) is not inside the MR of its descriptor "
                     "(%p, %zu bytes)",
                     what, buf, len, (void *)mr->base, mr->len);
        return FI_EACCES;
    }
    if (dom->prof->local_needs_enable && (dom->mr_mode & FI_MR_ENDPOINT) && !mr->enabled) {
        fc_violation(FC_RULE_MR_ENDPOINT, "%s: descriptor of MR %p used before fi_mr_enable",
                     what, (void *)mr);
        return FI_EACCES;
    }
    /*
     * Access (fi_mr.3 "access"): strict wants the exact flag; the others
     * only that memory the network writes into was registered for it,
     * which is what verbs' local-write permission enforces.
     */
    uint64_t have = mr->access;
    int ok;
    if (dom->prof->ctx_all_ops)
        ok = (have & need) == need;
    else if (need & (FI_READ | FI_RECV))
        ok = (have & (FI_READ | FI_RECV | FI_REMOTE_WRITE)) != 0;
    else
        ok = 1;
    if (!ok) {
        fc_violation(FC_RULE_MR_LOCAL, "%s: buffer %p (%zu bytes) is in an MR registered "
                     "without %s access", what, buf, len,
                     need & FI_SEND ? "FI_SEND" : need & FI_RECV ? "FI_RECV"
                     : need & FI_READ ? "FI_READ" : "FI_WRITE");
        return FI_EACCES;
    }
    return 0;
}
