// SPDX-License-Identifier: BSD-3-Clause
/* Internal state of the libfabric conduit (setup and slow paths only). */
#ifndef SHM_CONDUIT_OFI_H
#define SHM_CONDUIT_OFI_H

#include <pthread.h>
#include <rdma/fi_atomic.h>

#include "conduit/conduit.h"

/*
 * What differs between providers, decided once at init from one table
 * (ofi_caps.c) and from what fi_getinfo granted. No #ifdef per provider.
 */
typedef struct {
    int mr_virt_addr;        /* remote addresses are virtual, else offsets */
    int mr_prov_key;         /* keys come from the provider */
    /* The provider's contract (fi_getinfo's answer, docs/PROVIDERS.md): */
    int mr_local;            /* FI_MR_LOCAL: a descriptor for every local buffer */
    int mr_endpoint;         /* FI_MR_ENDPOINT: MRs bound to their endpoint and enabled */
    int mr_raw;              /* FI_MR_RAW: keys are byte strings, mapped at the peer */
    int mr_allocated;        /* FI_MR_ALLOCATED: registered memory is backed and stays */
    size_t ctx_size;         /* FI_CONTEXT(2): bytes of each op context the provider owns; 0 */
    int av_map;              /* FI_AV_MAP: fi_addr_t are opaque, not indices */
    int auto_progress;       /* FI_PROGRESS_AUTO: the provider moves data by itself */
    size_t mr_key_size;      /* bytes of a key (raw keys: of the byte string) */
    int native_amo;          /* FI_ATOMIC granted */
    int put_needs_dc;        /* a counted put may not have landed: use FI_DELIVERY_COMPLETE */
    int inject_honours_dc;   /* fi_inject_write respects FI_DELIVERY_COMPLETE */
    int read_orders_writes;  /* a read completes only after earlier writes on its connection landed */
    int cntr_wait_broken;    /* poll fi_cntr_read, never fi_cntr_wait */
    int needs_target_progress;
    int lazy_connect;
    size_t inject_size;      /* provider's */
    size_t max_msg_size;
} cdt_ofi_caps_t;

typedef struct {
    const char *name;        /* provider name as fi_info reports it, e.g. "shm", "tcp;ofi_rxm" */
    int put_needs_dc;        /* -1: unless mr_virt_addr (shm copies through the kernel then) */
    int inject_honours_dc;
    /* A read returns only after the writes issued before it to the same
     * peer on the same endpoint have landed (bench/raw_fi order): quiet
     * may inject puts and read back once per PE written (SHMEM_QUIET_FLUSH). */
    int read_orders_writes;
    int cntr_wait_broken;
    int needs_target_progress;
    int amo_post_via_fetch;  /* issue non-fetching atomics as fetching ones (ofi_amo.c) */
    int pid_named_regions;   /* keeps /dev/shm/<pid>:... files that a dead process leaves */
    int lazy_connect;        /* connects a pair on its first transfer (SHMEM_OFI_EAGER_CONNECT) */
    int rma_iov_slow;        /* an RMA of several iovs leaves the fast path: one iov each (cdt_bulk_xferv) */
    /* With manual progress an operation leaves this PE only in a later
     * progress call (sockets queues it): a collective's last flag is
     * pushed out at once (cdt_put_flag), not at our next library call. */
    int sends_in_progress;
    /* The provider has no wait object and every peer is on this host: the
     * progress thread sleeps until a same-host origin kicks it (ofi_progress.c). */
    int kick_progress;
    /* Endpoints talk only to endpoints opened with the same authorization
     * key, a 16-byte job UUID (psm3): derived from the job's PMIx namespace. */
    int auth_job_uuid;
    /* Strided transfers by message (ofi_strided.c): the largest message
     * sent in one piece without a further exchange (0: not measured, 16 KiB
     * as rxm's eager buffer, above which it segments or hands over by
     * rendezvous). */
    size_t msg_eager_max;
#define CDT_OFI_RXM_EAGER_MSG (16384 - 256) /* FI_OFI_RXM_BUFFER_SIZE's default less rxm's header */
    /* The receiver's kernel copies a message out of the sender's buffer
     * (shm's CMA): the engine packs with streaming stores, so the copy
     * does not leave the lines shared with the receiver's core (the next
     * pack into that buffer then waited for them). */
    int msg_peer_copies;
} cdt_ofi_prov_row_t;

/*
 * How a provider ranks when the user names none (ofi_select.c). By the
 * core provider's name (before any ';'): the software providers are listed
 * (ofi_caps.c); any other name is taken for a hardware provider.
 */
