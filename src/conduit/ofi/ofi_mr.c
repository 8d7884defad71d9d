// SPDX-License-Identifier: BSD-3-Clause
/*
 * Memory registration and the provider's contract (docs/PROVIDERS.md).
 *
 * Segments (heap, data+BSS): one registration each in the domain, with
 * local and remote access; under FI_MR_ENDPOINT bound to the default
 * endpoint -- the one every peer addresses -- and enabled before its key is
 * published (cdt_connect). Keys are the provider's (FI_MR_PROV_KEY) or ours
 * (1, 2); under FI_MR_RAW they travel as byte strings, each peer maps them
 * (fi_mr_map_raw) when it first meets the PE.
 *
 * Where the provider asks more of each operation than the fast paths give
 * (cdt_ofi_fast_g.contract), a context keeps, in a cdt_ofi_lmr_t:
 *  - FI_MR_LOCAL: descriptors for the segments (under FI_MR_ENDPOINT this
 *    endpoint's own registrations of them) and one registered scratch area
 *    holding the bounce buffers and small slots for atomic operands,
 *    results and the quiet's read-back; a get or fetched value whose buffer
 *    is not registered lands in a slot and is copied out once the reads are
 *    complete (deferred copies); a larger buffer of the caller's is
 *    registered for the operation (the provider's registration cache makes
 *    that cheap where it has one) and released at the next drain;
 *  - FI_CONTEXT/FI_CONTEXT2: a ring of operation contexts, one per
 *    operation in flight.
 * Slots, ring entries and bounce buffers are reused after a drain: the
 * context's quiet, or a wait for everything it issued when one runs out.
 * A shared context (threads) does all of this under its lock, from taking a
 * slot to the copy-out of a blocking operation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "core/log.h"

#define LMR_RING 256       /* operation contexts in flight per context */
#define LMR_SLOTS 256      /* 16-byte slots: operands, results, read-back sink */
#define LMR_SLOT 16
#define LMR_DEFER LMR_SLOTS
#define LMR_TMP 64         /* registrations of callers' buffers held at once */
#define LOCAL_ACCESS (FI_READ | FI_WRITE | FI_SEND | FI_RECV)

struct cdt_ofi_lmr {
    pthread_mutex_t lock;              /* shared contexts: everything below */
    struct fid_mr *seg_mr[SHM_NSEGS];  /* this endpoint's own (FI_MR_ENDPOINT, not default) */
    void *seg_desc[SHM_NSEGS];
    char *scratch;                     /* bounce buffers, then the slots */
    size_t scratch_len, bounce_len;
    struct fid_mr *scratch_mr;
    void *scratch_desc;
    unsigned slot_next;
    cdt_ofi_opctx_t *ring;             /* FI_CONTEXT(2) only */
    unsigned ring_next;
    cdt_ofi_defer_t defer[LMR_DEFER];
    unsigned ndefer;
    struct fid_mr *tmp[LMR_TMP];
    unsigned ntmp;
};

/* Requested keys of local registrations: unique in the domain, away from
 * the segments' (1, 2) and the RPC layer's random ones. */
static uint64_t local_key(void)
{
    static uint64_t next = 0x10000;
    return __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
}

/* Registers [buf, buf+len) for access on ep (bound and enabled where the
 * provider associates MRs with endpoints). 0 or a -FI_E* code. */
