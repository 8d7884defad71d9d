// SPDX-License-Identifier: BSD-3-Clause
/*
 * Fabric faults: a transfer that failed (an error the provider returned or
 * put in a completion queue) or that made no progress for
 * SHMEM_FABRIC_TIMEOUT ends the job with one line naming the operation, the
 * peer PE, its host and the provider's error.
 *
 * One line per job, not one per PE that noticed. A broken link is seen by
 * every PE that talks across it, at about the same moment, so:
 *  - a PE whose peer is on a lower-numbered node waits 3 s before it
 *    reports: the PEs of the lower node report first, and the launcher ends
 *    the job meanwhile (a link between two hosts: its lower end reports;
 *    Open MPI's mpirun took 0.5-2 s from one PE's abort to the others' end
 *    on a loaded machine, so 1 s and 2 s were not enough). The price: a
 *    fault seen only from the higher host is reported 3 s late;
 *  - of the PEs of one host, only the first reports: it claims an
 *    abstract-namespace Unix socket name of the job (one per network
 *    namespace, i.e. per host); the others stay silent and wait for the
 *    launcher (ending the job themselves, silently, if it does not act);
 *  - an error (rather than silence) is usually a peer that died, and its
 *    launcher ends the whole job within a moment with one message naming
 *    that PE; so errors wait a second first (the launcher's line, if it
 *    comes, is the only one).
 * All of it is off the data path: called only once the job is ending.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "core/log.h"
#include "runtime/rt.h"
#include "conduit/ofi/ofi_msg.h"

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* 1: this PE is the first of its host to report a fabric fault of this job. */
static int claim_report(void)
{
    static int fd = -1; /* held until exit: the name goes with it */
    if (fd >= 0)
        return 1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "ofishmem-fault-%s",
                     shm_rt_g.nspace);
    if (n < 0 || (size_t)n >= sizeof(sa.sun_path) - 1)
        n = (int)sizeof(sa.sun_path) - 2;
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1; /* cannot tell: report */
    if (bind(fd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) == 0)
        return 1;
    int e = errno;
    close(fd);
    fd = -1;
    return e != EADDRINUSE;
}

/* The whole report, holds and look-ups included, ends the PE within this,
 * whatever the launcher does (the report's own abort bounds it tighter). */
#define FAULT_END_MS (4000 + 3000 + 1000 + SHM_RT_ABORT_END_MS + 1000)

/* Every caller reports a fault next: the PE's end is bounded from here. */
void cdt_ofi_peer_host(int pe, char *host, size_t len)
{
    shm_rt_end_within(FAULT_END_MS, 1,
                      "this PE's fabric fault report did not complete in time (the launcher's "
                      "PMIx server did not answer)");
    snprintf(host, len, "?");
    if (pe >= 0 && pe < cdt_ofi_g.cfg.size && len >= 64) {
        char h[64];
        /* From the launcher: bounded, a cut PMIx channel must not keep the
         * report from being made. */
        if (shm_rt_get_within(pe, CDT_OFI_HOST_KEY, h, sizeof(h), 1000) == SHM_OK) {
            h[sizeof(h) - 1] = '\0';
            snprintf(host, len, "%s", h);
        }
    }
}

