// SPDX-License-Identifier: BSD-3-Clause
/* Internal state of the conduit's data-service part (ofi_msg.c, ofi_bulk.c). */
#ifndef SHM_CONDUIT_OFI_MSG_H
#define SHM_CONDUIT_OFI_MSG_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <sys/uio.h>

#include "conduit/conduit.h"

/* The fabric and domain an endpoint lives in: the PE's, or one of our own. */
typedef struct cdt_msg_dom {
    struct fi_info *info;        /* caps FI_MSG|FI_MULTI_RECV|FI_SOURCE|FI_RMA */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    int refs;                    /* endpoints open in it (own domains only) */
    int is_pe;                   /* borrowed from the running PE: never closed here */
    int thread_safe;             /* opened FI_THREAD_SAFE */
    int virt_addr;               /* remote addresses are virtual, else offsets */
    int prov_key;                /* keys come from the provider */
    size_t key_bits;             /* requested keys must fit here */
    /* The provider's contract (ofi_msg_mr.c): all 0 where it asks nothing. */
    int mr_local;                /* FI_MR_LOCAL: descriptors for every local buffer */
    int mr_endpoint;             /* FI_MR_ENDPOINT: registrations bound to the endpoint */
    size_t ctx_size;             /* FI_CONTEXT(2): context memory per operation */
    int av_map;                  /* FI_AV_MAP: opaque fi_addr_t (peers are indices here) */
    int async_iov;               /* FI_ASYNC_IOV: an iov array of 2+ lives until completion */
    int mr_raw;                  /* FI_MR_RAW: keys are byte strings (bulk: cdt_bulk_expose) */
    int iov1;                    /* one iov per message (tx iov_limit 1): header and
                                    payload go as one copy */
    char prov[64];
} cdt_msg_dom_t;

/* Pools and registrations of an endpoint under a contract (ofi_msg_mr.c). */
typedef struct cdt_msg_contract cdt_msg_contract_t;

struct cdt_msg_ep {
    cdt_ctx_t ctx;               /* ep, counters and CQ the RMA engine works on */
    cdt_msg_dom_t *dom;
    struct fid_av *av;
    int has_source;              /* fi_cq_readfrom gives senders */
    int wait_fd;                 /* its CQ has an FI_WAIT_FD wait object */
    size_t inject_size;
    uint64_t rma_errs_seen;      /* error counts already turned into "done" */
    size_t bulk_iov_lim;         /* pieces one bulk RMA takes (0: not looked up yet; ofi_bulk.c) */
    cdt_msg_contract_t *mc;      /* NULL where the provider asks nothing more */
};

/* The contract of a message endpoint (ofi_msg_mr.c). */
shm_status_t cdt_msg_contract_open(cdt_msg_ep_t *ep);
void cdt_msg_contract_close(cdt_msg_ep_t *ep);
/* A copy of hdr+pay for a send, in one piece (registered under FI_MR_LOCAL,
 * its descriptor in *desc_p), held by the op context *oc_p until the send
 * completes. */
shm_status_t cdt_msg_send_buf(cdt_msg_ep_t *ep, const void *hdr, size_t hdrlen, const void *pay,
                              size_t paylen, void *user, struct iovec *iov, void **desc_p,
                              void **oc_p);
/* A receive buffer's descriptor (registered once, kept until the close). */
void *cdt_msg_recv_desc(cdt_msg_ep_t *ep, void *buf, size_t len);
/* Context of a receive: held until the buffer is released (multi) or filled. */
void *cdt_msg_recv_opctx(cdt_msg_ep_t *ep, void *user, int multi);
/* FI_ASYNC_IOV: the 2-piece iov (and descriptors) of a send, kept in its
 * context op_context until it completes; *iov_p and *desc_p point there. */
void cdt_msg_keep_iov(cdt_msg_ep_t *ep, void *op_context, struct iovec **iov_p, void ***desc_p);
/* Whether a receive's context is a single (not multi-recv) buffer's. */
int cdt_msg_recv_single(cdt_msg_ep_t *ep, void *op_context);
/* The user context of a receive completion; released when the buffer is. */
void *cdt_msg_recv_user(cdt_msg_ep_t *ep, void *op_context, int released);
/* FI_MR_LOCAL: a bulk transfer's local buffer registered for its fragments
 * (each takes a reference through its context); *desc_p. */
shm_status_t cdt_msg_bulk_desc(cdt_msg_ep_t *ep, void *buf, size_t len, uint64_t access,
                               void **desc_p, void **reg_p);
/* Gives the fragments of a transfer their reference (before they are issued). */
void cdt_msg_bulk_ref(cdt_msg_ep_t *ep, void *reg, void *op_context);
/* The transfer's own reference, after its fragments took theirs. */
void cdt_msg_bulk_unref(cdt_msg_ep_t *ep, void *reg);
/* FI_AV_MAP: a peer index for an opaque fi_addr_t, and back. */
cdt_peer_t cdt_msg_av_index(cdt_msg_ep_t *ep, fi_addr_t fa);
fi_addr_t cdt_msg_av_addr(cdt_msg_ep_t *ep, cdt_peer_t peer);
shm_status_t cdt_msg_av_add(cdt_msg_ep_t *ep, fi_addr_t fa, cdt_peer_t *peer_p);
void cdt_msg_av_del(cdt_msg_ep_t *ep, cdt_peer_t peer);


/* The one place libfabric codes become status codes for the data services. */
shm_status_t cdt_msg_status(int fi_rc);

#endif /* SHM_CONDUIT_OFI_MSG_H */
