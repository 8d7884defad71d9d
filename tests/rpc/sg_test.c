/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter-gather and strided bulk descriptors (issue 18 item 2), one binary:
 *   sg_test server ADDRFILE KEYFILE PROVIDER
 *   sg_test client ADDRFILE KEYFILE MODE
 * MODE: list (uneven segments, ranges crossing edges, pulls and pushes,
 * local lists), strided (a block of a 2-D array), empty (zero-length
 * segments), bad (refusals), expire (deadline), stop.
 *
 * The server checks what it pulls against the logical pattern t_pat(seed,
 * offset in the whole), and pushes that pattern; the client checks its own
 * memory piece by piece, and that nothing outside the pieces changed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpc_test.h"

#define S_PULL "sg.pull"   /* desc, off, len, seed, split: pulls into a local list, checks */
#define S_PUSH "sg.push"   /* desc, off, len, seed, split: pushes from a local list */
#define S_BAD "sg.bad"     /* desc: refusals, answered as a vector of codes */
#define S_LATE "sg.late"   /* desc, ms: waits, then pulls */
#define S_STOP "sg.stop"
#define SCRATCH (8u << 20)

static uint8_t *scratch_g;

/* ------------------------------------------------------------------ server */

/* Arguments: u32 size, the descriptor, then the rest (dec positioned after it). */
static int sg_args(orpc_call_t *c, orpc_dec_t *d, const void *in, size_t n,
                   orpc_bulk_desc_t *bd)
{
    orpc_dec_init(d, in, n);
    uint32_t sz = orpc_dec_u32(d);
    if (d->err || sz > n - 4)
        return ORPC_EPROTO;
    const void *w = orpc_dec_bytes(d, sz);
    /* The size the descriptor claims agrees with what the client said. */
    if (orpc_bulk_wire_size(w, sz) != sz)
        return ORPC_EPROTO;
    return orpc_bulk_decode_n(c, w, sz, bd);
}

/* Cuts [0, len) of scratch into uneven local pieces (split: how many; 1: one). */
static size_t local_list(orpc_seg_t *segs, size_t len, unsigned split)
{
    size_t n = 0, at = 0;
    static const size_t sizes[] = {1, 0, 4095, 3, 65536, 0, 7};
    for (unsigned i = 0; split > 1 && i + 1 < split && at < len; i++) {
        size_t l = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
        if (l > len - at)
            l = len - at;
        segs[n++] = (orpc_seg_t){scratch_g + at, l};
        at += l;
    }
    segs[n++] = (orpc_seg_t){scratch_g + at, len - at};
    return n;
}

static void h_pull(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_bulk_desc_t bd;
    int rc = sg_args(c, &d, in, n, &bd);
    uint64_t off = orpc_dec_u64(&d), len = orpc_dec_u64(&d);
    uint32_t seed = orpc_dec_u32(&d), split = orpc_dec_u32(&d);
    if (rc == ORPC_OK && (d.err || len > SCRATCH || split > 16))
        rc = ORPC_EPROTO;
    int64_t where = -1;
    if (rc == ORPC_OK) {
        memset(scratch_g, 0x5a, len);
        orpc_seg_t segs[16];
        size_t ns = local_list(segs, len, split);
        if (split == 0) { /* two transfers in flight, contiguous forms */
            rc = orpc_bulk_iget(c, &bd, off, scratch_g, len / 2);
            if (rc == ORPC_OK)
                rc = orpc_bulk_iget(c, &bd, off + len / 2, scratch_g + len / 2, len - len / 2);
            int wrc = orpc_bulk_wait(c);
            rc = rc ? rc : wrc;
        } else {
            rc = orpc_bulk_getv(c, &bd, off, segs, ns);
        }
        if (rc == ORPC_OK && (where = t_check(scratch_g, off, len, seed)) >= 0)
            rc = 1000; /* data wrong */
    }
    orpc_respond(c, rc, &where, sizeof(where));
}

