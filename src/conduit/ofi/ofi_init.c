// SPDX-License-Identifier: BSD-3-Clause
/* Setup of the libfabric conduit: provider, domain, endpoints, MRs, exchange. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "conduit/ofi/ofi_plan.h"
#include "core/env.h"
#include "core/log.h"
#include "runtime/rt.h"

cdt_ofi_t cdt_ofi_g;
cdt_ofi_fast_t cdt_ofi_fast_g;

#define OFI_NAME_MAX 256
#define OFI_KEY "ofishmem.ofi"
#define OFI_AV_COUNT 256 /* the AV's size hint: see cdt_init */

/* What every PE publishes once. */
typedef struct {
    uint32_t namelen;
    uint32_t pad;
    uint64_t base[SHM_NSEGS];      /* 0 when the provider addresses by offset */
    cdt_ofi_rkey_t key[SHM_NSEGS];
    char name[OFI_NAME_MAX];
} ofi_card_t;

#define OFI_CHECK(call, what)                                                  \
    do {                                                                       \
        int rc_ = (int)(call);                                                 \
        if (rc_ != 0) {                                                        \
            shm_error("%s failed on provider %s: %s", what, cdt_ofi_g.prov_name, \
                      fi_strerror(-rc_));                                      \
            return SHM_ERR_FABRIC;                                             \
        }                                                                      \
    } while (0)

/* Serialises inserting a peer into the AV with binding a new endpoint to it. */
static pthread_mutex_t av_lock = PTHREAD_MUTEX_INITIALIZER;

static shm_status_t choose_provider(const cdt_config_t *cfg)
{
    struct fi_info *info = NULL;
    shm_status_t st = cdt_ofi_choose_provider(cfg, &info);
    if (st != SHM_OK)
        return st;
    cdt_ofi_g.info = info;
    snprintf(cdt_ofi_g.prov_name, sizeof(cdt_ofi_g.prov_name), "%s",
             info->fabric_attr->prov_name);
    return SHM_OK;
}

