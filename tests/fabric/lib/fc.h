// SPDX-License-Identifier: BSD-3-Clause
/*
 * fabcheck: a libfabric stand-in that wraps a real provider and presents it
 * under a named provider's contract (FABCHECK_PROFILE), enforcing that
 * contract on every call. Internal header shared by the library's files.
 *
 * Every fid handed to the application is ours (its ops tables are ours);
 * each holds the real provider's object underneath. All state is guarded
 * by one process-wide lock (fc_g.lock): the library is a test tool, and
 * one lock makes the ordering of our tables and the provider's calls
 * obvious. The real provider never calls back into us.
 */
#ifndef FABCHECK_FC_H
#define FABCHECK_FC_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define FC_EXPORT __attribute__((visibility("default")))

#ifndef container_of
#define container_of(ptr, type, field) ((type *)((char *)(ptr) - offsetof(type, field)))
#endif

/* ---- rules ----------------------------------------------------------- */

/* The fixed set of rule names a violation is logged under (README.md). */
#define FC_RULES(X)                                                            \
    X(MR_LOCAL)      /* a local buffer without a covering descriptor */        \
    X(MR_ENDPOINT)   /* MR not bound/enabled, or reached via another ep */     \
    X(VIRT_ADDR)     /* virtual address where an offset is due, or back */     \
    X(PROV_KEY)      /* requested key where the provider's is due, dup keys */ \
    X(MR_KEY)        /* a key the target never handed out */                   \
    X(MR_RANGE)      /* an access outside the registered range */              \
    X(MR_ACCESS)     /* an access the registration does not allow */           \
    X(MR_RAW)        /* raw keys used without fi_mr_raw_attr/fi_mr_map_raw */  \
    X(MR_ALLOCATED)  /* registering memory that is not mapped */               \
    X(CONTEXT)       /* FI_CONTEXT/FI_CONTEXT2 space missing or touched */     \
    X(ASYNC_IOV)     /* an IO vector changed before its operation completed */ \
    X(ATOMIC)        /* an atomic outside the profile's table */               \
    X(LIMIT)         /* inject/message/iov/queue limits */                     \
    X(AUTH_KEY)      /* missing or mismatched authorization keys */            \
    X(AV)            /* an fi_addr_t the AV did not hand out */                \
    X(EP_STATE)      /* data transfer on an endpoint not enabled */

enum fc_rule {
#define FC_RULE_ENUM(r) FC_RULE_##r,
    FC_RULES(FC_RULE_ENUM)
#undef FC_RULE_ENUM
    FC_NRULES
};

/* ---- profiles -------------------------------------------------------- */

/* Atomic table: per kind (plain, fetch, compare) and op, a bit per datatype. */
enum { FC_AMO_PLAIN = 0, FC_AMO_FETCH, FC_AMO_COMPARE, FC_AMO_NKINDS };

typedef struct {
    uint16_t dt[FC_AMO_NKINDS][FI_ATOMIC_OP_LAST];
    size_t max_bytes; /* operand bytes one call may carry; 0: one element */
} fc_amo_table_t;

enum fc_auth_kind { FC_AUTH_NONE = 0, FC_AUTH_PSM3_UUID, FC_AUTH_CXI_VNI, FC_AUTH_STRICT };