enum {
    CDT_OFI_CLASS_HW = 0,    /* NIC providers: verbs, efa, cxi, psm3, opx, ... first */
    CDT_OFI_CLASS_HOST,      /* shm: this host only */
    CDT_OFI_CLASS_TCP,       /* tcp */
    CDT_OFI_CLASS_SOCKETS,   /* sockets */
    CDT_OFI_CLASS_AVOID,     /* udp, net: taken only when named */
};
typedef struct {
    const char *core;        /* core provider name, e.g. "tcp" */
    int klass;               /* CDT_OFI_CLASS_* */
    const char *why;         /* shown by SHMEM_INFO and osh_info */
} cdt_ofi_class_row_t;
/* The class row of a provider name like "tcp;ofi_rxm" (hardware if not listed). */
const cdt_ofi_class_row_t *cdt_ofi_prov_class(const char *prov_name);

/* One provider libfabric offers with what the conduit needs. */
typedef struct {
    char name[64];
    int klass;               /* CDT_OFI_CLASS_* */
    int usable;              /* 0: not for this job (why says so) */
    const char *why;
} cdt_ofi_cand_t;
#define CDT_OFI_MAX_CANDS 16
/*
 * The providers libfabric offers for RDM endpoints with RMA, in its own
 * order, each classed for a job on nnodes hosts; *best_p gets the index of
 * the one to try first (-1 if none is usable). Returns how many.
 */
int cdt_ofi_candidates(int nnodes, cdt_ofi_cand_t *c, int max, int *best_p);
/* The order in which to try them: usable ones, hardware first (indices into c). */
int cdt_ofi_candidates_order(const cdt_ofi_cand_t *c, int n, int *order);
/* The provider for this job (the user's, else the best candidate): its
 * fi_info, and cdt_ofi_g.prov_why says why; an error line when none. */
shm_status_t cdt_ofi_choose_provider(const cdt_config_t *cfg, struct fi_info **info_p);
/* Authorization keys where the provider wants them (auth_job_uuid): the
 * job's (its PEs' endpoints) and the data services' common one. */
/* Each sets the endpoints' key of info, and its domain's when domain is 1. */
shm_status_t cdt_ofi_job_auth_key(struct fi_info *info, int domain);
shm_status_t cdt_ofi_service_auth_key(struct fi_info *info, int domain);
/* osh_info and SHMEM_INFO: the candidates and the choice for nnodes hosts. */
void cdt_ofi_candidates_print(FILE *f, int nnodes, const char *chosen, const char *why);
/* The mr_mode and mode bits a request admits (every one a current provider
 * may ask for and the conduit honours): shared by the PE and RPC domains. */
#define CDT_OFI_MR_MODES (FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | \
                          FI_MR_ENDPOINT | FI_MR_RAW)
#define CDT_OFI_MODES (FI_CONTEXT | FI_CONTEXT2 | FI_ASYNC_IOV | FI_RX_CQ_DATA)

/*
 * Before this process opens its first endpoint: remove region files named
 * after our pid (left by a dead process whose pid we now have, which the
 * provider would take for "in use"). A no-op for other providers.
 */
void cdt_ofi_sweep_own_regions(const char *prov_name);

/* Row for a provider name (a default row if it is not in the table). */
const cdt_ofi_prov_row_t *cdt_ofi_prov_row(const char *prov_name);

/* How the progress thread waits (ofi_progress.c). */
enum {
    OFI_PROG_NONE = 0,
    OFI_PROG_KICK, /* sleeps until a same-host origin kicks it (shm) */
    OFI_PROG_POLL, /* timed poller (+ kicks where the provider has no wait object) */
    OFI_PROG_WAIT, /* sleeps on the provider's wait object */
};

typedef struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_mr *mr[SHM_NSEGS];
    uint64_t seg_base[SHM_NSEGS];
    size_t seg_len[SHM_NSEGS];
    cdt_ofi_caps_t caps;
    cdt_config_t cfg;
    cdt_ctx_t *dflt;          /* the context whose endpoint peers address */
    char prov_name[64];
    pthread_t progress_tid;
    volatile int progress_stop;
    int progress_running;
    int dflt_wait_fd;         /* the default context's CQ has an FI_WAIT_FD */
    int prog_mode;            /* OFI_PROG_*: how the progress thread waits */
    int prov_wait;            /* the provider hands out an fd wait object (probed) */
    int npeers;               /* peers resolved (cdt_ofi_peer_slow) */
    char prov_why[96];        /* why this provider: named by the user, or its rank */
    int no_fabric;            /* cfg.no_fabric: nothing opened, libfabric not loaded */
} cdt_ofi_t;

extern cdt_ofi_t cdt_ofi_g;