static void fill_caps(const cdt_config_t *cfg)
{
    struct fi_info *info = cdt_ofi_g.info;
    cdt_ofi_caps_t *c = &cdt_ofi_g.caps;
    const cdt_ofi_prov_row_t *row = cdt_ofi_prov_row(cdt_ofi_g.prov_name);

    uint64_t mr = (uint64_t)info->domain_attr->mr_mode;
    uint64_t mode = info->mode | info->tx_attr->mode | info->rx_attr->mode;
    c->mr_virt_addr = (mr & FI_MR_VIRT_ADDR) != 0;
    c->mr_prov_key = (mr & FI_MR_PROV_KEY) != 0;
    c->mr_local = (mr & FI_MR_LOCAL) != 0;
    c->mr_endpoint = (mr & FI_MR_ENDPOINT) != 0;
    c->mr_raw = (mr & FI_MR_RAW) != 0;
    c->mr_allocated = (mr & FI_MR_ALLOCATED) != 0;
    c->mr_key_size = info->domain_attr->mr_key_size;
    c->ctx_size = (mode & FI_CONTEXT2)  ? sizeof(struct fi_context2)
                  : (mode & FI_CONTEXT) ? sizeof(struct fi_context)
                                        : 0;
    c->av_map = info->domain_attr->av_type == FI_AV_MAP;
    c->auto_progress = info->domain_attr->data_progress == FI_PROGRESS_AUTO;
    c->native_amo = (info->caps & FI_ATOMIC) != 0;
    c->put_needs_dc = row->put_needs_dc < 0 ? !c->mr_virt_addr : row->put_needs_dc;
    c->inject_honours_dc = row->inject_honours_dc;
    c->read_orders_writes = row->read_orders_writes;
    c->cntr_wait_broken = row->cntr_wait_broken;
    c->needs_target_progress = row->needs_target_progress;
    c->lazy_connect = row->lazy_connect;
    c->inject_size = info->tx_attr->inject_size;
    c->max_msg_size = info->ep_attr->max_msg_size;

    cdt_ofi_fast_g.inject_size = cdt_plan_inject_size(c->inject_size, cfg->inject_size,
                                                      c->put_needs_dc, c->inject_honours_dc);
    if (cdt_ofi_fast_g.inject_size == 0 && c->put_needs_dc && c->read_orders_writes &&
        cfg->quiet_flush) {
        /* Injects land in order with a later read on the same connection:
         * quiet buys their delivery with one read per PE written. */
        cdt_ofi_fast_g.inject_size = cdt_plan_inject_size(c->inject_size, cfg->inject_size, 0, 0);
        cdt_ofi_fast_g.inject_flush = cdt_ofi_fast_g.inject_size > 0;
    }
    /* Descriptors or contexts per operation: every operation but an inject
     * leaves the fast paths, and quiet never reads injects back (the
     * read-back's sink would need both). */
    cdt_ofi_fast_g.contract = c->mr_local || c->ctx_size != 0;
    if (cdt_ofi_fast_g.contract && cdt_ofi_fast_g.inject_flush) {
        cdt_ofi_fast_g.inject_flush = 0;
        cdt_ofi_fast_g.inject_size = 0;
    }
    cdt_ofi_fast_g.flag_progress = row->sends_in_progress &&
                                   info->domain_attr->data_progress == FI_PROGRESS_MANUAL;
    cdt_ofi_fast_g.bounce_size = cfg->bounce_size;
    cdt_ofi_fast_g.frag_size = cdt_plan_frag_size(cfg->fragment_size, c->max_msg_size);
    cdt_ofi_fast_g.yield = cfg->yield;
    cdt_ofi_fast_g.stall_ns = cfg->fabric_timeout_s > 0
                                  ? (uint64_t)cfg->fabric_timeout_s * 1000000000u
                                  : 0;
}

/*
 * The progress thread's mode. Default (SHMEM_PROGRESS_THREAD=auto|on):
 * shm reaches only same-host peers, and they kick the thread awake, so it
 * sleeps until kicked; every other provider gets the timed poller (poll),
 * which leaves the CQ without a wait object: over tcp;ofi_rxm the wait
 * object slows the PE's own polling (put + quiet 8 B, loopback: 0.97-1.08x
 * a raw delivery-complete write against 1.12-1.42x in wait mode,
 * bench/results/tpoll-2026-11-26). Wait mode stays selectable; it falls
 * back to the poller where the provider hands out no wait object
 * (cdt_ctx_init). With an earlier poller that looked every I/4 beside a
 * polling PE, launchers.netfault.down_amo hung in ~4 of 35 runs at load
 * 20-40 (cause not found); since it stands back 1 ms at a time, 60 of 60.
 */
static int progress_mode(int want, const cdt_ofi_prov_row_t *row)
{
    switch (want) {
    case CDT_PROGRESS_OFF:
        return OFI_PROG_NONE;
    case CDT_PROGRESS_POLL:
        return OFI_PROG_POLL;
    case CDT_PROGRESS_WAIT:
        return OFI_PROG_WAIT;
    default:
        return row->kick_progress ? OFI_PROG_KICK : OFI_PROG_POLL;
    }
}

/*
 * No fabric (cfg->no_fabric): every peer is reached through mapped memory
 * and every AMO is a CPU atomic, so nothing of libfabric is loaded. The
 * peer table stays, all zero: an operation that would still go to the
 * fabric finds no entry and ends the job (cdt_ofi_peer_slow).
 */
