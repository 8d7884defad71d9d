// SPDX-License-Identifier: BSD-3-Clause
//
// Strided transfers through every road of the conduit's strided engine
// (issue 30): packed messages the target scatters or gathers, span reads
// scattered here, one RMA per block, and the same-host copy loop. Run with
// SHMEM_STRIDED=auto|messages|span|blocks to force each road; the shapes
// below cross the size limits the automatic choice uses (blocks of 8 KiB,
// one message of ~16 KiB, 1 MiB span pieces) and the element sizes 1, 2, 4,
// 8 and 16 (long double), in typed, sized, generic and context forms.
//
// Every element of every destination range is checked, and so are the gaps
// a stride leaves (they must stay 0) and a tail after the last element.
// Also: zero counts (nothing written), one block whose stride is smaller
// than the block, a source stride smaller than the block (overlapping
// reads), contiguous nbi puts to the gaps between the strided elements
// before one quiet, a created context, all PEs at once at PE 0 (np > 2),
// and a target that computes without calling the library while PE 0 puts
// to it and gets from it (its progress thread serves the messages).
//   ARGS: huge   adds 2^20 8-byte elements at stride 2 (16 MiB span)
//         small  leaves out the 200001-element shape (the one-RMA-per-block
//                road takes a minute for it)
#include <complex.h>

#include "pe_check.h"

typedef void (*sfn_t)(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss,
                      size_t bs, size_t nb, int pe);

typedef struct {
    const char *name;
    size_t es;
    sfn_t put, get;
} form_t;

// One signature for every form; the plain iput/iget forms take bs == 1.
#define FORM_I(N, T, PUT, GET)                                                                \
    static void p_##N(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss,     \
                      size_t bs, size_t nb, int pe)                                          \
    {                                                                                        \
        (void)c;                                                                             \
        if (bs == 1)                                                                         \
            PUT(d, s, ds, ss, nb, pe);                                                       \
        else                                                                                 \
            shmem_ibput##T(d, s, ds, ss, bs, nb, pe);                                        \
    }                                                                                        \
    static void g_##N(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss,     \
                      size_t bs, size_t nb, int pe)                                          \
    {                                                                                        \
        (void)c;                                                                             \
        if (bs == 1)                                                                         \
            GET(d, s, ds, ss, nb, pe);                                                       \
        else                                                                                 \
            shmem_ibget##T(d, s, ds, ss, bs, nb, pe);                                        \
    }

FORM_I(s8, 8, shmem_iput8, shmem_iget8)
FORM_I(s16, 16, shmem_iput16, shmem_iget16)
FORM_I(s32, 32, shmem_iput32, shmem_iget32)
FORM_I(s64, 64, shmem_iput64, shmem_iget64)
FORM_I(s128, 128, shmem_iput128, shmem_iget128)

// Typed and context forms.
#define FORM_T(N, T, TN)                                                                      \
    static void p_##N(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss,     \
                      size_t bs, size_t nb, int pe)                                          \
    {                                                                                        \
        if (bs == 1)                                                                         \
            shmem_ctx_##TN##_iput(c, d, s, ds, ss, nb, pe);                                  \
        else                                                                                 \
            shmem_ctx_##TN##_ibput(c, d, s, ds, ss, bs, nb, pe);                             \
    }                                                                                        \
    static void g_##N(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss,     \
                      size_t bs, size_t nb, int pe)                                          \
    {                                                                                        \
        if (bs == 1)                                                                         \
            shmem_ctx_##TN##_iget(c, d, s, ds, ss, nb, pe);                                  \
        else                                                                                 \
            shmem_ctx_##TN##_ibget(c, d, s, ds, ss, bs, nb, pe);                             \
    }

FORM_T(char, char, char)
FORM_T(short, short, short)
FORM_T(int, int, int)
FORM_T(long, long, long)
FORM_T(ld, long double, longdouble)

// C11 generic selection, default context.
static void p_gen(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t bs,
                  size_t nb, int pe)
{
    (void)c;
    if (bs == 1)
        shmem_iput((double *)d, (const double *)s, ds, ss, nb, pe);
    else
        shmem_ibput((double *)d, (const double *)s, ds, ss, bs, nb, pe);
}
static void g_gen(shmem_ctx_t c, void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t bs,
                  size_t nb, int pe)
{
    (void)c;
    if (bs == 1)
        shmem_iget((double *)d, (const double *)s, ds, ss, nb, pe);
    else
        shmem_ibget((double *)d, (const double *)s, ds, ss, bs, nb, pe);
}

