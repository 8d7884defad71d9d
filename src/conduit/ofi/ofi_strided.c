// SPDX-License-Identifier: BSD-3-Clause
/*
 * Strided transfers through the fabric (shmem_iput/iget/ibput/ibget and
 * their context forms) in few operations instead of one per block:
 *
 *  - blocks of XF_BLOCK_RMA bytes or more: one RMA per block, all in
 *    flight (the provider moves each at its own speed);
 *  - a get whose blocks lie densely in the source (its span at most
 *    XF_DENSE times the bytes wanted): the span is read in pieces into a
 *    staging buffer and scattered here; the target does no more than for
 *    a read;
 *  - otherwise messages: a put packs its blocks into messages that the
 *    target scatters in its progress and answers; a get asks the target to
 *    pack them, and scatters the answer here. A message is as large as the
 *    provider sends in one piece (its table row's msg_eager_max: 16 KiB
 *    for rxm's eager buffer, 64 KiB where any size goes at once), so a
 *    32 KiB iput is one message and one answer on shm and sockets. Where
 *    the receiver's kernel copies the message out of the sender's buffer
 *    (msg_peer_copies: shm), packing uses streaming stores (xf_pack).
 * SHMEM_STRIDED forces one road (tests, measurements).
 *
 * The messages ride the PE's default endpoint, the one peers address: no
 * endpoint of their own (no memory, no second progress call per pass).
 * Multi-receive buffers are posted on it at init; cdt_progress reads its
 * CQ (selective completion: only these messages and errors appear there)
 * through cdt_ofi_xf_progress. Completion is counted as the provider's is:
 * a put message counts as a write issued on the caller's context and is
 * completed (fi_cntr_add) when the target's answer comes, so shmem_quiet
 * means scattered at the target; a get message counts as a read, completed
 * once its data are in place here.
 *
 * Every buffer handed to libfabric here (receive buffers, send buffers,
 * the staging buffer) is allocated once; a provider that needs local
 * descriptors (FI_MR_LOCAL) gets no messages (span and blocks only). Each send and
 * receive carries a struct fi_context2 of its own as op context.
 * Slow path by design: one lock, like the atomics by active message.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "core/env.h"
#include "core/log.h"
#include "core/strided.h"

/* One message at most: the provider row's msg_eager_max, or rxm's 16 KiB
 * eager buffer where not measured; never more than XF_MSG_CAP. */
#define XF_MSG_DFLT CDT_OFI_RXM_EAGER_MSG
#define XF_MSG_CAP ((size_t)64 * 1024)
#define XF_MSG_MIN 1024 /* a provider with smaller messages gets none */
#define XF_PAY_MAX (xf_g.msg_max - sizeof(xf_hdr_t))
#define XF_BUF_BYTES ((size_t)512 * 1024) /* send buffers: this much in flight */
#define XF_BUFS_MIN 8
#define XF_SCRATCH 4096 /* xf_pack's staging on the stack */
/* Blocks this large go as one RMA each (no copies). */
#define XF_BLOCK_RMA 8192
/* A get reads the whole span when it is at most this many times the data. */
#define XF_DENSE 2
#define XF_STAGE_MAX ((size_t)1 << 20) /* span read per piece */
#define XF_SLOTS 256                   /* messages of this PE awaiting an answer */
#define XF_RBUFS 2
#define XF_RBUF_MIN ((size_t)256 * 1024) /* and at least 8 messages */

enum { XF_PUT = 0x58465031, XF_PUT_ACK, XF_GET, XF_GET_DATA };
enum { XF_AUTO = 0, XF_MESSAGES, XF_SPAN, XF_BLOCKS };

/* Every message starts with this; a put and a get answer carry the packed
 * blocks after it. Offsets and strides in bytes, bsize in elements. */
typedef struct {
    uint32_t kind, origin, slot;
    uint8_t seg, esize, pad[2];
    uint64_t off, stride, bsize, nblocks;
} xf_hdr_t;