static shm_status_t init_no_fabric(void)
{
    cdt_ofi_g.no_fabric = 1;
    /* What waits on peers' flags use without a fabric too (cdt_poll_idle). */
    cdt_ofi_fast_g.yield = cdt_ofi_g.cfg.yield;
    cdt_ofi_fast_g.peer = calloc((size_t)cdt_ofi_g.cfg.size, sizeof(cdt_ofi_peer_t));
    if (cdt_ofi_fast_g.peer == NULL)
        return SHM_ERR_NOMEM;
    cdt_ofi_amo_init(); /* no paths; heap and globals by CPU atomics */
    SHM_INFO(OFI, "no fabric opened: every PE's memory is mapped here");
    return SHM_OK;
}

int cdt_no_fabric(void)
{
    return cdt_ofi_g.no_fabric;
}

int cdt_peers_met(void)
{
    return cdt_ofi_g.npeers;
}

void cdt_ofi_no_fabric_fatal(int pe, const char *what)
{
    shm_fatal("%s to PE %d needs the fabric, but this job opened none (SHMEM_FABRIC=auto: all "
              "PEs on one host, each mapping the others' memory) and PE %d's memory is not "
              "mapped here; run with SHMEM_FABRIC=always",
              what, pe, pe);
}

shm_status_t cdt_init(const cdt_config_t *cfg)
{
    shm_status_t st;
    memset(&cdt_ofi_g, 0, sizeof(cdt_ofi_g));
    cdt_ofi_g.cfg = *cfg;
    if (cfg->no_fabric)
        return init_no_fabric();
    if (cdt_ofi_dl_load() != 0) /* it said why */
        return SHM_ERR_FABRIC;
    if ((st = choose_provider(cfg)) != SHM_OK)
        return st;
    fill_caps(cfg);
    cdt_ofi_g.prog_mode = progress_mode(cfg->progress_thread, cdt_ofi_prov_row(cdt_ofi_g.prov_name));
    if (cdt_ofi_g.caps.put_needs_dc)
        cdt_ofi_g.info->tx_attr->op_flags |= FI_DELIVERY_COMPLETE;
    if (cdt_ofi_prov_row(cdt_ofi_g.prov_name)->auth_job_uuid &&
        (st = cdt_ofi_job_auth_key(cdt_ofi_g.info, 1)) != SHM_OK)
        return st;

    OFI_CHECK(fi_fabric(cdt_ofi_g.info->fabric_attr, &cdt_ofi_g.fabric, NULL), "fi_fabric");
    cdt_ofi_sweep_own_regions(cdt_ofi_g.prov_name);
    OFI_CHECK(fi_domain(cdt_ofi_g.fabric, cdt_ofi_g.info, &cdt_ofi_g.domain, NULL),
              "fi_domain");
    /* The AV's count is what the provider sizes its tables by at the first
     * insert, not a limit: it grows as peers are met (on demand, in the
     * order met; a peer's fi_addr_t is kept per PE). A count of every PE
     * in the job cost rxm 16 MB and 0.4 s at the first insert for 10^5
     * PEs and 52 us per insert after it (bench/startup/av_cost -c); 256,
     * libfabric's default universe size, ~2 us and ~300 B per peer met.
     * Only where peers connect on demand (rxm): shm refuses a count above
     * its 256 peers, which is the error a larger one-host job should get. */
    size_t av_count = (size_t)cfg->size;
    if (cdt_ofi_g.caps.lazy_connect && av_count > OFI_AV_COUNT)
        av_count = OFI_AV_COUNT;
    /* The provider's type where it has one (peers' fi_addr_t are kept per
     * PE, so FI_AV_MAP's opaque ones serve as well). */
    enum fi_av_type av_type = cdt_ofi_g.info->domain_attr->av_type;
    struct fi_av_attr av_attr = {.type = av_type == FI_AV_UNSPEC ? FI_AV_TABLE : av_type,
                                 .count = av_count};
    OFI_CHECK(fi_av_open(cdt_ofi_g.domain, &av_attr, &cdt_ofi_g.av, NULL), "fi_av_open");
    cdt_ofi_amo_init(); /* probes the domain's atomics */

    /* Zero pages until touched: a PE pays memory for the peers it talks to. */
    cdt_ofi_fast_g.peer = calloc((size_t)cfg->size, sizeof(cdt_ofi_peer_t));
    if (cdt_ofi_fast_g.peer == NULL)
        return SHM_ERR_NOMEM;
    SHM_INFO(OFI, "provider %s (%s), inject %zu (provider %zu), mr %s%s, amo %s, put %s",
             cdt_ofi_g.prov_name, cdt_ofi_g.prov_why, cdt_ofi_fast_g.inject_size,
             cdt_ofi_g.caps.inject_size,
             cdt_ofi_g.caps.mr_virt_addr ? "virt-addr" : "offset",
             cdt_ofi_g.caps.mr_prov_key ? "+prov-key" : "",
             cdt_ofi_g.caps.native_amo ? "native" : "none",
             cdt_ofi_g.caps.put_needs_dc ? "delivery-complete" : "transmit-complete");
    return SHM_OK;
}

