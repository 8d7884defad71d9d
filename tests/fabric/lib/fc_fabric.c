// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fabric, domain and address vector objects of a profile. The domain
 * enforces the mode and mr_mode the app's info carries; the AV hands out
 * the profile's kind of fi_addr_t (indices for FI_AV_TABLE, opaque values
 * for FI_AV_MAP) and remembers what each peer's name said.
 */
#include <stdlib.h>
#include <string.h>

#include "fc.h"

/* ---- authorization keys ---------------------------------------------- */

static int parse_uuid(const char *s, uint8_t *out)
{
    size_t n = 0;
    for (const char *p = s; *p && n < 32; p++) {
        int v;
        if (*p == '-')
            continue;
        if (*p >= '0' && *p <= '9')
            v = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            v = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            v = *p - 'A' + 10;
        else
            return -1;
        if (n % 2 == 0)
            out[n / 2] = (uint8_t)(v << 4);
        else
            out[n / 2] |= (uint8_t)v;
        n++;
    }
    return n == 32 ? 0 : -1;
}

static unsigned long first_number(const char *list, unsigned long dflt)
{
    return (list && *list) ? strtoul(list, NULL, 0) : dflt;
}

/* The key a provider uses where the app gives none (0: none). */
static size_t default_auth(const fc_profile_t *p, uint8_t *auth)
{
    switch (p->auth) {
    case FC_AUTH_PSM3_UUID: {
        /* fi_psm3.7 FI_PSM3_UUID, "The default UUID is 00FF00FF-0000-..." */
        const char *u = getenv("FI_PSM3_UUID");
        if (u == NULL || parse_uuid(u, auth) != 0)
            parse_uuid("00FF00FF-0000-0000-0000-00FF0F0F00FF", auth);
        return 16;
    }
    case FC_AUTH_CXI_VNI: {
        /* fi_cxi.7: SLINGSHOT_VNIS/SLINGSHOT_SVC_IDS, else the default VNI
         * (FI_CXI_DEFAULT_VNI, 10 in cxip_info.c) */
        uint32_t svc = (uint32_t)first_number(getenv("SLINGSHOT_SVC_IDS"), 0);
        const char *v = getenv("SLINGSHOT_VNIS");
        uint16_t vni = (uint16_t)(v && *v ? first_number(v, 10)
                                          : first_number(getenv("FI_CXI_DEFAULT_VNI"), 10));
        memset(auth, 0, 8);
        memcpy(auth, &svc, 4);
        memcpy(auth + 4, &vni, 2);
        return 8;
    }
    default:
        return 0;
    }
}

int fc_domain_auth(fc_domain_t *dom, const struct fi_info *info, uint8_t *auth, size_t *len,
                   const char *what)
{
    const fc_profile_t *p = fc_g.prof;
    const uint8_t *key = NULL;
    size_t ks = 0;
    if (dom) { /* an endpoint: its own key, or its domain's */
        if (info && info->ep_attr && info->ep_attr->auth_key) {
            key = info->ep_attr->auth_key;
            ks = info->ep_attr->auth_key_size;
        }
    } else if (info && info->domain_attr && info->domain_attr->auth_key) {
        key = info->domain_attr->auth_key;
        ks = info->domain_attr->auth_key_size;
    }
    if (p->auth == FC_AUTH_NONE) {
        *len = 0;
        return 0;
    }
    if (key) {
        if (ks != p->auth_key_size || ks > 16) {
            fc_violation(FC_RULE_AUTH_KEY, "%s: auth_key_size %zu, %s takes %zu-byte keys",
                         what, ks, p->prov_name, p->auth_key_size);
            return -FI_EINVAL;
        }
        memcpy(auth, key, ks);
        *len = ks;
        return 0;
    }
    if (dom) {
        memcpy(auth, dom->auth, dom->auth_len);
        *len = dom->auth_len;
        return 0;
    }
    *len = default_auth(p, auth);
    if (fc_g.auth_required) {
        fc_violation(FC_RULE_AUTH_KEY,
                     "%s: no authorization key (domain_attr->auth_key) where %s requires one "
                     "(FABCHECK_AUTH_REQUIRED)",
                     what, p->prov_name);
        return -FI_EINVAL;
    }
    return 0;
}