static const form_t forms[] = {
    {"iput8/iget8", 1, p_s8, g_s8},           {"iput16/iget16", 2, p_s16, g_s16},
    {"iput32/iget32", 4, p_s32, g_s32},       {"iput64/iget64", 8, p_s64, g_s64},
    {"iput128/iget128", 16, p_s128, g_s128},  {"ctx_char", 1, p_char, g_char},
    {"ctx_short", sizeof(short), p_short, g_short},
    {"ctx_int", sizeof(int), p_int, g_int},   {"ctx_long", sizeof(long), p_long, g_long},
    {"ctx_longdouble", sizeof(long double), p_ld, g_ld},
    {"generic double", sizeof(double), p_gen, g_gen},
};
#define NFORMS (int)(sizeof forms / sizeof forms[0])

typedef struct {
    ptrdiff_t ds, ss;
    size_t bs, nb;
    int all_forms; // 0: only the 1-byte and 8-byte sized forms (large shapes)
} shape_t;

// Strides and blocks in elements.
static const shape_t shapes[] = {
    {2, 1, 1, 4096, 1},     // the benchmark's case
    {1, 1, 1, 1000, 1},     // contiguous through the strided calls
    {3, 7, 1, 777, 1},      // odd strides
    {1000, 1, 1, 300, 1},   // sparse destination: messages, never a span
    {1, 1000, 1, 300, 1},   // sparse source
    {5, 3, 3, 500, 1},      // odd blocks
    {65, 64, 64, 100, 1},   // 64-element blocks
    {4, 2, 5, 1, 1},        // one block, stride smaller than the block
    {5, 2, 5, 40, 1},       // source stride below the block: overlapping reads
    {1300, 1200, 1200, 9, 0},   // 8-byte blocks of 9600 B: one RMA per block
    {16100, 16080, 16080, 3, 0}, // 1-byte blocks that just fit one message
    {16100, 16081, 16081, 3, 0}, // and one byte more
    {3, 2, 1, 200001, 0},   // a span above 1 MiB for 8-byte elements: pieces
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])
#define TAIL 7

static size_t span_of(ptrdiff_t st, size_t bs, size_t nb)
{
    return nb ? (nb - 1) * (size_t)st + bs : 0;
}

// Source element that lands on destination element e (-1: a gap).
static long src_elem(const shape_t *s, size_t e)
{
    if (s->nb == 1) // one block: its stride does not matter
        return e < s->bs ? (long)e : -1;
    size_t b = e / (size_t)s->ds, k = e % (size_t)s->ds;
    if (b >= s->nb || k >= s->bs)
        return -1;
    return (long)(b * (size_t)s->ss + k);
}

static uint8_t *sym_dst, *sym_src, *loc_src, *loc_dst;
static size_t cap_bytes;

// Checks a destination of shape s written from src_pe's pattern tag; names
// the first wrong element.
static void check_dst(const form_t *f, const shape_t *s, const uint8_t *base, int src_pe,
                      uint32_t tag, const char *dir, const char *ctxname)
{
    size_t len = span_of(s->ds, s->bs, s->nb) + TAIL;
    pe_checks_g++;
    for (size_t e = 0; e < len; e++) {
        long se = src_elem(s, e);
        for (size_t j = 0; j < f->es; j++) {
            uint8_t want = se >= 0 ? pe_pattern(src_pe, tag, (uint64_t)se * f->es + j) : 0;
            uint8_t got = base[e * f->es + j];
            if (got != want) {
                pe_fail("%s %s (%s) dst_stride %td src_stride %td bsize %zu nblocks %zu: "
                        "element %zu byte %zu %s (PE %d's): expected 0x%02x got 0x%02x",
                        f->name, dir, ctxname, s->ds, s->ss, s->bs, s->nb, e, j,
                        se >= 0 ? "from the source" : "is a gap, must stay 0", src_pe, want,
                        got);
                return;
            }
        }
    }
}

