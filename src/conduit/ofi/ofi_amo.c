// SPDX-License-Identifier: BSD-3-Clause
/*
 * Atomics over libfabric: the capability table (which (type, op) the
 * provider does itself), EAGAIN retries and the SHMEM_INFO summary.
 *
 * The table is probed once with fi_query_atomic for the three kinds
 * (plain, fetch, compare). SHMEM_AMO_NATIVE narrows it for testing the
 * fallbacks: "cswap" keeps only compare-and-swap (everything else is then
 * emulated above the conduit, src/atomics/amo.c); "none" keeps nothing, and
 * every AMO goes by active message (ofi_amo_am.c), as on a provider that
 * offers no atomics or no compare-and-swap.
 */
#include <sched.h>
#include <string.h>

#include "conduit/ofi/ofi.h"
#include "core/env.h"
#include "core/log.h"

cdt_ofi_amo_t cdt_ofi_amo_g;
uint64_t cdt_ofi_amo_sink_g;

static const struct {
    const char *name;
    size_t size;
} amo_types[] = {
#define AMO_TYPE_ROW(id, name, fi, size) {name, size},
    CDT_AMO_TYPES(AMO_TYPE_ROW)
#undef AMO_TYPE_ROW
};

static const struct {
    const char *name;
    int kind;
} amo_ops[] = {
#define AMO_OP_ROW(id, name, fi, kind) {name, kind},
    CDT_AMO_OPS(AMO_OP_ROW)
#undef AMO_OP_ROW
};

const char *cdt_amo_type_name(cdt_amo_type_t t)
{
    return (unsigned)t < CDT_AMO_NTYPES ? amo_types[t].name : "?";
}

const char *cdt_amo_op_name(cdt_amo_op_t op)
{
    return (unsigned)op < CDT_AMO_NOPS ? amo_ops[op].name : "?";
}

static int probe(cdt_amo_type_t t, cdt_amo_op_t op)
{
    static const uint64_t kind_flags[] = {0, FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC};
    struct fi_atomic_attr attr = {0};
    int rc = fi_query_atomic(cdt_ofi_g.domain, cdt_ofi_amo_dt(t), cdt_ofi_amo_fiop(op), &attr,
                             kind_flags[amo_ops[op].kind]);
    return rc == 0 && attr.count >= 1 && attr.size == amo_types[t].size;
}