/* ---- AV -------------------------------------------------------------- */

#define AV_MAP_TAG 0xfab0000000000000ull

static fi_addr_t app_addr_of(const fc_av_t *av, size_t idx)
{
    return av->type == FI_AV_MAP ? (AV_MAP_TAG | ((uint64_t)idx << 8) | 0x5a) : (fi_addr_t)idx;
}

fc_peer_t *fc_av_peer(fc_av_t *av, fi_addr_t addr, const char *what)
{
    size_t idx;
    if (av == NULL) {
        fc_violation(FC_RULE_EP_STATE, "%s: the endpoint has no AV bound", what);
        return NULL;
    }
    if (av->type == FI_AV_MAP) {
        idx = (size_t)((addr >> 8) & 0xffffffffffull);
        if ((addr & 0xfff00000000000ffull) != (AV_MAP_TAG | 0x5a) || idx >= av->npeer ||
            !av->peer[idx].used || av->peer[idx].app != addr) {
            fc_violation(FC_RULE_AV,
                         "%s: fi_addr 0x%llx was not handed out by this FI_AV_MAP address "
                         "vector (its fi_addr_t values are opaque, not 0..n-1)",
                         what, (unsigned long long)addr);
            return NULL;
        }
        return &av->peer[idx];
    }
    idx = (size_t)addr;
    if (addr == FI_ADDR_UNSPEC || idx >= av->npeer || !av->peer[idx].used) {
        fc_violation(FC_RULE_AV, "%s: fi_addr %llu is not an entry of this address vector", what,
                     (unsigned long long)addr);
        return NULL;
    }
    return &av->peer[idx];
}

fi_addr_t fc_av_app_addr(fc_av_t *av, fi_addr_t real)
{
    if (av == NULL || real == FI_ADDR_NOTAVAIL || real == FI_ADDR_UNSPEC)
        return FI_ADDR_NOTAVAIL;
    if ((size_t)real < av->nby_real && av->by_real[real])
        return av->peer[av->by_real[real] - 1].app;
    return FI_ADDR_NOTAVAIL;
}