static void run_case(const form_t *f, const shape_t *s, uint32_t tag, shmem_ctx_t ctx,
                     const char *ctxname, int nbi_gaps)
{
    const int me = pe_me_g, right = pe_right(), left = pe_left();
    size_t dlen = (span_of(s->ds, s->bs, s->nb) + TAIL) * f->es;
    size_t slen = (span_of(s->ss, s->bs, s->nb) + TAIL) * f->es;
    if (dlen > cap_bytes || slen > cap_bytes) {
        pe_fail("test bug: shape needs %zu/%zu bytes, %zu allocated", dlen, slen, cap_bytes);
        return;
    }
    memset(sym_dst, 0, dlen);
    memset(loc_dst, 0, dlen);
    pe_fill(sym_src, slen, me, tag, 0);
    pe_fill(loc_src, slen, me, tag, 0);
    shmem_barrier_all();
    pe_step("%s (%s) ds %td ss %td bs %zu nb %zu", f->name, ctxname, s->ds, s->ss, s->bs, s->nb);
    f->put(ctx, sym_dst, loc_src, s->ds, s->ss, s->bs, s->nb, right);
    if (nbi_gaps && s->bs == 1 && s->ds >= 2) {
        // Contiguous nbi puts into the gaps the strided put leaves, before
        // one quiet: both must land, neither over the other.
        for (size_t b = 0; b < s->nb; b += 97)
            shmem_ctx_putmem_nbi(ctx, sym_dst + (b * (size_t)s->ds + 1) * f->es, loc_src,
                                 f->es, right);
    }
    f->get(ctx, loc_dst, sym_src, s->ds, s->ss, s->bs, s->nb, left);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    if (nbi_gaps && s->bs == 1 && s->ds >= 2) {
        for (size_t b = 0; b < s->nb; b += 97) {
            uint8_t *p = sym_dst + (b * (size_t)s->ds + 1) * f->es;
            char what[160];
            snprintf(what, sizeof what, "%s nbi put into the gap after element %zu (PE %d's)",
                     f->name, b * (size_t)s->ds, left);
            pe_check_fill(p, f->es, left, tag, 0, what);
            memset(p, 0, f->es); // so the strided check sees a gap
        }
    }
    check_dst(f, s, sym_dst, left, tag, "put", ctxname);
    check_dst(f, s, loc_dst, left, tag, "get", ctxname);
}

// Zero counts: nothing is written, whatever the strides.
static void run_zero(void)
{
    pe_step("zero counts");
    memset(sym_dst, 0, 64);
    shmem_barrier_all();
    shmem_iput64(sym_dst, loc_src, 2, 1, 0, pe_right());
    shmem_ibput64(sym_dst, loc_src, 2, 1, 0, 5, pe_right());
    shmem_ibput64(sym_dst, loc_src, 2, 1, 3, 0, pe_right());
    memset(loc_dst, 0, 64);
    shmem_iget64(loc_dst, sym_src, 1, 2, 0, pe_left());
    shmem_ibget64(loc_dst, sym_src, 1, 2, 0, 4, pe_left());
    shmem_quiet();
    shmem_barrier_all();
    pe_check_byte(sym_dst, 64, 0, "zero-count iput/ibput wrote into the destination");
    pe_check_byte(loc_dst, 64, 0, "zero-count iget/ibget wrote into the destination");
}

// All PEs at PE 0 at once: its message buffers and answers under load.
static void run_fan_in(void)
{
    const int me = pe_me_g, n = pe_npes_g;
    const size_t nel = 3000, es = 8;
    pe_step("fan-in: every PE to PE 0");
    size_t region = (2 * nel + TAIL) * es; // one region per sender on PE 0
    if (region * (size_t)n > cap_bytes)
        return;
    memset(sym_dst, 0, region * (size_t)n);
    pe_fill(loc_src, nel * es, me, 777, 0);
    pe_fill(sym_src, 2 * nel * es, me, 778, 0);
    shmem_barrier_all();
    shmem_iput64(sym_dst + region * (size_t)me, loc_src, 2, 1, nel, 0);
    memset(loc_dst, 0, nel * es);
    shmem_iget64(loc_dst, sym_src, 1, 2, nel, 0); // PE 0's source
    shmem_quiet();
    shmem_barrier_all();
    for (size_t k = 0; k < nel; k++) {
        char what[128];
        snprintf(what, sizeof what, "fan-in iget element %zu from PE 0", k);
        if (pe_check_fill(loc_dst + k * es, es, 0, 778, 2 * k * es, what))
            break;
    }
    if (me == 0)
        for (int p = 0; p < n; p++)
            for (size_t k = 0; k < nel; k++) {
                char what[128];
                snprintf(what, sizeof what, "fan-in iput from PE %d element %zu", p, k);
                const uint8_t *d = sym_dst + region * (size_t)p + 2 * k * es;
                if (pe_check_fill(d, es, p, 777, k * es, what) ||
                    pe_check_byte(d + es, es, 0, "fan-in iput gap"))
                    break;
            }
    shmem_barrier_all();
}

