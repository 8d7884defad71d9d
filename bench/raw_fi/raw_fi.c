/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * raw_fi: the libfabric yardstick for ofishmem.
 *
 * Two processes on this host do the transfers the library does, straight on
 * libfabric and opened the way the library opens it (RDM, RMA+atomics,
 * FI_MR_VIRT_ADDR asked for, requested keys, no ordering, manual progress,
 * FI_AV_TABLE, put/get counters, one CQ with selective completion for
 * errors). Completion is counted, as in the library: issue, then poll
 * fi_cntr_read until the counter reaches the issued count (fi_cntr_wait
 * ignores its timeout on shm and is broken on sockets).
 *
 * Bootstrap without PMIx: the program forks BEFORE any libfabric call; the
 * parent is rank 0 (active), the child rank 1 (passive). They swap endpoint
 * names, MR keys and base addresses over a socketpair. The passive side
 * drives progress (tcp;ofi_rxm needs the target for reads and atomics, shm
 * for atomics) until the active side raises a flag in shared memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "harness.h"

#define RFI_WINDOW BENCH_WINDOW
#define RFI_KEY 0x0f15u      /* requested MR key; one MR per domain */
#define RFI_NAME_MAX 256
#define RFI_PATTERN_SEED 1u

/* X-macro: test id, name, metric, column title. */
#define RFI_TESTS(X)                                                   \
    X(PUT_LAT, "put_lat", "lat_us", "Latency (us)")                    \
    X(GET_LAT, "get_lat", "lat_us", "Latency (us)")                    \
    X(PUT_BW, "put_bw", "bw_MBps", "Bandwidth (MB/s)")                 \
    X(GET_BW, "get_bw", "bw_MBps", "Bandwidth (MB/s)")                 \
    X(MSG_RATE, "msg_rate", "rate_ops", "Messages/s")                  \
    X(FADD_LAT, "fadd_lat", "lat_us", "Latency (us)")                  \
    X(ADD_LAT, "add_lat", "lat_us", "Latency (us)")                    \
    X(ORDER, "order", "late_rounds", "Rounds with a put not landed")

#define RFI_ENUM(id, name, metric, col) RFI_##id,
typedef enum { RFI_TESTS(RFI_ENUM) RFI_NTESTS } rfi_test_t;
#undef RFI_ENUM

static const struct {
    const char *name, *metric, *col;
} rfi_tests[] = {
#define RFI_ROW(id, name, metric, col) {name, metric, col},
    RFI_TESTS(RFI_ROW)
#undef RFI_ROW
};

typedef struct rfi_opts {
    const char *prov;
    double timeout_s;
    int dc;   /* puts with FI_DELIVERY_COMPLETE (fi_writemsg) */
    int flush; /* put completion also waits for an 8-byte read from the
                * peer: 1 plain fi_read, 2 fi_readmsg with FI_FENCE */
    int bufs; /* bandwidth tests rotate over this many buffers per side */
} rfi_opts_t;

/* Lives in a MAP_SHARED page created before fork. */
typedef struct rfi_shared {
    atomic_int stop;
    /* order test: the active side raises round after its puts completed;
     * the passive side checks its slots, counts a late round, answers. */
    atomic_long round, checked, late;
} rfi_shared_t;

#define RFI_ORDER_SLOTS 32

/* What each side tells the other at startup. */
typedef struct rfi_wire {
    uint64_t key;
    uint64_t base; /* virtual base, or 0 when the provider wants offsets */
    uint64_t len;
    uint32_t virt;
    uint32_t namelen;
    uint8_t name[RFI_NAME_MAX];
} rfi_wire_t;

/* Sent by the active side at the end; answered with one status int. */
typedef struct rfi_done {
    int32_t status;
    int32_t check_amo;
    int64_t amo_expect;
} rfi_done_t;

typedef struct rfi {
    int rank;
    const rfi_opts_t *opt;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *put_cntr, *get_cntr;
    struct fid_ep *ep;
    struct fid_mr *mr;
    void *desc;
    char *buf;            /* registered: data [0, data_len), then amo word */
    size_t buf_len, data_len;
    size_t slot_len;      /* data holds opt->bufs slots of slot_len bytes */
    fi_addr_t addr[2];
    fi_addr_t peer;
    uint64_t rkey, rbase; /* remote address = rbase + offset */
    int virt;
    size_t inject_size;
    uint64_t put_issued, get_issued;
    uint64_t put_errs, get_errs;
} rfi_t;

static volatile sig_atomic_t child_exited_g;
static double timeout_us_g = 60e6;

/* ---------------------------------------------------------------- errors */

