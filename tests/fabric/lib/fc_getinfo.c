// SPDX-License-Identifier: BSD-3-Clause
/*
 * fi_getinfo under a profile: the profile's provider entry first, built
 * from an entry of the real provider underneath and filtered like a real
 * provider filters against the hints, then the real providers' own entries
 * unchanged (so a job can still pick tcp, shm, ... by name).
 */
#include <stdlib.h>
#include <string.h>

#include "fc.h"

#define OFI_MR_BASIC_MAP (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

/* Caps the checker does not carry through (the real provider lacks them). */
#define FC_UNCARRIED_CAPS (FI_RMA_EVENT | FI_NAMED_RX_CTX | FI_FENCE | FI_TRIGGER)

int fc_is_profile_name(const char *prov_name)
{
    return fc_g.prof && prov_name && strcmp(prov_name, fc_g.prof->prov_name) == 0;
}

/* Is component c (length n) one of the ';'-separated names in list? */
static int has_component(const char *list, const char *c, size_t n)
{
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ";");
        if (len == n && strncmp(p, c, n) == 0)
            return 1;
        p += len;
        if (*p == ';')
            p++;
    }
    return 0;
}

/* Every name in want also names a layer of have. */
static int names_match(const char *want, const char *have)
{
    for (const char *p = want; *p;) {
        size_t len = strcspn(p, ";");
        if (len && !has_component(have, p, len))
            return 0;
        p += len;
        if (*p == ';')
            p++;
    }
    return 1;
}

/* FI_PROVIDER as libfabric reads it: "a,b" keeps, "^a,b" drops; a name
 * matches an entry when each of its layers is one of the entry's
 * ("verbs" and "verbs;ofi_rxm" both match verbs;ofi_rxm). */
static int filter_allows(const char *prov_name)
{
    const char *f = fc_g.prov_filter;
    if (f == NULL || *f == '\0' || prov_name == NULL)
        return 1;
    int exclude = *f == '^';
    if (exclude)
        f++;
    int hit = 0;
    char tok[128];
    for (const char *p = f; *p;) {
        size_t len = strcspn(p, ",");
        if (len && len < sizeof(tok)) {
            memcpy(tok, p, len);
            tok[len] = '\0';
            hit |= names_match(tok, prov_name);
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return exclude ? !hit : hit;
}

/* The mr_mode bits an application admits by its hints. */
static uint64_t admitted_mr(const struct fi_info *hints)
{
    if (hints == NULL || hints->domain_attr == NULL)
        return ~(uint64_t)0;
    int m = hints->domain_attr->mr_mode;
    if (m == FI_MR_BASIC)
        return OFI_MR_BASIC_MAP;
    if (m == FI_MR_SCALABLE)
        return 0;
    return (uint64_t)m;
}

/* The hints for the real provider under a profile entry. */
static struct fi_info *real_hints(const struct fi_info *app)
{
    struct fi_info *h = fc_g.dupinfo(app);
    if (h == NULL)
        return NULL;
    free(h->fabric_attr->prov_name);
    h->fabric_attr->prov_name = strdup(fc_g.underlying);
    free(h->fabric_attr->name);
    h->fabric_attr->name = app && app->fabric_attr ? fc_strdup(app->fabric_attr->name) : NULL;
    h->caps &= ~(uint64_t)FC_UNCARRIED_CAPS;
    h->tx_attr->caps &= ~(uint64_t)FC_UNCARRIED_CAPS;
    h->rx_attr->caps &= ~(uint64_t)FC_UNCARRIED_CAPS;
    /* We own the context space and give descriptors of our own MRs. */
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->tx_attr->mode = h->rx_attr->mode = 0;
    h->ep_attr->type = FI_EP_RDM;
    h->ep_attr->max_msg_size = 0;
    free(h->ep_attr->auth_key);
    h->ep_attr->auth_key = NULL;
    h->ep_attr->auth_key_size = 0;
    h->domain_attr->mr_mode = OFI_MR_BASIC_MAP;
    h->domain_attr->mr_key_size = 0;
    h->domain_attr->mr_iov_limit = 0;
    h->domain_attr->av_type = FI_AV_UNSPEC;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    free(h->domain_attr->auth_key);
    h->domain_attr->auth_key = NULL;
    h->domain_attr->auth_key_size = 0;
    if (h->domain_attr->threading == FI_THREAD_UNSPEC)
        h->domain_attr->threading = FI_THREAD_SAFE;
    /* Limits and ordering are the profile's to check; the real provider
     * keeps its own (only send-after-send is carried). */
    h->tx_attr->inject_size = h->tx_attr->size = 0;
    h->tx_attr->iov_limit = h->tx_attr->rma_iov_limit = 0;
    h->tx_attr->op_flags = 0;
    h->tx_attr->msg_order &= FI_ORDER_SAS;
    h->rx_attr->msg_order &= FI_ORDER_SAS;
    h->tx_attr->comp_order = h->rx_attr->comp_order = 0;
    h->rx_attr->size = h->rx_attr->iov_limit = 0;
    h->rx_attr->op_flags = 0;
    h->rx_attr->total_buffered_recv = 0;
    return h;
}

int fc_real_info_for(const struct fi_info *app, struct fi_info **real)
{
    struct fi_info *h = real_hints(app);
    if (h == NULL)
        return -FI_ENOMEM;
    int rc = fc_g.getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, real);
    if (rc != 0 && h->domain_attr->name) {
        /* A domain name the app kept from another list: any will do. */
        free(h->domain_attr->name);
        h->domain_attr->name = NULL;
        rc = fc_g.getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, real);
    }
    fc_g.freeinfo(h);
    return rc;
}

