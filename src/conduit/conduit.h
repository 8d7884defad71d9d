// SPDX-License-Identifier: BSD-3-Clause
/**
 * @file conduit.h
 * The narrow interface between the library and the network. Everything
 * above the conduit calls only these; nothing above it includes the rdma/ headers.
 *
 * Addressing: a PE number is the conduit's peer address. Remote memory is
 * named by (segment id, offset): the conduit adds the remote base of that
 * segment on that PE (or not, where the provider addresses by offset).
 *
 * Completion model: every context counts issued and completed operations.
 * Blocking puts return once the source buffer is reusable; cdt_quiet()
 * returns once everything the context issued is complete at its target.
 */
#ifndef SHM_CONDUIT_H
#define SHM_CONDUIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

/** Settings the conduit takes from the runtime and the env table. */
/** How the progress thread waits (SHMEM_PROGRESS_THREAD). */
enum {
    CDT_PROGRESS_OFF = 0,
    CDT_PROGRESS_AUTO, /**< the provider's default (conduit decides) */
    CDT_PROGRESS_POLL, /**< a timed poller: no wait object on the fabric's queues */
    CDT_PROGRESS_WAIT, /**< sleeps on the provider's wait object */
};

typedef struct {
    int rank, size;          /**< this PE, job size */
    int local_size;          /**< PEs on this host */
    int nnodes;              /**< hosts in the job */
    const char *provider;    /**< NULL/"" = choose */
    const char *domain;      /**< NULL/"" = first */
    int thread_safe;         /**< several threads may call in at once */
    size_t inject_size;      /**< 0 = provider's */
    int quiet_flush;         /**< inject puts that are not delivery-complete; quiet reads back */
    size_t bounce_size;      /**< medium-put threshold */
    long bounce_buffers;     /**< per context */
    size_t fragment_size;    /**< large transfers split into these */
    int progress_thread;     /**< CDT_PROGRESS_*: 0 = no progress thread */
    long progress_interval_us;
    long fabric_timeout_s;   /**< 0: wait for the fabric forever */
    int yield;               /**< sched_yield while polling */
    int eager_connect;       /**< connect to every PE at init (cdt_wireup) */
    int no_fabric;           /**< open no fabric (libfabric not even loaded): every peer's
                                  memory is mapped here (core/init.c decides, job-wide) */
} cdt_config_t;

/** Opens the fabric: provider choice, domain, address vector, default endpoint.
 *  With cfg->no_fabric nothing is opened: contexts have no endpoint, quiet
 *  and progress have nothing to do, and an operation that would need the
 *  fabric ends the job naming the peer (it cannot happen when every peer is
 *  mapped: core/init.c checks). */
shm_status_t cdt_init(const cdt_config_t *cfg);
/** Registers [base, base+len) as segment seg (before cdt_connect). */
shm_status_t cdt_seg_expose(int seg, void *base, size_t len);
/** Publishes this PE's endpoint name and segment keys/bases (one fence); a
 *  peer's are fetched on first contact (all at once with eager_connect). */
shm_status_t cdt_connect(void);
/** With eager_connect on a connection-oriented provider: opens every
 *  connection, lower rank to higher, after every PE passed cdt_connect.
 *  Returns 1 when it did: then a fabric barrier must follow before anyone
 *  sends to a lower rank. Otherwise (the default) a pair connects on its
 *  first transfer. */
int cdt_wireup(void);
/** Closes everything; outstanding operations must be quieted first. */
void cdt_fini(void);
/** Drives incoming operations (target-side progress); cheap, call while waiting. */
void cdt_progress(void);
/** Polls or yields, for wait loops that found nothing: progress + maybe sched_yield. */
void cdt_poll_idle(void);
/** Starts the optional progress thread (after the default context exists). */
shm_status_t cdt_progress_thread_start(void);
/** Stops it; before any context it polls is closed. */
void cdt_progress_thread_stop(void);
/** Nonzero when cdt_init opened no fabric (cfg->no_fabric). */
int cdt_no_fabric(void);
/** Peers this PE has met through the fabric (address-vector entries made). */
int cdt_peers_met(void);
/** Provider in use, e.g. "shm" or "tcp;ofi_rxm"; "none" without a fabric. */
const char *cdt_provider_name(void);
/** Human-readable summary of the capability table (SHMEM_INFO). */
void cdt_info_print(FILE *f);

typedef struct cdt_ctx cdt_ctx_t;

/**
 * For a wait on another PE's action (a collective's flag) that has lasted a
 * while: one 8-byte read of pe's heap word at heap offset off through the
 * fabric, waited for with the SHMEM_FABRIC_TIMEOUT bound (unbounded when
 * the bound is off). A PE that computes answers it (its progress thread); a
 * link that is down, or a stopped PE, ends the job with the fabric-timeout
 * message naming `what`. Returns the word read.
 */