#define RFI_ERR(rank, what, rc)                                              \
    fprintf(stderr, "raw_fi[%d] %s:%d: %s failed: %zd (%s)\n", (rank),      \
            __FILE__, __LINE__, (what), (ssize_t)(rc),                       \
            fi_strerror((int)-(rc)))

/* Evaluate a libfabric call; on a negative return, print and jump. */
#define RFI_CHECK(r, call, label)                                            \
    do {                                                                     \
        ssize_t rc_ = (call);                                                \
        if (rc_ < 0) {                                                       \
            RFI_ERR((r)->rank, #call, rc_);                                  \
            goto label;                                                      \
        }                                                                    \
    } while (0)

static void rfi_drain_cq_errors(rfi_t *r)
{
    struct fi_cq_err_entry e;
    char pbuf[256];
    for (int i = 0; i < 16; i++) {
        memset(&e, 0, sizeof(e));
        ssize_t n = fi_cq_readerr(r->cq, &e, 0);
        if (n == -FI_EAGAIN || n == 0)
            return;
        if (n < 0) {
            RFI_ERR(r->rank, "fi_cq_readerr", n);
            return;
        }
        const char *pe = fi_cq_strerror(r->cq, e.prov_errno, e.err_data,
                                        pbuf, sizeof(pbuf));
        fprintf(stderr,
                "raw_fi[%d] completion error: err=%d (%s) prov_errno=%d (%s) "
                "flags=0x%llx len=%zu\n",
                r->rank, e.err, fi_strerror(e.err), e.prov_errno,
                pe ? pe : "?", (unsigned long long)e.flags, e.len);
    }
}

/* One pass of progress. Returns 0, or -1 after reporting an error. */
static inline int rfi_progress(rfi_t *r)
{
    struct fi_cq_data_entry e;
    ssize_t n = fi_cq_read(r->cq, &e, 1);
    if (n == -FI_EAGAIN || n == 0)
        return 0;
    if (n == -FI_EAVAIL) {
        rfi_drain_cq_errors(r);
        return -1;
    }
    if (n < 0) {
        RFI_ERR(r->rank, "fi_cq_read", n);
        return -1;
    }
    return 0; /* a completion we did not ask for; harmless */
}

/* Spin watchdog: peer death and a wall-clock limit, checked cheaply. */
typedef struct rfi_wd {
    uint64_t spins;
    double t0;
} rfi_wd_t;

static inline int rfi_wd_tick(rfi_t *r, rfi_wd_t *w, const char *what)
{
    if (child_exited_g) {
        fprintf(stderr, "raw_fi[%d]: peer process exited while %s\n", r->rank,
                what);
        return -1;
    }
    if ((++w->spins & 0xffff) == 0) {
        double now = bench_now_us();
        if (w->t0 == 0)
            w->t0 = now;
        else if (now - w->t0 > timeout_us_g) {
            fprintf(stderr, "raw_fi[%d]: timed out after %.0f s while %s\n",
                    r->rank, timeout_us_g / 1e6, what);
            return -1;
        }
    }
    return 0;
}

/* Retry a post while the provider says -FI_EAGAIN, driving progress. */
#define RFI_POST(r, rc, call, what)                                          \
    do {                                                                     \
        rfi_wd_t wd_ = {0};                                                  \
        while (((rc) = (call)) == -FI_EAGAIN) {                              \
            if (rfi_progress(r) || rfi_wd_tick((r), &wd_, what)) {           \
                (rc) = -FI_EOTHER;                                           \
                break;                                                       \
            }                                                                \
        }                                                                    \
        if ((rc) < 0 && (rc) != -FI_EOTHER)                                  \
            RFI_ERR((r)->rank, what, rc);                                    \
    } while (0)

/* Wait until the counter reaches target; errors come from the err count. */
static int rfi_wait_cntr(rfi_t *r, struct fid_cntr *c, uint64_t target,
                         uint64_t *errs, const char *what)
{
    rfi_wd_t wd = {0};
    for (;;) {
        if (fi_cntr_read(c) >= target)
            return 0;
        uint64_t e = fi_cntr_readerr(c);
        if (e != *errs) {
            fprintf(stderr, "raw_fi[%d]: %llu error(s) on the %s counter\n",
                    r->rank, (unsigned long long)(e - *errs), what);
            *errs = e;
            rfi_drain_cq_errors(r);
            return -1;
        }
        if (rfi_wd_tick(r, &wd, what))
            return -1;
    }
}

/* --flush: an 8-byte read from the peer (the word after the atomic one). */
static inline int rfi_flush_read(rfi_t *r)
{
    ssize_t rc;
    char *sink = r->buf + r->data_len + 8;
    uint64_t raddr = r->rbase + r->data_len + 8;
    if (r->opt->flush == 2) {
        struct iovec iov = {.iov_base = sink, .iov_len = 8};
        struct fi_rma_iov riov = {.addr = raddr, .len = 8, .key = r->rkey};
        struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &r->desc,
                                 .iov_count = 1, .addr = r->peer,
                                 .rma_iov = &riov, .rma_iov_count = 1};
        RFI_POST(r, rc, fi_readmsg(r->ep, &msg, FI_FENCE), "fi_readmsg(FI_FENCE)");
    } else {
        RFI_POST(r, rc, fi_read(r->ep, sink, 8, r->desc, r->peer, raddr, r->rkey, NULL),
                 "fi_read");
    }
    if (rc < 0)
        return -1;
    r->get_issued++;
    return 0;
}