typedef struct xf_buf {
    struct fi_context2 fictx; /* first: the provider's in FI_CONTEXT modes */
    struct xf_buf *next;
    int pe;
    size_t len;
    unsigned char *data; /* msg_max bytes: a header, then packed blocks */
} xf_buf_t;

#define XF_HDR(b) ((xf_hdr_t *)(b)->data)

typedef struct {
    struct fi_context2 fictx;
    unsigned char *mem;
} xf_rbuf_t;

typedef struct xf_slot {
    cdt_ctx_t *ctx;
    int is_get;
    void *dst; /* get: where the answer's blocks go */
    size_t lstride, bsize, nblocks, esize;
    struct xf_slot *next_free;
} xf_slot_t;

typedef struct {
    int pe;
    xf_hdr_t hdr;
} xf_pending_t;

static struct {
    int on, mode;
    pthread_mutex_t lock;
    pthread_mutex_t stage_lock;
    cdt_ctx_t *d;
    size_t inject;
    xf_rbuf_t rbuf[XF_RBUFS];
    unsigned char *rmem;
    xf_buf_t *bufs, *free_bufs;
    unsigned char *bufmem;
    size_t msg_max, nbufs, rbuf_len;
    int nt; /* pack with streaming stores (msg_peer_copies) */
    xf_buf_t *outq, **outq_tail; /* built, not yet taken by the provider */
    xf_slot_t *slots, *free_slots;
    xf_pending_t *acks, *gets;   /* answers to send, gets to pack (no buffer yet) */
    size_t nacks, cap_acks, ngets, cap_gets;
    unsigned char *stage;
    size_t stage_len;
    int sent; /* this pass handed the provider a message */
} xf_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .stage_lock = PTHREAD_MUTEX_INITIALIZER};

static int xf_mode(void)
{
    const char *m = shm_env_g.STRIDED ? shm_env_g.STRIDED : "auto";
    if (*m == '\0' || strcmp(m, "auto") == 0)
        return XF_AUTO;
    if (strcmp(m, "messages") == 0)
        return XF_MESSAGES;
    if (strcmp(m, "span") == 0)
        return XF_SPAN;
    if (strcmp(m, "blocks") == 0)
        return XF_BLOCKS;
    shm_fatal("SHMEM_STRIDED='%s' is not valid: expected auto, messages, span or blocks", m);
}

static shm_status_t post_rbuf(xf_rbuf_t *r)
{
    struct iovec iov = {.iov_base = r->mem, .iov_len = xf_g.rbuf_len};
    struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
                         .context = &r->fictx};
    ssize_t rc;
    while ((rc = fi_recvmsg(xf_g.d->ep, &msg, FI_MULTI_RECV | FI_COMPLETION)) == -FI_EAGAIN)
        fi_cq_read(xf_g.d->cq, NULL, 0);
    if (rc != 0) {
        SHM_WARN(OFI, "strided transfers: fi_recvmsg on %s: %s; one RMA per block instead",
                 cdt_ofi_g.prov_name, fi_strerror((int)-rc));
        return SHM_ERR_FABRIC;
    }
    return SHM_OK;
}