typedef struct fc_profile {
    const char *key;        /* FABCHECK_PROFILE value */
    const char *prov_name;  /* fabric_attr->prov_name presented */
    uint64_t caps;          /* capabilities offered */
    uint64_t mode;          /* mode bits required */
    int mode_msg_only;      /* psm3: mode only when FI_MSG/FI_TAGGED are asked */
    uint64_t mr_required;   /* mr_mode bits the app must admit */
    uint64_t mr_optional;   /* returned (and enforced) only when admitted */
    size_t mr_key_size, mr_iov_limit;
    size_t mr_key_size_prov; /* with FI_MR_PROV_KEY returned (cxi), else mr_key_size */
    size_t inject_size, max_msg_size;
    size_t tx_size, rx_size;
    size_t tx_iov_limit, rx_iov_limit, rma_iov_limit;
    uint64_t msg_order;
    int progress_manual, progress_auto; /* data progress models offered */
    enum fi_progress progress_default;
    int av_table, av_map;   /* AV types offered */
    enum fi_av_type av_default;
    enum fc_auth_kind auth;
    size_t auth_key_size;
    const fc_amo_table_t *amo;
    int ctx_all_ops;        /* strict: contexts of ops without completions too */
    int local_needs_enable; /* strict: FI_MR_ENDPOINT MRs enabled before local use */
} fc_profile_t;

const fc_profile_t *fc_profile_find(const char *key);
size_t fc_datatype_size(enum fi_datatype dt);
const char *fc_profile_names(void);

/* ---- global state ---------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    const fc_profile_t *prof;   /* NULL: pure pass-through */
    const char *underlying;     /* FABCHECK_PROVIDER */
    int abort_on_violation;
    int auth_required;          /* FABCHECK_AUTH_REQUIRED */
    FILE *logf;
    uint64_t eagain_n;          /* inject -FI_EAGAIN on 1 post in N (0: off) */
    uint64_t rng;
    unsigned long violations;
    char *prov_filter;          /* FI_PROVIDER as the app set it */
    /* the real libfabric */
    void *real;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    char *(*tostr)(const void *, enum fi_type);
    uint32_t (*version)(void);
    uint32_t next_id;
} fc_global_t;

extern fc_global_t fc_g;

/* Loads the real libfabric and reads FABCHECK_*; 0 or -FI_ENOSYS. */
int fc_init(void);

#define FC_LOCK() pthread_mutex_lock(&fc_g.lock)
#define FC_UNLOCK() pthread_mutex_unlock(&fc_g.lock)

/*
 * Logs one violation: "fabcheck[PROFILE pid]: RULE: what". Aborts when
 * FABCHECK_ABORT is on (the default), after removing the registry.
 */
