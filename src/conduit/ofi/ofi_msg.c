// SPDX-License-Identifier: BSD-3-Clause
/*
 * Message endpoints for data services (src/rpc): RDM endpoints with their
 * own address vector, a CQ for messages and counters for bulk RMA, opened in
 * the running PE's domain when possible (so the symmetric heap's
 * registration serves bulk transfers) or in a fabric/domain of their own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "conduit/ofi/ofi_msg.h"
#include "conduit/ofi/ofi_regions.h"
#include "core/env.h"
#include "core/log.h"

#define MSG_API FI_VERSION(1, 17)
#define MSG_CAPS (FI_MSG | FI_MULTI_RECV | FI_SOURCE | FI_RMA | FI_READ | FI_WRITE | \
                  FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV)
#define MSG_NEED (FI_MSG | FI_MULTI_RECV | FI_RMA)

#define MSG_CHECK(call, what, label)                                           \
    do {                                                                       \
        int rc_ = (int)(call);                                                 \
        if (rc_ != 0) {                                                        \
            shm_error("%s failed on provider %s: %s", what, dom->prov,         \
                      fi_strerror(-rc_));                                      \
            st = cdt_msg_status(rc_);                                          \
            goto label;                                                        \
        }                                                                      \
    } while (0)

shm_status_t cdt_msg_status(int rc)
{
    switch (rc < 0 ? -rc : rc) {
    case 0: return SHM_OK;
    case FI_EAGAIN: return SHM_ERR_AGAIN;
    case FI_ENOMEM: return SHM_ERR_NOMEM;
    case FI_EINVAL: return SHM_ERR_INVAL;
    case FI_ETRUNC: case FI_EMSGSIZE: case FI_ETOOSMALL: return SHM_ERR_RANGE;
    case FI_ECANCELED: return SHM_ERR_CANCELED;
    case FI_ETIMEDOUT: return SHM_ERR_TIMEOUT;
    case FI_EACCES: case FI_EPERM: case FI_ENOKEY: return SHM_ERR_PERM;
    case FI_ENOSYS: case FI_EOPNOTSUPP: return SHM_ERR_NOSYS;
    case FI_ENODATA: case FI_ENOENT: return SHM_ERR_NOT_FOUND;
    default: return SHM_ERR_FABRIC;
    }
}

/*
 * Own fabrics and domains, one per provider, shared by the process's
 * endpoints: fi_getinfo costs ~120 ms in a fresh process, so its answer is
 * kept for the life of the process even when the last endpoint closes.
 */
#define MSG_NDOMS 4
static cdt_msg_dom_t own_doms_g[MSG_NDOMS];
static cdt_msg_dom_t pe_dom_g;
static pthread_mutex_t doms_lock_g = PTHREAD_MUTEX_INITIALIZER;