void cdt_ofi_xf_open(cdt_ctx_t *d)
{
    xf_g.mode = xf_mode();
    const struct fi_info *info = cdt_ofi_g.info;
    if (xf_g.mode == XF_BLOCKS || (info->caps & (FI_MSG | FI_MULTI_RECV)) !=
                                      (FI_MSG | FI_MULTI_RECV))
        return;
    /* Its buffers are plain memory: a provider that wants descriptors for
     * them (FI_MR_LOCAL) or takes smaller messages keeps the span and
     * block roads, which go through the contract's RMA paths. */
    const cdt_ofi_prov_row_t *row = cdt_ofi_prov_row(cdt_ofi_g.prov_name);
    size_t msg = row->msg_eager_max ? row->msg_eager_max : XF_MSG_DFLT;
    if (msg > XF_MSG_CAP)
        msg = XF_MSG_CAP;
    if (cdt_ofi_g.caps.max_msg_size && msg > cdt_ofi_g.caps.max_msg_size)
        msg = cdt_ofi_g.caps.max_msg_size;
    msg &= ~(size_t)63; /* every buffer's data 64-byte aligned */
    if (cdt_ofi_g.caps.mr_local || msg < XF_MSG_MIN)
        return;
    xf_g.d = d;
    xf_g.inject = info->tx_attr->inject_size;
    xf_g.msg_max = msg;
    xf_g.nbufs = XF_BUF_BYTES / msg < XF_BUFS_MIN ? XF_BUFS_MIN : XF_BUF_BYTES / msg;
    xf_g.rbuf_len = 8 * msg < XF_RBUF_MIN ? XF_RBUF_MIN : 8 * msg;
#if defined(__x86_64__)
    xf_g.nt = row->msg_peer_copies;
#endif
    if (fi_setopt(&d->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &msg, sizeof(msg)) != 0)
        return;
    /* Untouched until messages come: a PE that is sent none pays no memory. */
    xf_g.rmem = malloc((size_t)XF_RBUFS * xf_g.rbuf_len);
    if (xf_g.rmem == NULL)
        return;
    for (int i = 0; i < XF_RBUFS; i++) {
        xf_g.rbuf[i].mem = xf_g.rmem + (size_t)i * xf_g.rbuf_len;
        if (post_rbuf(&xf_g.rbuf[i]) != SHM_OK)
            return; /* posted ones are cancelled with the endpoint */
    }
    xf_g.outq_tail = &xf_g.outq;
    xf_g.on = 1;
}

void cdt_ofi_xf_close(void)
{
    /* After the endpoint is closed: nothing is posted any more. */
    free(xf_g.rmem);
    free(xf_g.bufs);
    free(xf_g.bufmem);
    free(xf_g.slots);
    free(xf_g.acks);
    free(xf_g.gets);
    free(xf_g.stage);
    pthread_mutex_t l = xf_g.lock, s = xf_g.stage_lock;
    memset(&xf_g, 0, sizeof(xf_g));
    xf_g.lock = l;
    xf_g.stage_lock = s;
}

int cdt_ofi_xf_owns(const void *opctx)
{
    uintptr_t p = (uintptr_t)opctx;
    uintptr_t b = (uintptr_t)xf_g.bufs, r = (uintptr_t)xf_g.rbuf;
    return (b && p >= b && p < b + xf_g.nbufs * sizeof(xf_buf_t)) ||
           (p >= r && p < r + sizeof(xf_g.rbuf));
}

int cdt_ofi_xf_pe(const void *opctx)
{
    uintptr_t p = (uintptr_t)opctx, b = (uintptr_t)xf_g.bufs;
    if (b && p >= b && p < b + xf_g.nbufs * sizeof(xf_buf_t))
        return ((const xf_buf_t *)opctx)->pe;
    return -1;
}

/* ---- pools (lock held) ------------------------------------------------- */

/* Send buffers and answer slots, made at the first strided message. */
static void xf_pools(void)
{
    if (xf_g.bufs != NULL)
        return;
    xf_g.bufs = calloc(xf_g.nbufs, sizeof(xf_buf_t));
    xf_g.slots = calloc(XF_SLOTS, sizeof(xf_slot_t));
    xf_g.bufmem = aligned_alloc(64, xf_g.nbufs * xf_g.msg_max);
    if (xf_g.bufs == NULL || xf_g.slots == NULL || xf_g.bufmem == NULL)
        shm_fatal("strided transfers: out of memory for %zu message buffers of %zu bytes",
                  xf_g.nbufs, xf_g.msg_max);
    for (size_t i = xf_g.nbufs; i-- > 0;) {
        xf_g.bufs[i].data = xf_g.bufmem + i * xf_g.msg_max;
        xf_g.bufs[i].next = xf_g.free_bufs;
        xf_g.free_bufs = &xf_g.bufs[i];
    }
    for (int i = XF_SLOTS - 1; i >= 0; i--) {
        xf_g.slots[i].next_free = xf_g.free_slots;
        xf_g.free_slots = &xf_g.slots[i];
    }
}