void fc_violation(enum fc_rule rule, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A diagnostic that is not a contract violation (checker limits, setup). */
void fc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *fc_rule_name(enum fc_rule rule);
/* With FABCHECK_DEBUG, says which call answered which error; returns rc. */
ssize_t fc_post_rc(const char *what, ssize_t rc);
/* Nonzero when this post should fail with -FI_EAGAIN (FABCHECK_EAGAIN). */
int fc_eagain_now(void);
uint32_t fc_new_id(void);
char *fc_strdup(const char *s);

/* Safe probes of our own memory (no fault on an integer cast to a pointer). */
int fc_mem_write(void *dst, const void *src, size_t len);
int fc_mem_read(void *dst, const void *src, size_t len);

/* ---- objects --------------------------------------------------------- */

struct fc_ep;
struct fc_op;

typedef struct fc_fabric {
    struct fid_fabric fab;
    struct fid_fabric *real;
} fc_fabric_t;

typedef struct fc_rawmap {
    uint64_t local_key;   /* what fi_mr_map_raw returned */
    uint32_t pid;
    uint64_t nonce;
    uint32_t dom_id;
    uint64_t key;         /* the target's key */
    struct fc_rawmap *next;
} fc_rawmap_t;

typedef struct fc_domain {
    struct fid_domain dom;
    struct fid_domain *real;
    fc_fabric_t *fab;
    struct fi_info *real_info;  /* what the real domain was opened with */
    struct fi_info *info;       /* the app's info (a copy) */
    const fc_profile_t *prof;
    uint64_t mr_mode;           /* enforced */
    uint64_t mode;              /* enforced mode bits */
    uint64_t real_mr_mode;
    uint32_t id;
    uint8_t auth[16];
    size_t auth_len;
    uint64_t next_real_key;
    uint64_t next_prov_key;
    fc_rawmap_t *rawmaps;
    uint64_t next_map_key;
    int auto_progress;
    struct fc_domain *next_auto;
} fc_domain_t;

/* One peer an AV knows: its real address and what its name told us. */
typedef struct {
    int used;
    fi_addr_t real;
    fi_addr_t app;
    uint32_t pid;
    uint64_t nonce;
    uint32_t dom_id, ep_id;
    uint8_t auth[16];
    uint32_t auth_len;
    size_t namelen;
    uint8_t name[160];
} fc_peer_t;

typedef struct fc_av {
    struct fid_av av;
    struct fid_av *real;
    fc_domain_t *dom;
    enum fi_av_type type;
    fc_peer_t *peer;
    size_t npeer, cap;
    size_t *by_real;           /* real fi_addr_t (a table index) -> peer + 1 */
    size_t nby_real;
} fc_av_t;

/*
 * The name fi_getname hands out: this header, the endpoint's authorization
 * key (auth_len bytes), then the real provider's name. Peers learn from it
 * whose registry to read and which endpoint and domain their transfers
 * reach. Kept small: apps size name buffers for hardware names (ofishmem's
 * RPC layer: 64 bytes).
 */
#define FC_NAME_MAGIC 0x4d4e4346u /* "FCNM" */
typedef struct __attribute__((packed)) {
    uint32_t magic;
    uint16_t real_len;
    uint8_t hdr_len;   /* this header and the key */
    uint8_t auth_len;
    uint32_t pid, dom_id, ep_id;
    uint64_t nonce;
} fc_name_t;

/* An application-visible completion, kept in full; read out per format. */
typedef struct {
    struct fi_cq_tagged_entry e;
    fi_addr_t src;
    int is_err;
    struct fi_cq_err_entry err;
} fc_cqe_t;

typedef struct fc_cq {
    struct fid_cq cq;
    fc_domain_t *dom;
    enum fi_cq_format fmt;
    fc_cqe_t *q;
    size_t head, count, cap;
    struct fc_ep **eps;
    size_t neps, epcap;
    char errbuf[256];
} fc_cq_t;

typedef struct fc_cntr {
    struct fid_cntr cntr;
    struct fid_cntr *real;     /* remote events only */
    fc_domain_t *dom;
    uint64_t val, err;
    int can_wait;              /* opened with a wait object: fi_cntr_wait allowed */
    struct fc_ep **eps;
    size_t neps, epcap;
} fc_cntr_t;

typedef struct fc_mr {
    struct fid_mr mr;
    struct fid_mr *real;
    fc_domain_t *dom;
    struct fc_ep *ep;          /* FI_MR_ENDPOINT binding */
    int enabled;
    uint64_t access;
    uintptr_t base;
    size_t len;
    uint64_t req_key;
    uint64_t key;              /* the key peers must use */
    uint32_t slot;             /* registry slot */
    struct fc_mr *next;
} fc_mr_t;

typedef struct fc_ep {
    struct fid_ep ep;
    struct fid_ep *real;
    fc_domain_t *dom;
    struct fid_cq *pcq;        /* private real CQ: every real completion lands here */
    fc_av_t *av;
    fc_cq_t *tx_cq, *rx_cq;
    int tx_sel, rx_sel;        /* FI_SELECTIVE_COMPLETION on that binding */
    fc_cntr_t *c_send, *c_recv, *c_read, *c_write, *c_rread, *c_rwrite;
    uint64_t tx_op_flags, rx_op_flags;
    uint64_t caps;
    size_t tx_size, rx_size, inject_size, max_msg_size;
    size_t tx_iov_limit, rx_iov_limit, rma_iov_limit;
    int has_source;
    int enabled;
    uint32_t id;
    uint8_t auth[16];
    size_t auth_len;
    size_t tx_inflight, rx_inflight;
    size_t nbound_mrs;
    struct fc_op *ops;         /* in flight (doubly linked) */
    struct fc_ep *next_all;
} fc_ep_t;

/* ---- operations ------------------------------------------------------ */

enum fc_op_kind {
    FC_OP_WRITE = 1, FC_OP_READ, FC_OP_SEND, FC_OP_RECV, FC_OP_TSEND, FC_OP_TRECV,
    FC_OP_ATOMIC, FC_OP_FETCH, FC_OP_CSWAP,
};

#define FC_MAX_SNAP 6

/*
 * One operation in flight. The real provider gets &op->real_ctx as its
 * context (it may own that space: we admit FI_CONTEXT/FI_CONTEXT2 below).
 */
typedef struct fc_op {
    struct fi_context2 real_ctx;
    uint32_t magic;
    enum fc_op_kind kind;
    fc_ep_t *ep;
    void *app_ctx;
    uint64_t cq_flags;      /* flags of the app's completion entry */
    int report;             /* a success entry is due to the app */
    int is_tx;
    int multi;              /* FI_MULTI_RECV buffer: done at its release */
    size_t len;
    void *buf;
    uint64_t data, tag;
    size_t ctx_size;        /* scribbled context bytes (0: none) */
    uint64_t seq;
    int nsnap;
    struct { const void *ptr; size_t len; void *copy; } snap[FC_MAX_SNAP];
    void *bounce;           /* the inject copies */
    char what[128];         /* for messages at completion */
    struct fc_op *prev, *next;
    struct fc_op *hnext;    /* in-flight context table */
} fc_op_t;

#define FC_OP_MAGIC 0xfab0c0deu

extern fc_ep_t *fc_eps_g; /* every endpoint (auto progress walks them) */

/* fc_op.c */
fc_op_t *fc_op_new(fc_ep_t *ep, enum fc_op_kind kind, int is_tx);
void fc_op_free(fc_op_t *op);
/* Checks and scribbles the app's context; -FI_EINVAL when it cannot be used. */
int fc_op_ctx_begin(fc_op_t *op, void *ctx, int generates_completion);
void fc_op_snap(fc_op_t *op, const void *ptr, size_t count, size_t elem);
void fc_op_done(fc_op_t *op, const struct fi_cq_tagged_entry *e, fi_addr_t src);
void fc_op_fail(fc_op_t *op, int err, int prov_errno, size_t olen);
/* Fails an op that never reached the provider: the error shows on the CQ. */
void fc_op_fail_now(fc_op_t *op, int err);
void fc_ep_progress(fc_ep_t *ep);
void fc_progress_all_of(struct fc_ep **eps, size_t n);
void fc_auto_progress_start(fc_domain_t *dom);
void fc_auto_progress_stop(fc_domain_t *dom);
int fc_cq_push(fc_cq_t *cq, const fc_cqe_t *e);
#define FC_PROV_ERRNO 0x0fab0000 /* prov_errno of the checker's own error entries */

/* fc_getinfo.c */
int fc_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info);
int fc_is_profile_name(const char *prov_name);
/* The real info a presented one stands for (a fresh list; caller frees). */
int fc_real_info_for(const struct fi_info *app, struct fi_info **real);