void cdt_ofi_amo_init(void)
{
    const char *mode = shm_env_g.AMO_NATIVE ? shm_env_g.AMO_NATIVE : "auto";
    int keep_all = strcmp(mode, "auto") == 0 || *mode == '\0';
    int keep_cswap = strcmp(mode, "cswap") == 0;
    if (!keep_all && !keep_cswap && strcmp(mode, "none") != 0)
        shm_fatal("SHMEM_AMO_NATIVE='%s' is not valid: expected auto, cswap or none", mode);

    memset(&cdt_ofi_amo_g, 0, sizeof(cdt_ofi_amo_g));
    if (cdt_ofi_g.no_fabric) {
        /* Every PE's heap and globals are mapped (or this is the only PE):
         * every AMO is a CPU atomic, none needs a path of the conduit. */
        cdt_ofi_amo_g.heap_cpu = 1;
        SHM_INFO(AMO, "atomics: CPU atomics on mapped memory (no fabric)");
        return;
    }
    /* Injected: the operand is copied at once (the API passes it by value),
     * and delivery-complete: quiet means applied, on every provider. */
    cdt_ofi_amo_g.post_flags = FI_INJECT | FI_DELIVERY_COMPLETE;
    cdt_ofi_amo_g.fetch_flags = FI_INJECT;
    /* An 8-byte operand above the provider's inject size: the operand stays
     * in place until completion instead (slots under FI_MR_LOCAL, else the
     * fast paths wait for it). */
    if (cdt_ofi_g.caps.inject_size < sizeof(uint64_t)) {
        cdt_ofi_amo_g.post_flags &= ~(uint64_t)FI_INJECT;
        cdt_ofi_amo_g.fetch_flags &= ~(uint64_t)FI_INJECT;
    }
    cdt_ofi_amo_g.post_via_fetch = cdt_ofi_prov_row(cdt_ofi_g.prov_name)->amo_post_via_fetch;
    if (cdt_ofi_g.caps.native_amo && (keep_all || keep_cswap))
        for (int t = 0; t < CDT_AMO_NTYPES; t++)
            for (int op = 0; op < CDT_AMO_NOPS; op++) {
                int want = keep_all || op == CDT_AMO_CSWAP;
                if (want && probe(t, op))
                    cdt_ofi_amo_g.path[t][op] = CDT_AMO_PATH_NATIVE;
            }
    /* Issued as their fetching twins (ADD as FETCH_ADD, ..., SET as SWAP). */
    if (cdt_ofi_amo_g.post_via_fetch)
        for (int t = 0; t < CDT_AMO_NTYPES; t++)
            for (int op = CDT_AMO_ADD; op <= CDT_AMO_SET; op++)
                cdt_ofi_amo_g.path[t][op] = cdt_ofi_amo_g.path[t][op + CDT_AMO_FETCH_ADD];

    /*
     * One mechanism per type, decided here for every PE alike (they probe
     * the same provider): what the provider lacks for a type is emulated
     * with its compare-and-swap of the type's width (src/atomics), which is
     * atomic with the provider's other atomics on the word. A type whose
     * width has no compare-and-swap goes wholly by active message, every
     * operation on it a CPU atomic at the target: a native add racing an
     * active-message xor on one word would not be atomic.
     */
    const uint8_t(*p)[CDT_AMO_NOPS] = cdt_ofi_amo_g.path;
    int cswap[2] = {p[CDT_AMO_INT32][CDT_AMO_CSWAP] || p[CDT_AMO_UINT32][CDT_AMO_CSWAP],
                    p[CDT_AMO_INT64][CDT_AMO_CSWAP] || p[CDT_AMO_UINT64][CDT_AMO_CSWAP]};
    int by_am = 0;
    for (int t = 0; t < CDT_AMO_NTYPES; t++)
        by_am += !cswap[amo_types[t].size == 8];
    if (by_am > 0) {
        int am = cdt_ofi_amo_am_open() == 0;
        for (int t = 0; t < CDT_AMO_NTYPES; t++)
            if (!cswap[amo_types[t].size == 8])
                memset(cdt_ofi_amo_g.path[t], am ? CDT_AMO_PATH_AM : CDT_AMO_PATH_NONE,
                       sizeof(cdt_ofi_amo_g.path[t]));
        cdt_ofi_amo_g.am_on = am;
        cdt_ofi_amo_g.am_all = am && by_am == CDT_AMO_NTYPES;
    }

    /*
     * Same-host direct path: AMOs on heap words are CPU atomics, by the
     * origin where it maps the target's heap, else by the target on request.
     * A provider atomic is not atomic with respect to a CPU one, so the mode
     * must be the same on every PE: it depends only on what every PE sees
     * alike (SHMEM_DIRECT, and whether some host runs more than one PE), not
     * on whether this PE's mappings succeeded.
     */
    const cdt_config_t *cfg = &cdt_ofi_g.cfg;
    cdt_ofi_amo_g.heap_cpu = shm_env_g.DIRECT && cfg->size > cfg->nnodes;
    if (cdt_ofi_amo_g.heap_cpu && !cdt_ofi_amo_g.am_on) {
        if (cdt_ofi_amo_am_open() != 0)
            shm_fatal("SHMEM_DIRECT=1: provider %s gives no message endpoint for atomics on the "
                      "heaps of PEs not mapped here; run with SHMEM_DIRECT=0",
                      cdt_ofi_g.prov_name);
        cdt_ofi_amo_g.am_on = 1;
    }
    SHM_INFO(AMO, "atomics on %s: SHMEM_AMO_NATIVE=%s%s%s", cdt_ofi_g.prov_name, mode,
             cdt_ofi_amo_g.am_all ? ", by active message" : "",
             cdt_ofi_amo_g.heap_cpu ? "; heap words by CPU atomics" : "");
}

/* OpenSHMEM has no bitwise AMO on float or double: not listed for them. */
static int op_is_bitwise(int op)
{
    return op == CDT_AMO_AND || op == CDT_AMO_OR || op == CDT_AMO_XOR || op == CDT_AMO_FETCH_AND ||
           op == CDT_AMO_FETCH_OR || op == CDT_AMO_FETCH_XOR;
}