uint64_t cdt_probe_peer(cdt_ctx_t *ctx, int pe, size_t off, const char *what);

/*
 * The data path (cdt_put, cdt_put_nbi, cdt_get, cdt_quiet, ...) is inline,
 * in ofi/ofi_inline.h. Besides the puts of the OpenSHMEM API it has
 * cdt_put_flag(ctx, seg, off, src, bytes, pe): a small put (a collective's
 * flag) that is complete at its target once counted, so a later quiet needs
 * nothing more from that target. A plain small put may be one that quiet
 * must read back (SHMEM_QUIET_FLUSH), which needs the target's progress
 * then; a flag's target may have left the collective (and the job) by the
 * time the sender's next quiet runs.
 */

/** Context option: several threads may use it at once. */
#define CDT_CTX_SHARED 0x1

shm_status_t cdt_ctx_init(cdt_ctx_t *ctx, unsigned flags);
void cdt_ctx_fini(cdt_ctx_t *ctx);

/* ==================== Data services (src/rpc) ====================
 * Message endpoints for RPC control traffic and short-lived registrations
 * for one-sided bulk transfers. Peers are named by an address-vector entry
 * of the message endpoint (cdt_peer_t), not by PE number: RPC clients and
 * servers need not be PEs of one job. Implemented in ofi/ofi_msg.c and
 * ofi/ofi_bulk.c.
 */

/** A message endpoint with its own address vector, CQ and RMA counters. */
typedef struct cdt_msg_ep cdt_msg_ep_t;
/** A peer of a message endpoint (an address-vector entry). */
typedef uint64_t cdt_peer_t;
#define CDT_PEER_NONE UINT64_MAX
/** Largest raw endpoint name a message endpoint carries. */
#define CDT_ADDR_MAX 64

typedef struct {
    const char *provider; /**< NULL/"": the PE's if this process is one, else FI_PROVIDER, else "shm" */
    int thread_safe;      /**< several threads call in at once */
    size_t cq_size;       /**< 0: default */
    int wait_fd;          /**< open the CQ with a wait object where the provider has one */
    int job_auth;         /**< talks to this job's PEs only: the job's authorization key where
                               the provider wants one (else the data services' common key) */
} cdt_msg_cfg_t;

/**
 * Opens a message endpoint. In a running PE whose provider matches and offers
 * FI_MSG|FI_MULTI_RECV|FI_SOURCE it lives in the PE's domain (symmetric memory
 * is then exposed with the heap's registration); otherwise in a fabric and
 * domain of its own, shared by the process's endpoints of that provider.
 * Entry 0 of its address vector is the endpoint itself.
 */
shm_status_t cdt_msg_open(const cdt_msg_cfg_t *cfg, cdt_msg_ep_t **ep_p);
/** Closes it; posted buffers are given back, transfers must be complete. */
void cdt_msg_close(cdt_msg_ep_t *ep);
/** Provider name, e.g. "shm". */
const char *cdt_msg_provider(const cdt_msg_ep_t *ep);
/**
 * A same-host peer process has exited (the caller knows it from a pidfd):
 * removes what the provider keeps in the filesystem for it and a killed
 * process cannot remove itself (shm 1.17: /dev/shm/<pid>:...).
 */
void cdt_msg_sweep_dead(const cdt_msg_ep_t *ep, int pid);
/* The same by provider name, without an endpoint (a same-host-only RPC client). */
void cdt_msg_sweep_dead_on(const char *prov, int pid);
/**
 * The pid of the process behind a peer's raw name, where the provider puts
 * it there (a same-host provider: shm 1.17 names "<pid>:<ep>:<dom>"); 0
 * where it does not. Lets a caller tell a dead same-host peer (kill(pid, 0)
 * fails with ESRCH) from a slow one: shm reports nothing for a dead peer.
 */
int cdt_msg_peer_pid(const cdt_msg_ep_t *ep, const void *name, size_t len);
/** Nonzero when the endpoint shares the running PE's domain. */
int cdt_msg_in_pe_domain(const cdt_msg_ep_t *ep);
/** Raw endpoint name (at most CDT_ADDR_MAX bytes). */
shm_status_t cdt_msg_name(cdt_msg_ep_t *ep, void *name, size_t *len_p);
/** Printable address "ofi+PROVIDER://HEX" of a raw name. */
shm_status_t cdt_msg_addr_to_str(const char *prov, const void *name, size_t len, char *str,
                                 size_t strlen);
