// SPDX-License-Identifier: BSD-3-Clause
//
// Strided RMA: iput/iget with destination and source strides of 1, 2, 3 and 7
// (all 16 pairs, 1, 13 and 100 elements), and ibput/ibget with block sizes
// 1, 2, 5, block counts 1, 4, 9 and several block strides. Typed, ctx and
// sized forms. Every element of every destination range is checked, including
// the gaps a stride must leave untouched (they must stay 0).
//
// ibput/ibget: the spec says the strides are "between consecutive elements",
// scaled by the element size; for block transfers we read that as the distance
// between the starts of consecutive blocks (block b of bsize elements goes
// from source + b*sst to dest + b*dst), which is what Cray SHMEM's ibput does.
// The strides used are >= bsize so blocks never overlap.
#include "pe_check.h"

typedef void (*strided_fn)(void *dest, const void *src, ptrdiff_t ds, ptrdiff_t ss, size_t bsize,
                           size_t nblocks, int pe);

typedef struct form {
    const char *name;
    size_t es;      // element size in bytes
    int blocked;    // 1: ibput/ibget (bsize used); 0: iput/iget (bsize is 1)
    strided_fn put; // to `pe`
    strided_fn get; // from `pe`
} form_t;

// Wrappers with one signature; iput/iget ignore bsize (it is 1 for them).
#define WRAP_I(NAME, PUTCALL, GETCALL)                                                        \
    static void put_##NAME(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t bs,     \
                           size_t nb, int pe)                                                 \
    {                                                                                        \
        (void)bs;                                                                            \
        PUTCALL;                                                                             \
    }                                                                                        \
    static void get_##NAME(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t bs,     \
                           size_t nb, int pe)                                                 \
    {                                                                                        \
        (void)bs;                                                                            \
        GETCALL;                                                                             \
    }

#define CTX SHMEM_CTX_DEFAULT
WRAP_I(long_i, shmem_long_iput(d, s, ds, ss, nb, pe), shmem_long_iget(d, s, ds, ss, nb, pe))
WRAP_I(int_i, shmem_int_iput(d, s, ds, ss, nb, pe), shmem_int_iget(d, s, ds, ss, nb, pe))
WRAP_I(char_i, shmem_char_iput(d, s, ds, ss, nb, pe), shmem_char_iget(d, s, ds, ss, nb, pe))
WRAP_I(ld_i, shmem_longdouble_iput(d, s, ds, ss, nb, pe),
       shmem_longdouble_iget(d, s, ds, ss, nb, pe))
WRAP_I(ctx_double_i, shmem_ctx_double_iput(CTX, d, s, ds, ss, nb, pe),
       shmem_ctx_double_iget(CTX, d, s, ds, ss, nb, pe))
WRAP_I(gen_short_i, shmem_iput((short *)d, (const short *)s, ds, ss, nb, pe),
       shmem_iget((short *)d, (const short *)s, ds, ss, nb, pe))
WRAP_I(i8, shmem_iput8(d, s, ds, ss, nb, pe), shmem_iget8(d, s, ds, ss, nb, pe))
WRAP_I(i16, shmem_iput16(d, s, ds, ss, nb, pe), shmem_iget16(d, s, ds, ss, nb, pe))
WRAP_I(i32, shmem_iput32(d, s, ds, ss, nb, pe), shmem_iget32(d, s, ds, ss, nb, pe))
WRAP_I(i64, shmem_iput64(d, s, ds, ss, nb, pe), shmem_iget64(d, s, ds, ss, nb, pe))
WRAP_I(i128, shmem_iput128(d, s, ds, ss, nb, pe), shmem_iget128(d, s, ds, ss, nb, pe))
WRAP_I(ctx_i32, shmem_ctx_iput32(CTX, d, s, ds, ss, nb, pe),
       shmem_ctx_iget32(CTX, d, s, ds, ss, nb, pe))

#define WRAP_IB(NAME, PUTCALL, GETCALL)                                                       \
    static void put_##NAME(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t bs,     \
                           size_t nb, int pe)                                                 \
    {                                                                                        \
        PUTCALL;                                                                             \
    }                                                                                        \
    static void get_##NAME(void *d, const void *s, ptrdiff_t ds, ptrdiff_t ss, size_t bs,     \
                           size_t nb, int pe)                                                 \
    {                                                                                        \
        GETCALL;                                                                             \
    }

WRAP_IB(long_ib, shmem_long_ibput(d, s, ds, ss, bs, nb, pe),
        shmem_long_ibget(d, s, ds, ss, bs, nb, pe))
WRAP_IB(char_ib, shmem_char_ibput(d, s, ds, ss, bs, nb, pe),
        shmem_char_ibget(d, s, ds, ss, bs, nb, pe))