static void h_push(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_bulk_desc_t bd;
    int rc = sg_args(c, &d, in, n, &bd);
    uint64_t off = orpc_dec_u64(&d), len = orpc_dec_u64(&d);
    uint32_t seed = orpc_dec_u32(&d), split = orpc_dec_u32(&d);
    if (rc == ORPC_OK && (d.err || len > SCRATCH || split > 16))
        rc = ORPC_EPROTO;
    if (rc == ORPC_OK) {
        t_fill(scratch_g, off, len, seed);
        orpc_seg_t segs[16];
        size_t ns = local_list(segs, len, split);
        rc = split == 0 ? orpc_bulk_put(c, &bd, off, scratch_g, len)
                        : orpc_bulk_putv(c, &bd, off, segs, ns);
    }
    orpc_respond(c, rc, NULL, 0);
}

static void h_bad(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    int32_t rcs[12];
    orpc_dec_t d;
    orpc_bulk_desc_t bd, bd2;
    for (int i = 0; i < 12; i++)
        rcs[i] = -999;
    const uint8_t *w = (const uint8_t *)in + 4;
    size_t sz = n >= 4 ? n - 4 : 0;
    rcs[0] = sg_args(c, &d, in, n, &bd);
    if (rcs[0] == ORPC_OK) {
        orpc_seg_t one = {scratch_g, 8};
        rcs[1] = orpc_bulk_get(c, &bd, 0, scratch_g, bd.len + 1);          /* too long */
        rcs[2] = orpc_bulk_get(c, &bd, bd.len, scratch_g, 1);              /* past the end */
        rcs[3] = orpc_bulk_getv(c, &bd, UINT64_MAX - 2, &one, 1);          /* wraps */
        rcs[4] = orpc_bulk_putv(c, &bd, 0, &one, 1);                       /* read-only */
        rcs[5] = orpc_bulk_decode(c, w, &bd2);      /* 128 bytes only: a longer one refused */
        rcs[6] = orpc_bulk_decode_n(c, w, sz - 1, &bd2);                   /* one byte short */
        uint8_t *alt = malloc(sz);
        memcpy(alt, w, sz);
        alt[sz - 1] ^= 1; /* the extension altered */
        rcs[7] = orpc_bulk_decode_n(c, alt, sz, &bd2);
        free(alt);
        orpc_bulk_desc_t bd3 = bd; /* a handler's own mistake: more segments than there are */
        bd3.nseg = ORPC_BULK_SEG_MAX + 1;
        rcs[8] = orpc_bulk_get(c, &bd3, 0, scratch_g, 1);
        rcs[9] = orpc_bulk_get(c, &bd, 0, scratch_g, bd.len); /* allowed */
        orpc_seg_t bad = {NULL, 4};
        rcs[10] = orpc_bulk_getv(c, &bd, 0, &bad, 1); /* local NULL */
        rcs[11] = orpc_bulk_getv(c, &bd, 0, NULL, 0); /* nothing: fine */
    }
    orpc_respond(c, 0, rcs, sizeof(rcs));
}

static void h_late(orpc_call_t *c, const void *in, size_t n, void *arg)
{
    (void)arg;
    orpc_dec_t d;
    orpc_bulk_desc_t bd;
    int rc = sg_args(c, &d, in, n, &bd);
    uint32_t ms = orpc_dec_u32(&d);
    if (rc == ORPC_OK) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        rc = orpc_bulk_get(c, &bd, 0, scratch_g, bd.len < 64 ? bd.len : 64);
    }
    orpc_respond(c, rc, NULL, 0);
}

static int server(const char *addr_file, const char *key_file, const char *prov)
{
    signal(SIGTERM, t_on_term);
    signal(SIGPIPE, SIG_IGN);
    scratch_g = malloc(SCRATCH);
    orpc_opts_t o;
    orpc_opts_init(&o);
    o.listen = 1;
    o.provider = prov;
    o.auth_key_file = key_file;
    orpc_t *rpc;
    CHECK_RC(orpc_open(&o, &rpc), ORPC_OK, "orpc_open");
    orpc_register(rpc, S_PULL, h_pull, NULL, 0, NULL);
    orpc_register(rpc, S_PUSH, h_push, NULL, 0, NULL);
    orpc_register(rpc, S_BAD, h_bad, NULL, 0, NULL);
    orpc_register(rpc, S_LATE, h_late, NULL, 0, NULL);
    orpc_register(rpc, S_STOP, t_h_stop, NULL, 0, NULL);
    t_publish_addr(rpc, addr_file);
    while (!t_stop_g)
        orpc_progress(rpc, 10);
    orpc_stats_t st;
    orpc_stats(rpc, &st);
    printf("server: requests %llu bulk-refused %llu bulk-errors %llu bulk-bytes %llu\n",
           (unsigned long long)st.requests, (unsigned long long)st.bulk_refused,
           (unsigned long long)st.bulk_errors, (unsigned long long)st.bulk_bytes);
    orpc_close(rpc);
    free(scratch_g);
    return 0;
}