/* Why the profile offers nothing for these hints (NULL: it does). */
static const char *profile_refuses(const fc_profile_t *p, const struct fi_info *h, uint64_t mode)
{
    if (h == NULL)
        return NULL;
    if (h->fabric_attr && h->fabric_attr->prov_name &&
        !names_match(h->fabric_attr->prov_name, p->prov_name))
        return "another provider named";
    if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC && h->ep_attr->type != FI_EP_RDM)
        return "endpoint type";
    if (h->caps & ~p->caps)
        return "caps";
    if (mode & ~h->mode)
        return "mode bits not admitted";
    if (p->mr_required & ~admitted_mr(h))
        return "mr_mode bits not admitted";
    const struct fi_domain_attr *d = h->domain_attr;
    if (d) {
        if ((d->data_progress == FI_PROGRESS_AUTO && !p->progress_auto) ||
            (d->data_progress == FI_PROGRESS_MANUAL && !p->progress_manual))
            return "progress model";
        if ((d->av_type == FI_AV_MAP && !p->av_map) || (d->av_type == FI_AV_TABLE && !p->av_table))
            return "AV type";
        if (d->mr_key_size > (p->mr_key_size_prov ? p->mr_key_size_prov : p->mr_key_size))
            return "mr_key_size";
        if (d->auth_key_size && d->auth_key_size != p->auth_key_size)
            return "auth_key_size";
        if (d->mr_iov_limit > p->mr_iov_limit)
            return "mr_iov_limit";
    }
    if (h->tx_attr) {
        const struct fi_tx_attr *t = h->tx_attr;
        if (t->inject_size > p->inject_size || t->size > p->tx_size ||
            t->iov_limit > p->tx_iov_limit || t->rma_iov_limit > p->rma_iov_limit)
            return "tx limits";
        if (t->msg_order & ~p->msg_order)
            return "message order";
    }
    if (h->rx_attr) {
        if (h->rx_attr->size > p->rx_size || h->rx_attr->iov_limit > p->rx_iov_limit)
            return "rx limits";
        if (h->rx_attr->msg_order & ~p->msg_order)
            return "message order";
    }
    if (h->ep_attr && h->ep_attr->max_msg_size > p->max_msg_size)
        return "max_msg_size";
    if (h->ep_attr && h->ep_attr->auth_key_size && h->ep_attr->auth_key_size != p->auth_key_size)
        return "auth_key_size";
    return NULL;
}

static size_t pick(size_t hint, size_t prof)
{
    return hint ? hint : prof;
}