void cdt_ofi_amo_info_print(FILE *f)
{
    static const char *const path_names[] = {
        [CDT_AMO_PATH_NONE] = "compare-and-swap loop",
        [CDT_AMO_PATH_NATIVE] = "provider",
        [CDT_AMO_PATH_AM] = "active message",
    };
    fprintf(f, "  atomics (SHMEM_AMO_NATIVE=%s): non-fetching ones %s\n",
            shm_env_g.AMO_NATIVE && *shm_env_g.AMO_NATIVE ? shm_env_g.AMO_NATIVE : "auto",
            cdt_ofi_amo_g.post_via_fetch ? "issued as fetching ones (provider quirk)"
                                         : "delivery-complete");
    if (cdt_ofi_amo_g.heap_cpu)
        fprintf(f, "    symmetric heap (and data/BSS unless SHMEM_DIRECT_GLOBALS=0): every AMO a "
                   "CPU atomic (by the origin where it maps the target's memory, else by the "
                   "target on request); below: the fabric's, for the rest\n");
    for (int t = 0; t < CDT_AMO_NTYPES; t++) {
        fprintf(f, "    %-7s", amo_types[t].name);
        /* Group the ops by path so the common case is one short line. */
        for (int p = CDT_AMO_PATH_NATIVE; p >= 0; p = p == CDT_AMO_PATH_NATIVE ? CDT_AMO_PATH_AM
                                                   : p == CDT_AMO_PATH_AM   ? CDT_AMO_PATH_NONE
                                                                            : -1) {
            int n = 0;
            for (int op = 0; op < CDT_AMO_NOPS; op++)
                if (cdt_ofi_amo_g.path[t][op] == p && !(t >= CDT_AMO_FLOAT && op_is_bitwise(op)))
                    fprintf(f, "%s%s", n++ ? " " : " [", amo_ops[op].name);
            if (n)
                fprintf(f, "]: %s", path_names[p]);
        }
        fputc('\n', f);
    }
}

static void amo_ctx_progress(cdt_ctx_t *ctx)
{
    if (shm_unlikely(fi_cq_read(ctx->cq, NULL, 0) == -FI_EAVAIL))
        cdt_ofi_report_cq_error(ctx, "atomic");
    cdt_progress();
}

/*
 * Waits for the context's fetching operations (a blocking fetching AMO). Like
 * raw libfabric code, it polls the counter only: reading it drives the
 * endpoint's progress, which on the default context also serves incoming
 * requests. cdt_ofi_wait_gets would also read the CQ twice per turn, which on
 * tcp;ofi_rxm costs a poll() each and delays seeing the answer. Errors and
 * other contexts go the general way.
 */
void cdt_ofi_amo_wait(cdt_ctx_t *ctx)
{
    uint64_t target = __atomic_load_n(&ctx->get_issued, __ATOMIC_RELAXED);
    if (ctx != cdt_ofi_g.dflt || (ctx->flags & CDT_CTX_SHARED)) {
        cdt_ofi_wait_gets(ctx);
        return;
    }
    cdt_ofi_stall_t stall = {0};
    uint64_t t0 = 0;
    for (;;) {
        uint64_t v = fi_cntr_read(ctx->get_cntr);
        if (v >= target) {
            ctx->get_done = target;
            if (shm_unlikely(ctx->lmr != NULL))
                cdt_ofi_lmr_gets_done(ctx);
            return;
        }
        if (shm_unlikely(fi_cntr_readerr(ctx->get_cntr) != ctx->get_err)) {
            cdt_ofi_wait_gets(ctx); /* reports the error */
            return;
        }
        cdt_ofi_kick_pending(ctx);
        cdt_ofi_stall_check(&stall, v, ctx, "fetching atomic", -1);
        cdt_ofi_wait_pause(ctx, &t0);
    }
}

/* Reissues one atomic after -FI_EAGAIN (progress first), or without FI_INJECT
 * where the provider refuses it (then the fast path waits for completion). */