static inline int rfi_quiet_put(rfi_t *r)
{
    if (r->opt->flush && rfi_flush_read(r))
        return -1;
    if (rfi_wait_cntr(r, r->put_cntr, r->put_issued, &r->put_errs, "put"))
        return -1;
    return r->opt->flush ? rfi_wait_cntr(r, r->get_cntr, r->get_issued, &r->get_errs,
                                         "get (flush)")
                         : 0;
}

static inline int rfi_quiet_get(rfi_t *r)
{
    return rfi_wait_cntr(r, r->get_cntr, r->get_issued, &r->get_errs,
                         "get");
}

/* ------------------------------------------------------------ operations */

/* Byte offset of the op'th transfer's buffer, the same on both sides. */
static inline size_t rfi_slot(const rfi_t *r, long op)
{
    return (size_t)(op % r->opt->bufs) * r->slot_len;
}

static inline int rfi_put(rfi_t *r, size_t size, size_t off)
{
    ssize_t rc;
    uint64_t raddr = r->rbase + off;
    char *lbuf = r->buf + off;

    if (r->opt->dc) {
        /* FI_DELIVERY_COMPLETE is not honoured by fi_inject_write, so the
         * delivery-complete variant always goes through fi_writemsg. */
        struct iovec iov = {.iov_base = lbuf, .iov_len = size};
        struct fi_rma_iov riov = {.addr = raddr, .len = size, .key = r->rkey};
        struct fi_msg_rma msg = {.msg_iov = &iov, .desc = &r->desc,
                                 .iov_count = 1, .addr = r->peer,
                                 .rma_iov = &riov, .rma_iov_count = 1};
        uint64_t flags = FI_DELIVERY_COMPLETE |
                         (size <= r->inject_size ? FI_INJECT : 0);
        RFI_POST(r, rc, fi_writemsg(r->ep, &msg, flags), "fi_writemsg");
    } else if (size <= r->inject_size) {
        RFI_POST(r, rc,
                 fi_inject_write(r->ep, lbuf, size, r->peer, raddr, r->rkey),
                 "fi_inject_write");
    } else {
        RFI_POST(r, rc,
                 fi_write(r->ep, lbuf, size, r->desc, r->peer, raddr,
                          r->rkey, NULL),
                 "fi_write");
    }
    if (rc < 0)
        return -1;
    r->put_issued++;
    return 0;
}

static inline int rfi_get(rfi_t *r, size_t size, size_t off)
{
    ssize_t rc;
    RFI_POST(r, rc,
             fi_read(r->ep, r->buf + off, size, r->desc, r->peer,
                     r->rbase + off, r->rkey, NULL),
             "fi_read");
    if (rc < 0)
        return -1;
    r->get_issued++;
    return 0;
}

static inline int rfi_fadd(rfi_t *r, int64_t *operand, int64_t *result)
{
    ssize_t rc;
    RFI_POST(r, rc,
             fi_fetch_atomic(r->ep, operand, 1, NULL, result, NULL, r->peer,
                             r->rbase + r->data_len, r->rkey, FI_INT64,
                             FI_SUM, NULL),
             "fi_fetch_atomic");
    if (rc < 0)
        return -1;
    r->get_issued++;
    return 0;
}

static inline int rfi_add(rfi_t *r, int64_t *operand)
{
    ssize_t rc;
    struct fi_ioc ioc = {.addr = operand, .count = 1};
    struct fi_rma_ioc rioc = {.addr = r->rbase + r->data_len, .count = 1,
                              .key = r->rkey};
    struct fi_msg_atomic msg = {.msg_iov = &ioc, .iov_count = 1,
                                .addr = r->peer, .rma_iov = &rioc,
                                .rma_iov_count = 1, .datatype = FI_INT64,
                                .op = FI_SUM};
    RFI_POST(r, rc, fi_atomicmsg(r->ep, &msg, FI_DELIVERY_COMPLETE),
             "fi_atomicmsg");
    if (rc < 0)
        return -1;
    r->put_issued++;
    return 0;
}