/* fc_fabric.c: fabric, domain, AV */
int fc_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
fc_peer_t *fc_av_peer(fc_av_t *av, fi_addr_t addr, const char *what);
fi_addr_t fc_av_app_addr(fc_av_t *av, fi_addr_t real);
int fc_domain_auth(fc_domain_t *dom, const struct fi_info *info, uint8_t *auth, size_t *len,
                   const char *what);

/* fc_registry.c: the per-process table of MRs peers check against */
#define FC_REG_FREE 0
#define FC_REG_REGISTERED 1
#define FC_REG_ENABLED 2
typedef struct {
    uint32_t state;
    uint32_t dom_id;
    uint32_t ep_id;       /* FI_MR_ENDPOINT binding (0: none) */
    uint32_t pad;
    uint64_t key;         /* the key peers use */
    uint64_t req_key;
    uint64_t base, len;
    uint64_t access;
    uint64_t real_key;
    uint64_t real_base;   /* what the real provider adds offsets to */
} fc_regent_t;

int fc_reg_open(void);
uint64_t fc_reg_nonce(void);
uint32_t fc_reg_pid(void);
/* Adds an entry; returns its slot or -1 (table full). */
int fc_reg_add(const fc_regent_t *e);
void fc_reg_update(uint32_t slot, const fc_regent_t *e);
void fc_reg_remove(uint32_t slot);
int fc_reg_key_used(uint32_t dom_id, uint64_t key);
/*
 * Looks up (dom_id, key) in process pid's table; 0 and *out, -FI_ENOENT
 * (no such key), or -FI_EHOSTDOWN (that process has no table: gone).
 * With by_req, looks up an entry whose requested key is key.
 */