static int av_insert(struct fid_av *avf, const void *addr, size_t count, fi_addr_t *fi_addr,
                     uint64_t flags, void *context)
{
    (void)context;
    fc_av_t *av = container_of(avf, fc_av_t, av);
    if (flags & ~(uint64_t)(FI_MORE | FI_SYNC_ERR))
        return -FI_EINVAL;
    FC_LOCK();
    const uint8_t *p = addr;
    int done = 0;
    for (size_t i = 0; i < count; i++) {
        fc_name_t h;
        memcpy(&h, p, sizeof(h));
        if (h.magic != FC_NAME_MAGIC || h.auth_len > 16 ||
            h.hdr_len != sizeof(h) + h.auth_len ||
            (size_t)h.hdr_len + h.real_len > sizeof(av->peer[0].name)) {
            fc_violation(FC_RULE_AV, "fi_av_insert: address %zu of %zu is not a name this "
                         "fabric's fi_getname handed out", i, count);
            if (fi_addr)
                fi_addr[i] = FI_ADDR_NOTAVAIL;
            break; /* its length is unknown: the rest cannot be parsed */
        }
        size_t nlen = (size_t)h.hdr_len + h.real_len;
        fi_addr_t real = FI_ADDR_NOTAVAIL;
        int rc = fi_av_insert(av->real, p + h.hdr_len, 1, &real, 0, NULL);
        if (rc != 1) {
            if (fi_addr)
                fi_addr[i] = FI_ADDR_NOTAVAIL;
            p += nlen;
            continue;
        }
        if (av->npeer == av->cap) {
            size_t nc = av->cap ? 2 * av->cap : 64;
            fc_peer_t *np = realloc(av->peer, nc * sizeof(*np));
            if (np == NULL) {
                FC_UNLOCK();
                return -FI_ENOMEM;
            }
            av->peer = np;
            av->cap = nc;
        }
        size_t idx = av->npeer++;
        fc_peer_t *e = &av->peer[idx];
        memset(e, 0, sizeof(*e));
        e->used = 1;
        e->real = real;
        e->app = app_addr_of(av, idx);
        e->pid = h.pid;
        e->nonce = h.nonce;
        e->dom_id = h.dom_id;
        e->ep_id = h.ep_id;
        e->auth_len = h.auth_len;
        memcpy(e->auth, p + sizeof(h), h.auth_len);
        e->namelen = nlen;
        memcpy(e->name, p, nlen);
        if ((size_t)real >= av->nby_real) {
            size_t nn = (size_t)real + 64;
            size_t *nb = realloc(av->by_real, nn * sizeof(*nb));
            if (nb) {
                memset(nb + av->nby_real, 0, (nn - av->nby_real) * sizeof(*nb));
                av->by_real = nb;
                av->nby_real = nn;
            }
        }
        if ((size_t)real < av->nby_real)
            av->by_real[real] = idx + 1;
        if (fi_addr)
            fi_addr[i] = e->app;
        done++;
        p += nlen;
    }
    FC_UNLOCK();
    return done;
}

static int av_insertsvc(struct fid_av *av, const char *node, const char *service,
                        fi_addr_t *fi_addr, uint64_t flags, void *context)
{
    (void)av, (void)node, (void)service, (void)fi_addr, (void)flags, (void)context;
    return -FI_ENOSYS;
}

static int av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service,
                        size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
    (void)av, (void)node, (void)nodecnt, (void)service, (void)svccnt, (void)fi_addr;
    (void)flags, (void)context;
    return -FI_ENOSYS;
}

static int av_remove(struct fid_av *avf, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
    (void)flags;
    fc_av_t *av = container_of(avf, fc_av_t, av);
    int rc = 0;
    FC_LOCK();
    for (size_t i = 0; i < count; i++) {
        fc_peer_t *e = fc_av_peer(av, fi_addr[i], "fi_av_remove");
        if (e == NULL) {
            rc = -FI_EINVAL;
            continue;
        }
        fi_addr_t real = e->real;
        int r = fi_av_remove(av->real, &real, 1, 0);
        if (r != 0)
            rc = r;
        if ((size_t)e->real < av->nby_real)
            av->by_real[e->real] = 0;
        e->used = 0;
    }
    FC_UNLOCK();
    return rc;
}

static int av_lookup(struct fid_av *avf, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
    fc_av_t *av = container_of(avf, fc_av_t, av);
    FC_LOCK();
    fc_peer_t *e = fc_av_peer(av, fi_addr, "fi_av_lookup");
    if (e == NULL) {
        FC_UNLOCK();
        return -FI_EINVAL;
    }
    size_t n = *addrlen < e->namelen ? *addrlen : e->namelen;
    memcpy(addr, e->name, n);
    *addrlen = e->namelen;
    FC_UNLOCK();
    return 0;
}

static const char *av_straddr(struct fid_av *avf, const void *addr, char *buf, size_t *len)
{
    fc_av_t *av = container_of(avf, fc_av_t, av);
    fc_name_t h;
    memcpy(&h, addr, sizeof(h));
    char real[128];
    size_t rl = sizeof(real);
    const char *rs = h.magic == FC_NAME_MAGIC
                         ? fi_av_straddr(av->real, (const uint8_t *)addr + h.hdr_len, real, &rl)
                         : "?";
    int n = snprintf(buf, *len, "fabcheck://%u/%u.%u/%s", h.pid, h.dom_id, h.ep_id,
                     rs ? rs : "?");
    *len = (size_t)n + 1;
    return buf;
}

