/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A parallel service (issue #18 item 3): a SHMEM job is one service. Every
 * PE opens a server of 2 contexts (one key for all: SHMEM_RPC_AUTH_KEY),
 * the PEs gather their addresses on PE 0 with shmem_putmem, and PE 0 joins
 * them into one address (orpc_addr_join). A client (a thread of PE 0 with
 * an instance of its own) calls the service round robin: every context of
 * every PE serves, and its handler uses SHMEM among the server PEs (a
 * fetch-increment of a counter on PE 0, so the fetched values must be
 * 0..N-1 exactly once). A "stop" call sets every PE's stop flag with
 * SHMEM atomics from a handler. A collective call (orpc_call_all) then
 * reaches every context of every PE in a tree: gathered, each member is
 * the PE and context the joined address names in its place; summed, each
 * handler's fetch-increment of a second counter on PE 0 gives 0..N-1.
 * Run under oshrun -n NPES.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc_test.h"

#define NCTX 2
#define MAXPE 8

static long counter_g; /* on PE 0: fetched by every handler */
static long coll_counter_g; /* on PE 0: fetched once by each member of a collective call */
static int stop_g;     /* set on every PE by the stop handler */
static int me_g, npes_g;

static void h_add(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    uint32_t out[3];
    out[0] = (uint32_t)me_g;
    out[1] = (uint32_t)orpc_call_context(c);
    out[2] = (uint32_t)shmem_long_atomic_fetch_inc(&counter_g, 0);
    orpc_respond(c, 0, out, sizeof(out));
}

/* Gathered: u32 PE, u32 context, u32 member number. */
static void h_who(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    uint32_t out[3] = {(uint32_t)me_g, (uint32_t)orpc_call_context(c),
                       (uint32_t)orpc_call_member(c)};
    orpc_respond(c, 0, out, sizeof(out));
}

/* Summed: int64 {PE + 1, a fetch-increment of a counter on PE 0}. */
static void h_sum(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    int64_t v[2] = {me_g + 1, shmem_long_atomic_fetch_inc(&coll_counter_g, 0)};
    orpc_respond(c, 0, v, sizeof(v));
}

static void h_stop(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)in, (void)n, (void)arg;
    for (int pe = 0; pe < npes_g; pe++)
        shmem_int_atomic_set(&stop_g, 1, pe);
    orpc_respond(c, 0, NULL, 0);
}