/** Parses a printable address; prov gets the provider (size provlen). */
shm_status_t cdt_msg_addr_from_str(const char *str, char *prov, size_t provlen, void *name,
                                   size_t *len_p);
/** Inserts a raw name into the endpoint's address vector. */
shm_status_t cdt_msg_insert(cdt_msg_ep_t *ep, const void *name, size_t len, cdt_peer_t *peer_p);
/** Removes a peer (its connection and provider state go with it). */
void cdt_msg_remove(cdt_msg_ep_t *ep, cdt_peer_t peer);
/** Largest message (and posted receive buffer) the provider takes: its
 *  max_msg_size (SIZE_MAX where it gives none). */
size_t cdt_msg_max_size(const cdt_msg_ep_t *ep);
/** Messages that leave less than this in a multi-recv buffer release it. */
shm_status_t cdt_msg_set_min_multi_recv(cdt_msg_ep_t *ep, size_t bytes);
/** Posts a receive buffer; multi: FI_MULTI_RECV (many messages, one buffer). */
shm_status_t cdt_msg_post_recv(cdt_msg_ep_t *ep, void *buf, size_t len, int multi, void *ctx);
/**
 * Sends hdr (and pay, when paylen > 0) as one message. A CDT_MSG_SENT event
 * with ctx follows; both buffers must stay valid until then.
 * SHM_ERR_AGAIN: the provider is busy, poll and retry.
 */
shm_status_t cdt_msg_send(cdt_msg_ep_t *ep, cdt_peer_t peer, const void *hdr, size_t hdrlen,
                          const void *pay, size_t paylen, void *ctx);

typedef enum { CDT_MSG_RECV = 1, CDT_MSG_SENT, CDT_MSG_ERROR } cdt_msg_ev_kind_t;

typedef struct {
    int kind;           /**< cdt_msg_ev_kind_t */
    void *ctx;          /**< the ctx given to post_recv/send/bulk_get/bulk_put */
    void *buf;          /**< RECV: where the message lies */
    size_t len;         /**< RECV: its length; ERROR on a receive: bytes the sender sent */
    cdt_peer_t src;     /**< RECV: sender per FI_SOURCE, or CDT_PEER_NONE */
    int released;       /**< the provider is done with this receive buffer */
    int on_recv;        /**< ERROR: on a receive (else a send or a transfer) */
    shm_status_t err;   /**< ERROR: SHM_ERR_RANGE (truncated), SHM_ERR_CANCELED, ... */
    const char *prov_err; /**< ERROR: the provider's own words, or NULL (until the next poll) */
} cdt_msg_event_t;

/** Reads up to max events; drives progress. Returns how many (0: none). */
int cdt_msg_poll(cdt_msg_ep_t *ep, cdt_msg_event_t *ev, int max);
/** Drives progress without reading events (thread-safe endpoints: any thread, any time). */
void cdt_msg_progress(cdt_msg_ep_t *ep);

/** Bulk access a peer is granted. */
#define CDT_BULK_READ 0x1  /**< the peer may read (fi_read) */
#define CDT_BULK_WRITE 0x2 /**< the peer may write (fi_write) */

/** Largest raw memory key (FI_MR_RAW) a registration carries. */
#define CDT_BULK_RAW_MAX 64

/**
 * A registration a peer addresses: rbase + (addr - base) is what it sends.
 * Where the provider wants raw keys (FI_MR_RAW), key is 0 and the peer maps
 * (raw_base, raw[0..raw_len)) into a key of its own with cdt_bulk_map_raw;
 * elsewhere raw_len is 0.
 */
typedef struct {
    void *mr;        /**< NULL: memory the conduit had registered already (symmetric heap) */
    uint64_t key;
    uint64_t rbase;  /**< remote address of the first byte */
    uint64_t raw_base; /**< FI_MR_RAW: the base address fi_mr_raw_attr gave */
    size_t raw_len;  /**< FI_MR_RAW: bytes of raw (0: a 64-bit key) */
    uint8_t raw[CDT_BULK_RAW_MAX];
} cdt_bulk_reg_t;

/** Registers [buf, buf+len) for peers' access (symmetric memory: no new registration). */
shm_status_t cdt_bulk_expose(cdt_msg_ep_t *ep, void *buf, size_t len, unsigned access,
                             cdt_bulk_reg_t *reg_p);
/** Drops a registration made by cdt_bulk_expose. */
void cdt_bulk_release(cdt_msg_ep_t *ep, cdt_bulk_reg_t *reg);
/**
 * A peer's raw key (its cdt_bulk_reg_t's raw_base, raw, raw_len) mapped into
 * a key this endpoint's transfers to that peer use (fi_mr_map_raw). Each
 * mapping is undone with cdt_bulk_unmap_raw once no transfer uses it, and
 * before the endpoint closes.
 */