void cdt_ofi_amo_retry(cdt_ctx_t *ctx, ssize_t rc, const struct fi_msg_atomic *msg,
                       const struct fi_ioc *cmp, struct fi_ioc *res, int pe)
{
    uint64_t *flags = res ? &cdt_ofi_amo_g.fetch_flags : &cdt_ofi_amo_g.post_flags;
    const char *what = res ? "fetching atomic" : "atomic";
    cdt_ofi_stall_t stall = {0};
    while (rc != 0) {
        if (rc == -FI_EAGAIN) {
            amo_ctx_progress(ctx);
            cdt_ofi_issued(ctx, pe);
            cdt_ofi_stall_check(&stall, 0, ctx, what, pe);
        } else if ((*flags & FI_INJECT) &&
                   (rc == -FI_EINVAL || rc == -FI_EOPNOTSUPP || rc == -FI_ENOSYS ||
                    rc == -FI_EMSGSIZE)) {
            SHM_INFO(AMO, "%s: provider %s refuses FI_INJECT (%s); waiting for completion instead",
                     what, cdt_ofi_g.prov_name, fi_strerror((int)-rc));
            __atomic_and_fetch(flags, ~(uint64_t)FI_INJECT, __ATOMIC_RELAXED);
        } else {
            char opname[32]; /* fi_tostr reuses one buffer */
            snprintf(opname, sizeof(opname), "%s", fi_tostr(&msg->op, FI_TYPE_ATOMIC_OP));
            char host[64];
            cdt_ofi_peer_host(pe, host, sizeof(host));
            cdt_ofi_peer_fatal(pe, 1, "%s (%s on %s) to PE %d (host %s) failed on provider %s: %s",
                               what, opname, fi_tostr(&msg->datatype, FI_TYPE_ATOMIC_TYPE), pe,
                               host, cdt_ofi_g.prov_name, fi_strerror((int)-rc));
        }
        uint64_t fl = __atomic_load_n(flags, __ATOMIC_RELAXED);
        if (res == NULL)
            rc = fi_atomicmsg(ctx->ep, msg, fl);
        else if (cmp == NULL)
            rc = fi_fetch_atomicmsg(ctx->ep, msg, res, NULL, 1, fl);
        else
            rc = fi_compare_atomicmsg(ctx->ep, msg, cmp, NULL, 1, res, NULL, 1, fl);
    }
}


/*
 * A provider atomic under a contract that asks for descriptors (FI_MR_LOCAL:
 * operand and compare values go from registered slots, a fetched value
 * comes into one and is copied out when the reads are complete) or context
 * memory per operation (FI_CONTEXT/FI_CONTEXT2: the context's ring). A
 * shared context holds its lock from the first step to the last.
 */