/* ------------------------------------------------------------------ client */

static orpc_t *rpc_g;
static orpc_peer_t *srv_g;

/* A call carrying b's descriptor, then off, len, seed, split (or ms for LATE). */
static int sg_call(const char *name, orpc_bulk_t *b, uint64_t off, uint64_t len, uint32_t seed,
                   uint32_t split, void *out, size_t out_cap)
{
    static unsigned char a[ORPC_BULK_WIRE_MAX + 64];
    size_t sz = orpc_bulk_encoded_size(b);
    CHECK(sz >= ORPC_BULK_DESC_SIZE && sz <= ORPC_BULK_WIRE_MAX, "encoded size %zu", sz);
    orpc_enc_t e;
    orpc_enc_init(&e, a, sizeof(a));
    orpc_enc_u32(&e, (uint32_t)sz);
    CHECK_RC(orpc_bulk_encode(b, srv_g, orpc_enc_reserve(&e, sz)), 0, "encode");
    if (strcmp(name, S_LATE) == 0) {
        orpc_enc_u32(&e, seed);
    } else if (strcmp(name, S_BAD) != 0) {
        orpc_enc_u64(&e, off);
        orpc_enc_u64(&e, len);
        orpc_enc_u32(&e, seed);
        orpc_enc_u32(&e, split);
    }
    size_t got;
    return orpc_call(rpc_g, srv_g, orpc_id(name), a, e.pos, out, out_cap, &got, 30000);
}

/* Logical byte i of a list lives in segment k at j: the pattern check per segment. */
typedef struct {
    orpc_seg_t seg[ORPC_BULK_SEG_MAX];
    size_t n, total;
} sg_list_t;

static void list_fill(const sg_list_t *l, uint32_t seed)
{
    size_t at = 0;
    for (size_t k = 0; k < l->n; k++) {
        t_fill(l->seg[k].base, at, l->seg[k].len, seed);
        at += l->seg[k].len;
    }
}

/* Checks that logical [off, off+len) holds seed's pattern and the rest holds fill. */
static void list_check(const sg_list_t *l, uint64_t off, uint64_t len, uint32_t seed,
                       uint8_t fill, const char *what)
{
    uint64_t at = 0;
    for (size_t k = 0; k < l->n; k++) {
        const uint8_t *p = l->seg[k].base;
        for (size_t j = 0; j < l->seg[k].len; j++, at++) {
            uint8_t want = at >= off && at < off + len ? t_pat(seed, at) : fill;
            CHECK(p[j] == want, "%s: logical byte %llu (segment %zu byte %zu) is %#x, not %#x",
                  what, (unsigned long long)at, k, j, p[j], want);
        }
    }
}

static void list_clear(const sg_list_t *l, uint8_t fill)
{
    for (size_t k = 0; k < l->n; k++)
        memset(l->seg[k].base, fill, l->seg[k].len);
}