// PE 1 computes without calling the library while PE 0 puts and gets.
static long *busy_flag;
static void run_busy_target(void)
{
    const int me = pe_me_g;
    const size_t nel = 4096, es = 8;
    pe_step("busy target");
    memset(sym_dst, 0, (2 * nel + TAIL) * es);
    pe_fill(sym_src, 2 * nel * es, me, 901, 0);
    pe_fill(loc_src, nel * es, me, 902, 0);
    *busy_flag = 0;
    shmem_barrier_all();
    if (me == 1) {
        volatile long *flag = busy_flag;
        volatile double x = 1.0;
        while (*flag == 0) // no library call: only its progress thread serves PE 0
            x = x * 1.0000001 + 1e-9;
    } else if (me == 0) {
        for (int round = 0; round < 5; round++) {
            shmem_iput64(sym_dst, loc_src, 2, 1, nel, 1);
            memset(loc_dst, 0, nel * es);
            shmem_iget64(loc_dst, sym_src, 1, 3, nel / 2, 1);
            shmem_quiet();
            for (size_t k = 0; k < nel / 2; k++) {
                char what[128];
                snprintf(what, sizeof what, "iget from a computing PE 1, round %d, element %zu",
                         round, k);
                if (pe_check_fill(loc_dst + k * es, es, 1, 901, 3 * k * es, what))
                    break;
            }
        }
        shmem_long_atomic_set(busy_flag, 1, 1);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == 1)
        for (size_t k = 0; k < nel; k++) {
            char what[128];
            snprintf(what, sizeof what, "iput to a computing PE 1, element %zu", k);
            if (pe_check_fill(sym_dst + 2 * k * es, es, 0, 902, k * es, what))
                break;
        }
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("rma_strided_paths");
    int huge = argc > 1 && strcmp(argv[1], "huge") == 0;
    int small = argc > 1 && strcmp(argv[1], "small") == 0;
    // The largest shape: 200001 elements at stride 3 of 16 bytes; huge: 2^21 x 8.
    cap_bytes = huge ? ((size_t)2 << 20) * 8 + 4096 : (size_t)(3 * 200001 + 64) * 16;
    sym_dst = shmem_malloc(cap_bytes);
    sym_src = shmem_malloc(cap_bytes);
    busy_flag = shmem_malloc(sizeof(long));
    loc_src = malloc(cap_bytes);
    loc_dst = malloc(cap_bytes);
    if (!sym_dst || !sym_src || !busy_flag || !loc_src || !loc_dst) {
        pe_fail("allocation of 2 x %zu bytes failed", cap_bytes);
        shmem_global_exit(1);
    }
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    uint32_t tag = 1;
    for (int si = 0; si < NSHAPES; si++) {
        const shape_t *s = &shapes[si];
        if (small && s->nb > 100000)
            continue;
        for (int fi = 0; fi < NFORMS; fi++) {
            if (!s->all_forms && forms[fi].es != 1 && forms[fi].es != 8)
                continue;
            int use_ctx = (fi + si) % 3 == 0;
            run_case(&forms[fi], s, tag++, use_ctx ? ctx : SHMEM_CTX_DEFAULT,
                     use_ctx ? "created context" : "default context", si == 0 || si == 2);
        }
    }
    if (huge) {
        shape_t h = {2, 1, 1, (size_t)1 << 20, 0};
        run_case(&forms[3], &h, tag++, SHMEM_CTX_DEFAULT, "default context", 0);
        shape_t hb = {3, 3, 2, (size_t)1 << 19, 0};
        run_case(&forms[3], &hb, tag++, ctx, "created context", 0);
    }
    run_zero();
    if (pe_npes_g > 2)
        run_fan_in();
    if (pe_npes_g >= 2)
        run_busy_target();
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    pe_step("finalize");
    shmem_barrier_all();
    shmem_free(busy_flag);
    shmem_free(sym_src);
    shmem_free(sym_dst);
    shmem_finalize();
    return pe_end();
}