shm_status_t cdt_ctx_init(cdt_ctx_t *ctx, unsigned flags)
{
    shm_status_t st;
    memset(ctx, 0, sizeof(*ctx));
    ctx->flags = flags;
    if (cdt_ofi_g.no_fabric) {
        /* No endpoint: nothing is ever issued on it, so its quiet finds
         * every count equal; the progress thread has nothing to drive. */
        ctx->last_flush_pe = -1;
        return SHM_OK;
    }
    struct fi_cntr_attr cattr = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    /* DATA: the default CQ also reports strided messages (buffer, length). */
    struct fi_cq_attr qattr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE,
                               .size = 256};
    OFI_CHECK(fi_endpoint(cdt_ofi_g.domain, cdt_ofi_g.info, &ctx->ep, NULL), "fi_endpoint");
    OFI_CHECK(fi_cntr_open(cdt_ofi_g.domain, &cattr, &ctx->put_cntr, NULL), "fi_cntr_open");
    OFI_CHECK(fi_cntr_open(cdt_ofi_g.domain, &cattr, &ctx->get_cntr, NULL), "fi_cntr_open");
    /* The default context's CQ is what a progress thread in wait mode
     * sleeps on, where the provider has a wait object it hands out
     * (tcp;ofi_rxm). shm has none; sockets opens an FI_WAIT_FD CQ but, with
     * the manual progress we ask for, refuses FI_GETWAIT: a thread sleeping
     * on that CQ saw nothing and drove the endpoint once a second
     * (pe_async_progress on sockets: a computing PE's peer's operations did
     * not complete in 30 s). Both take same-host wake-ups instead
     * (ofi_progress.c). The wait object costs the PE's own polling: rxm
     * 1.17 then puts its tcp CQs on an epoll set that every progress call
     * pays for (~2.4 us of a put + quiet); the timed poller (poll mode)
     * opens the CQ without one and only probes whether the provider would
     * hand one out (no wait object: kicks serve same-host peers). */
    int is_dflt = cdt_ofi_g.dflt == NULL;
    if (is_dflt && cdt_ofi_g.prog_mode != OFI_PROG_NONE && cdt_ofi_g.prog_mode != OFI_PROG_KICK) {
        qattr.wait_obj = FI_WAIT_FD;
        int fd = -1;
        if (fi_cq_open(cdt_ofi_g.domain, &qattr, &ctx->cq, NULL) == 0) {
            if (fi_control(&ctx->cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0)
                cdt_ofi_g.prov_wait = 1;
            if (!cdt_ofi_g.prov_wait || cdt_ofi_g.prog_mode != OFI_PROG_WAIT) {
                fi_close(&ctx->cq->fid);
                ctx->cq = NULL;
            }
        }
        cdt_ofi_g.dflt_wait_fd = ctx->cq != NULL;
        if (cdt_ofi_g.prog_mode == OFI_PROG_WAIT && !cdt_ofi_g.dflt_wait_fd) {
            if (cdt_ofi_g.cfg.progress_thread == CDT_PROGRESS_WAIT)
                SHM_WARN(OFI, "SHMEM_PROGRESS_THREAD=wait: %s hands out no wait object; the "
                              "progress thread polls instead",
                         cdt_ofi_g.prov_name);
            cdt_ofi_g.prog_mode = OFI_PROG_POLL;
        }
        qattr.wait_obj = FI_WAIT_NONE;
    }
    if (ctx->cq == NULL)
        OFI_CHECK(fi_cq_open(cdt_ofi_g.domain, &qattr, &ctx->cq, NULL), "fi_cq_open");
    OFI_CHECK(fi_ep_bind(ctx->ep, &ctx->put_cntr->fid, FI_WRITE), "fi_ep_bind(put counter)");
    OFI_CHECK(fi_ep_bind(ctx->ep, &ctx->get_cntr->fid, FI_READ), "fi_ep_bind(get counter)");
    OFI_CHECK(fi_ep_bind(ctx->ep, &ctx->cq->fid,
                         FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION),
              "fi_ep_bind(cq)");
    /* Binding to the AV and enabling walk the AV's peers (shm maps each into
     * the new endpoint): not at the same time as another thread inserts a
     * peer (cdt_ofi_peer_slow), which crashed libfabric's shm (a worker's
     * first AMO to a PE while other threads made contexts: pe_thread.thread_ctx). */
    pthread_mutex_lock(&av_lock);
    int rc = fi_ep_bind(ctx->ep, &cdt_ofi_g.av->fid, 0);
    if (rc == 0)
        rc = fi_enable(ctx->ep);
    pthread_mutex_unlock(&av_lock);
    OFI_CHECK(rc, "fi_ep_bind(av) + fi_enable");

    /* Threads sharing a context would race on the bounce ring and the flush
     * list: they skip both. */
    ctx->last_flush_pe = -1;
    ctx->inject_size = (cdt_ofi_fast_g.inject_flush && (flags & CDT_CTX_SHARED))
                           ? 0
                           : cdt_ofi_fast_g.inject_size;
    /* FI_MR_ENDPOINT: peers address the default endpoint; the segments'
     * registrations are bound to it and enabled before cdt_connect
     * publishes their keys. */
    if (is_dflt && (st = cdt_ofi_seg_bind(ctx->ep)) != SHM_OK)
        return st;
    /* Descriptors, bounce buffers in registered memory, context ring. */
    if ((st = cdt_ofi_lmr_open(ctx, is_dflt)) != SHM_OK)
        return st;
    long n = cdt_ofi_g.cfg.bounce_buffers;
    if (ctx->lmr == NULL && !(flags & CDT_CTX_SHARED) && n > 0 &&
        cdt_ofi_fast_g.bounce_size > 0) {
        ctx->bounce = malloc((size_t)n * cdt_ofi_fast_g.bounce_size);
        if (ctx->bounce == NULL)
            return SHM_ERR_NOMEM;
        ctx->bounce_n = (unsigned)n;
    }
    if (is_dflt) {
        cdt_ofi_g.dflt = ctx;
        cdt_ofi_xf_open(ctx); /* strided transfers by message (ofi_strided.c) */
        /* Contexts made later only read and write: over rxm they need no
         * shared receive context, which costs ~70 MB and ~0.3-0.9 s per
         * endpoint (SOS many-ctx: 64 contexts did not start); without it
         * ~1 MB and ~10 ms. rxm reads this when an endpoint opens; init is
         * still single-threaded here, and a value the user set stays. */
        if (strstr(cdt_ofi_g.prov_name, "ofi_rxm") != NULL)
            setenv("FI_OFI_RXM_USE_SRX", "0", 0);
    }
    return SHM_OK;
}