/* Fills the atomic capability table (ofi_amo.c); called by cdt_init once the domain is open. */
void cdt_ofi_amo_init(void);
/* Which path each atomic takes, for SHMEM_INFO (cdt_info_print). */
void cdt_ofi_amo_info_print(FILE *f);
/* Atomics by active message (ofi_amo_am.c): set-up (0: ready), progress, close. */
int cdt_ofi_amo_am_open(void);
void cdt_ofi_amo_am_progress(void);
/* Events the AM endpoint has taken (requests, answers): the timed progress
 * thread's sign that peers are talking to this PE (under the AM lock). */
extern unsigned cdt_ofi_am_events_g;
void cdt_ofi_amo_am_fini(void);
/* Its CQ when it has a wait object (for the progress thread), else NULL. */
struct fid_cq *cdt_ofi_amo_am_wait_cq(struct fid_fabric **fabric_p);
/* Same-host targets this context sent work since its last quiet: wake them
 * (rate-limited) while waiting for that work (ofi_progress.c). */
void cdt_ofi_kick_pending(cdt_ctx_t *ctx);
/* Between two polls of a wait that found nothing: yield the core when told
 * to, or once this wait has lasted a while. */
void cdt_ofi_idle_pause(void);
/* The same in a wait on ctx's operations; *t0 (0 at the wait's start) is
 * when it began: yields after a while if ctx kicked a same-host target. */
void cdt_ofi_wait_pause(cdt_ctx_t *ctx, uint64_t *t0);
/* Threads of this PE inside a wait on their own operations (wait_cntr):
 * they drive the endpoints themselves, so the progress thread stands back
 * (ofi_progress.c app_polling). */
extern unsigned cdt_ofi_app_waiting_g;
/* Without a fabric (cdt_ofi_g.no_fabric): an operation that needs one ends
 * the job naming the peer and `what` (ofi_init.c). */
__attribute__((noreturn, cold)) void cdt_ofi_no_fabric_fatal(int pe, const char *what);
/* 1 once libfabric is loaded (ofi_dl.c). */
int cdt_ofi_dl_loaded(void);
/* The libfabric file loaded (SHMEM_OFI_LIBRARY or the default). */
const char *cdt_ofi_dl_name(void);
/* Loads libfabric (once): 0, or -1 after one error line naming the file. */
int cdt_ofi_dl_load(void);
/* Strided transfers by message on the default endpoint (ofi_strided.c):
 * open once the default context is enabled (posts its receive buffers),
 * close after its endpoint is closed; progress reads the default CQ in
 * place of cdt_progress's own read while on. */
void cdt_ofi_xf_open(cdt_ctx_t *d);
void cdt_ofi_xf_close(void);
int cdt_ofi_xf_on(void);
void cdt_ofi_xf_progress(void);
/* Whether a completion's op context is one of its messages, and its peer. */
int cdt_ofi_xf_owns(const void *opctx);
int cdt_ofi_xf_pe(const void *opctx);
/* Each PE's host name (64 bytes), published at cdt_connect. */
#define CDT_OFI_HOST_KEY "ofishmem.host"

/* A wait on operations this PE issued: ends the job when no operation has
 * completed for SHMEM_FABRIC_TIMEOUT (v: a completion count, or anything
 * that changes when the wait progresses). */
typedef struct {
    uint64_t last_v, since_ns;
    unsigned polls;
    unsigned logged; /* ofi=debug: this wait's "no progress for 100 ms" line is out */
} cdt_ofi_stall_t;
void cdt_ofi_stall_check(cdt_ofi_stall_t *s, uint64_t v, cdt_ctx_t *ctx, const char *what,
                         int pe);
/* How progress is made, for SHMEM_INFO. */
const char *cdt_ofi_progress_describe(void);

/* Fabric faults (ofi_fault.c): each ends the job with one line per job
 * naming the operation, the peer PE, its host and the provider's error. */
__attribute__((noreturn, cold)) void cdt_ofi_fatal_rc(const char *op, int pe, ssize_t rc);
/* An error was counted on ctx's counters: read its CQ error entry, report it. */
__attribute__((noreturn, cold)) void cdt_ofi_report_cq_error(cdt_ctx_t *ctx, const char *what);
/* The general form: is_error 1 for an error the provider gave (reported
 * after a grace second: a dead peer's launcher speaks first), 0 for a stall. */
__attribute__((noreturn, cold, format(printf, 3, 4))) void
cdt_ofi_peer_fatal(int pe, int is_error, const char *fmt, ...);
/* cdt_ofi_wait_gets, naming the wait `what` if it stalls or fails. */
void cdt_ofi_wait_gets_for(cdt_ctx_t *ctx, const char *what);
/* PE's host name as it published it ("?" if unknown); len >= 64. */
void cdt_ofi_peer_host(int pe, char *host, size_t len);

/* ---- transfers in fragments (ofi_rma.c) ---- */