static int client(const char *addr)
{
    orpc_t *r;
    orpc_peer_t *p;
    CHECK_RC(orpc_open(NULL, &r), ORPC_OK, "client orpc_open");
    CHECK_RC(orpc_lookup(r, addr, NULL, &p), ORPC_OK, "lookup of the joined address");
    int n = orpc_peer_contexts(p);
    CHECK(n == NCTX * npes_g, "the service has %d contexts, want %d", n, NCTX * npes_g);
    int calls = 4 * n;
    int hits[MAXPE][NCTX] = {{0}};
    char *seen = calloc((size_t)calls, 1);
    for (int i = 0; i < calls; i++) {
        uint32_t out[3];
        size_t ol = 0;
        CHECK_RC(orpc_call(r, p, orpc_id("psvc.add"), NULL, 0, out, sizeof(out), &ol, 20000),
                 ORPC_OK, "call to the service");
        CHECK(ol == sizeof(out) && out[0] < (uint32_t)npes_g && out[1] < NCTX &&
                  out[2] < (uint32_t)calls && !seen[out[2]],
              "answer pe %u ctx %u count %u", out[0], out[1], out[2]);
        seen[out[2]] = 1;
        hits[out[0]][out[1]]++;
    }
    for (int pe = 0; pe < npes_g; pe++)
        for (int k = 0; k < NCTX; k++)
            CHECK(hits[pe][k] == 4, "PE %d context %d served %d of 4 turns", pe, k, hits[pe][k]);
    printf("psvc: %d PEs x %d contexts behind one address, %d calls, each context 4, "
           "counter on PE 0 fetched 0..%d once each\n", npes_g, NCTX, calls, calls - 1);
    /* Collective: every member once, in the order of the joined address. */
    uint8_t g[4096];
    size_t gl = 0, pos = 0, dl;
    orpc_coll_opts_t co;
    orpc_coll_opts_init(&co);
    co.fanout = 2;
    CHECK_RC(orpc_call_all(r, p, orpc_id("psvc.who"), NULL, 0, g, sizeof(g), &gl, 20000, &co),
             ORPC_OK, "collective call to the service");
    int m, st, k = 0;
    const void *d;
    while (orpc_coll_next(g, gl, &pos, &m, &st, &d, &dl) == 1) {
        uint32_t w[3];
        CHECK(dl == sizeof(w), "record of %zu bytes", dl);
        memcpy(w, d, sizeof(w));
        CHECK(m == k && w[2] == (uint32_t)m && w[0] == (uint32_t)(m / NCTX) &&
                  w[1] == (uint32_t)(m % NCTX),
              "member %d: PE %u context %u (thinks it is %u)", m, w[0], w[1], w[2]);
        k++;
    }
    CHECK(k == n && co.members == n, "gathered %d of %d members", k, n);
    int64_t v[2];
    CHECK_RC(orpc_call_all(r, p, orpc_id("psvc.sum"), NULL, 0, v, sizeof(v), &gl, 20000, NULL),
             ORPC_OK, "collective sum");
    CHECK(gl == sizeof(v) && v[0] == (int64_t)NCTX * npes_g * (npes_g + 1) / 2 &&
              v[1] == (int64_t)n * (n - 1) / 2,
          "sum %lld %lld", (long long)v[0], (long long)v[1]);
    printf("psvc: a collective call reached all %d members (PE x context, in order); summed "
           "fetches of a counter on PE 0: %lld\n", n, (long long)v[1]);
    CHECK_RC(orpc_call(r, p, orpc_id("psvc.stop"), NULL, 0, NULL, 0, NULL, 20000), ORPC_OK,
             "stop");
    free(seen);
    orpc_peer_release(p);
    orpc_close(r);
    return 0;
}

int main(void)
{
    int prov;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &prov);
    CHECK(prov == SHMEM_THREAD_MULTIPLE, "no SHMEM_THREAD_MULTIPLE");
    me_g = shmem_my_pe();
    npes_g = shmem_n_pes();
    CHECK(npes_g <= MAXPE, "at most %d PEs", MAXPE);
    char *addrs = shmem_calloc((size_t)npes_g, ORPC_ADDR_STRLEN);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.contexts = NCTX;
    o.progress_thread = 1; /* handlers run on the contexts' threads */
    orpc_t *srv;
    CHECK_RC(orpc_open(&o, &srv), ORPC_OK, "orpc_open on a PE");
    orpc_register(srv, "psvc.add", h_add, NULL, 0, NULL);
    orpc_register(srv, "psvc.stop", h_stop, NULL, 0, NULL);
    orpc_register(srv, "psvc.who", h_who, NULL, 0, NULL);
    orpc_register_coll(srv, "psvc.sum", h_sum, NULL, 0, ORPC_COLL_SUM_I64, NULL, NULL, NULL);
    char a[ORPC_ADDR_STRLEN];
    CHECK_RC(orpc_addr(srv, a, sizeof(a)), ORPC_OK, "orpc_addr");
    shmem_putmem(addrs + (size_t)me_g * ORPC_ADDR_STRLEN, a, strlen(a) + 1, 0);
    shmem_barrier_all();
    if (me_g == 0) {
        const char *ap[MAXPE];
        for (int pe = 0; pe < npes_g; pe++)
            ap[pe] = addrs + (size_t)pe * ORPC_ADDR_STRLEN;
        char joined[ORPC_ADDR_STRLEN];
        CHECK_RC(orpc_addr_join(ap, npes_g, joined, sizeof(joined)), ORPC_OK, "orpc_addr_join");
        client(joined);
    }
    shmem_int_wait_until(&stop_g, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();
    CHECK_RC(orpc_close(srv), ORPC_OK, "orpc_close");
    if (me_g == 0)
        CHECK(counter_g == 4L * NCTX * npes_g, "counter %ld", counter_g);
    shmem_free(addrs);
    shmem_finalize();
    return 0;
}