void cdt_ctx_fini(cdt_ctx_t *ctx)
{
    cdt_ofi_lmr_close(ctx); /* its registrations are bound to the endpoint */
    if (cdt_ofi_g.dflt == ctx && cdt_ofi_g.caps.mr_endpoint)
        for (int s = 0; s < SHM_NSEGS; s++)
            if (cdt_ofi_g.mr[s]) { /* bound to this endpoint: closed before it */
                fi_close(&cdt_ofi_g.mr[s]->fid);
                cdt_ofi_g.mr[s] = NULL;
            }
    if (ctx->ep)
        fi_close(&ctx->ep->fid);
    if (ctx->cq)
        fi_close(&ctx->cq->fid);
    if (ctx->put_cntr)
        fi_close(&ctx->put_cntr->fid);
    if (ctx->get_cntr)
        fi_close(&ctx->get_cntr->fid);
    free(ctx->bounce); /* NULL where the lmr held it */
    if (cdt_ofi_g.dflt == ctx) {
        cdt_ofi_g.dflt = NULL;
        cdt_ofi_xf_close(); /* its receive buffers went with the endpoint */
    }
    memset(ctx, 0, sizeof(*ctx));
}

shm_status_t cdt_seg_expose(int seg, void *base, size_t len)
{
    if (len == 0)
        return SHM_OK;
    if (cdt_ofi_g.no_fabric) {
        cdt_ofi_g.seg_base[seg] = (uint64_t)(uintptr_t)base;
        cdt_ofi_g.seg_len[seg] = len;
        return SHM_OK;
    }
    shm_status_t st = cdt_ofi_seg_register(seg, base, len);
    if (st != SHM_OK)
        return st;
    cdt_ofi_g.seg_base[seg] = (uint64_t)(uintptr_t)base;
    cdt_ofi_g.seg_len[seg] = len;
    return SHM_OK;
}