/* Ranges that cross the edges of the pieces (edges: logical offsets where a piece ends). */
static size_t edge_ranges(const uint64_t *edges, size_t nedges, uint64_t total,
                          uint64_t (*rg)[2], size_t max)
{
    size_t n = 0;
    rg[n][0] = 0, rg[n++][1] = total;
    for (size_t i = 0; i < nedges && n + 3 <= max; i++) {
        uint64_t e = edges[i];
        if (e == 0 || e >= total)
            continue;
        rg[n][0] = e - 1, rg[n++][1] = 2 < total - e + 1 ? 2 : total - e + 1; /* 1 B each side */
        uint64_t lo = e > 5000 ? e - 5000 : 0;
        rg[n][0] = lo, rg[n++][1] = (total - lo < 70000 ? total - lo : 70000);
        rg[n][0] = e, rg[n++][1] = total - e; /* from an edge to the end */
    }
    /* Pseudo-random ranges. */
    uint64_t x = 12345;
    for (; n < max; n++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t o = (x >> 20) % total;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t l = (x >> 20) % (total - o + 1);
        rg[n][0] = o, rg[n][1] = l;
    }
    return n;
}

static void run_ranges(orpc_bulk_t *bp, orpc_bulk_t *bw, const sg_list_t *l,
                       const uint64_t *edges, size_t nedges, const char *what)
{
    uint64_t rg[40][2];
    size_t nr = edge_ranges(edges, nedges, l->total, rg, 40);
    list_fill(l, 7);
    for (size_t i = 0; i < nr; i++) {
        int64_t where = -1;
        uint32_t split = (uint32_t)(i % 4 == 3 ? 0 : i % 4 == 0 ? 1 : 5);
        int rc = sg_call(S_PULL, bp, rg[i][0], rg[i][1], 7, split, &where, sizeof(where));
        CHECK(rc == 0, "%s: pull of [%llu,+%llu) split %u: %d (%s), first bad byte %lld", what,
              (unsigned long long)rg[i][0], (unsigned long long)rg[i][1], split, rc,
              orpc_strerror(rc), (long long)where);
    }
    for (size_t i = 0; i < nr; i += 2) {
        list_clear(l, 0xee);
        uint32_t split = (uint32_t)(i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : 7);
        int rc = sg_call(S_PUSH, bw, rg[i][0], rg[i][1], 100 + (uint32_t)i, split, NULL, 0);
        CHECK(rc == 0, "%s: push of [%llu,+%llu): %d (%s)", what, (unsigned long long)rg[i][0],
              (unsigned long long)rg[i][1], rc, orpc_strerror(rc));
        list_check(l, rg[i][0], rg[i][1], 100 + (uint32_t)i, 0xee, what);
    }
    printf("%s: %zu pulls and %zu pushes, ranges crossing piece edges: ok\n", what, nr,
           (nr + 1) / 2);
}