static void dom_fill(cdt_msg_dom_t *dom)
{
    struct fi_info *info = dom->info;
    dom->virt_addr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    dom->prov_key = (info->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    size_t ks = info->domain_attr->mr_key_size;
    dom->key_bits = (ks == 0 || ks >= 8) ? 64 : ks * 8;
    uint64_t mode = info->mode | info->tx_attr->mode | info->rx_attr->mode;
    dom->mr_local = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    dom->mr_endpoint = (info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
    dom->ctx_size = (mode & FI_CONTEXT2)  ? sizeof(struct fi_context2)
                    : (mode & FI_CONTEXT) ? sizeof(struct fi_context)
                                          : 0;
    dom->av_map = info->domain_attr->av_type == FI_AV_MAP;
    dom->async_iov = (mode & FI_ASYNC_IOV) != 0;
    dom->mr_raw = (info->domain_attr->mr_mode & FI_MR_RAW) != 0;
    dom->iov1 = info->tx_attr->iov_limit < 2;
    snprintf(dom->prov, sizeof(dom->prov), "%s", info->fabric_attr->prov_name);
}

static const char *resolve_provider(const cdt_msg_cfg_t *cfg)
{
    if (cfg->provider && *cfg->provider)
        return cfg->provider;
    if (cdt_ofi_g.domain != NULL)
        return cdt_ofi_g.prov_name;
    if (shm_env_g.OFI_PROVIDER && *shm_env_g.OFI_PROVIDER)
        return shm_env_g.OFI_PROVIDER;
    const char *fip = shm_env_from_process("FI_PROVIDER");
    return (fip && *fip) ? fip : "shm";
}

/* The running PE's domain, when it can carry messages for this provider. */
static cdt_msg_dom_t *pe_dom(const char *prov, int thread_safe)
{
    if (cdt_ofi_g.domain == NULL || strcmp(cdt_ofi_g.prov_name, prov) != 0)
        return NULL;
    if ((cdt_ofi_g.info->caps & (MSG_NEED | FI_SOURCE)) != (MSG_NEED | FI_SOURCE))
        return NULL;
    if (thread_safe && cdt_ofi_g.info->domain_attr->threading != FI_THREAD_SAFE)
        return NULL;
    if (pe_dom_g.domain != cdt_ofi_g.domain) {
        if (pe_dom_g.info)
            fi_freeinfo(pe_dom_g.info);
        memset(&pe_dom_g, 0, sizeof(pe_dom_g));
        /* A copy, so that our endpoints' bulk fragments report completions
         * without changing the PE's counted-only endpoints. */
        pe_dom_g.info = fi_dupinfo(cdt_ofi_g.info);
        if (pe_dom_g.info == NULL)
            return NULL;
        pe_dom_g.info->tx_attr->op_flags |= FI_COMPLETION;
        pe_dom_g.fabric = cdt_ofi_g.fabric;
        pe_dom_g.domain = cdt_ofi_g.domain;
        pe_dom_g.is_pe = 1;
        dom_fill(&pe_dom_g);
    }
    return &pe_dom_g;
}

static shm_status_t own_dom_open(cdt_msg_dom_t *dom, const char *prov, int thread_safe)
{
    shm_status_t st = SHM_OK;
    if (dom->info == NULL) {
        struct fi_info *h = fi_allocinfo();
        if (h == NULL)
            return SHM_ERR_NOMEM;
        h->caps = MSG_CAPS;
        h->mode = CDT_OFI_MODES;
        h->ep_attr->type = FI_EP_RDM;
        /* Every bit ofi_msg_mr.c honours (FI_MR_RAW: see cdt_bulk_expose). */
        h->domain_attr->mr_mode = CDT_OFI_MR_MODES;
        /* Thread safety costs the provider a lock per call: only when asked. */
        h->domain_attr->threading = thread_safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
        h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
        h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
        h->domain_attr->av_type = FI_AV_UNSPEC; /* FI_AV_MAP too: ofi_msg_mr.c */
        h->tx_attr->msg_order = 0;
        h->rx_attr->msg_order = 0;
        h->fabric_attr->prov_name = strdup(prov);
        struct fi_info *info = NULL;
        int rc = fi_getinfo(MSG_API, NULL, NULL, 0, h, &info);
        if (rc != 0) {
            /* Without FI_SOURCE the sender is taken from the request header. */
            h->caps &= ~(uint64_t)FI_SOURCE;
            rc = fi_getinfo(MSG_API, NULL, NULL, 0, h, &info);
        }
        if (rc != 0) {
            /* A provider that moves data only by itself (FI_PROGRESS_AUTO). */
            h->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
            h->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
            rc = fi_getinfo(MSG_API, NULL, NULL, 0, h, &info);
        }
        fi_freeinfo(h);
        if (rc != 0 || info == NULL) {
            shm_error("no libfabric provider '%s' with messages, multi-recv and RMA "
                      "(fi_getinfo: %s); set SHMEM_RPC_PROVIDER to one `fi_info` lists",
                      prov, fi_strerror(-rc));
            return SHM_ERR_FABRIC;
        }
        /* The data services' key for the domain too (psm3: ofi_msg_open). */
        if (cdt_ofi_prov_row(info->fabric_attr->prov_name)->auth_job_uuid &&
            cdt_ofi_service_auth_key(info, 1) != SHM_OK) {
            fi_freeinfo(info);
            return SHM_ERR_NOMEM;
        }
        dom->info = info;
        dom->thread_safe = thread_safe;
        dom_fill(dom);
        /* Pushed data must have landed before the response that announces it. */
        const cdt_ofi_prov_row_t *row = cdt_ofi_prov_row(dom->prov);
        int dc = row->put_needs_dc < 0 ? !dom->virt_addr : row->put_needs_dc;
        if (dc)
            info->tx_attr->op_flags |= FI_DELIVERY_COMPLETE;
        /* Every bulk fragment reports to the CQ with its request as context. */
        info->tx_attr->op_flags |= FI_COMPLETION;
    }
    MSG_CHECK(fi_fabric(dom->info->fabric_attr, &dom->fabric, NULL), "fi_fabric", out);
    cdt_ofi_sweep_own_regions(dom->info->fabric_attr->prov_name);
    MSG_CHECK(fi_domain(dom->fabric, dom->info, &dom->domain, NULL), "fi_domain", out_fabric);
    return SHM_OK;
out_fabric:
    fi_close(&dom->fabric->fid);
    dom->fabric = NULL;
out:
    return st;
}

static shm_status_t dom_get(const char *prov, int thread_safe, cdt_msg_dom_t **dom_p)
{
    cdt_msg_dom_t *dom = pe_dom(prov, thread_safe);
    if (dom) {
        *dom_p = dom;
        return SHM_OK;
    }
    shm_status_t st = SHM_OK;
    pthread_mutex_lock(&doms_lock_g);
    cdt_msg_dom_t *free_slot = NULL;
    for (int i = 0; i < MSG_NDOMS; i++) {
        cdt_msg_dom_t *d = &own_doms_g[i];
        if (d->info && d->thread_safe == !!thread_safe &&
            strcmp(d->info->fabric_attr->prov_name, prov) == 0) {
            dom = d;
            break;
        }
        if (d->info == NULL && free_slot == NULL)
            free_slot = d;
    }
    if (dom == NULL)
        dom = free_slot;
    if (dom == NULL) {
        st = SHM_ERR_NOMEM;
        goto out;
    }
    if (dom->domain == NULL && (st = own_dom_open(dom, prov, thread_safe)) != SHM_OK)
        goto out;
    dom->refs++;
    *dom_p = dom;
out:
    pthread_mutex_unlock(&doms_lock_g);
    return st;
}

/*
 * The domain stays open when its last endpoint closes: clients that come and
 * go (one RPC instance after another) then pay for an endpoint only. It is
 * closed at exit.
 */
static void dom_put(cdt_msg_dom_t *dom)
{
    if (dom->is_pe)
        return;
    pthread_mutex_lock(&doms_lock_g);
    dom->refs--;
    pthread_mutex_unlock(&doms_lock_g);
}

__attribute__((destructor)) static void doms_free(void)
{
    for (int i = 0; i < MSG_NDOMS; i++) {
        cdt_msg_dom_t *d = &own_doms_g[i];
        if (d->refs > 0)
            continue; /* still in use by an endpoint nobody closed: leave it */
        if (d->domain)
            fi_close(&d->domain->fid);
        if (d->fabric)
            fi_close(&d->fabric->fid);
        if (d->info)
            fi_freeinfo(d->info);
        memset(d, 0, sizeof(*d));
    }
}

shm_status_t cdt_msg_open(const cdt_msg_cfg_t *cfg, cdt_msg_ep_t **ep_p)
{
    const char *prov = resolve_provider(cfg);
    cdt_msg_dom_t *dom;
    if (cdt_ofi_dl_load() != 0) /* it said why */
        return SHM_ERR_FABRIC;
    shm_status_t st = dom_get(prov, !!cfg->thread_safe, &dom);
    if (st != SHM_OK)
        return st;
    cdt_msg_ep_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        dom_put(dom);
        return SHM_ERR_NOMEM;
    }
    ep->dom = dom;
    ep->has_source = (dom->info->caps & FI_SOURCE) != 0;
    ep->inject_size = dom->info->tx_attr->inject_size;
    ep->ctx.flags = cfg->thread_safe ? CDT_CTX_SHARED : 0;

    /* FI_AV_MAP where the provider wants it: peers are then indices of ours. */
    struct fi_av_attr av_attr = {.type = dom->av_map ? FI_AV_MAP : FI_AV_TABLE, .count = 64};
    struct fi_cq_attr qattr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE,
                               .size = cfg->cq_size ? cfg->cq_size : 4096};
    struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    MSG_CHECK(fi_av_open(dom->domain, &av_attr, &ep->av, NULL), "fi_av_open", fail);
    if (cfg->wait_fd) {
        /* A progress thread sleeps on it; providers without one (shm) refuse. */
        qattr.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(dom->domain, &qattr, &ep->ctx.cq, NULL) == 0)
            ep->wait_fd = 1;
        else
            qattr.wait_obj = FI_WAIT_NONE;
    }
    if (!ep->wait_fd)
        MSG_CHECK(fi_cq_open(dom->domain, &qattr, &ep->ctx.cq, NULL), "fi_cq_open", fail);
    MSG_CHECK(fi_cntr_open(dom->domain, &cattr, &ep->ctx.put_cntr, NULL), "fi_cntr_open", fail);
    MSG_CHECK(fi_cntr_open(dom->domain, &cattr, &ep->ctx.get_cntr, NULL), "fi_cntr_open", fail);
    /* Where the provider wants an authorization key (psm3's job UUID):
     * the job's for its PEs' own endpoints, the data services' otherwise. */
    struct fi_info *epi = dom->info;
    if (cdt_ofi_prov_row(dom->prov)->auth_job_uuid) {
        if ((epi = fi_dupinfo(dom->info)) == NULL) {
            st = SHM_ERR_NOMEM;
            goto fail;
        }
        st = cfg->job_auth ? cdt_ofi_job_auth_key(epi, 0) : cdt_ofi_service_auth_key(epi, 0);
    }
    if (st == SHM_OK && (st = cdt_msg_status(fi_endpoint(dom->domain, epi, &ep->ctx.ep, NULL))) !=
                            SHM_OK)
        shm_error("fi_endpoint failed on provider %s", dom->prov);
    if (epi != dom->info)
        fi_freeinfo(epi);
    if (st != SHM_OK)
        goto fail;
    MSG_CHECK(fi_ep_bind(ep->ctx.ep, &ep->av->fid, 0), "fi_ep_bind(av)", fail);
    MSG_CHECK(fi_ep_bind(ep->ctx.ep, &ep->ctx.put_cntr->fid, FI_WRITE), "fi_ep_bind(cntr)", fail);
    MSG_CHECK(fi_ep_bind(ep->ctx.ep, &ep->ctx.get_cntr->fid, FI_READ), "fi_ep_bind(cntr)", fail);
    /* Selective: RMA fragments are counted; messages ask for completions. */
    MSG_CHECK(fi_ep_bind(ep->ctx.ep, &ep->ctx.cq->fid,
                         FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION),
              "fi_ep_bind(cq)", fail);
    MSG_CHECK(fi_enable(ep->ctx.ep), "fi_enable", fail);
    if ((st = cdt_msg_contract_open(ep)) != SHM_OK)
        goto fail;

    /* Entry 0 is ourselves, so that a provider's "0" for an unknown sender
     * (shm) can never be mistaken for a real peer. */
    char name[CDT_ADDR_MAX];
    size_t nlen = sizeof(name);
    cdt_peer_t self;
    if ((st = cdt_msg_name(ep, name, &nlen)) != SHM_OK)
        goto fail;
    if ((st = cdt_msg_insert(ep, name, nlen, &self)) != SHM_OK)
        goto fail;
    if (self != 0) { /* FI_AV_MAP too: its first index of ours */
        shm_error("message endpoint: own address got AV entry %llu, not 0",
                  (unsigned long long)self);
        st = SHM_ERR_FABRIC;
        goto fail;
    }
    SHM_DEBUG(RPC, "message endpoint on %s (%s domain), FI_SOURCE %s, inject %zu",
              dom->prov, dom->is_pe ? "the PE's" : "own", ep->has_source ? "yes" : "no",
              ep->inject_size);
    *ep_p = ep;
    return SHM_OK;