void cdt_ofi_peer_fatal(int pe, int is_error, const char *fmt, ...)
{
    if (cdt_ofi_g.cfg.size > 1) {
        unsigned wait_ms = is_error ? 1000 : 0;
        int me = cdt_ofi_g.cfg.rank;
        if (pe >= 0 && pe < cdt_ofi_g.cfg.size && pe != me) {
            int pn = shm_rt_node_of(pe), mn = shm_rt_node_of(me);
            if (pn >= 0 && mn >= 0 && pn < mn)
                wait_ms += 3000;
        }
        if (wait_ms)
            sleep_ms(wait_ms); /* the job may be ended here */
        if (!claim_report()) {
            /* Another PE of this host is reporting; leave the job's end to it. */
            sleep_ms(3000);
            shm_rt_abort(1, "");
        }
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    shm_fatal("%s", msg);
}

/* An error a limit caused: what to do about it (else ""). */
static const char *limit_hint(int err, char *buf, size_t len)
{
    buf[0] = '\0';
    if (err == EMFILE || err == ENFILE)
        shm_rt_hint_nofile(buf, len, "this PE", cdt_ofi_g.cfg.size, 1);
    return buf;
}

/* The kind of operation a completion's context names. */
static const char *op_name(uint32_t op)
{
    switch (op) {
    case CDT_OP_PUT: return "put";
    case CDT_OP_GET: return "get";
    case CDT_OP_AMO: return "atomic";
    case CDT_OP_FETCH_AMO: return "fetching atomic";
    default: return "operation";
    }
}

void cdt_ofi_report_cq_error(cdt_ctx_t *ctx, const char *what)
{
    struct fi_cq_err_entry err = {0};
    ssize_t rc = fi_cq_readerr(ctx->cq, &err, 0);
    for (int tries = 0; rc == -FI_EAGAIN && tries < 1000; tries++) {
        fi_cq_read(ctx->cq, NULL, 0);
        rc = fi_cq_readerr(ctx->cq, &err, 0);
    }
    if (rc < 0) {
        int pe = __atomic_load_n(&ctx->last_pe, __ATOMIC_RELAXED);
        char host[64];
        cdt_ofi_peer_host(pe, host, sizeof(host));
        cdt_ofi_peer_fatal(pe, 1,
                           "%s to PE %d (host %s) failed on provider %s (no error entry: %s)",
                           what, pe, host, cdt_provider_name(), fi_strerror((int)-rc));
    }
    /* Every operation on a PE's endpoint carries a cdt_ofi_opctx_t, except
     * the strided engine's messages (ofi_strided.c). */
    const cdt_ofi_opctx_t *c = NULL;
    int pe;
    if (cdt_ofi_xf_owns(err.op_context)) { /* a strided transfer's message */
        pe = cdt_ofi_xf_pe(err.op_context);
        what = "strided transfer (message)";
        if (pe < 0)
            pe = __atomic_load_n(&ctx->last_pe, __ATOMIC_RELAXED);
    } else {
        c = err.op_context;
        pe = c ? c->pe : __atomic_load_n(&ctx->last_pe, __ATOMIC_RELAXED);
    }
    char perr[256];
    const char *p = fi_cq_strerror(ctx->cq, err.prov_errno, err.err_data, NULL, 0);
    snprintf(perr, sizeof(perr), "%s", p ? p : "-"); /* the provider's buffer is reused */
    char host[64], hint[512];
    cdt_ofi_peer_host(pe, host, sizeof(host));
    cdt_ofi_peer_fatal(pe, 1, "%s to PE %d (host %s) failed on provider %s: %s (provider: %s)%s",
                       c ? op_name(c->op) : what, pe, host, cdt_provider_name(),
                       fi_strerror(err.err ? err.err : FI_EIO), perr,
                       limit_hint(err.err, hint, sizeof hint));
}

void cdt_ofi_fatal_rc(const char *op, int pe, ssize_t rc)
{
    char host[64], hint[512];
    cdt_ofi_peer_host(pe, host, sizeof(host));
    cdt_ofi_peer_fatal(pe, 1, "%s to PE %d (host %s) failed on provider %s: %s%s", op, pe, host,
                       cdt_provider_name(), fi_strerror((int)-rc),
                       limit_hint((int)-rc, hint, sizeof hint));
}

void cdt_ofi_stall_check(cdt_ofi_stall_t *s, uint64_t v, cdt_ctx_t *ctx, const char *what,
                         int pe)
{
    /* The clock is read at the wait's first turn (the stall is timed from
     * there, not from its 16th turn: a turn that yields on a loaded machine
     * can take tens of ms), then every 16th. */
    if (cdt_ofi_fast_g.stall_ns == 0 || (s->polls++ & 15) != 0)
        return;
    uint64_t t = cdt_ofi_now_ns();
    if (s->since_ns == 0 || v != s->last_v) {
        s->last_v = v;
        s->since_ns = t;
        return;
    }
    if (t - s->since_ns < cdt_ofi_fast_g.stall_ns) {
        if (shm_unlikely(shm_log_level_g[SHM_LOG_OFI] >= SHM_LVL_DEBUG) && !s->logged &&
            t - s->since_ns >= 100000000u) {
            /* When each PE began to wait, in wall time: for timing faults. */
            struct timespec w;
            clock_gettime(CLOCK_REALTIME, &w);
            uint64_t wall_ms = (uint64_t)w.tv_sec * 1000u + (uint64_t)w.tv_nsec / 1000000u;
            s->logged = 1;
            SHM_DEBUG(OFI, "%s to PE %d: no progress for %llu ms, since wall clock %llu ms", what,
                      pe >= 0 ? pe : __atomic_load_n(&ctx->last_pe, __ATOMIC_RELAXED),
                      (unsigned long long)((t - s->since_ns) / 1000000u),
                      (unsigned long long)(wall_ms - (t - s->since_ns) / 1000000u));
        }
        return;
    }
    if (pe < 0)
        pe = __atomic_load_n(&ctx->last_pe, __ATOMIC_RELAXED);
    char host[64];
    cdt_ofi_peer_host(pe, host, sizeof(host));
    cdt_ofi_peer_fatal(pe, 0,
                       "%s to PE %d (host %s) made no progress for %llu s on provider %s "
                       "(SHMEM_FABRIC_TIMEOUT): the link to that host is down, or the PE is "
                       "stopped or overwhelmed",
                       what, pe, host,
                       (unsigned long long)(cdt_ofi_fast_g.stall_ns / 1000000000u),
                       cdt_provider_name());
}

uint64_t cdt_probe_peer(cdt_ctx_t *ctx, int pe, size_t off, const char *what)
{
    if (pe < 0 || pe >= cdt_ofi_g.cfg.size || pe == cdt_ofi_g.cfg.rank)
        return 0;
    uint64_t v = 0;
    const cdt_ofi_peer_t *p = cdt_ofi_peer(pe);
    const cdt_ofi_rseg_t *r = &p->seg[SHM_SEG_HEAP];
    if (shm_unlikely(ctx->lmr != NULL)) {
        /* Through the contract's get path: a slot, its descriptor, a context. */
        cdt_ofi_get_slow(ctx, &v, r->base + off, r->key, sizeof(v), pe, 1);
        return v;
    }
    const cdt_ofi_xfer_t x = {.op = CDT_OP_GET, .pe = pe};
    ssize_t rc = cdt_ofi_rma_frags(ctx, 1, &v, r->base + off, r->key, sizeof(v),
                                   (fi_addr_t)(p->addr1 - 1), &x);
    if (rc != 0)
        cdt_ofi_fatal_rc(what, pe, rc);
    cdt_ofi_issued(ctx, pe);
    cdt_ofi_wait_gets_for(ctx, what);
    return v;
}