shm_status_t cdt_connect(void)
{
    shm_status_t st = SHM_OK;
    if (!cdt_ofi_g.no_fabric) {
        ofi_card_t card = {0};
        size_t namelen = sizeof(card.name);
        OFI_CHECK(fi_getname(&cdt_ofi_g.dflt->ep->fid, card.name, &namelen), "fi_getname");
        card.namelen = (uint32_t)namelen;
        for (int s = 0; s < SHM_NSEGS && st == SHM_OK; s++) {
            card.base[s] = cdt_ofi_g.caps.mr_virt_addr ? cdt_ofi_g.seg_base[s] : 0;
            st = cdt_ofi_seg_key(s, &card.key[s]);
        }
        if (st == SHM_OK)
            st = shm_rt_put(OFI_KEY, &card, sizeof(card));
    }
    static char host[64]; /* kept: core/init.c may connect twice (a fabric after none) */
    if (st == SHM_OK && !host[0])
        gethostname(host, sizeof(host) - 1);
    if (st == SHM_OK) /* read only to name a peer in an error report */
        st = shm_rt_put(CDT_OFI_HOST_KEY, host, sizeof(host));
    /* Eager wire-up reads every card at once: then let the fence bring them
     * all. Otherwise each is fetched from the launcher on first contact. */
    int eager = cdt_ofi_g.cfg.eager_connect && !cdt_ofi_g.no_fabric;
    if (st == SHM_OK)
        st = shm_rt_exchange(eager);
    if (st != SHM_OK)
        return st;
    if (eager)
        for (int pe = 0; pe < cdt_ofi_g.cfg.size; pe++)
            cdt_ofi_peer(pe);
    return SHM_OK;
}

/*
 * First contact with pe: its card from the launcher (PMIx_Get; served from
 * the data the fence collected, or fetched from pe's server on demand), one
 * address-vector insert, its segments. Under a lock: several threads, or a
 * thread and the progress thread, may meet the same new peer at once; the
 * entry is published (addr1) last, so a reader that sees it sees it whole.
 * Connection-oriented providers (rxm) connect on the first transfer that
 * follows; both ends of a pair doing so at once is rxm's to settle (it
 * keeps the request of the end with the lower address: PROVIDERS.md).
 */