static void mode_list(void)
{
    static const size_t sizes[] = {1, 4095, 0, (1u << 20) + 3, 17, 0, 65536, 5, 1, 300000};
    sg_list_t l = {.n = sizeof(sizes) / sizeof(sizes[0])};
    uint64_t edges[16];
    for (size_t k = 0; k < l.n; k++) {
        /* Separate allocations, odd alignments. */
        l.seg[k].base = (char *)malloc(sizes[k] + 8) + (k % 3);
        l.seg[k].len = sizes[k];
        l.total += sizes[k];
        edges[k] = l.total;
    }
    orpc_bulk_t *br, *bw;
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, l.seg, l.n, ORPC_BULK_READ, -1, &br), 0, "expose_sg");
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, l.seg, l.n, ORPC_BULK_WRITE, -1, &bw), 0, "expose_sg");
    /* 32 bytes a segment; under raw memory keys (FI_MR_RAW) 8 + the key
     * rounded to 8 bytes for each registration after the first. */
    size_t sz = orpc_bulk_encoded_size(br), base = ORPC_BULK_DESC_SIZE + 32 * l.n;
    CHECK(sz == base || (sz > base && sz <= ORPC_BULK_WIRE_MAX && sz % 8 == 0),
          "encoded size %zu (list of %zu segments: %zu)", sz, l.n, base);
    run_ranges(br, bw, &l, edges, l.n, "list");
    orpc_bulk_release(br);
    orpc_bulk_release(bw);
    /* Adjacent slices of one buffer: pieces join across segment edges. */
    static const size_t cuts[] = {1, 4095, 65536, 0, 100000, 7, 130361};
    char *one = malloc(300000);
    sg_list_t a = {.n = sizeof(cuts) / sizeof(cuts[0])};
    for (size_t k = 0, at = 0; k < a.n; k++) {
        a.seg[k] = (orpc_seg_t){one + at, cuts[k]};
        at += cuts[k];
        a.total += cuts[k];
        edges[k] = a.total;
    }
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, a.seg, a.n, ORPC_BULK_RW, -1, &br), 0, "expose adjacent");
    run_ranges(br, br, &a, edges, a.n, "adjacent list");
    orpc_bulk_release(br);
    free(one);
    /* The most segments a descriptor takes, 1 byte each but one. */
    sg_list_t m = {.n = ORPC_BULK_SEG_MAX};
    char *big = malloc(ORPC_BULK_SEG_MAX * 2 + 4096);
    for (size_t k = 0; k < m.n; k++) {
        m.seg[k].base = big + 2 * k; /* gaps of one byte between segments */
        m.seg[k].len = k == m.n - 1 ? 4096 : 1;
        m.total += m.seg[k].len;
        if (k < 16)
            edges[k] = m.total;
    }
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, m.seg, m.n, ORPC_BULK_RW, -1, &br), 0, "expose 64");
    CHECK(orpc_bulk_encoded_size(br) == ORPC_BULK_WIRE_MAX, "64 segments encode to %zu",
          orpc_bulk_encoded_size(br));
    memset(big, 0x11, ORPC_BULK_SEG_MAX * 2 + 4096);
    run_ranges(br, br, &m, edges, 16, "list of 64");
    for (size_t k = 0; k + 1 < m.n; k++)
        CHECK((uint8_t)big[2 * k + 1] == 0x11, "gap byte %zu between segments written", k);
    orpc_bulk_release(br);
    /* 64 segments far apart, each its own registration: under raw memory
     * keys (FI_MR_RAW) their keys do not fit one descriptor, and one
     * registration over the span carries them instead. */
    sg_list_t f = {.n = ORPC_BULK_SEG_MAX};
    char *far = malloc(ORPC_BULK_SEG_MAX * 8192);
    memset(far, 0x22, ORPC_BULK_SEG_MAX * 8192);
    for (size_t k = 0; k < f.n; k++) {
        f.seg[k] = (orpc_seg_t){far + 8192 * k, 64};
        f.total += 64;
        if (k < 16)
            edges[k] = f.total;
    }
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, f.seg, f.n, ORPC_BULK_RW, -1, &br), 0, "expose 64 apart");
    CHECK(orpc_bulk_encoded_size(br) <= ORPC_BULK_WIRE_MAX, "64 segments apart encode to %zu",
          orpc_bulk_encoded_size(br));
    run_ranges(br, br, &f, edges, 16, "list of 64 apart");
    for (size_t k = 0; k + 1 < f.n; k++)
        CHECK((uint8_t)far[8192 * k + 64] == 0x22, "byte after segment %zu written", k);
    orpc_bulk_release(br);
    free(far);
    /* One more is refused, with a reason. */
    orpc_seg_t many[ORPC_BULK_SEG_MAX + 1];
    for (size_t k = 0; k <= ORPC_BULK_SEG_MAX; k++)
        many[k] = (orpc_seg_t){big + k, 1};
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, many, ORPC_BULK_SEG_MAX + 1, ORPC_BULK_READ, -1, &br),
             ORPC_ERANGE, "65 segments");
    orpc_seg_t hole = {NULL, 10};
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, &hole, 1, ORPC_BULK_READ, -1, &br), ORPC_EINVAL,
             "NULL segment");
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, many, 0, ORPC_BULK_READ, -1, &br), ORPC_EINVAL,
             "no segments");
    free(big);
    for (size_t k = 0; k < l.n; k++)
        free((char *)l.seg[k].base - (k % 3));
    printf("list: ok\n");
}