fail:
    cdt_msg_close(ep);
    return st;
}

void cdt_msg_close(cdt_msg_ep_t *ep)
{
    if (ep == NULL)
        return;
    cdt_msg_contract_close(ep); /* its registrations are bound to the endpoint */
    if (ep->ctx.ep)
        fi_close(&ep->ctx.ep->fid);
    if (ep->ctx.cq)
        fi_close(&ep->ctx.cq->fid);
    if (ep->ctx.put_cntr)
        fi_close(&ep->ctx.put_cntr->fid);
    if (ep->ctx.get_cntr)
        fi_close(&ep->ctx.get_cntr->fid);
    if (ep->av)
        fi_close(&ep->av->fid);
    dom_put(ep->dom);
    free(ep);
}

const char *cdt_msg_provider(const cdt_msg_ep_t *ep)
{
    return ep->dom->prov;
}

void cdt_msg_sweep_dead_on(const char *prov, int pid)
{
    if (pid > 0 && cdt_ofi_prov_row(prov)->pid_named_regions)
        cdt_ofi_regions_unlink((pid_t)pid);
}

void cdt_msg_sweep_dead(const cdt_msg_ep_t *ep, int pid)
{
    cdt_msg_sweep_dead_on(ep->dom->prov, pid);
}

int cdt_msg_peer_pid(const cdt_msg_ep_t *ep, const void *name, size_t len)
{
    if (name == NULL || !cdt_ofi_prov_row(ep->dom->prov)->pid_named_regions)
        return 0;
    return cdt_ofi_region_pid(name, len);
}