static int reg_on(struct fid_ep *ep, const void *buf, size_t len, uint64_t access, uint64_t key,
                  struct fid_mr **mr_p)
{
    struct fid_mr *mr = NULL;
    int rc = fi_mr_reg(cdt_ofi_g.domain, buf, len, access, 0, key, 0, &mr, NULL);
    if (rc == 0 && cdt_ofi_g.caps.mr_endpoint && ep != NULL) {
        rc = fi_mr_bind(mr, &ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(mr);
        if (rc != 0)
            fi_close(&mr->fid);
    }
    if (rc == 0)
        *mr_p = mr;
    return rc;
}

/* ---- segments ------------------------------------------------------- */

shm_status_t cdt_ofi_seg_register(int seg, void *base, size_t len)
{
    uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE | LOCAL_ACCESS;
    /* Bound and enabled once the default endpoint exists (cdt_ofi_seg_bind). */
    int rc = fi_mr_reg(cdt_ofi_g.domain, base, len, access, 0, (uint64_t)seg + 1, 0,
                       &cdt_ofi_g.mr[seg], NULL);
    if (rc != 0) {
        shm_error("fi_mr_reg of the %s (%zu bytes at %p) failed on provider %s: %s%s",
                  seg == SHM_SEG_HEAP ? "symmetric heap" : "data+BSS segment", len, base,
                  cdt_ofi_g.prov_name, fi_strerror(-rc),
                  rc == -FI_ENOMEM || rc == -FI_EFAULT
                      ? " (registered memory is pinned: check `ulimit -l`, or lower "
                        "SHMEM_SYMMETRIC_SIZE)"
                      : "");
        return SHM_ERR_FABRIC;
    }
    return SHM_OK;
}

shm_status_t cdt_ofi_seg_bind(struct fid_ep *ep)
{
    if (!cdt_ofi_g.caps.mr_endpoint)
        return SHM_OK;
    for (int s = 0; s < SHM_NSEGS; s++) {
        if (cdt_ofi_g.mr[s] == NULL)
            continue;
        int rc = fi_mr_bind(cdt_ofi_g.mr[s], &ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(cdt_ofi_g.mr[s]);
        if (rc != 0) {
            shm_error("FI_MR_ENDPOINT: binding and enabling the %s's registration on the "
                      "default endpoint failed on provider %s: %s",
                      s == SHM_SEG_HEAP ? "symmetric heap" : "data+BSS segment",
                      cdt_ofi_g.prov_name, fi_strerror(-rc));
            return SHM_ERR_FABRIC;
        }
    }
    return SHM_OK;
}

shm_status_t cdt_ofi_seg_key(int seg, cdt_ofi_rkey_t *k)
{
    memset(k, 0, sizeof(*k));
    struct fid_mr *mr = cdt_ofi_g.mr[seg];
    if (mr == NULL)
        return SHM_OK;
    if (!cdt_ofi_g.caps.mr_raw) {
        k->key = fi_mr_key(mr);
        if (k->key == FI_KEY_NOTAVAIL) {
            shm_error("provider %s gives no key for the %s's registration", cdt_ofi_g.prov_name,
                      seg == SHM_SEG_HEAP ? "symmetric heap" : "data+BSS segment");
            return SHM_ERR_FABRIC;
        }
        return SHM_OK;
    }
    size_t size = sizeof(k->raw);
    uint64_t base = 0;
    int rc = fi_mr_raw_attr(mr, &base, k->raw, &size, 0);
    if (rc != 0 || size > sizeof(k->raw)) {
        shm_error("FI_MR_RAW: fi_mr_raw_attr of the %s failed on provider %s: %s (key of %zu "
                  "bytes; at most %zu are carried)",
                  seg == SHM_SEG_HEAP ? "symmetric heap" : "data+BSS segment",
                  cdt_ofi_g.prov_name, rc ? fi_strerror(-rc) : "too long", size, sizeof(k->raw));
        return SHM_ERR_FABRIC;
    }
    k->raw_len = (uint32_t)size;
    k->raw_base = base;
    return SHM_OK;
}

int cdt_ofi_peer_map_key(const cdt_ofi_rkey_t *k, uint64_t *key_p)
{
    if (!cdt_ofi_g.caps.mr_raw || k->raw_len == 0) {
        *key_p = k->key;
        return 0;
    }
    uint8_t raw[sizeof(k->raw)];
    memcpy(raw, k->raw, k->raw_len);
    return fi_mr_map_raw(cdt_ofi_g.domain, k->raw_base, raw, k->raw_len, key_p, 0);
}

void cdt_ofi_peer_unmap_keys(void)
{
    if (!cdt_ofi_g.caps.mr_raw || cdt_ofi_fast_g.peer == NULL)
        return;
    for (int pe = 0; pe < cdt_ofi_g.cfg.size; pe++) {
        cdt_ofi_peer_t *p = &cdt_ofi_fast_g.peer[pe];
        if (p->addr1 == 0)
            continue;
        for (int s = 0; s < SHM_NSEGS; s++)
            if (p->seg[s].key != 0)
                (void)fi_mr_unmap_key(cdt_ofi_g.domain, p->seg[s].key);
    }
}

/* ---- per context ------------------------------------------------------ */

shm_status_t cdt_ofi_lmr_open(cdt_ctx_t *ctx, int is_dflt)
{
    const cdt_ofi_caps_t *c = &cdt_ofi_g.caps;
    if (!cdt_ofi_fast_g.contract)
        return SHM_OK;
    cdt_ofi_lmr_t *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return SHM_ERR_NOMEM;
    pthread_mutex_init(&l->lock, NULL);
    ctx->lmr = l;
    if (c->ctx_size) {
        l->ring = calloc(LMR_RING, sizeof(*l->ring));
        if (l->ring == NULL)
            return SHM_ERR_NOMEM;
    }
    /* Bounce buffers (shared contexts have none) and the slots, in one
     * page-aligned area: one registration, pages of its own. */
    size_t nb = (ctx->flags & CDT_CTX_SHARED) ? 0 : (size_t)cdt_ofi_g.cfg.bounce_buffers;
    l->bounce_len = cdt_ofi_fast_g.bounce_size > 0 ? nb * cdt_ofi_fast_g.bounce_size : 0;
    l->scratch_len = l->bounce_len + LMR_SLOTS * LMR_SLOT;
    l->scratch = mmap(NULL, l->scratch_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (l->scratch == MAP_FAILED) {
        l->scratch = NULL;
        return SHM_ERR_NOMEM;
    }
    if (l->bounce_len) {
        ctx->bounce = l->scratch;
        ctx->bounce_n = (unsigned)nb;
    }
    if (!c->mr_local)
        return SHM_OK;
    /* FI_MR_ALLOCATED: backed before it is registered. */
    memset(l->scratch, 0, l->scratch_len);
    int rc = reg_on(ctx->ep, l->scratch, l->scratch_len, LOCAL_ACCESS, local_key(),
                    &l->scratch_mr);
    if (rc != 0) {
        shm_error("FI_MR_LOCAL: registering a context's bounce buffers (%zu bytes) failed on "
                  "provider %s: %s",
                  l->scratch_len, cdt_ofi_g.prov_name, fi_strerror(-rc));
        return SHM_ERR_FABRIC;
    }
    l->scratch_desc = fi_mr_desc(l->scratch_mr);
    for (int s = 0; s < SHM_NSEGS; s++) {
        if (cdt_ofi_g.mr[s] == NULL)
            continue;
        if (is_dflt || !c->mr_endpoint) {
            /* The segment's registration serves this endpoint. */
            l->seg_desc[s] = fi_mr_desc(cdt_ofi_g.mr[s]);
            continue;
        }
        rc = reg_on(ctx->ep, (void *)cdt_ofi_g.seg_base[s], cdt_ofi_g.seg_len[s], LOCAL_ACCESS,
                    local_key(), &l->seg_mr[s]);
        if (rc != 0) {
            shm_error("FI_MR_ENDPOINT: registering the %s for a context's endpoint failed on "
                      "provider %s: %s",
                      s == SHM_SEG_HEAP ? "symmetric heap" : "data+BSS segment",
                      cdt_ofi_g.prov_name, fi_strerror(-rc));
            return SHM_ERR_FABRIC;
        }
        l->seg_desc[s] = fi_mr_desc(l->seg_mr[s]);
    }
    return SHM_OK;
}

static void tmp_release(cdt_ofi_lmr_t *l)
{
    for (unsigned i = 0; i < l->ntmp; i++)
        fi_close(&l->tmp[i]->fid);
    l->ntmp = 0;
}

void cdt_ofi_lmr_close(cdt_ctx_t *ctx)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    if (l == NULL)
        return;
    tmp_release(l);
    for (int s = 0; s < SHM_NSEGS; s++)
        if (l->seg_mr[s])
            fi_close(&l->seg_mr[s]->fid);
    if (l->scratch_mr)
        fi_close(&l->scratch_mr->fid);
    if (l->scratch)
        munmap(l->scratch, l->scratch_len);
    if (ctx->bounce == l->scratch) {
        ctx->bounce = NULL;
        ctx->bounce_n = 0;
    }
    free(l->ring);
    pthread_mutex_destroy(&l->lock);
    free(l);
    ctx->lmr = NULL;
}

void cdt_ofi_lmr_lock(cdt_ctx_t *ctx)
{
    if (ctx->flags & CDT_CTX_SHARED)
        pthread_mutex_lock(&ctx->lmr->lock);
}

void cdt_ofi_lmr_unlock(cdt_ctx_t *ctx)
{
    if (ctx->flags & CDT_CTX_SHARED)
        pthread_mutex_unlock(&ctx->lmr->lock);
}

/* Everything issued is complete: copy out what reads brought into slots. */
static void defer_run(cdt_ofi_lmr_t *l)
{
    for (unsigned i = 0; i < l->ndefer; i++)
        memcpy(l->defer[i].dst, l->defer[i].src, l->defer[i].len);
    l->ndefer = 0;
}

void cdt_ofi_lmr_gets_done(cdt_ctx_t *ctx)
{
    if (ctx->lmr && ctx->lmr->ndefer)
        defer_run(ctx->lmr);
}

/* Everything the context issued is complete (a quiet, a drain): slots,
 * contexts and bounce buffers are free, deferred copies are due. */
static void lmr_all_done(cdt_ctx_t *ctx)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    defer_run(l);
    l->ring_next = l->slot_next = 0;
    ctx->bounce_next = 0;
}

void cdt_ofi_lmr_quiet_done(cdt_ctx_t *ctx)
{
    lmr_all_done(ctx);
    tmp_release(ctx->lmr); /* no transfer is under way between calls */
}

/*
 * Makes room for one operation: a context of the ring, n slots, a deferred
 * copy and a bounce buffer as asked; when one is short, waits for
 * everything issued so far and reuses them all. Called before the
 * operation takes any of them and before it is counted, so a drain never
 * waits for it nor runs its copy. Registrations of callers' buffers stay:
 * a transfer in fragments may still use its own.
 */
void cdt_ofi_lmr_reserve(cdt_ctx_t *ctx, unsigned slots, int defer, int bounce)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    if ((l->ring && l->ring_next == LMR_RING) || l->slot_next + slots > LMR_SLOTS ||
        (defer && l->ndefer == LMR_DEFER) || (bounce && ctx->bounce_next == ctx->bounce_n)) {
        cdt_ofi_flush(ctx);
        cdt_ofi_wait_all(ctx);
        lmr_all_done(ctx);
    }
}