static void mode_strided(void)
{
    /* A 300 x 1000-byte array; the block of rows 10..109, bytes 37..549. */
    enum { ROWS = 300, PITCH = 1000, R0 = 10, NR = 100, C0 = 37, RB = 513 };
    uint8_t *arr = malloc(ROWS * PITCH);
    uint64_t edges[NR], total = (uint64_t)NR * RB;
    for (size_t k = 0; k < NR; k++)
        edges[k] = (k + 1) * RB; /* where rows end */
    orpc_bulk_t *br, *bw;
    uint8_t *base = arr + R0 * PITCH + C0;
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, base, NR, RB, PITCH, ORPC_BULK_READ, -1, &br), 0,
             "expose_strided");
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, base, NR, RB, PITCH, ORPC_BULK_WRITE, -1, &bw), 0,
             "expose_strided");
    CHECK(orpc_bulk_encoded_size(br) == ORPC_BULK_DESC_SIZE + 32, "strided encodes to %zu",
          orpc_bulk_encoded_size(br));
    uint64_t rg[40][2];
    size_t nr = edge_ranges(edges, NR, total, rg, 40);
    memset(arr, 0x33, ROWS * PITCH);
    for (size_t r = 0; r < NR; r++)
        t_fill(base + r * PITCH, r * RB, RB, 9);
    for (size_t i = 0; i < nr; i++) {
        int64_t where = -1;
        int rc = sg_call(S_PULL, br, rg[i][0], rg[i][1], 9, (uint32_t)(i % 2 ? 5 : 1), &where,
                         sizeof(where));
        CHECK(rc == 0, "strided pull of [%llu,+%llu): %d (%s), first bad %lld",
              (unsigned long long)rg[i][0], (unsigned long long)rg[i][1], rc, orpc_strerror(rc),
              (long long)where);
    }
    for (size_t i = 0; i < nr; i += 3) {
        memset(arr, 0x33, ROWS * PITCH);
        uint32_t seed = 200 + (uint32_t)i;
        int rc = sg_call(S_PUSH, bw, rg[i][0], rg[i][1], seed, (uint32_t)(i % 2 ? 7 : 0), NULL, 0);
        CHECK(rc == 0, "strided push of [%llu,+%llu): %d (%s)", (unsigned long long)rg[i][0],
              (unsigned long long)rg[i][1], rc, orpc_strerror(rc));
        for (size_t y = 0; y < ROWS; y++)
            for (size_t x = 0; x < PITCH; x++) {
                uint8_t want = 0x33;
                if (y >= R0 && y < R0 + NR && x >= C0 && x < C0 + RB) {
                    uint64_t at = (y - R0) * RB + (x - C0);
                    if (at >= rg[i][0] && at < rg[i][0] + rg[i][1])
                        want = t_pat(seed, at);
                }
                CHECK(arr[y * PITCH + x] == want, "strided push [%llu,+%llu): (%zu,%zu) is %#x, "
                      "not %#x", (unsigned long long)rg[i][0], (unsigned long long)rg[i][1], y,
                      x, arr[y * PITCH + x], want);
            }
    }
    orpc_bulk_release(br);
    orpc_bulk_release(bw);
    /* Shapes refused. */
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, base, 2, 100, 99, ORPC_BULK_READ, -1, &br),
             ORPC_EINVAL, "pitch below the row");
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, base, (size_t)1 << 40, (size_t)1 << 40, 1ull << 40,
                                      ORPC_BULK_READ, -1, &br), ORPC_ERANGE, "huge block");
    /* Full-width rows (pitch = row_bytes): one contiguous block. */
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, arr, 50, PITCH, PITCH, ORPC_BULK_RW, -1, &br), 0,
             "full rows");
    memset(arr, 0x33, ROWS * PITCH);
    CHECK_RC(sg_call(S_PUSH, br, 999, 30002, 12, 7, NULL, 0), 0, "full-row push");
    for (size_t i = 0; i < ROWS * PITCH; i++)
        CHECK(arr[i] == (i >= 999 && i < 999 + 30002 ? t_pat(12, i) : 0x33),
              "full-row push: byte %zu", i);
    int64_t w2;
    CHECK_RC(sg_call(S_PULL, br, 0, 50 * PITCH, 44, 5, &w2, sizeof(w2)), 1000,
             "full-row pull of data that is not the pattern");
    t_fill(arr, 0, 50 * PITCH, 44);
    CHECK_RC(sg_call(S_PULL, br, 0, 50 * PITCH, 44, 5, &w2, sizeof(w2)), 0, "full-row pull");
    orpc_bulk_release(br);
    /* One row: the pitch does not matter. */
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, base, 1, RB, 0, ORPC_BULK_READ, -1, &br), 0,
             "one row");
    t_fill(base, 0, RB, 4);
    int64_t where;
    CHECK_RC(sg_call(S_PULL, br, 0, RB, 4, 5, &where, sizeof(where)), 0, "one-row pull");
    orpc_bulk_release(br);
    free(arr);
    printf("strided: %zu pulls and %zu pushes of a %dx%d block: ok\n", nr, (nr + 2) / 3, NR, RB);
}