shm_status_t cdt_bulk_map_raw(cdt_msg_ep_t *ep, uint64_t base, const uint8_t *raw, size_t len,
                              uint64_t *key_p);
void cdt_bulk_unmap_raw(cdt_msg_ep_t *ep, uint64_t key);
/**
 * Issues a pull of len bytes at (raddr, key) of peer into dst, in fragments of
 * the RMA engine's size, all in flight. Each fragment completes as a
 * CDT_MSG_SENT event with ctx (or a CDT_MSG_ERROR event), so one transfer
 * that never completes (a dead peer) holds up nobody else's; *nfrags_p gets
 * how many fragments were issued, even on error. Returns an error only when
 * the rest of the transfer could not be issued.
 */
shm_status_t cdt_bulk_get(cdt_msg_ep_t *ep, cdt_peer_t peer, void *dst, uint64_t raddr,
                          uint64_t key, size_t len, void *ctx, uint64_t *nfrags_p);
/** Same, pushing src to the peer (delivery-complete where the provider needs it). */
shm_status_t cdt_bulk_put(cdt_msg_ep_t *ep, cdt_peer_t peer, const void *src, uint64_t raddr,
                          uint64_t key, size_t len, void *ctx, uint64_t *nfrags_p);
/** One piece of a vector transfer: len bytes at local, (raddr, key) remote. */
typedef struct {
    void *local;
    uint64_t raddr, key;
    size_t len;
} cdt_bulk_piece_t;
/**
 * Moves n pieces (is_get: pulls) with as few operations as the provider
 * takes: consecutive pieces under one key go together, up to its iov limits
 * and the fragment size, as one fi_readmsg/fi_writemsg; a piece larger than
 * a fragment is fragmented alone. Completion reporting as cdt_bulk_get.
 */
shm_status_t cdt_bulk_xferv(cdt_msg_ep_t *ep, cdt_peer_t peer, int is_get,
                            const cdt_bulk_piece_t *p, size_t n, void *ctx, uint64_t *nops_p);
/* ==================== end of data services ==================== */

/**
 * Strided transfers (ofi/ofi_strided.c): nblocks blocks of bsize elements of
 * esize bytes; block b at (seg, off + b*rstride) on pe and at local +
 * b*lstride here (strides in bytes). pe is not this PE and its memory is not
 * mapped here; counts are > 0: the caller checks.
 * cdt_iput: the source is reusable on return; cdt_quiet() completes it at
 * the target. cdt_iget: returns with the data in place.
 */
void cdt_iput(cdt_ctx_t *ctx, int seg, size_t off, size_t rstride, const void *src,
              size_t lstride, size_t bsize, size_t nblocks, size_t esize, int pe);
void cdt_iget(cdt_ctx_t *ctx, void *dst, size_t lstride, int seg, size_t off, size_t rstride,
              size_t bsize, size_t nblocks, size_t esize, int pe);

/*
 * The data path, inline (see ofi/ofi_inline.h):
 *   void cdt_put(cdt_ctx_t *, int seg, size_t off, const void *src, size_t n, int pe);
 *   void cdt_put_nbi(cdt_ctx_t *, int seg, size_t off, const void *src, size_t n, int pe);
 *   void cdt_get(cdt_ctx_t *, void *dst, int seg, size_t off, size_t n, int pe);
 *   void cdt_get_nbi(cdt_ctx_t *, void *dst, int seg, size_t off, size_t n, int pe);
 *   void cdt_quiet(cdt_ctx_t *);   remote completion of all the context issued
 *   void cdt_fence(cdt_ctx_t *);   ordering of what came before against what follows
 * Every byte count is > 0 and pe is valid and not this PE: the caller checks.
 *
 * Atomics (see ofi/ofi_amo_inline.h), type and op as cdt_amo_type_t/cdt_amo_op_t;
 * pe may be this PE (atomicity needs one mechanism for all):
 *   int  cdt_amo_offered(type, op);   carried by the conduit (else emulate)
 *   void cdt_amo(ctx, type, op, seg, off, const void *operand, pe);   complete by quiet
 *   void cdt_fetch_amo[_nbi](ctx, type, op, seg, off, operand, void *result, pe);
 *   void cdt_cswap[_nbi](ctx, type, seg, off, cond, value, void *result, pe);
 */
#include "conduit/ofi/ofi_inline.h"
#include "conduit/ofi/ofi_amo_inline.h"

#endif /* SHM_CONDUIT_H */
