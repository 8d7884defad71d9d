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

    /* What the provider lacks is emulated with its compare-and-swap of the
     * same width (src/atomics); without one of each width, every AMO goes by
     * active message instead (a mix would not be atomic). */
    const uint8_t(*p)[CDT_AMO_NOPS] = cdt_ofi_amo_g.path;
    int cswap32 = p[CDT_AMO_INT32][CDT_AMO_CSWAP] || p[CDT_AMO_UINT32][CDT_AMO_CSWAP];
    int cswap64 = p[CDT_AMO_INT64][CDT_AMO_CSWAP] || p[CDT_AMO_UINT64][CDT_AMO_CSWAP];
    if (!cswap32 || !cswap64) {
        memset(cdt_ofi_amo_g.path, CDT_AMO_PATH_NONE, sizeof(cdt_ofi_amo_g.path));
        if (cdt_ofi_amo_am_open() == 0) {
            memset(cdt_ofi_amo_g.path, CDT_AMO_PATH_AM, sizeof(cdt_ofi_amo_g.path));
            cdt_ofi_amo_g.am_on = cdt_ofi_amo_g.am_all = 1;
        }
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