const cdt_ofi_peer_t *cdt_ofi_peer_slow(int pe)
{
    pthread_mutex_t *lock = &av_lock;
    cdt_ofi_peer_t *p = &cdt_ofi_fast_g.peer[pe];
    if (cdt_ofi_g.no_fabric)
        cdt_ofi_no_fabric_fatal(pe, "an operation");
    pthread_mutex_lock(lock);
    if (__atomic_load_n(&p->addr1, __ATOMIC_ACQUIRE) != 0) {
        pthread_mutex_unlock(lock);
        return p;
    }
    ofi_card_t c;
    shm_status_t st = shm_rt_get(pe, OFI_KEY, &c, sizeof(c));
    if (st != SHM_OK)
        shm_fatal("cannot reach PE %d: the launcher (PMIx) did not give its fabric address: %s",
                  pe, shm_status_str(st));
    if (c.namelen == 0 || c.namelen > sizeof(c.name))
        shm_fatal("PE %d published an endpoint name of %u bytes", pe, c.namelen);
    fi_addr_t fa = FI_ADDR_NOTAVAIL;
    int rc = fi_av_insert(cdt_ofi_g.av, c.name, 1, &fa, 0, NULL);
    if (rc != 1 || fa == FI_ADDR_NOTAVAIL)
        shm_fatal("fi_av_insert of PE %d's address (%u bytes) returned %d (%s): are all PEs on "
                  "the same provider (%s here)?",
                  pe, c.namelen, rc, rc < 0 ? fi_strerror(-rc) : "not inserted",
                  cdt_ofi_g.prov_name);
    for (int s = 0; s < SHM_NSEGS; s++) {
        p->seg[s].base = c.base[s];
        rc = cdt_ofi_peer_map_key(&c.key[s], &p->seg[s].key);
        if (rc != 0)
            shm_fatal("FI_MR_RAW: fi_mr_map_raw of PE %d's %s key (%u bytes) failed on "
                      "provider %s: %s",
                      pe, s == SHM_SEG_HEAP ? "heap" : "data+BSS", c.key[s].raw_len,
                      cdt_ofi_g.prov_name, fi_strerror(-rc));
    }
    for (int op = 0; op < CDT_OP_N; op++)
        p->opctx[op] = (cdt_ofi_opctx_t){.op = (uint32_t)op, .pe = pe};
    __atomic_store_n(&p->addr1, (uint64_t)fa + 1, __ATOMIC_RELEASE);
    cdt_ofi_g.npeers++;
    pthread_mutex_unlock(lock);
    return p;
}

int cdt_wireup(void)
{
    if (!cdt_ofi_g.caps.lazy_connect || !cdt_ofi_g.cfg.eager_connect)
        return 0;
    /* One direction per pair (the lower rank connects), so no pair's two
     * ends ever connect to each other at the same time. */
    static uint64_t sink;
    cdt_ctx_t *d = cdt_ofi_g.dflt;
    for (int pe = cdt_ofi_g.cfg.rank + 1; pe < cdt_ofi_g.cfg.size; pe++)
        cdt_get_nbi(d, &sink, SHM_SEG_HEAP, 0, sizeof(sink), pe);
    cdt_quiet(d);
    return 1;
}