void *cdt_ofi_lmr_opctx(cdt_ctx_t *ctx, int op, int pe, uint64_t *cnt)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    cdt_ofi_count(ctx, cnt, 1); /* before the issue: see cdt_ofi_count */
    if (l == NULL || l->ring == NULL)
        return cdt_ofi_peer_opctx(cdt_ofi_peer(pe), op);
    cdt_ofi_opctx_t *oc = &l->ring[l->ring_next++]; /* reserved */
    oc->op = (uint32_t)op;
    oc->pe = pe;
    return oc;
}

void *cdt_ofi_lmr_slot(cdt_ctx_t *ctx, const void *init, size_t len)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    char *p = l->scratch + l->bounce_len + (size_t)l->slot_next++ * LMR_SLOT; /* reserved */
    if (init)
        memcpy(p, init, len);
    return p;
}

void cdt_ofi_lmr_defer(cdt_ctx_t *ctx, void *dst, const void *src, size_t len)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    l->defer[l->ndefer++] = (cdt_ofi_defer_t){dst, src, len}; /* reserved */
}

void *cdt_ofi_lmr_desc(cdt_ctx_t *ctx, const void *buf, size_t len)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    if (l == NULL || !cdt_ofi_g.caps.mr_local)
        return NULL;
    uintptr_t a = (uintptr_t)buf;
    if (a - (uintptr_t)l->scratch < l->scratch_len && len <= l->scratch_len - (a - (uintptr_t)l->scratch))
        return l->scratch_desc;
    for (int s = 0; s < SHM_NSEGS; s++) {
        uintptr_t off = a - (uintptr_t)cdt_ofi_g.seg_base[s];
        if (l->seg_desc[s] && off < cdt_ofi_g.seg_len[s] && len <= cdt_ofi_g.seg_len[s] - off)
            return l->seg_desc[s];
    }
    return NULL;
}