static void *grow(void *p, size_t *cap, size_t elem)
{
    size_t n = *cap ? 2 * *cap : 64;
    void *q = realloc(p, n * elem);
    if (q == NULL)
        shm_fatal("strided transfers: out of memory for pending answers");
    *cap = n;
    return q;
}

static void xf_fatal_send(int pe, ssize_t rc)
{
    pthread_mutex_unlock(&xf_g.lock);
    cdt_ofi_fatal_rc("strided transfer (message)", pe, rc);
}

/* Hands queued buffers to the provider until it is busy. */
static void xf_flush_out(void)
{
    while (xf_g.outq) {
        xf_buf_t *b = xf_g.outq;
        struct iovec iov = {.iov_base = b->data, .iov_len = b->len};
        struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = cdt_ofi_addr(b->pe),
                             .context = &b->fictx};
        ssize_t rc = fi_sendmsg(xf_g.d->ep, &msg, FI_COMPLETION);
        if (rc == -FI_EAGAIN)
            return;
        if (rc != 0)
            xf_fatal_send(b->pe, rc);
        xf_g.sent = 1;
        xf_g.outq = b->next;
        if (xf_g.outq == NULL)
            xf_g.outq_tail = &xf_g.outq;
    }
}

static void xf_send(xf_buf_t *b, int pe, size_t len)
{
    b->pe = pe;
    b->len = len;
    b->next = NULL;
    *xf_g.outq_tail = b;
    xf_g.outq_tail = &b->next;
    xf_flush_out();
}

/* A header-only message without a buffer of ours (an answer to a put, a
 * request for a get), or queued while the provider is busy. */
static void xf_send_small(int pe, const xf_hdr_t *h)
{
    if (xf_g.nacks == 0 && sizeof(*h) <= xf_g.inject) {
        ssize_t rc = fi_inject(xf_g.d->ep, h, sizeof(*h), cdt_ofi_addr(pe));
        if (rc == 0) {
            xf_g.sent = 1;
            return;
        }
        if (rc != -FI_EAGAIN)
            xf_fatal_send(pe, rc);
    }
    if (xf_g.nacks == xf_g.cap_acks)
        xf_g.acks = grow(xf_g.acks, &xf_g.cap_acks, sizeof(*xf_g.acks));
    xf_g.acks[xf_g.nacks++] = (xf_pending_t){pe, *h};
}

static xf_buf_t *xf_buf_try(void)
{
    xf_pools();
    xf_buf_t *b = xf_g.free_bufs;
    if (b)
        xf_g.free_bufs = b->next;
    return b;
}

/* Small messages that waited (the provider was busy, or no inject). */
static void xf_flush_small(void)
{
    size_t i = 0;
    for (; i < xf_g.nacks; i++) {
        const xf_pending_t *a = &xf_g.acks[i];
        if (sizeof(a->hdr) <= xf_g.inject) {
            ssize_t rc = fi_inject(xf_g.d->ep, &a->hdr, sizeof(a->hdr), cdt_ofi_addr(a->pe));
            if (rc == -FI_EAGAIN)
                break;
            if (rc != 0)
                xf_fatal_send(a->pe, rc);
            xf_g.sent = 1;
        } else {
            xf_buf_t *b = xf_buf_try();
            if (b == NULL)
                break;
            *XF_HDR(b) = a->hdr;
            xf_send(b, a->pe, sizeof(a->hdr));
        }
    }
    memmove(xf_g.acks, xf_g.acks + i, (xf_g.nacks - i) * sizeof(*xf_g.acks));
    xf_g.nacks -= i;
}

/* ---- packing ------------------------------------------------------------- */

#if defined(__x86_64__)
/* n bytes to d with streaming stores, d 16-byte aligned or not. */
static void xf_stream(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    for (; n >= 16; n -= 16, d += 16, s += 16)
        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    memcpy(d, s, n);
}
#endif

/* Packs nblocks blocks (stride sstride bytes) contiguously at d. Where the
 * peer's kernel reads the message out of our buffer (xf_g.nt), through a
 * stack scratch and streaming stores: a plain store into a line the peer's
 * copy left shared waits for that core to give it up. */