int cdt_msg_in_pe_domain(const cdt_msg_ep_t *ep)
{
    return ep->dom->is_pe;
}

shm_status_t cdt_msg_name(cdt_msg_ep_t *ep, void *name, size_t *len_p)
{
    char buf[256];
    size_t len = sizeof(buf);
    int rc = fi_getname(&ep->ctx.ep->fid, buf, &len);
    if (rc != 0)
        return cdt_msg_status(rc);
    if (len > CDT_ADDR_MAX || len > *len_p) {
        shm_error("endpoint name of %zu bytes exceeds %d", len, CDT_ADDR_MAX);
        return SHM_ERR_RANGE;
    }
    memcpy(name, buf, len);
    *len_p = len;
    return SHM_OK;
}

/*
 * "orpc://PROV/HEX": the provider with ';' written ',' (shell-safe), then the
 * raw name in hex. Nothing in it needs quoting on a command line. The parser
 * stops the name at a further '/': the RPC layer appends its options there.
 */
shm_status_t cdt_msg_addr_to_str(const char *prov, const void *name, size_t len, char *str,
                                 size_t strlen_)
{
    static const char hex[] = "0123456789abcdef";
    size_t plen = strlen(prov);
    if (strlen_ < 7 + plen + 1 + 2 * len + 1)
        return SHM_ERR_RANGE;
    char *p = str;
    memcpy(p, "orpc://", 7);
    p += 7;
    for (size_t i = 0; i < plen; i++)
        *p++ = prov[i] == ';' ? ',' : prov[i];
    *p++ = '/';
    const unsigned char *n = name;
    for (size_t i = 0; i < len; i++) {
        *p++ = hex[n[i] >> 4];
        *p++ = hex[n[i] & 15];
    }
    *p = '\0';
    return SHM_OK;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

shm_status_t cdt_msg_addr_from_str(const char *str, char *prov, size_t provlen, void *name,
                                   size_t *len_p)
{
    if (str == NULL || strncmp(str, "orpc://", 7) != 0)
        return SHM_ERR_INVAL;
    const char *p = str + 7, *slash = strchr(p, '/');
    if (slash == NULL || slash == p || (size_t)(slash - p) >= provlen)
        return SHM_ERR_INVAL;
    size_t plen = (size_t)(slash - p);
    for (size_t i = 0; i < plen; i++)
        prov[i] = p[i] == ',' ? ';' : p[i];
    prov[plen] = '\0';
    const char *h = slash + 1;
    /* The name ends at a '/' (options of the layer above follow) or the end. */
    size_t hlen = strcspn(h, "/");
    /* Tolerate a trailing newline from a file. */
    while (hlen && (h[hlen - 1] == '\n' || h[hlen - 1] == '\r' || h[hlen - 1] == ' '))
        hlen--;
    if (hlen == 0 || hlen % 2 || hlen / 2 > CDT_ADDR_MAX || hlen / 2 > *len_p)
        return SHM_ERR_INVAL;
    unsigned char *n = name;
    for (size_t i = 0; i < hlen / 2; i++) {
        int a = hexval(h[2 * i]), b = hexval(h[2 * i + 1]);
        if (a < 0 || b < 0)
            return SHM_ERR_INVAL;
        n[i] = (unsigned char)(a << 4 | b);
    }
    *len_p = hlen / 2;
    return SHM_OK;
}

shm_status_t cdt_msg_insert(cdt_msg_ep_t *ep, const void *name, size_t len, cdt_peer_t *peer_p)
{
    (void)len; /* the provider knows its own name lengths */
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    int rc = fi_av_insert(ep->av, name, 1, &fa, 0, NULL);
    if (rc != 1 || fa == FI_ADDR_NOTAVAIL) {
        SHM_DEBUG(RPC, "fi_av_insert returned %d (%s)", rc, rc < 0 ? fi_strerror(-rc) : "-");
        return rc < 0 ? cdt_msg_status(rc) : SHM_ERR_INVAL;
    }
    if (ep->dom->av_map) {
        shm_status_t st = cdt_msg_av_add(ep, fa, peer_p);
        if (st != SHM_OK)
            (void)fi_av_remove(ep->av, &fa, 1, 0);
        return st;
    }
    *peer_p = fa;
    return SHM_OK;
}

void cdt_msg_remove(cdt_msg_ep_t *ep, cdt_peer_t peer)
{
    fi_addr_t fa = cdt_msg_av_addr(ep, peer);
    if (ep->dom->av_map)
        cdt_msg_av_del(ep, peer);
    int rc = fi_av_remove(ep->av, &fa, 1, 0);
    if (rc != 0)
        SHM_DEBUG(RPC, "fi_av_remove(%llu): %s", (unsigned long long)peer, fi_strerror(-rc));
}

shm_status_t cdt_msg_set_min_multi_recv(cdt_msg_ep_t *ep, size_t bytes)
{
    /* After fi_enable only: shm crashes if it is set before (PROVIDERS.md). */
    int rc = fi_setopt(&ep->ctx.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &bytes,
                       sizeof(bytes));
    return cdt_msg_status(rc);
}

shm_status_t cdt_msg_post_recv(cdt_msg_ep_t *ep, void *buf, size_t len, int multi, void *ctx)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    void *desc = cdt_msg_recv_desc(ep, buf, len);
    if (desc == NULL && ep->dom->mr_local)
        return SHM_ERR_FABRIC; /* it said why */
    struct fi_msg msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                         .addr = FI_ADDR_UNSPEC, .context = cdt_msg_recv_opctx(ep, ctx, multi)};
    uint64_t flags = FI_COMPLETION | (multi ? FI_MULTI_RECV : 0);
    ssize_t rc;
    while ((rc = fi_recvmsg(ep->ctx.ep, &msg, flags)) == -FI_EAGAIN)
        fi_cq_read(ep->ctx.cq, NULL, 0);
    if (rc != 0) {
        shm_error("fi_recvmsg failed on provider %s: %s", ep->dom->prov, fi_strerror((int)-rc));
        (void)cdt_msg_recv_user(ep, msg.context, 1);
    }
    return cdt_msg_status((int)rc);
}