/* ----------------------------------------------------------- setup/close */

static void rfi_close(rfi_t *r)
{
#define RFI_CLOSE(f)                                                         \
    do {                                                                     \
        if (f) {                                                             \
            int rc_ = fi_close(&(f)->fid);                                   \
            if (rc_)                                                         \
                RFI_ERR(r->rank, "fi_close(" #f ")", rc_);                   \
            (f) = NULL;                                                      \
        }                                                                    \
    } while (0)
    RFI_CLOSE(r->ep);
    RFI_CLOSE(r->mr);
    RFI_CLOSE(r->put_cntr);
    RFI_CLOSE(r->get_cntr);
    RFI_CLOSE(r->cq);
    RFI_CLOSE(r->av);
    RFI_CLOSE(r->domain);
    RFI_CLOSE(r->fabric);
#undef RFI_CLOSE
    if (r->info) {
        fi_freeinfo(r->info);
        r->info = NULL;
    }
    if (r->buf) {
        munmap(r->buf, r->buf_len);
        r->buf = NULL;
    }
}

static int rfi_open(rfi_t *r, size_t max_size)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints) {
        fprintf(stderr, "raw_fi[%d]: fi_allocinfo failed\n", r->rank);
        return -1;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
                  FI_REMOTE_WRITE;
    hints->mode = 0;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->av_type = FI_AV_TABLE;
    hints->tx_attr->msg_order = 0;
    hints->rx_attr->msg_order = 0;
    hints->fabric_attr->prov_name = strdup(r->opt->prov);

    int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL,
                        NULL, 0, hints, &r->info);
    fi_freeinfo(hints);
    if (rc) {
        RFI_ERR(r->rank, "fi_getinfo", rc);
        fprintf(stderr, "raw_fi[%d]: no provider '%s' offers RDM RMA+atomics "
                        "with these hints\n", r->rank, r->opt->prov);
        return -1;
    }
    struct fi_info *fi = r->info;
    r->virt = !!(fi->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    r->inject_size = fi->tx_attr->inject_size;

    RFI_CHECK(r, fi_fabric(fi->fabric_attr, &r->fabric, NULL), fail);
    RFI_CHECK(r, fi_domain(r->fabric, fi, &r->domain, NULL), fail);

    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = 2};
    RFI_CHECK(r, fi_av_open(r->domain, &av_attr, &r->av, NULL), fail);

    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA,
                                 .wait_obj = FI_WAIT_NONE};
    RFI_CHECK(r, fi_cq_open(r->domain, &cq_attr, &r->cq, NULL), fail);

    struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP,
                                     .wait_obj = FI_WAIT_NONE};
    RFI_CHECK(r, fi_cntr_open(r->domain, &cntr_attr, &r->put_cntr, NULL),
              fail);
    RFI_CHECK(r, fi_cntr_open(r->domain, &cntr_attr, &r->get_cntr, NULL),
              fail);

    RFI_CHECK(r, fi_endpoint(r->domain, fi, &r->ep, NULL), fail);
    RFI_CHECK(r, fi_ep_bind(r->ep, &r->av->fid, 0), fail);
    RFI_CHECK(r, fi_ep_bind(r->ep, &r->cq->fid,
                            FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION),
              fail);
    RFI_CHECK(r, fi_ep_bind(r->ep, &r->put_cntr->fid, FI_WRITE), fail);
    RFI_CHECK(r, fi_ep_bind(r->ep, &r->get_cntr->fid, FI_READ), fail);
    RFI_CHECK(r, fi_enable(r->ep), fail);

    /* Data region plus one page holding the atomic word. */
    long page = sysconf(_SC_PAGESIZE);
    r->slot_len = (max_size + (size_t)page - 1) & ~((size_t)page - 1);
    if (r->slot_len == 0)
        r->slot_len = (size_t)page;
    r->data_len = r->slot_len * (size_t)r->opt->bufs;
    r->buf_len = r->data_len + (size_t)page;
    r->buf = mmap(NULL, r->buf_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r->buf == MAP_FAILED) {
        r->buf = NULL;
        perror("raw_fi: mmap");
        goto fail;
    }
    memset(r->buf, 0, r->buf_len); /* first touch outside the timing */

    RFI_CHECK(r, fi_mr_reg(r->domain, r->buf, r->buf_len,
                           FI_READ | FI_WRITE | FI_REMOTE_READ |
                               FI_REMOTE_WRITE,
                           0, RFI_KEY, 0, &r->mr, NULL),
              fail);
    if (fi->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        RFI_CHECK(r, fi_mr_bind(r->mr, &r->ep->fid, 0), fail);
        RFI_CHECK(r, fi_mr_enable(r->mr), fail);
    }
    r->desc = fi_mr_desc(r->mr);
    return 0;
