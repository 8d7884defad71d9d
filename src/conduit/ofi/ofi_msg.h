// SPDX-License-Identifier: BSD-3-Clause
/* Internal state of the conduit's data-service part (ofi_msg.c, ofi_bulk.c). */
#ifndef SHM_CONDUIT_OFI_MSG_H
#define SHM_CONDUIT_OFI_MSG_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

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
    char prov[64];
} cdt_msg_dom_t;

struct cdt_msg_ep {
    cdt_ctx_t ctx;               /* ep, counters and CQ the RMA engine works on */
    cdt_msg_dom_t *dom;
    struct fid_av *av;
    int has_source;              /* fi_cq_readfrom gives senders */
    int wait_fd;                 /* its CQ has an FI_WAIT_FD wait object */
    size_t inject_size;
    uint64_t rma_errs_seen;      /* error counts already turned into "done" */
    size_t bulk_iov_lim;         /* pieces one bulk RMA takes (0: not looked up yet; ofi_bulk.c) */
};

/* Fragment engine shared with PE RMA (ofi_rma.c); never ends the job. */
ssize_t cdt_ofi_rma_frags(cdt_ctx_t *ctx, int is_get, void *lbuf, uint64_t raddr, uint64_t key,
                          size_t bytes, fi_addr_t addr, void *opctx, int pe);

/* The one place libfabric codes become status codes for the data services. */
shm_status_t cdt_msg_status(int fi_rc);

#endif /* SHM_CONDUIT_OFI_MSG_H */