void *cdt_ofi_lmr_reg(cdt_ctx_t *ctx, const void *buf, size_t len, uint64_t access, int pe)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    if (l->ntmp == LMR_TMP) {
        /* Before this transfer takes anything: none in flight needs them. */
        cdt_ofi_flush(ctx);
        cdt_ofi_wait_all(ctx);
        lmr_all_done(ctx);
        tmp_release(l);
    }
    struct fid_mr *mr = NULL;
    int rc = reg_on(ctx->ep, buf, len, access, local_key(), &mr);
    if (rc != 0) {
        char host[64];
        cdt_ofi_peer_host(pe, host, sizeof(host));
        shm_fatal("FI_MR_LOCAL: registering %zu bytes at %p for a transfer with PE %d (host %s) "
                  "failed on provider %s: %s%s",
                  len, buf, pe, host, cdt_ofi_g.prov_name, fi_strerror(-rc),
                  rc == -FI_ENOMEM || rc == -FI_EFAULT
                      ? " (registered memory is pinned: check `ulimit -l`)"
                      : "");
    }
    l->tmp[l->ntmp++] = mr;
    return fi_mr_desc(mr);
}

void cdt_ofi_lmr_unreg_last(cdt_ctx_t *ctx)
{
    cdt_ofi_lmr_t *l = ctx->lmr;
    if (l->ntmp > 0)
        fi_close(&l->tmp[--l->ntmp]->fid);
}

int cdt_ofi_lmr_has_bounce(const cdt_ctx_t *ctx)
{
    return ctx->lmr != NULL && ctx->lmr->bounce_len > 0;
}