WRAP_IB(ctx_int_ib, shmem_ctx_int_ibput(CTX, d, s, ds, ss, bs, nb, pe),
        shmem_ctx_int_ibget(CTX, d, s, ds, ss, bs, nb, pe))
WRAP_IB(gen_double_ib, shmem_ibput((double *)d, (const double *)s, ds, ss, bs, nb, pe),
        shmem_ibget((double *)d, (const double *)s, ds, ss, bs, nb, pe))
WRAP_IB(ib8, shmem_ibput8(d, s, ds, ss, bs, nb, pe), shmem_ibget8(d, s, ds, ss, bs, nb, pe))
WRAP_IB(ib16, shmem_ibput16(d, s, ds, ss, bs, nb, pe), shmem_ibget16(d, s, ds, ss, bs, nb, pe))
WRAP_IB(ib32, shmem_ibput32(d, s, ds, ss, bs, nb, pe), shmem_ibget32(d, s, ds, ss, bs, nb, pe))
WRAP_IB(ib64, shmem_ibput64(d, s, ds, ss, bs, nb, pe), shmem_ibget64(d, s, ds, ss, bs, nb, pe))
WRAP_IB(ib128, shmem_ibput128(d, s, ds, ss, bs, nb, pe),
        shmem_ibget128(d, s, ds, ss, bs, nb, pe))
WRAP_IB(ctx_ib64, shmem_ctx_ibput64(CTX, d, s, ds, ss, bs, nb, pe),
        shmem_ctx_ibget64(CTX, d, s, ds, ss, bs, nb, pe))

static const form_t forms[] = {
    {"long_iput/iget", sizeof(long), 0, put_long_i, get_long_i},
    {"int_iput/iget", sizeof(int), 0, put_int_i, get_int_i},
    {"char_iput/iget", 1, 0, put_char_i, get_char_i},
    {"longdouble_iput/iget", sizeof(long double), 0, put_ld_i, get_ld_i},
    {"ctx_double_iput/iget", sizeof(double), 0, put_ctx_double_i, get_ctx_double_i},
    {"generic iput/iget (short)", sizeof(short), 0, put_gen_short_i, get_gen_short_i},
    {"iput8/iget8", 1, 0, put_i8, get_i8},
    {"iput16/iget16", 2, 0, put_i16, get_i16},
    {"iput32/iget32", 4, 0, put_i32, get_i32},
    {"iput64/iget64", 8, 0, put_i64, get_i64},
    {"iput128/iget128", 16, 0, put_i128, get_i128},
    {"ctx_iput32/iget32", 4, 0, put_ctx_i32, get_ctx_i32},
    {"long_ibput/ibget", sizeof(long), 1, put_long_ib, get_long_ib},
    {"char_ibput/ibget", 1, 1, put_char_ib, get_char_ib},
    {"ctx_int_ibput/ibget", sizeof(int), 1, put_ctx_int_ib, get_ctx_int_ib},
    {"generic ibput/ibget (double)", sizeof(double), 1, put_gen_double_ib, get_gen_double_ib},
    {"ibput8/ibget8", 1, 1, put_ib8, get_ib8},
    {"ibput16/ibget16", 2, 1, put_ib16, get_ib16},
    {"ibput32/ibget32", 4, 1, put_ib32, get_ib32},
    {"ibput64/ibget64", 8, 1, put_ib64, get_ib64},
    {"ibput128/ibget128", 16, 1, put_ib128, get_ib128},
    {"ctx_ibput64/ibget64", 8, 1, put_ctx_ib64, get_ctx_ib64},
};
#define NFORMS (int)(sizeof forms / sizeof forms[0])

typedef struct shape {
    ptrdiff_t ds, ss;
    size_t bs, nb;
    size_t off;  // element offset of this case's region
    size_t len;  // elements in the region (covers both sides + a tail)
} shape_t;

#define MAX_SHAPES 64
#define TAIL 5 // extra elements after the last one written, must stay 0