int fc_reg_lookup(uint32_t pid, uint64_t nonce, uint32_t dom_id, uint64_t key, int by_req,
                  fc_regent_t *out);
void fc_reg_sweep(void);

/* fc_mr.c */
extern struct fi_ops_mr fc_mr_ops;
int fc_domain_mr_control(fc_domain_t *dom, int command, void *arg);
/* Checks one local buffer against its descriptor (MR_LOCAL rules). */
int fc_local_check(fc_ep_t *ep, const void *buf, size_t len, void *desc, uint64_t need,
                   const char *what);

/* fc_ep.c */
int fc_endpoint_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
                     void *context);
fc_ep_t *fc_ep_of(struct fid *fid);
/*
 * The remote side of an RMA or atomic: checks the peer's registration of
 * (addr, len, key) for access need and translates to the real provider's
 * address and key. 0, or an FI_E* (positive) to fail the op with.
 */
int fc_remote(fc_ep_t *ep, fi_addr_t dest, uint64_t addr, size_t len, uint64_t key, uint64_t need,
              const char *what, fi_addr_t *real_dest, uint64_t *real_addr, uint64_t *real_key);
int fc_ep_can_post(fc_ep_t *ep, int is_tx, const char *what);
/* The AV entry of a destination, with its authorization key checked:
 * NULL with *rc < 0 (bad address: fail the post) or > 0 (fail the op). */
fc_peer_t *fc_ep_peer(fc_ep_t *ep, fi_addr_t dest, const char *what, int *rc);
/* Copies an inject's data so the app may reuse its buffers at once. */
int fc_bounce(fc_op_t *op, const struct iovec *iov, size_t count, struct iovec *out);

/* fc_data.c, fc_atomic.c */
extern struct fi_ops_rma fc_rma_ops;
extern struct fi_ops_msg fc_msg_ops;
extern struct fi_ops_tagged fc_tagged_ops;
extern struct fi_ops_atomic fc_atomic_ops;
int fc_query_atomic(fc_domain_t *dom, enum fi_datatype dt, enum fi_op op,
                    struct fi_atomic_attr *attr, uint64_t flags);

/* fc_cq.c */
int fc_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
               void *context);
int fc_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
                 void *context);
void fc_cq_attach(fc_cq_t *cq, fc_ep_t *ep);
void fc_cntr_attach(fc_cntr_t *c, fc_ep_t *ep);
void fc_cq_detach(fc_cq_t *cq, fc_ep_t *ep);
void fc_cntr_detach(fc_cntr_t *c, fc_ep_t *ep);
fc_cq_t *fc_cq_of(struct fid *fid);
fc_cntr_t *fc_cntr_of(struct fid *fid);

/* Common enosys-style stubs for ops tables. */
int fc_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int fc_no_control(struct fid *fid, int command, void *arg);
int fc_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context);

#endif /* FABCHECK_FC_H */