shm_status_t cdt_msg_send(cdt_msg_ep_t *ep, cdt_peer_t peer, const void *hdr, size_t hdrlen,
                          const void *pay, size_t paylen, void *ctx)
{
    struct iovec iov[2] = {{.iov_base = (void *)hdr, .iov_len = hdrlen},
                           {.iov_base = (void *)pay, .iov_len = paylen}};
    void *desc[2] = {NULL, NULL};
    struct fi_msg msg = {.msg_iov = iov, .desc = desc, .iov_count = paylen ? 2 : 1,
                         .addr = cdt_msg_av_addr(ep, peer), .context = ctx};
    uint64_t flags = FI_COMPLETION;
    char one[512]; /* one piece for an injected message where iovs are limited to 1 */
    if (hdrlen + paylen <= ep->inject_size &&
        (!ep->dom->iov1 || paylen == 0 || hdrlen + paylen <= sizeof(one))) {
        flags |= FI_INJECT;
        msg.context = cdt_msg_opctx_get(ep, ctx);
        if (ep->dom->iov1 && paylen > 0) { /* injected: copied before the call returns */
            memcpy(one, hdr, hdrlen);
            memcpy(one + hdrlen, pay, paylen);
            iov[0] = (struct iovec){.iov_base = one, .iov_len = hdrlen + paylen};
            msg.iov_count = 1;
        }
    } else if (ep->dom->mr_local || (ep->dom->iov1 && paylen > 0)) {
        /* From a copy in one piece (registered under FI_MR_LOCAL), held
         * until the send completes. */
        shm_status_t st = cdt_msg_send_buf(ep, hdr, hdrlen, pay, paylen, ctx, &iov[0], &desc[0],
                                           &msg.context);
        if (st != SHM_OK)
            return st;
        msg.iov_count = 1;
    } else {
        msg.context = cdt_msg_opctx_get(ep, ctx);
        if (ep->dom->async_iov && msg.iov_count > 1) {
            struct iovec *iv = iov;
            void **dv = desc;
            cdt_msg_keep_iov(ep, msg.context, &iv, &dv);
            msg.msg_iov = iv;
            msg.desc = dv;
        }
    }
    ssize_t rc = fi_sendmsg(ep->ctx.ep, &msg, flags);
    if (rc != 0)
        (void)cdt_msg_opctx_put(ep, msg.context);
    if (rc == -FI_EAGAIN)
        fi_cq_read(ep->ctx.cq, NULL, 0); /* progress before the caller retries */
    else if (rc != 0)
        SHM_DEBUG(RPC, "fi_sendmsg to %llu: %s", (unsigned long long)peer,
                  fi_strerror((int)-rc));
    return cdt_msg_status((int)rc);
}