static void xf_pack(unsigned char *d, const unsigned char *s, size_t sstride, size_t bsize,
                    size_t nblocks, size_t esize)
{
    size_t bbytes = bsize * esize;
#if defined(__x86_64__)
    if (xf_g.nt) {
        if (bbytes >= XF_SCRATCH) {
            for (size_t b = 0; b < nblocks; b++)
                xf_stream(d + b * bbytes, s + b * sstride, bbytes);
        } else {
            unsigned char tmp[XF_SCRATCH] __attribute__((aligned(64)));
            size_t per = XF_SCRATCH / bbytes;
            for (size_t b = 0; b < nblocks; b += per) {
                size_t k = nblocks - b < per ? nblocks - b : per;
                shm_strided_copy(tmp, bbytes, s + b * sstride, sstride, bsize, k, esize);
                xf_stream(d + b * bbytes, tmp, k * bbytes);
            }
        }
        _mm_sfence(); /* the stores are seen before the message is */
        return;
    }
#endif
    shm_strided_copy(d, bbytes, s, sstride, bsize, nblocks, esize);
}

/* ---- the target's side --------------------------------------------------- */

/* Local address of a strided range of this PE, or the job ends. */
static unsigned char *xf_local(const xf_hdr_t *h)
{
    size_t bbytes = (size_t)h->bsize * h->esize;
    size_t span = h->nblocks ? (size_t)(h->nblocks - 1) * h->stride + bbytes : 0;
    if (h->seg >= SHM_NSEGS || h->off > shm_seg_g[h->seg].len ||
        span > shm_seg_g[h->seg].len - h->off)
        shm_fatal("strided transfer from PE %u: %zu bytes at offset %llu of segment %u are "
                  "outside this PE's memory",
                  h->origin, span, (unsigned long long)h->off, h->seg);
    return (unsigned char *)(shm_seg_g[h->seg].base + h->off);
}

/* Packs a get's blocks into a buffer and sends them; 0: no buffer yet. */
static int xf_serve_get(int pe, const xf_hdr_t *h)
{
    xf_buf_t *b = xf_buf_try();
    if (b == NULL)
        return 0;
    size_t bbytes = (size_t)h->bsize * h->esize;
    *XF_HDR(b) = *h;
    XF_HDR(b)->kind = XF_GET_DATA;
    xf_pack(b->data + sizeof(xf_hdr_t), xf_local(h), h->stride, h->bsize, h->nblocks, h->esize);
    xf_send(b, pe, sizeof(xf_hdr_t) + bbytes * h->nblocks);
    return 1;
}

static void xf_flush_gets(void)
{
    size_t i = 0;
    while (i < xf_g.ngets && xf_serve_get(xf_g.gets[i].pe, &xf_g.gets[i].hdr))
        i++;
    memmove(xf_g.gets, xf_g.gets + i, (xf_g.ngets - i) * sizeof(*xf_g.gets));
    xf_g.ngets -= i;
}

static void xf_answered(xf_slot_t *s)
{
    s->next_free = xf_g.free_slots;
    xf_g.free_slots = s;
}