static int make_shapes(int blocked, shape_t *sh)
{
    int n = 0;
    if (!blocked) {
        static const ptrdiff_t strides[] = {1, 2, 3, 7};
        static const size_t counts[] = {1, 13, 100};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 3; c++)
                    sh[n++] = (shape_t){strides[a], strides[b], 1, counts[c], 0, 0};
    } else {
        static const size_t bsizes[] = {1, 2, 5};
        static const size_t nblocks[] = {1, 4, 9};
        for (int a = 0; a < 3; a++) {
            size_t bs = bsizes[a];
            const ptrdiff_t dss[] = {(ptrdiff_t)bs, (ptrdiff_t)bs + 1, 2 * (ptrdiff_t)bs + 3};
            const ptrdiff_t sss[] = {(ptrdiff_t)bs, (ptrdiff_t)bs + 2};
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 3; d++)
                    for (int e = 0; e < 2; e++)
                        sh[n++] = (shape_t){dss[d], sss[e], bs, nblocks[c], 0, 0};
        }
    }
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t span_d = (sh[i].nb - 1) * (size_t)sh[i].ds + sh[i].bs;
        size_t span_s = (sh[i].nb - 1) * (size_t)sh[i].ss + sh[i].bs;
        sh[i].len = (span_d > span_s ? span_d : span_s) + TAIL;
        sh[i].off = off;
        off += sh[i].len;
    }
    return n;
}

// Source element written to destination element e, or -1 for a gap.
static long src_elem(const shape_t *s, size_t e)
{
    size_t b = e / (size_t)s->ds, k = e % (size_t)s->ds;
    if (b >= s->nb || k >= s->bs)
        return -1;
    return (long)(b * (size_t)s->ss + k);
}

static void check_region(const form_t *f, const shape_t *s, const uint8_t *base, int src_pe,
                         uint32_t tag, const char *dir)
{
    for (size_t e = 0; e < s->len; e++) {
        char what[220];
        long se = src_elem(s, e);
        const uint8_t *p = base + (s->off + e) * f->es;
        if (se >= 0) {
            snprintf(what, sizeof what,
                     "%s %s dst_stride %td src_stride %td bsize %zu n %zu: element %zu (from "
                     "source element %ld of PE %d)",
                     f->name, dir, s->ds, s->ss, s->bs, s->nb, e, se, src_pe);
            pe_check_fill(p, f->es, src_pe, tag, (uint64_t)se * f->es, what);
        } else {
            snprintf(what, sizeof what,
                     "%s %s dst_stride %td src_stride %td bsize %zu n %zu: element %zu is a gap "
                     "(must stay 0)",
                     f->name, dir, s->ds, s->ss, s->bs, s->nb, e);
            pe_check_byte(p, f->es, 0, what);
        }
    }
}

static void run_form(int fid)
{
    const form_t *f = &forms[fid];
    const int right = pe_right(), left = pe_left(), me = pe_me_g;
    shape_t sh[MAX_SHAPES];
    const int ns = make_shapes(f->blocked, sh);
    const size_t total = sh[ns - 1].off + sh[ns - 1].len;
    const size_t bytes = total * f->es;

    uint8_t *dst_sym = shmem_calloc(total, f->es); // puts land here
    uint8_t *src_sym = shmem_malloc(bytes);        // gets read here
    uint8_t *src_loc = malloc(bytes);
    uint8_t *dst_loc = calloc(total, f->es);
    if (!dst_sym || !src_sym || !src_loc || !dst_loc) {
        pe_fail("%s: allocation of %zu bytes failed", f->name, bytes);
        shmem_global_exit(1);
    }
    for (int i = 0; i < ns; i++) {
        uint32_t tag = (uint32_t)(fid * 1000 + i);
        pe_fill(src_sym + sh[i].off * f->es, sh[i].len * f->es, me, tag, 0);
        pe_fill(src_loc + sh[i].off * f->es, sh[i].len * f->es, me, tag, 0);
    }
    shmem_barrier_all();
    for (int i = 0; i < ns; i++) {
        const shape_t *s = &sh[i];
        pe_step("%s case %d (dst_stride %td src_stride %td bsize %zu n %zu)", f->name, i, s->ds,
                s->ss, s->bs, s->nb);
        f->put(dst_sym + s->off * f->es, src_loc + s->off * f->es, s->ds, s->ss, s->bs, s->nb,
               right);
        f->get(dst_loc + s->off * f->es, src_sym + s->off * f->es, s->ds, s->ss, s->bs, s->nb,
               left);
    }
    shmem_quiet();
    pe_step("%s: barrier after calls", f->name);
    shmem_barrier_all();
    for (int i = 0; i < ns; i++) {
        uint32_t tag = (uint32_t)(fid * 1000 + i);
        check_region(f, &sh[i], dst_sym, left, tag, "put");
        check_region(f, &sh[i], dst_loc, left, tag, "get");
    }
    shmem_barrier_all();
    shmem_free(src_sym);
    shmem_free(dst_sym);
    free(src_loc);
    free(dst_loc);
}

int main(void)
{
    shmem_init();
    pe_begin("rma_strided");
    for (int fid = 0; fid < NFORMS; fid++)
        run_form(fid);
    pe_step("finalize");
    shmem_finalize();
    return pe_end();
}