void cdt_ofi_amo_contract(cdt_ctx_t *ctx, cdt_amo_type_t t, cdt_amo_op_t op, int seg, size_t off,
                          const void *operand, const void *cond, void *result, int pe,
                          int blocking)
{
    size_t size = amo_types[t].size;
    int kind = amo_ops[op].kind; /* 0 plain, 1 fetching, 2 compare */
    int fetching = kind != 0 || cdt_ofi_amo_g.post_via_fetch;
    int shared = (ctx->flags & CDT_CTX_SHARED) != 0;
    int mr_local = cdt_ofi_g.caps.mr_local;
    static const uint64_t zero[2];
    cdt_ofi_lmr_lock(ctx);
    /* Where the fetched value lands: the caller's buffer if registered. */
    void *res_desc = NULL;
    int res_slot = 0;
    if (fetching && mr_local) {
        res_desc = result ? cdt_ofi_lmr_desc(ctx, result, size) : NULL;
        if (res_desc == NULL && result && shared && !blocking)
            res_desc = cdt_ofi_lmr_reg(ctx, result, size, FI_READ, pe); /* until a drain */
        res_slot = res_desc == NULL;
    }
    int defer = res_slot && result && !shared;
    unsigned nslots = mr_local ? 1u + (kind == 2) + (unsigned)res_slot : 0u;
    cdt_ofi_lmr_reserve(ctx, nslots, defer, 0);

    const void *opnd = operand ? operand : (result ? result : zero);
    void *op_buf = mr_local ? cdt_ofi_lmr_slot(ctx, operand ? operand : zero, size) : (void *)opnd;
    void *cmp_buf = (kind == 2 && mr_local) ? cdt_ofi_lmr_slot(ctx, cond, size) : (void *)cond;
    void *res_buf = res_slot ? cdt_ofi_lmr_slot(ctx, NULL, 0)
                             : (result ? result : (void *)&cdt_ofi_amo_sink_g);
    if (res_slot)
        res_desc = cdt_ofi_lmr_desc(ctx, res_buf, size);
    if (defer)
        cdt_ofi_lmr_defer(ctx, result, res_buf, size);
    void *op_desc = cdt_ofi_lmr_desc(ctx, op_buf, size);
    void *cmp_desc = kind == 2 ? cdt_ofi_lmr_desc(ctx, cmp_buf, size) : NULL;

    const cdt_ofi_peer_t *p = cdt_ofi_peer(pe);
    const cdt_ofi_rseg_t *r = &p->seg[seg];
    struct fi_ioc ioc = {.addr = op_buf, .count = 1};
    struct fi_ioc cmp = {.addr = cmp_buf, .count = 1};
    struct fi_ioc res = {.addr = res_buf, .count = 1};
    struct fi_rma_ioc rioc = {.addr = r->base + off, .count = 1, .key = r->key};
    /* A plain atomic issued as its fetching twin (amo_post_via_fetch). */
    cdt_amo_op_t fop = kind == 0 && fetching ? (cdt_amo_op_t)(op + CDT_AMO_FETCH_ADD) : op;
    struct fi_msg_atomic msg = {.msg_iov = &ioc, .desc = &op_desc, .iov_count = 1,
                                .addr = (fi_addr_t)(p->addr1 - 1), .rma_iov = &rioc,
                                .rma_iov_count = 1, .datatype = cdt_ofi_amo_dt(t),
                                .op = cdt_ofi_amo_fiop(fop)};
    msg.context = cdt_ofi_lmr_opctx(ctx, fetching ? CDT_OP_FETCH_AMO : CDT_OP_AMO, pe,
                                    fetching ? &ctx->get_issued : &ctx->put_issued);
    uint64_t *flags = fetching ? &cdt_ofi_amo_g.fetch_flags : &cdt_ofi_amo_g.post_flags;
    const char *what = fetching ? "fetching atomic" : "atomic";
    cdt_ofi_stall_t stall = {0};
    ssize_t rc;
    for (;;) {
        uint64_t fl = __atomic_load_n(flags, __ATOMIC_RELAXED);
        if (kind == 2)
            rc = fi_compare_atomicmsg(ctx->ep, &msg, &cmp, &cmp_desc, 1, &res, &res_desc, 1, fl);
        else if (fetching)
            rc = fi_fetch_atomicmsg(ctx->ep, &msg, &res, &res_desc, 1, fl);
        else
            rc = fi_atomicmsg(ctx->ep, &msg, fl);
        if (rc == -FI_EAGAIN) {
            amo_ctx_progress(ctx);
            cdt_ofi_issued(ctx, pe);
            cdt_ofi_stall_check(&stall, 0, ctx, what, pe);
        } else if (rc != 0 && (fl & FI_INJECT) &&
                   (rc == -FI_EINVAL || rc == -FI_EOPNOTSUPP || rc == -FI_ENOSYS ||
                    rc == -FI_EMSGSIZE)) {
            SHM_INFO(AMO, "%s: provider %s refuses FI_INJECT (%s); waiting for completion instead",
                     what, cdt_ofi_g.prov_name, fi_strerror((int)-rc));
            __atomic_and_fetch(flags, ~(uint64_t)FI_INJECT, __ATOMIC_RELAXED);
        } else {
            break;
        }
    }
    if (rc != 0)
        cdt_ofi_amo_retry(ctx, rc, &msg, kind == 2 ? &cmp : NULL, fetching ? &res : NULL, pe);
    cdt_ofi_issued(ctx, pe);
    /* Without FI_INJECT the provider reads the operand until completion:
     * in a slot that is free until the next drain; the caller's is not. */
    int wait = blocking && fetching;
    if (!mr_local && !(__atomic_load_n(flags, __ATOMIC_RELAXED) & FI_INJECT))
        wait = 1;
    if (wait) {
        if (fetching)
            cdt_ofi_amo_wait(ctx); /* runs the deferred copies */
        else
            cdt_ofi_wait_puts(ctx);
    }
    if (res_slot && result && shared && blocking)
        memcpy(result, res_buf, size);
    cdt_ofi_lmr_unlock(ctx);
}