static void xf_handle(const unsigned char *buf, size_t len)
{
    xf_hdr_t h;
    if (len < sizeof(h))
        shm_fatal("strided transfers: short message (%zu bytes)", len);
    memcpy(&h, buf, sizeof(h));
    size_t bbytes = (size_t)h.bsize * h.esize;
    const unsigned char *pay = buf + sizeof(h);
    switch (h.kind) {
    case XF_PUT: {
        if (len != sizeof(h) + bbytes * h.nblocks)
            shm_fatal("strided put from PE %u: %zu bytes for %llu blocks of %zu", h.origin, len,
                      (unsigned long long)h.nblocks, bbytes);
        shm_strided_copy(xf_local(&h), h.stride, pay, bbytes, h.bsize, h.nblocks, h.esize);
        xf_hdr_t a = {.kind = XF_PUT_ACK, .origin = (uint32_t)cdt_ofi_g.cfg.rank, .slot = h.slot};
        xf_send_small((int)h.origin, &a);
        break;
    }
    case XF_GET:
        if (xf_g.ngets > 0 || !xf_serve_get((int)h.origin, &h)) {
            if (xf_g.ngets == xf_g.cap_gets)
                xf_g.gets = grow(xf_g.gets, &xf_g.cap_gets, sizeof(*xf_g.gets));
            xf_g.gets[xf_g.ngets++] = (xf_pending_t){(int)h.origin, h};
        }
        break;
    case XF_PUT_ACK:
    case XF_GET_DATA: {
        if (h.slot >= XF_SLOTS || xf_g.slots == NULL)
            shm_fatal("strided transfers: answer from PE %u for unknown slot %u", h.origin,
                      h.slot);
        xf_slot_t *s = &xf_g.slots[h.slot];
        if (h.kind == XF_GET_DATA) {
            shm_strided_copy(s->dst, s->lstride, pay, s->bsize * s->esize, s->bsize, s->nblocks,
                             s->esize);
            __atomic_thread_fence(__ATOMIC_RELEASE); /* the data before the count */
        }
        fi_cntr_add(h.kind == XF_GET_DATA ? s->ctx->get_cntr : s->ctx->put_cntr, 1);
        xf_answered(s);
        break;
    }
    default:
        shm_fatal("strided transfers: unknown message 0x%x (%zu bytes)", h.kind, len);
    }
}

static void xf_poll_locked(void)
{
    struct fi_cq_data_entry ent[16];
    ssize_t n = fi_cq_read(xf_g.d->cq, ent, 16);
    if (shm_unlikely(n == -FI_EAVAIL)) {
        pthread_mutex_unlock(&xf_g.lock);
        cdt_ofi_report_cq_error(xf_g.d, "operation");
    }
    for (ssize_t i = 0; i < n; i++) {
        const struct fi_cq_data_entry *e = &ent[i];
        /* A buffer's release may come as an entry of its own with
         * FI_MULTI_RECV and no FI_RECV (shm). */
        if (e->flags & (FI_RECV | FI_MULTI_RECV)) {
            if (e->len > 0)
                xf_handle(e->buf, e->len);
            if ((e->flags & FI_MULTI_RECV) && post_rbuf(e->op_context) != SHM_OK)
                shm_fatal("strided transfers: cannot repost a receive buffer");
        } else if (cdt_ofi_xf_owns(e->op_context)) {
            xf_buf_t *b = e->op_context; /* sent: the buffer is free */
            b->next = xf_g.free_bufs;
            xf_g.free_bufs = b;
        }
    }
    if (n > 0)
        __atomic_store_n(&cdt_ofi_am_events_g, cdt_ofi_am_events_g + (unsigned)n,
                         __ATOMIC_RELAXED); /* a sign of traffic for the progress thread */
    if (xf_g.nacks)
        xf_flush_small();
    if (xf_g.ngets)
        xf_flush_gets();
    if (xf_g.outq)
        xf_flush_out();
    /* sockets sends only in a progress call: push out the answers made in
     * this pass now, not at the poller's next look. */
    if (xf_g.sent && cdt_ofi_fast_g.flag_progress)
        fi_cq_read(xf_g.d->cq, NULL, 0);
    xf_g.sent = 0;
}

int cdt_ofi_xf_on(void)
{
    return xf_g.on;
}

void cdt_ofi_xf_progress(void)
{
    if (pthread_mutex_trylock(&xf_g.lock) != 0)
        return; /* another thread reads the CQ now */
    xf_poll_locked();
    pthread_mutex_unlock(&xf_g.lock);
}

/* ---- the origin's side ------------------------------------------------- */

/* Waits (driving progress) for a free buffer and slot; lock held. */
static void xf_take(cdt_ctx_t *ctx, int pe, xf_buf_t **b_p, xf_slot_t **s_p)
{
    cdt_ofi_stall_t stall = {0};
    xf_pools();
    while ((b_p && xf_g.free_bufs == NULL) || xf_g.free_slots == NULL) {
        xf_poll_locked();
        cdt_ofi_issued(ctx, pe); /* a same-host target computing: wake it */
        cdt_ofi_stall_check(&stall, 0, ctx, "strided transfer", pe);
    }
    if (b_p)
        *b_p = xf_buf_try();
    *s_p = xf_g.free_slots;
    xf_g.free_slots = (*s_p)->next_free;
}