static int av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **set,
                  void *context)
{
    (void)av, (void)attr, (void)set, (void)context;
    return -FI_ENOSYS;
}

static int av_close(struct fid *fid)
{
    fc_av_t *av = container_of(fid, fc_av_t, av.fid);
    int rc = fi_close(&av->real->fid);
    free(av->peer);
    free(av->by_real);
    free(av);
    return rc;
}

static struct fi_ops av_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = av_close,
    .bind = fc_no_bind,
    .control = fc_no_control,
    .ops_open = fc_no_ops_open,
};

static struct fi_ops_av av_ops = {
    .size = sizeof(struct fi_ops_av),
    .insert = av_insert,
    .insertsvc = av_insertsvc,
    .insertsym = av_insertsym,
    .remove = av_remove,
    .lookup = av_lookup,
    .straddr = av_straddr,
    .av_set = av_set,
};

static int av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **avp,
                   void *context)
{
    fc_domain_t *dom = container_of(domain, fc_domain_t, dom);
    const fc_profile_t *p = dom->prof;
    if (attr == NULL)
        return -FI_EINVAL;
    if (attr->flags & FI_EVENT)
        return -FI_ENOSYS; /* asynchronous AVs are not carried */
    enum fi_av_type type = attr->type;
    if (type == FI_AV_UNSPEC)
        type = dom->info->domain_attr->av_type != FI_AV_UNSPEC ? dom->info->domain_attr->av_type
                                                                : FI_AV_TABLE;
    if ((type == FI_AV_MAP && !p->av_map) || (type == FI_AV_TABLE && !p->av_table))
        return -FI_EINVAL;
    fc_av_t *av = calloc(1, sizeof(*av));
    if (av == NULL)
        return -FI_ENOMEM;
    struct fi_av_attr ra = {.type = FI_AV_TABLE, .count = attr->count};
    int rc = fi_av_open(dom->real, &ra, &av->real, NULL);
    if (rc != 0) {
        free(av);
        return rc;
    }
    av->dom = dom;
    av->type = type;
    av->av.fid.fclass = FI_CLASS_AV;
    av->av.fid.context = context;
    av->av.fid.ops = &av_fi_ops;
    av->av.ops = &av_ops;
    *avp = &av->av;
    return 0;
}

/* ---- domain ---------------------------------------------------------- */

static int dom_close(struct fid *fid)
{
    fc_domain_t *dom = container_of(fid, fc_domain_t, dom.fid);
    FC_LOCK();
    fc_auto_progress_stop(dom);
    for (fc_rawmap_t *m = dom->rawmaps, *n; m; m = n) {
        n = m->next;
        free(m);
    }
    FC_UNLOCK();
    int rc = fi_close(&dom->real->fid);
    fc_g.freeinfo(dom->real_info);
    fc_g.freeinfo(dom->info);
    free(dom);
    return rc;
}

static int dom_control(struct fid *fid, int command, void *arg)
{
    fc_domain_t *dom = container_of(fid, fc_domain_t, dom.fid);
    if (command == FI_MAP_RAW_MR || command == FI_UNMAP_KEY) {
        FC_LOCK();
        int rc = fc_domain_mr_control(dom, command, arg);
        FC_UNLOCK();
        return rc;
    }
    return -FI_ENOSYS;
}

static struct fi_ops dom_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = dom_close,
    .bind = fc_no_bind,
    .control = dom_control,
    .ops_open = fc_no_ops_open,
};

static int dom_scalable_ep(struct fid_domain *d, struct fi_info *info, struct fid_ep **sep,
                           void *context)
{
    (void)d, (void)info, (void)sep, (void)context;
    return -FI_ENOSYS;
}