static void mode_empty(void)
{
    char a[8] = "abcdefg";
    orpc_seg_t z[3] = {{a, 0}, {NULL, 0}, {a + 3, 0}};
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, z, 3, ORPC_BULK_RW, -1, &b), 0, "expose empty list");
    int64_t where;
    CHECK_RC(sg_call(S_PULL, b, 0, 0, 1, 1, &where, sizeof(where)), 0, "pull of nothing");
    CHECK_RC(sg_call(S_PULL, b, 0, 1, 1, 1, &where, sizeof(where)), ORPC_ERANGE,
             "pull of 1 byte of nothing");
    orpc_bulk_release(b);
    /* Empty segments around a real one. */
    orpc_seg_t s[4] = {{a, 0}, {a, 5}, {a + 5, 0}, {a + 5, 0}};
    sg_list_t l = {.n = 4, .total = 5};
    memcpy(l.seg, s, sizeof(s));
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, s, 4, ORPC_BULK_RW, -1, &b), 0, "expose");
    list_fill(&l, 3);
    CHECK_RC(sg_call(S_PULL, b, 0, 5, 3, 5, &where, sizeof(where)), 0, "pull around empties");
    CHECK_RC(sg_call(S_PULL, b, 5, 0, 3, 1, &where, sizeof(where)), 0, "empty pull at the end");
    list_clear(&l, 0);
    CHECK_RC(sg_call(S_PUSH, b, 1, 4, 8, 5, NULL, 0), 0, "push around empties");
    list_check(&l, 1, 4, 8, 0, "push around empties");
    CHECK(a[5] == 'f', "push wrote past the list");
    orpc_bulk_release(b);
    /* An empty strided block. */
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, NULL, 0, 10, 20, ORPC_BULK_READ, -1, &b), 0,
             "no rows");
    CHECK_RC(sg_call(S_PULL, b, 0, 0, 1, 1, &where, sizeof(where)), 0, "pull of no rows");
    CHECK_RC(sg_call(S_PULL, b, 0, 1, 1, 1, &where, sizeof(where)), ORPC_ERANGE,
             "pull past no rows");
    orpc_bulk_release(b);
    printf("empty: ok\n");
}

static void mode_bad(void)
{
    char *buf = malloc(10000);
    orpc_seg_t s[3] = {{buf, 100}, {buf + 1000, 4000}, {buf + 6000, 7}};
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, s, 3, ORPC_BULK_READ, -1, &b), 0, "expose");
    int32_t rcs[12];
    CHECK_RC(sg_call(S_BAD, b, 0, 0, 0, 0, rcs, sizeof(rcs)), 0, "bad");
    CHECK_RC(rcs[0], ORPC_OK, "decode");
    CHECK_RC(rcs[1], ORPC_ERANGE, "get longer than the descriptor");
    CHECK_RC(rcs[2], ORPC_ERANGE, "get past the end");
    CHECK_RC(rcs[3], ORPC_ERANGE, "getv with a wrapping offset");
    CHECK_RC(rcs[4], ORPC_EPERM, "putv into a read-only descriptor");
    CHECK_RC(rcs[5], ORPC_ERANGE, "orpc_bulk_decode of a list descriptor");
    CHECK_RC(rcs[6], ORPC_ERANGE, "decode of a descriptor cut short");
    CHECK_RC(rcs[7], ORPC_EAUTH, "altered segment list");
    CHECK_RC(rcs[8], ORPC_EINVAL, "descriptor with too many segments");
    CHECK_RC(rcs[9], ORPC_OK, "allowed get");
    CHECK_RC(rcs[10], ORPC_EINVAL, "NULL local segment");
    CHECK_RC(rcs[11], ORPC_OK, "empty local list");
    orpc_bulk_release(b);
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, buf, 10, 100, 1000, ORPC_BULK_READ, -1, &b), 0,
             "expose strided");
    CHECK_RC(sg_call(S_BAD, b, 0, 0, 0, 0, rcs, sizeof(rcs)), 0, "bad (strided)");
    CHECK_RC(rcs[1], ORPC_ERANGE, "strided: get longer than the block");
    CHECK_RC(rcs[2], ORPC_ERANGE, "strided: get past the end");
    CHECK_RC(rcs[4], ORPC_EPERM, "strided: put into read-only");
    CHECK_RC(rcs[5], ORPC_ERANGE, "strided: orpc_bulk_decode");
    CHECK_RC(rcs[7], ORPC_EAUTH, "strided: altered shape");
    CHECK_RC(rcs[9], ORPC_OK, "strided: allowed get");
    orpc_bulk_release(b);
    free(buf);
    printf("bad: ok\n");
}