fail:
    rfi_close(r);
    return -1;
}

/* ------------------------------------------------------- socket bootstrap */

static ssize_t write_nosig(int fd, const void *p, size_t len)
{
    return send(fd, p, len, MSG_NOSIGNAL);
}

static int sock_xfer(int fd, void *buf, size_t len, int send, int rank)
{
    char *p = buf;
    while (len) {
        struct pollfd pfd = {.fd = fd, .events = send ? POLLOUT : POLLIN};
        int pr = poll(&pfd, 1, (int)(timeout_us_g / 1e3));
        if (pr == 0) {
            fprintf(stderr, "raw_fi[%d]: bootstrap socket timed out\n", rank);
            return -1;
        }
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            perror("raw_fi: poll");
            return -1;
        }
        /* MSG_NOSIGNAL: a dead peer is an error to report, not a SIGPIPE. */
        ssize_t n = send ? write_nosig(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "raw_fi[%d]: bootstrap socket %s (peer gone?)\n",
                    rank, n == 0 ? "closed" : strerror(errno));
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int rfi_exchange(rfi_t *r, int fd)
{
    rfi_wire_t mine = {0}, peer = {0};
    size_t namelen = sizeof(mine.name);

    RFI_CHECK(r, fi_getname(&r->ep->fid, mine.name, &namelen), fail);
    mine.namelen = (uint32_t)namelen;
    mine.key = fi_mr_key(r->mr);
    if (mine.key == FI_KEY_NOTAVAIL) {
        fprintf(stderr, "raw_fi[%d]: fi_mr_key: no key\n", r->rank);
        return -1;
    }
    mine.virt = (uint32_t)r->virt;
    mine.base = r->virt ? (uint64_t)(uintptr_t)r->buf : 0;
    mine.len = r->buf_len;

    if (sock_xfer(fd, &mine, sizeof(mine), 1, r->rank) ||
        sock_xfer(fd, &peer, sizeof(peer), 0, r->rank))
        return -1;
    if (peer.virt != mine.virt || peer.len != mine.len) {
        fprintf(stderr, "raw_fi[%d]: peers disagree (virt %u/%u, len %llu/"
                        "%llu)\n", r->rank, mine.virt, peer.virt,
                (unsigned long long)mine.len, (unsigned long long)peer.len);
        return -1;
    }

    /* Rank order, one at a time: names need not have the same length. */
    const rfi_wire_t *w[2] = {r->rank == 0 ? &mine : &peer,
                              r->rank == 0 ? &peer : &mine};
    for (int i = 0; i < 2; i++) {
        int n = fi_av_insert(r->av, w[i]->name, 1, &r->addr[i], 0, NULL);
        if (n != 1) {
            RFI_ERR(r->rank, "fi_av_insert", n < 0 ? n : -FI_EOTHER);
            return -1;
        }
    }
    r->peer = r->addr[1 - r->rank];
    r->rkey = peer.key;
    r->rbase = peer.base;
    return 0;
fail:
    return -1;
}

static int sync_byte(int fd, int rank)
{
    char c = 'x';
    return sock_xfer(fd, &c, 1, 1, rank) || sock_xfer(fd, &c, 1, 0, rank);
}

/* ----------------------------------------------------------------- tests */

static rfi_shared_t *shared_g;

/*
 * The ordering probe: RFI_ORDER_SLOTS puts of 8 bytes (round number) to
 * consecutive words, then put completion (counter; with --flush a read
 * behind them), then the round number in shared memory. The passive side,
 * polling progress and that word, checks its slots as soon as it sees the
 * round: a slot still old means a put was counted complete before it
 * landed. Without --flush on tcp;ofi_rxm this is expected to count rounds
 * (the probe can see the fault); with it, zero if the read is ordered.
 */
static int run_order(rfi_t *r, long n)
{
    uint64_t *src = (uint64_t *)r->buf;
    for (long i = 0; i < n; i++) {
        long round = atomic_load_explicit(&shared_g->round, memory_order_relaxed) + 1;
        for (int j = 0; j < RFI_ORDER_SLOTS; j++) {
            src[j] = (uint64_t)round;
            if (rfi_put(r, 8, (size_t)j * 8))
                return -1;
        }
        if (rfi_quiet_put(r))
            return -1;
        atomic_store_explicit(&shared_g->round, round, memory_order_release);
        rfi_wd_t wd = {0};
        while (atomic_load_explicit(&shared_g->checked, memory_order_acquire) != round)
            if (rfi_wd_tick(r, &wd, "waiting for the order check"))
                return -1;
            else
                sched_yield(); /* the checker needs the core */
    }
    return 0;
}

/* Passive side of run_order: check the slots of a newly raised round. */
static void order_check(rfi_t *r, rfi_shared_t *sh)
{
    long round = atomic_load_explicit(&sh->round, memory_order_acquire);
    if (round == atomic_load_explicit(&sh->checked, memory_order_relaxed))
        return;
    const volatile uint64_t *slot = (const volatile uint64_t *)r->buf;
    for (int j = 0; j < RFI_ORDER_SLOTS; j++)
        if (slot[j] != (uint64_t)round) {
            atomic_fetch_add_explicit(&sh->late, 1, memory_order_relaxed);
            break;
        }
    atomic_store_explicit(&sh->checked, round, memory_order_release);
}

static int run_once(rfi_t *r, rfi_test_t t, size_t size, long n,
                    int64_t *amo_total)
{
    int64_t one = 1, result = 0;

    switch (t) {
    case RFI_PUT_LAT:
        for (long i = 0; i < n; i++)
            if (rfi_put(r, size, 0) || rfi_quiet_put(r))
                return -1;
        return 0;
    case RFI_GET_LAT:
        for (long i = 0; i < n; i++)
            if (rfi_get(r, size, 0) || rfi_quiet_get(r))
                return -1;
        return 0;
    case RFI_PUT_BW:
    case RFI_MSG_RATE:
        for (long i = 0; i < n; i++) {
            for (int j = 0; j < RFI_WINDOW; j++)
                if (rfi_put(r, size, rfi_slot(r, i * RFI_WINDOW + j)))
                    return -1;
            if (rfi_quiet_put(r))
                return -1;
        }
        return 0;
    case RFI_GET_BW:
        for (long i = 0; i < n; i++) {
            for (int j = 0; j < RFI_WINDOW; j++)
                if (rfi_get(r, size, rfi_slot(r, i * RFI_WINDOW + j)))
                    return -1;
            if (rfi_quiet_get(r))
                return -1;
        }
        return 0;
    case RFI_FADD_LAT:
        for (long i = 0; i < n; i++)
            if (rfi_fadd(r, &one, &result) || rfi_quiet_get(r))
                return -1;
        /* Checked once per run: the last fetch saw every earlier add. */
        if (n > 0 && result != *amo_total + n - 1) {
            fprintf(stderr, "raw_fi[0]: fetch-add returned %lld, expected "
                            "%lld\n", (long long)result,
                    (long long)(*amo_total + n - 1));
            return -1;
        }
        *amo_total += n;
        return 0;
    case RFI_ADD_LAT:
        for (long i = 0; i < n; i++)
            if (rfi_add(r, &one) || rfi_quiet_put(r))
                return -1;
        *amo_total += n;
        return 0;
    case RFI_ORDER:
        return run_order(r, n);
    default:
        return -1;
    }
}

static int is_get(rfi_test_t t) { return t == RFI_GET_LAT || t == RFI_GET_BW; }

static int run_active(rfi_t *r, rfi_test_t t, const bench_args_t *a,
                      int64_t *amo_total)
{
    size_t lo = a->min_size, hi = a->max_size;
    if (t == RFI_MSG_RATE || t == RFI_FADD_LAT || t == RFI_ADD_LAT || t == RFI_ORDER)
        lo = hi = 8;

    char title[160];
    snprintf(title, sizeof(title), "raw_fi %s (provider %s, %s, inject %zu%s%s)",
             rfi_tests[t].name, r->info->fabric_attr->prov_name,
             r->virt ? "virtual addresses" : "offsets", r->inject_size,
             r->opt->dc ? ", delivery-complete puts" : "",
             r->opt->flush == 2   ? ", puts completed by a fenced read"
             : r->opt->flush == 1 ? ", puts completed by a read"
                                  : "");
    bench_print_header(title, "Size", rfi_tests[t].col);

    for (size_t size = lo; size <= hi; size *= 2) {
        int bw = t == RFI_PUT_BW || t == RFI_GET_BW || t == RFI_MSG_RATE;
        long iters = bw ? bench_windows(a, size) : bench_iters(a, size);
        long warm = bench_warmup(a, size);
        if (t == RFI_MSG_RATE)
            iters = bench_iters(a, size); /* windows; 64k ops by default */
        double v[BENCH_MAX_REPS];

        if (!is_get(t))
            bench_fill(r->buf, size, RFI_PATTERN_SEED);
        if (t == RFI_ORDER) {
            /* Every round counts: no warm-up, the figure is the late rounds. */
            if (run_once(r, t, size, iters, amo_total))
                return -1;
            long late = atomic_load(&shared_g->late);
            printf("# order: %ld of %ld rounds had a put not landed when its "
                   "completion was seen\n", late, iters);
            bench_report(a, rfi_tests[t].name, size, rfi_tests[t].metric, (double)late);
            continue;
        }
        for (int rep = 0; rep < a->reps; rep++) {
            if (is_get(t))
                memset(r->buf, 0, size);
            if (run_once(r, t, size, warm, amo_total))
                return -1;
            double t0 = bench_now_us();
            if (run_once(r, t, size, iters, amo_total))
                return -1;
            double us = bench_now_us() - t0;
            if (is_get(t)) {
                long bad = bench_check(r->buf, size, RFI_PATTERN_SEED);
                if (bad >= 0) {
                    fprintf(stderr, "raw_fi[0]: %s size %zu: wrong byte at "
                                    "%ld\n", rfi_tests[t].name, size, bad);
                    return -1;
                }
            }
            double ops = (double)iters * (bw ? RFI_WINDOW : 1);
            if (t == RFI_MSG_RATE)
                v[rep] = ops / us * 1e6;
            else if (bw)
                v[rep] = ops * (double)size / us; /* bytes/us == MB/s */
            else
                v[rep] = us / ops;
        }
        bench_report(a, rfi_tests[t].name, size, rfi_tests[t].metric,
                     bench_median(v, a->reps));
    }
    return 0;
}

/* Drive progress until the active side raises the stop flag. */
static int run_passive(rfi_t *r, rfi_shared_t *sh)
{
    uint64_t spins = 0;
    pid_t parent = getppid();
    while (!atomic_load_explicit(&sh->stop, memory_order_acquire)) {
        if (rfi_progress(r))
            return -1;
        (void)fi_cntr_read(r->put_cntr);
        order_check(r, sh);
        if ((++spins & 0xfffff) == 0 && getppid() != parent) {
            fprintf(stderr, "raw_fi[1]: parent gone\n");
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ main */

static void on_sigchld(int sig) { child_exited_g = 1; }

static int extra_opt(const char *opt, const char *val, void *ctx)
{
    rfi_opts_t *o = ctx;
    if (!strcmp(opt, "-p") && val) {
        o->prov = val;
        return 2;
    }
    if (!strcmp(opt, "-t") && val) {
        o->timeout_s = atof(val);
        return o->timeout_s > 0 ? 2 : -1;
    }
    if (!strcmp(opt, "--dc")) {
        o->dc = 1;
        return 1;
    }
    if (!strcmp(opt, "--flush")) {
        o->flush = 1;
        return 1;
    }
    if (!strcmp(opt, "--flush-fence")) {
        o->flush = 2;
        return 1;
    }
    if (!strcmp(opt, "--bufs") && val) {
        char *end;
        long n = strtol(val, &end, 10);
        if (*end != '\0' || n < 1 || n > 64) {
            fprintf(stderr, "raw_fi: --bufs wants 1..64, got '%s'\n", val);
            return -1;
        }
        o->bufs = (int)n;
        return 2;
    }
    return -1;
}

static int child_main(int fd, rfi_shared_t *sh, const rfi_opts_t *o,
                      size_t max_size)
{
    rfi_t r = {.rank = 1, .opt = o};
    int status = 1;

    /* SIGTERM, not SIGKILL: the shm provider unlinks its region on SIGTERM. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (rfi_open(&r, max_size))
        return 1;
    bench_fill(r.buf, r.data_len, RFI_PATTERN_SEED); /* source for gets */
    if (rfi_exchange(&r, fd) || sync_byte(fd, 1))
        goto out;
    if (run_passive(&r, sh))
        goto out;

    rfi_done_t done;
    if (sock_xfer(fd, &done, sizeof(done), 0, 1))
        goto out;
    int32_t verdict = 0;
    if (done.status == 0 && done.check_amo) {
        int64_t got = *(volatile int64_t *)(r.buf + r.data_len);
        if (got != done.amo_expect) {
            fprintf(stderr, "raw_fi[1]: atomic word is %lld, expected %lld\n",
                    (long long)got, (long long)done.amo_expect);
            verdict = 1;
        }
    }
    if (sock_xfer(fd, &verdict, sizeof(verdict), 1, 1))
        goto out;
    status = verdict;
out:
    rfi_close(&r);
    return status;
}

static int parent_main(int fd, rfi_shared_t *sh, const rfi_opts_t *o,
                       rfi_test_t t, const bench_args_t *a)
{
    rfi_t r = {.rank = 0, .opt = o};
    int64_t amo_total = 0;
    int status = 1;

    if (rfi_open(&r, a->max_size))
        goto out;
    if (rfi_exchange(&r, fd) || sync_byte(fd, 0))
        goto out;

    rfi_done_t done = {0};
    done.status = run_active(&r, t, a, &amo_total) ? 1 : 0;
    done.check_amo = t == RFI_FADD_LAT || t == RFI_ADD_LAT;
    done.amo_expect = amo_total;
    atomic_store_explicit(&sh->stop, 1, memory_order_release);

    int32_t verdict = 1;
    if (sock_xfer(fd, &done, sizeof(done), 1, 0) ||
        sock_xfer(fd, &verdict, sizeof(verdict), 0, 0))
        goto out;
    status = done.status || verdict;
out:
    atomic_store_explicit(&sh->stop, 1, memory_order_release);
    rfi_close(&r);
    return status;
}

/* Reap the child; kill it if it does not leave within a few seconds. */
static int reap(pid_t pid)
{
    int ws = 0;
    for (int i = 0; i < 500; i++) {
        pid_t p = waitpid(pid, &ws, WNOHANG);
        if (p == pid)
            goto done;
        if (p < 0 && errno != EINTR) {
            perror("raw_fi: waitpid");
            return 1;
        }
        usleep(10000);
    }
    fprintf(stderr, "raw_fi: passive process %d did not exit, killing it\n",
            (int)pid);
    kill(pid, SIGKILL);
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
done:
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    fprintf(stderr, "raw_fi: passive process killed by signal %d\n",
            WIFSIGNALED(ws) ? WTERMSIG(ws) : -1);
    return 1;
}

int main(int argc, char **argv)
{
    static const char usage[] =
        "<test> [-p provider] [--dc] [--flush|--flush-fence] [--bufs N] [-t timeout_s] "
        "[harness options]";
    static const char extra_help[] =
        "  tests: put_lat get_lat put_bw get_bw msg_rate fadd_lat add_lat order\n"
        "  -p PROV       libfabric provider (default shm; e.g. \"tcp;ofi_rxm\")\n"
        "  --dc          puts with FI_DELIVERY_COMPLETE (fi_writemsg)\n"
        "  --flush       put completion also waits for an 8-byte read from the\n"
        "                peer, issued after the puts (what shmem_quiet does)\n"
        "  --flush-fence the same read with FI_FENCE\n"
        "  order: puts, completion, then checks at the target that they all\n"
        "                landed (prints the late rounds; 0 = ordered)\n"
        "  --bufs N      bandwidth tests: rotate over N buffers on each side\n"
        "                (the working set of N transfers in flight; default 1)\n"
        "  -t SEC        give up on any wait after SEC seconds (default 60)\n";
    rfi_opts_t o = {.prov = "shm", .timeout_s = 60.0, .bufs = 1};
    bench_args_t a;
    bench_args_init(&a, 1, 1u << 20);

    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
            return bench_args_parse(&a, argc, argv, 1, extra_opt, &o, usage,
                                    extra_help) == 1 ? 0 : 2;
        fprintf(stderr, "usage: %s %s\n%s", argv[0], usage, extra_help);
        return 2;
    }
    rfi_test_t t = RFI_NTESTS;
    for (int i = 0; i < RFI_NTESTS; i++)
        if (!strcmp(argv[1], rfi_tests[i].name))
            t = (rfi_test_t)i;
    if (t == RFI_NTESTS) {
        fprintf(stderr, "%s: unknown test '%s'\n%s", argv[0], argv[1],
                extra_help);
        return 2;
    }
    int prc = bench_args_parse(&a, argc, argv, 2, extra_opt, &o, usage,
                               extra_help);
    if (prc)
        return prc > 0 ? 0 : 2;
    timeout_us_g = o.timeout_s * 1e6;

    char label[96];
    if (!a.label) {
        snprintf(label, sizeof(label), "raw:%s%s%s", o.prov, o.dc ? "+dc" : "",
                 o.flush == 2 ? "+flushf" : o.flush ? "+flush" : "");
        a.label = label;
    }

    rfi_shared_t *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("raw_fi: mmap");
        return 1;
    }
    atomic_init(&sh->stop, 0);
    atomic_init(&sh->round, 0);
    atomic_init(&sh->checked, 0);
    atomic_init(&sh->late, 0);
    shared_g = sh;

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        perror("raw_fi: socketpair");
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);

    fflush(stdout);
    pid_t pid = fork(); /* before any libfabric call */
    if (pid < 0) {
        perror("raw_fi: fork");
        return 1;
    }
    if (pid == 0) {
        close(sv[0]);
        int rc = child_main(sv[1], sh, &o, a.max_size);
        close(sv[1]);
        _exit(rc);
    }
    close(sv[1]);
    int rc = parent_main(sv[0], sh, &o, t, &a);
    close(sv[0]); /* the child sees EOF if it is still waiting on us */
    int crc = reap(pid);
    return rc || crc ? 1 : 0;
}