static int dom_poll_open(struct fid_domain *d, struct fi_poll_attr *attr, struct fid_poll **p)
{
    (void)d, (void)attr, (void)p;
    return -FI_ENOSYS;
}

static int dom_stx(struct fid_domain *d, struct fi_tx_attr *attr, struct fid_stx **stx, void *c)
{
    (void)d, (void)attr, (void)stx, (void)c;
    return -FI_ENOSYS;
}

static int dom_srx(struct fid_domain *d, struct fi_rx_attr *attr, struct fid_ep **rx, void *c)
{
    (void)d, (void)attr, (void)rx, (void)c;
    return -FI_ENOSYS;
}

static int dom_query_atomic(struct fid_domain *d, enum fi_datatype dt, enum fi_op op,
                            struct fi_atomic_attr *attr, uint64_t flags)
{
    return fc_query_atomic(container_of(d, fc_domain_t, dom), dt, op, attr, flags);
}

static int dom_query_coll(struct fid_domain *d, enum fi_collective_op coll,
                          struct fi_collective_attr *attr, uint64_t flags)
{
    (void)d, (void)coll, (void)attr, (void)flags;
    return -FI_ENOSYS;
}

static int dom_endpoint2(struct fid_domain *d, struct fi_info *info, struct fid_ep **ep,
                         uint64_t flags, void *context)
{
    if (flags)
        return -FI_EINVAL;
    return fc_endpoint_open(d, info, ep, context);
}

static struct fi_ops_domain dom_ops = {
    .size = sizeof(struct fi_ops_domain),
    .av_open = av_open,
    .cq_open = fc_cq_open,
    .endpoint = fc_endpoint_open,
    .scalable_ep = dom_scalable_ep,
    .cntr_open = fc_cntr_open,
    .poll_open = dom_poll_open,
    .stx_ctx = dom_stx,
    .srx_ctx = dom_srx,
    .query_atomic = dom_query_atomic,
    .query_collective = dom_query_coll,
    .endpoint2 = dom_endpoint2,
};

static uint64_t info_mr_bits(const struct fi_info *info)
{
    int m = info->domain_attr->mr_mode;
    if (m == FI_MR_BASIC)
        return FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (m == FI_MR_SCALABLE)
        return 0;
    return (uint64_t)m;
}

static int fab_domain(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domp,
                      void *context)
{
    fc_fabric_t *fab = container_of(fabric, fc_fabric_t, fab);
    const fc_profile_t *p = fc_g.prof;
    if (info == NULL || info->fabric_attr == NULL ||
        !fc_is_profile_name(info->fabric_attr->prov_name))
        return -FI_EINVAL;
    uint64_t need = p->mode;
    if (p->mode_msg_only && !(info->caps & (FI_MSG | FI_TAGGED)))
        need = 0;
    if (need & ~info->mode)
        return -FI_ENODATA; /* the app dropped mode bits the provider requires */
    uint64_t mr = info_mr_bits(info);
    if (p->mr_required & ~mr)
        return -FI_ENODATA;
    fc_domain_t *dom = calloc(1, sizeof(*dom));
    if (dom == NULL)
        return -FI_ENOMEM;
    dom->fab = fab;
    dom->prof = p;
    dom->mode = need;
    dom->mr_mode = p->mr_required | (mr & p->mr_optional);
    FC_LOCK();
    int rc = fc_domain_auth(NULL, info, dom->auth, &dom->auth_len, "fi_domain");
    FC_UNLOCK();
    if (rc != 0)
        goto fail;
    rc = fc_real_info_for(info, &dom->real_info);
    if (rc != 0) {
        fc_note("fi_domain: the provider underneath (%s) has no domain for this info: %s",
                fc_g.underlying, fc_g.strerror(-rc));
        goto fail;
    }
    if (dom->real_info->domain_attr->mr_mode & FI_MR_LOCAL) {
        fc_note("fi_domain: the provider underneath (%s) needs FI_MR_LOCAL; fabcheck runs "
                "over providers that do not (tcp;ofi_rxm, sockets)", fc_g.underlying);
        rc = -FI_ENODATA;
        goto fail;
    }
    dom->real_mr_mode = (uint64_t)dom->real_info->domain_attr->mr_mode;
    rc = fi_domain(fab->real, dom->real_info, &dom->real, NULL);
    if (rc != 0)
        goto fail;
    dom->info = fc_g.dupinfo(info);
    dom->id = fc_new_id();
    dom->next_real_key = 0x10000;
    dom->next_map_key = 1;
    dom->dom.fid.fclass = FI_CLASS_DOMAIN;
    dom->dom.fid.context = context;
    dom->dom.fid.ops = &dom_fi_ops;
    dom->dom.ops = &dom_ops;
    dom->dom.mr = &fc_mr_ops;
    if (info->domain_attr->data_progress == FI_PROGRESS_AUTO) {
        FC_LOCK();
        fc_auto_progress_start(dom);
        FC_UNLOCK();
    }
    *domp = &dom->dom;
    return 0;
fail:
    if (dom->real_info)
        fc_g.freeinfo(dom->real_info);
    free(dom);
    return rc;
}