void cdt_fini(void)
{
    cdt_progress_thread_stop();
    cdt_ofi_amo_am_fini();
    cdt_ofi_peer_unmap_keys();
    for (int s = 0; s < SHM_NSEGS; s++)
        if (cdt_ofi_g.mr[s])
            fi_close(&cdt_ofi_g.mr[s]->fid);
    if (cdt_ofi_g.av)
        fi_close(&cdt_ofi_g.av->fid);
    if (cdt_ofi_g.domain)
        fi_close(&cdt_ofi_g.domain->fid);
    if (cdt_ofi_g.fabric)
        fi_close(&cdt_ofi_g.fabric->fid);
    if (cdt_ofi_g.info)
        fi_freeinfo(cdt_ofi_g.info);
    free(cdt_ofi_fast_g.peer);
    memset(&cdt_ofi_fast_g, 0, sizeof(cdt_ofi_fast_g));
    memset(&cdt_ofi_g, 0, sizeof(cdt_ofi_g));
}

const char *cdt_provider_name(void)
{
    if (cdt_ofi_g.no_fabric)
        return "none";
    return cdt_ofi_g.prov_name[0] ? cdt_ofi_g.prov_name : "(none)";
}

void cdt_info_print(FILE *f)
{
    if (cdt_ofi_g.no_fabric) {
        fprintf(f, "ofishmem conduit: no fabric (libfabric not loaded); every transfer a copy "
                   "into mapped memory, every atomic a CPU atomic; no progress thread\n");
        return;
    }
    const cdt_ofi_caps_t *c = &cdt_ofi_g.caps;
    fprintf(f, "ofishmem conduit: libfabric %u.%u (%s), provider %s, domain %s\n",
            FI_MAJOR(fi_version()), FI_MINOR(fi_version()), cdt_ofi_dl_name(),
            cdt_provider_name(), cdt_ofi_g.info ? cdt_ofi_g.info->domain_attr->name : "-");
    cdt_ofi_candidates_print(f, cdt_ofi_g.cfg.nnodes, cdt_provider_name(), cdt_ofi_g.prov_why);
    fprintf(f, "  contract: mr_mode%s%s%s%s%s%s%s, mode%s%s%s, av %s, progress %s; met by %s\n",
            c->mr_local ? " LOCAL" : "", c->mr_allocated ? " ALLOCATED" : "",
            c->mr_virt_addr ? " VIRT_ADDR" : "", c->mr_prov_key ? " PROV_KEY" : "",
            c->mr_endpoint ? " ENDPOINT" : "", c->mr_raw ? " RAW" : "",
            !(c->mr_local | c->mr_allocated | c->mr_virt_addr | c->mr_prov_key |
              c->mr_endpoint | c->mr_raw)
                ? " 0 (offsets, our keys)"
                : "",
            c->ctx_size == sizeof(struct fi_context2) ? " CONTEXT2"
            : c->ctx_size                              ? " CONTEXT"
                                                       : "",
            c->ctx_size ? "" : " 0", "", c->av_map ? "map" : "table",
            c->auto_progress ? "auto" : "manual",
            cdt_ofi_fast_g.contract
                ? "descriptors/contexts per operation (injects stay on the fast path)"
                : "the fast paths (nothing per operation)");
    fprintf(f, "  addressing %s, keys %s; atomics %s; puts %s%s\n",
            c->mr_virt_addr ? "virtual" : "offset", c->mr_prov_key ? "provider" : "requested",
            c->native_amo ? "native (fabric)" : "not offered by provider",
            c->put_needs_dc ? "delivery-complete" : "complete when counted",
            cdt_ofi_fast_g.inject_flush ? " (injects: quiet reads back from each PE written)" : "");
    fprintf(f, "  inject <= %zu B (provider %zu), bounce <= %zu B x %ld, fragments of %zu B\n",
            cdt_ofi_fast_g.inject_size, c->inject_size, cdt_ofi_fast_g.bounce_size,
            cdt_ofi_g.cfg.bounce_buffers, cdt_ofi_fast_g.frag_size);
    fprintf(f, "  progress thread %s, yield while polling %s\n", cdt_ofi_progress_describe(),
            cdt_ofi_fast_g.yield ? "on" : "off");
    cdt_ofi_amo_info_print(f);
}