/* The profile's entry made of one real entry. */
static struct fi_info *present(const fc_profile_t *p, const struct fi_info *base,
                               const struct fi_info *h, uint64_t mode)
{
    struct fi_info *e = fc_g.dupinfo(base);
    if (e == NULL)
        return NULL;
    e->next = NULL;
    free(e->fabric_attr->prov_name);
    e->fabric_attr->prov_name = strdup(p->prov_name);
    e->caps = base->caps & p->caps;
    if (h && h->caps)
        e->caps = (h->caps & p->caps) | (e->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM));
    e->tx_attr->caps &= e->caps | FI_SEND | FI_READ | FI_WRITE;
    e->rx_attr->caps &= e->caps | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE;
    e->mode = mode;
    e->tx_attr->mode = e->rx_attr->mode = mode;

    struct fi_domain_attr *d = e->domain_attr;
    const struct fi_domain_attr *hd = h ? h->domain_attr : NULL;
    d->mr_mode = (int)(p->mr_required | (p->mr_optional & admitted_mr(h)));
    d->mr_key_size = (d->mr_mode & FI_MR_PROV_KEY) && p->mr_key_size_prov ? p->mr_key_size_prov
                                                                           : p->mr_key_size;
    d->mr_iov_limit = p->mr_iov_limit;
    d->auth_key_size = p->auth_key_size;
    d->data_progress = hd && hd->data_progress ? hd->data_progress : p->progress_default;
    d->control_progress = d->data_progress;
    d->av_type = hd && hd->av_type ? hd->av_type : p->av_default;
    if (hd && hd->threading)
        d->threading = hd->threading;
    d->mr_cnt = 0;

    struct fi_tx_attr *t = e->tx_attr;
    const struct fi_tx_attr *ht = h ? h->tx_attr : NULL;
    t->inject_size = pick(ht ? ht->inject_size : 0, p->inject_size);
    t->size = pick(ht ? ht->size : 0, p->tx_size);
    t->iov_limit = pick(ht ? ht->iov_limit : 0, p->tx_iov_limit);
    t->rma_iov_limit = pick(ht ? ht->rma_iov_limit : 0, p->rma_iov_limit);
    t->op_flags = ht ? ht->op_flags : 0;
    t->msg_order = p->msg_order;
    struct fi_rx_attr *r = e->rx_attr;
    const struct fi_rx_attr *hr = h ? h->rx_attr : NULL;
    r->size = pick(hr ? hr->size : 0, p->rx_size);
    r->iov_limit = pick(hr ? hr->iov_limit : 0, p->rx_iov_limit);
    r->op_flags = hr ? hr->op_flags : 0;
    r->msg_order = p->msg_order;
    e->ep_attr->max_msg_size = pick(h && h->ep_attr ? h->ep_attr->max_msg_size : 0,
                                    p->max_msg_size);
    e->ep_attr->auth_key_size = p->auth_key_size;
    e->ep_attr->type = FI_EP_RDM;
    return e;
}

int fc_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info)
{
    const fc_profile_t *p = fc_g.prof;
    struct fi_info *pass = NULL, *mine = NULL;

    /* The real providers' entries, as the app would see them without us. */
    int prc = fc_g.getinfo(version, node, service, flags, hints, &pass);
    if (prc != 0)
        pass = NULL;
    struct fi_info **pp = &pass;
    while (*pp) {
        if (!filter_allows((*pp)->fabric_attr->prov_name)) {
            struct fi_info *drop = *pp;
            *pp = drop->next;
            drop->next = NULL;
            fc_g.freeinfo(drop);
        } else {
            pp = &(*pp)->next;
        }
    }

    uint64_t want_caps = hints ? hints->caps : 0;
    uint64_t mode = p->mode;
    if (p->mode_msg_only && want_caps && !(want_caps & (FI_MSG | FI_TAGGED)))
        mode = 0;
    const char *why = filter_allows(p->prov_name) ? profile_refuses(p, hints, mode)
                                                  : "FI_PROVIDER";
    if (why == NULL) {
        struct fi_info *uh = real_hints(hints), *base = NULL;
        int rc = uh ? fc_g.getinfo(version, node, service, flags, uh, &base) : -FI_ENOMEM;
        if (uh)
            fc_g.freeinfo(uh);
        if (rc == 0 && base) {
            mine = present(p, base, hints, mode);
            fc_g.freeinfo(base);
        } else if (getenv("FABCHECK_DEBUG")) {
            fc_note("no %s entry: the provider underneath (%s) offers nothing for these "
                    "hints (%s)", p->prov_name, fc_g.underlying, fc_g.strerror(-rc));
        }
    } else if (getenv("FABCHECK_DEBUG")) {
        fc_note("no %s entry for these hints: %s", p->prov_name, why);
    }
    if (mine) {
        mine->next = pass;
        *info = mine;
        return 0;
    }
    if (pass) {
        *info = pass;
        return 0;
    }
    *info = NULL;
    return prc != 0 ? prc : -FI_ENODATA;
}