/* Whole blocks per message. */
static size_t xf_per_msg(size_t bbytes)
{
    size_t k = XF_PAY_MAX / bbytes;
    return k ? k : 1;
}

static void xf_put_msgs(cdt_ctx_t *ctx, int seg, size_t off, size_t rstride, const void *src,
                        size_t lstride, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    size_t bbytes = bsize * esize, per = xf_per_msg(bbytes);
    const unsigned char *s = src;
    pthread_mutex_lock(&xf_g.lock);
    for (size_t b = 0; b < nblocks; b += per) {
        size_t k = nblocks - b < per ? nblocks - b : per;
        xf_buf_t *buf;
        xf_slot_t *slot;
        xf_take(ctx, pe, &buf, &slot);
        *slot = (xf_slot_t){.ctx = ctx};
        *XF_HDR(buf) = (xf_hdr_t){.kind = XF_PUT, .origin = (uint32_t)cdt_ofi_g.cfg.rank,
                                .slot = (uint32_t)(slot - xf_g.slots), .seg = (uint8_t)seg,
                                .esize = (uint8_t)esize, .off = off + b * rstride,
                                .stride = rstride, .bsize = bsize, .nblocks = k};
        xf_pack(buf->data + sizeof(xf_hdr_t), s + b * lstride, lstride, bsize, k, esize);
        cdt_ofi_count(ctx, &ctx->put_issued, 1); /* before the issue: see cdt_ofi_count */
        xf_send(buf, pe, sizeof(xf_hdr_t) + k * bbytes);
    }
    pthread_mutex_unlock(&xf_g.lock);
    cdt_ofi_issued(ctx, pe);
}

static void xf_get_msgs(cdt_ctx_t *ctx, void *dst, size_t lstride, int seg, size_t off,
                        size_t rstride, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    size_t bbytes = bsize * esize, per = xf_per_msg(bbytes);
    unsigned char *d = dst;
    pthread_mutex_lock(&xf_g.lock);
    for (size_t b = 0; b < nblocks; b += per) {
        size_t k = nblocks - b < per ? nblocks - b : per;
        xf_slot_t *slot;
        xf_take(ctx, pe, NULL, &slot);
        *slot = (xf_slot_t){.ctx = ctx, .is_get = 1, .dst = d + b * lstride, .lstride = lstride,
                            .bsize = bsize, .nblocks = k, .esize = esize};
        xf_hdr_t h = {.kind = XF_GET, .origin = (uint32_t)cdt_ofi_g.cfg.rank,
                      .slot = (uint32_t)(slot - xf_g.slots), .seg = (uint8_t)seg,
                      .esize = (uint8_t)esize, .off = off + b * rstride, .stride = rstride,
                      .bsize = bsize, .nblocks = k};
        cdt_ofi_count(ctx, &ctx->get_issued, 1);
        xf_send_small(pe, &h);
        xf_flush_small(); /* no inject: it waits for a buffer */
    }
    pthread_mutex_unlock(&xf_g.lock);
    cdt_ofi_issued(ctx, pe);
    cdt_ofi_wait_gets(ctx);
}