void cdt_msg_progress(cdt_msg_ep_t *ep)
{
    fi_cq_read(ep->ctx.cq, NULL, 0);
}

int cdt_msg_poll(cdt_msg_ep_t *ep, cdt_msg_event_t *ev, int max)
{
    enum { BATCH = 16 };
    struct fi_cq_data_entry ent[BATCH];
    fi_addr_t src[BATCH];
    size_t n = max < BATCH ? (size_t)max : BATCH;
    ssize_t rc = ep->has_source ? fi_cq_readfrom(ep->ctx.cq, ent, n, src)
                                : fi_cq_read(ep->ctx.cq, ent, n);
    if (rc > 0) {
        for (ssize_t i = 0; i < rc; i++) {
            cdt_msg_event_t *e = &ev[i];
            memset(e, 0, sizeof(*e));
            /* A buffer's release may come as an entry of its own that carries
             * FI_MULTI_RECV without FI_RECV (shm does): still a receive event. */
            if (ent[i].flags & (FI_RECV | FI_MULTI_RECV)) {
                e->kind = CDT_MSG_RECV;
                e->buf = ent[i].buf;
                e->len = ent[i].len;
                e->src = ep->has_source ? cdt_msg_av_index(ep, src[i]) : CDT_PEER_NONE;
                e->released = (ent[i].flags & FI_MULTI_RECV) != 0;
                /* A single (not multi) receive is done with its completion. */
                e->ctx = cdt_msg_recv_user(ep, ent[i].op_context,
                                           e->released || cdt_msg_recv_single(ep, ent[i].op_context));
            } else {
                e->kind = CDT_MSG_SENT;
                e->ctx = cdt_msg_opctx_put(ep, ent[i].op_context);
            }
        }
        return (int)rc;
    }
    if (rc != -FI_EAVAIL)
        return 0;
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(ep->ctx.cq, &err, 0) != 1)
        return 0;
    memset(ev, 0, sizeof(*ev));
    ev->kind = CDT_MSG_ERROR;
    ev->released = (err.flags & FI_MULTI_RECV) != 0;
    ev->ctx = (err.flags & FI_RECV) ? cdt_msg_recv_user(ep, err.op_context, ev->released ||
                                                        cdt_msg_recv_single(ep, err.op_context))
                                    : cdt_msg_opctx_put(ep, err.op_context);
    ev->buf = err.buf;
    ev->len = err.olen ? err.olen : err.len;
    ev->src = CDT_PEER_NONE;
    ev->on_recv = (err.flags & FI_RECV) != 0;
    ev->err = cdt_msg_status(err.err ? err.err : FI_EIO);
    ev->prov_err = fi_cq_strerror(ep->ctx.cq, err.prov_errno, err.err_data, NULL, 0);
    SHM_DEBUG(RPC, "completion error on %s: %s (flags 0x%llx, len %zu, olen %zu)",
              ep->dom->prov, fi_strerror(err.err), (unsigned long long)err.flags, err.len,
              err.olen);
    return 1;
}