/* What a transfer's fragments take: their kind and peer (PE RMA) or the
 * request and endpoint of a data service; the local buffer's descriptor. */
typedef struct {
    int op, pe;              /* PE RMA: cdt_ofi_op_t and the peer */
    void *user;              /* data services: what each fragment's completion reports */
    cdt_msg_ep_t *mep;       /* data services: the endpoint (contexts from its pool) */
    void *desc;              /* fi_mr_desc of the local buffer, or NULL */
    void *mreg;              /* data services: the buffer's registration (a reference per fragment) */
    size_t max_frag;         /* 0, or a smaller fragment size (the endpoint's provider) */
} cdt_ofi_xfer_t;
/* The fragment engine shared by PE RMA and data services; never ends the job. */
ssize_t cdt_ofi_rma_frags(cdt_ctx_t *ctx, int is_get, void *lbuf, uint64_t raddr, uint64_t key,
                          size_t bytes, fi_addr_t addr, const cdt_ofi_xfer_t *x);

/* ---- memory registration and the provider's contract (ofi_mr.c) ---- */

/* A segment's key as a peer receives it (raw bytes under FI_MR_RAW). */
#define CDT_OFI_RAW_KEY_MAX 64
typedef struct {
    uint64_t key;
    uint64_t raw_base;       /* FI_MR_RAW: base address fi_mr_raw_attr gave */
    uint32_t raw_len;        /* FI_MR_RAW: bytes of raw */
    uint8_t raw[CDT_OFI_RAW_KEY_MAX];
} cdt_ofi_rkey_t;
shm_status_t cdt_ofi_seg_register(int seg, void *base, size_t len);
/* FI_MR_ENDPOINT: binds and enables the segments' registrations on ep. */
shm_status_t cdt_ofi_seg_bind(struct fid_ep *ep);
shm_status_t cdt_ofi_seg_key(int seg, cdt_ofi_rkey_t *k);
/* A peer's key as this PE uses it (fi_mr_map_raw under FI_MR_RAW). */
int cdt_ofi_peer_map_key(const cdt_ofi_rkey_t *k, uint64_t *key_p);
void cdt_ofi_peer_unmap_keys(void);

/* Per context, where the provider's contract asks (cdt_ofi_fast_g.contract). */
#define CDT_OFI_LMR_SLOT 16
shm_status_t cdt_ofi_lmr_open(cdt_ctx_t *ctx, int is_dflt);
void cdt_ofi_lmr_close(cdt_ctx_t *ctx);
/* Shared contexts: held from an operation's first step to its last. */
void cdt_ofi_lmr_lock(cdt_ctx_t *ctx);
void cdt_ofi_lmr_unlock(cdt_ctx_t *ctx);
/* Room for one operation (slots, a deferred copy, a bounce buffer); may
 * wait for everything issued. Before anything is taken or counted. */
void cdt_ofi_lmr_reserve(cdt_ctx_t *ctx, unsigned slots, int defer, int bounce);
/* Counts the operation on cnt and returns its context. */
void *cdt_ofi_lmr_opctx(cdt_ctx_t *ctx, int op, int pe, uint64_t *cnt);
/* A reserved 16-byte registered slot, filled from init when given. */
void *cdt_ofi_lmr_slot(cdt_ctx_t *ctx, const void *init, size_t len);
/* A reserved copy of len bytes from src to dst once the reads are complete. */
void cdt_ofi_lmr_defer(cdt_ctx_t *ctx, void *dst, const void *src, size_t len);
/* The descriptor of a registered buffer (segments, bounce, slots), or NULL. */
void *cdt_ofi_lmr_desc(cdt_ctx_t *ctx, const void *buf, size_t len);
/* Registers a caller's buffer until the next quiet; its descriptor. */
void *cdt_ofi_lmr_reg(cdt_ctx_t *ctx, const void *buf, size_t len, uint64_t access, int pe);
/* A blocking operation's own registration, once it is complete: the caller
 * may free its buffer when the call returns (FI_MR_ALLOCATED). */
void cdt_ofi_lmr_unreg_last(cdt_ctx_t *ctx);
/* After waits: every read complete (copies out) / everything complete. */
void cdt_ofi_lmr_gets_done(cdt_ctx_t *ctx);
void cdt_ofi_lmr_quiet_done(cdt_ctx_t *ctx);

/* Contexts of a message endpoint's operations (ofi_msg.c): user itself
 * where the provider owns no context memory, else a pooled wrapper. */
void *cdt_msg_opctx_get(cdt_msg_ep_t *ep, void *user);
/* The user context of a completion's op_context, releasing the wrapper. */
void *cdt_msg_opctx_put(cdt_msg_ep_t *ep, void *op_context);

#endif /* SHM_CONDUIT_OFI_H */