/* Reads the span of a dense get in pieces and scatters each here. */
static void xf_get_span(cdt_ctx_t *ctx, void *dst, size_t lstride, int seg, size_t off,
                        size_t rstride, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    size_t bbytes = bsize * esize;
    size_t per = bbytes >= XF_STAGE_MAX ? 1 : (XF_STAGE_MAX - bbytes) / rstride + 1;
    size_t piece = (per - 1) * rstride + bbytes; /* the largest piece's span */
    if (per > nblocks)
        piece = (nblocks - 1) * rstride + bbytes;
    /* One staging buffer, kept; a second caller at the same time gets its own. */
    unsigned char *stage = NULL, *own = NULL;
    if (pthread_mutex_trylock(&xf_g.stage_lock) == 0) {
        if (xf_g.stage_len < piece) {
            free(xf_g.stage);
            xf_g.stage_len = piece > XF_STAGE_MAX ? piece : XF_STAGE_MAX;
            xf_g.stage = malloc(xf_g.stage_len);
            if (xf_g.stage == NULL)
                xf_g.stage_len = 0;
        }
        stage = xf_g.stage;
    }
    if (stage == NULL && (stage = own = malloc(piece)) == NULL)
        shm_fatal("strided get: out of memory for a %zu-byte staging buffer", piece);
    const cdt_ofi_peer_t *p = cdt_ofi_peer(pe);
    const cdt_ofi_rseg_t *r = &p->seg[seg];
    unsigned char *d = dst;
    for (size_t b = 0; b < nblocks; b += per) {
        size_t k = nblocks - b < per ? nblocks - b : per;
        size_t span = (k - 1) * rstride + bbytes;
        cdt_ofi_get_slow(ctx, stage, r->base + off + b * rstride, r->key, span, pe, 1);
        shm_strided_copy(d + b * lstride, lstride, stage, rstride, bsize, k, esize);
    }
    if (own)
        free(own);
    else
        pthread_mutex_unlock(&xf_g.stage_lock);
}

/* One RMA per block: large blocks, or no messages on this provider. */
static void xf_blocks(cdt_ctx_t *ctx, int is_get, unsigned char *local, size_t lstride, int seg,
                      size_t off, size_t rstride, size_t bbytes, size_t nblocks, int pe)
{
    for (size_t b = 0; b < nblocks; b++) {
        if (is_get)
            cdt_get_nbi(ctx, local + b * lstride, seg, off + b * rstride, bbytes, pe);
        else
            cdt_put_nbi(ctx, seg, off + b * rstride, local + b * lstride, bbytes, pe);
    }
    if (is_get)
        cdt_ofi_wait_gets(ctx);
    else if (cdt_plan_put(bbytes, ctx->inject_size, cdt_ofi_fast_g.bounce_size, ctx->bounce_n) ==
             CDT_PATH_FRAGMENT)
        cdt_ofi_wait_puts(ctx); /* sent from the source: it is reusable once they are done */
}

void cdt_iput(cdt_ctx_t *ctx, int seg, size_t off, size_t rstride, const void *src,
              size_t lstride, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    size_t bbytes = bsize * esize;
    int mode = xf_g.mode;
    int msgs = xf_g.on && bbytes <= XF_PAY_MAX &&
               (mode == XF_MESSAGES || (mode != XF_BLOCKS && bbytes < XF_BLOCK_RMA));
    if (msgs)
        xf_put_msgs(ctx, seg, off, rstride, src, lstride, bsize, nblocks, esize, pe);
    else
        xf_blocks(ctx, 0, (unsigned char *)src, lstride, seg, off, rstride, bbytes, nblocks, pe);
}

void cdt_iget(cdt_ctx_t *ctx, void *dst, size_t lstride, int seg, size_t off, size_t rstride,
              size_t bsize, size_t nblocks, size_t esize, int pe)
{
    size_t bbytes = bsize * esize;
    int mode = xf_g.mode;
    size_t span = (nblocks - 1) * rstride + bbytes;
    int small = bbytes < XF_BLOCK_RMA;
    if (mode == XF_SPAN || (mode == XF_AUTO && small && span / XF_DENSE <= bbytes * nblocks) ||
        (mode == XF_AUTO && small && !xf_g.on && rstride <= 4 * bbytes))
        xf_get_span(ctx, dst, lstride, seg, off, rstride, bsize, nblocks, esize, pe);
    else if (xf_g.on && bbytes <= XF_PAY_MAX && (mode == XF_MESSAGES || (mode == XF_AUTO && small)))
        xf_get_msgs(ctx, dst, lstride, seg, off, rstride, bsize, nblocks, esize, pe);
    else
        xf_blocks(ctx, 1, dst, lstride, seg, off, rstride, bbytes, nblocks, pe);
}