static void mode_expire(void)
{
    char buf[256], buf2[100];
    orpc_seg_t s[2] = {{buf, sizeof(buf)}, {buf2, sizeof(buf2)}};
    orpc_bulk_t *b;
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, s, 2, ORPC_BULK_READ, 200, &b), 0, "expose");
    CHECK_RC(sg_call(S_LATE, b, 0, 0, 400, 0, NULL, 0), ORPC_EEXPIRED, "list after the deadline");
    orpc_bulk_release(b);
    CHECK_RC(orpc_bulk_expose_strided(rpc_g, buf, 4, 10, 50, ORPC_BULK_READ, 200, &b), 0,
             "expose");
    CHECK_RC(sg_call(S_LATE, b, 0, 0, 400, 0, NULL, 0), ORPC_EEXPIRED,
             "strided after the deadline");
    /* Within its life it works. */
    orpc_bulk_release(b);
    CHECK_RC(orpc_bulk_expose_sg(rpc_g, s, 2, ORPC_BULK_READ, 5000, &b), 0, "expose");
    CHECK_RC(sg_call(S_LATE, b, 0, 0, 10, 0, NULL, 0), 0, "list within the deadline");
    orpc_bulk_release(b);
    printf("expire: ok\n");
}

static void read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    CHECK(fgets(buf, (int)len, f) != NULL, "empty %s", path);
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "server") == 0)
        return server(argv[2], argv[3], argv[4]);
    if (argc != 5 || strcmp(argv[1], "client") != 0) {
        fprintf(stderr, "usage: %s server ADDRFILE KEYFILE PROVIDER | client ADDRFILE KEYFILE "
                        "list|strided|empty|bad|expire|stop\n", argv[0]);
        return 2;
    }
    char addr[ORPC_ADDR_STRLEN], key[300];
    read_line(argv[2], addr, sizeof(addr));
    snprintf(key, sizeof(key), "@%s", argv[3]);
    CHECK_RC(orpc_open(NULL, &rpc_g), ORPC_OK, "orpc_open");
    CHECK_RC(orpc_lookup(rpc_g, addr, key, &srv_g), ORPC_OK, "orpc_lookup");
    const char *m = argv[4];
    if (strcmp(m, "list") == 0)
        mode_list();
    else if (strcmp(m, "strided") == 0)
        mode_strided();
    else if (strcmp(m, "empty") == 0)
        mode_empty();
    else if (strcmp(m, "bad") == 0)
        mode_bad();
    else if (strcmp(m, "expire") == 0)
        mode_expire();
    else if (strcmp(m, "stop") == 0) {
        size_t got;
        CHECK_RC(orpc_call(rpc_g, srv_g, orpc_id(S_STOP), NULL, 0, NULL, 0, &got, 5000), 0,
                 "stop");
    } else {
        fprintf(stderr, "unknown mode %s\n", m);
        return 2;
    }
    orpc_peer_release(srv_g);
    orpc_close(rpc_g);
    return 0;
}
