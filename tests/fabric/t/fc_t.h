// SPDX-License-Identifier: BSD-3-Clause
/*
 * Helpers of fabcheck's own tests: two processes (an origin and a target,
 * forked, talking over a socketpair) set up raw libfabric objects the way a
 * correct program does under any contract: every mode and mr_mode bit
 * admitted and honoured as the chosen provider's info says.
 */
#ifndef FC_T_H
#define FC_T_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define T_NCTX 512

typedef struct {
    int sock;                 /* to the other process */
    int role;                 /* 0 origin, 1 target */
    struct fi_info *info;     /* the entry in use */
    struct fid_fabric *fab;
    struct fid_domain *dom;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *wcntr, *rcntr;
    struct fid_ep *ep;
    uint64_t mr_mode, mode;
    fi_addr_t peer;
    /* this process's registered window */
    char *buf;
    size_t len;
    struct fid_mr *mr;
    void *desc;
    uint64_t req_key;
    /* the peer's window, as a correct program addresses it */
    uint64_t rbase;           /* add offsets to this */
    uint64_t rkey;            /* usable key (mapped where FI_MR_RAW) */
    uint64_t rvaddr;          /* the peer's virtual address (for wrong programs) */
    uint64_t rreq_key;        /* the key the peer requested (for wrong programs) */
    uint8_t rraw[64];
    size_t rrawlen;
    size_t rlen;
    /* contexts: FI_CONTEXT2 space, one per operation */
    struct fi_context2 ctx[T_NCTX];
    unsigned nctx;
    int ctx_again;            /* the last post answered -FI_EAGAIN: same context again */
    unsigned long eagains;
    uint8_t auth[16];
    size_t auth_len;
} t_ctx_t;

typedef struct {
    int no_enable;            /* leave the endpoint disabled */
    int selective;            /* bind the CQ with FI_SELECTIVE_COMPLETION */
    int no_auth;              /* give no authorization key */
    uint8_t auth_byte;        /* the key's bytes (0: 0x42) */
} t_opts_t;

extern const char *t_prog;

/* Fatal test errors name the process and the call. */
#define T_CHECK(call)                                                          \
    do {                                                                       \
        int rc_ = (int)(call);                                                 \
        if (rc_ != 0) {                                                        \
            fprintf(stderr, "%s[%s]: %s:%d: %s: %s\n", t_prog,                 \
                    t_role_name(), __FILE__, __LINE__, #call, fi_strerror(-rc_)); \
            t_die();                                                           \
        }                                                                      \
    } while (0)

const char *t_role_name(void);
void t_die(void) __attribute__((noreturn));

/* The hints of a correct program: everything admitted. */
struct fi_info *t_hints(void);
/* Picks the first entry (the profile's, under one) and opens everything. */
int t_open(t_ctx_t *t, const t_opts_t *o);
void t_close(t_ctx_t *t);
/* Registers t->buf (len bytes) for access, bound and enabled as needed. */
int t_reg(t_ctx_t *t, size_t len, uint64_t access, int enable);
struct fid_mr *t_reg_buf(t_ctx_t *t, void *buf, size_t len, uint64_t access, int enable);
/* Swaps names and windows with the peer; inserts the peer into the AV. */
int t_exchange(t_ctx_t *t);
/* The next context of this process (never reused within a test). */
void *t_ctx(t_ctx_t *t);
/* Drives progress once. */
void t_progress(t_ctx_t *t);
/* Waits for one completion: 0, or the error (positive FI_E*). -1: none in 10 s. */
int t_wait(t_ctx_t *t);
/* Target side: serves until the origin says done. */
void t_serve(t_ctx_t *t);
void t_done(t_ctx_t *t);

/* Socket messages. */
void t_send(t_ctx_t *t, const void *p, size_t n);
void t_recv(t_ctx_t *t, void *p, size_t n);
/* t_recv, driving progress meanwhile (manual progress: an injected send may
 * only leave in a progress call, as with sockets). */
void t_recv_progress(t_ctx_t *t, void *p, size_t n);

/* Retries a post while it answers -FI_EAGAIN, with progress between. */
#define T_POST(t, call)                                                        \
    ({                                                                         \
        ssize_t r_;                                                            \
        while ((r_ = (call)) == -FI_EAGAIN) {                                  \
            (t)->eagains++;                                                    \
            (t)->ctx_again = 1;                                                \
            t_progress(t);                                                     \
        }                                                                      \
        (t)->ctx_again = 0;                                                    \
        r_;                                                                    \
    })

#endif /* FC_T_H */