/* ---- fabric ---------------------------------------------------------- */

static int fab_close(struct fid *fid)
{
    fc_fabric_t *fab = container_of(fid, fc_fabric_t, fab.fid);
    int rc = fi_close(&fab->real->fid);
    free(fab);
    return rc;
}

static struct fi_ops fab_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = fab_close,
    .bind = fc_no_bind,
    .control = fc_no_control,
    .ops_open = fc_no_ops_open,
};

static int fab_passive_ep(struct fid_fabric *f, struct fi_info *info, struct fid_pep **pep,
                          void *context)
{
    (void)f, (void)info, (void)pep, (void)context;
    return -FI_ENOSYS;
}

static int fab_eq_open(struct fid_fabric *f, struct fi_eq_attr *attr, struct fid_eq **eq,
                       void *context)
{
    (void)f, (void)attr, (void)eq, (void)context;
    return -FI_ENOSYS;
}

static int fab_wait_open(struct fid_fabric *f, struct fi_wait_attr *attr, struct fid_wait **w)
{
    (void)f, (void)attr, (void)w;
    return -FI_ENOSYS;
}

/* No wait objects are handed out (fc_cq.c), so there is nothing to try. */
static int fab_trywait(struct fid_fabric *f, struct fid **fids, int count)
{
    (void)f, (void)fids, (void)count;
    return -FI_ENOSYS;
}

static int fab_domain2(struct fid_fabric *f, struct fi_info *info, struct fid_domain **dom,
                       uint64_t flags, void *context)
{
    if (flags)
        return -FI_EINVAL;
    return fab_domain(f, info, dom, context);
}

static struct fi_ops_fabric fab_ops = {
    .size = sizeof(struct fi_ops_fabric),
    .domain = fab_domain,
    .passive_ep = fab_passive_ep,
    .eq_open = fab_eq_open,
    .wait_open = fab_wait_open,
    .trywait = fab_trywait,
    .domain2 = fab_domain2,
};

int fc_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    fc_fabric_t *fab = calloc(1, sizeof(*fab));
    if (fab == NULL)
        return -FI_ENOMEM;
    struct fi_fabric_attr ra = *attr;
    ra.prov_name = (char *)fc_g.underlying;
    ra.fabric = NULL;
    int rc = fc_g.fabric(&ra, &fab->real, NULL);
    if (rc != 0) {
        free(fab);
        return rc;
    }
    fab->fab.fid.fclass = FI_CLASS_FABRIC;
    fab->fab.fid.context = context;
    fab->fab.fid.ops = &fab_fi_ops;
    fab->fab.ops = &fab_ops;
    fab->fab.api_version = fab->real->api_version;
    *fabric = &fab->fab;
    return 0;
}
