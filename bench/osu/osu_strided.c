/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * osu_strided: strided puts and gets against a contiguous transfer of the
 * same bytes (issue 30 item 3).
 *
 * PE 0 moves N elements of E bytes between its buffer and PE 1's, with the
 * remote side strided (stride S elements; the local side contiguous), and
 * the same N*E bytes contiguously, alternating the two (-r repetitions):
 *   iput   shmem_iputE(dst, src, S, 1, N, 1) + shmem_quiet
 *   iget   shmem_igetE(dst, src, 1, S, N, 1)
 *   put    shmem_putmem(dst, src, N*E, 1) + shmem_quiet
 *   get    shmem_getmem(dst, src, N*E, 1)
 * With -b B (B > 1) the block forms move blocks of B elements every S
 * elements (shmem_ibputE / shmem_ibgetE, N elements in all).
 *
 *   -e LIST   element sizes in bytes: 1,2,4,8,16 (default 8)
 *   -s S      stride in elements (default 2)
 *   -b B      block size in elements (default 1: iput/iget)
 *   -m LO:HI  element counts, powers of two (default 4096:4096)
 *
 * Rows: bench strided, size = N, metrics iputE_sS_us, igetE_sS_us (blocks:
 * ibputE_bB_sS_us ...), putE_us, getE_us, and iputE_sS_ratio /
 * igetE_sS_ratio: median over repetitions of contiguous / strided time, so
 * 1.0 is as fast as the contiguous transfer. The data are checked.
 */
#include "osu_common.h"

typedef struct {
    unsigned esizes; /* bit log2(E) */
    long stride, block;
} opts_t;

static int opt_fn(const char *opt, const char *val, void *ctx)
{
    opts_t *o = ctx;
    if (!val)
        return -1;
    if (!strcmp(opt, "-e")) {
        o->esizes = 0;
        for (const char *p = val; *p;) {
            long e = strtol(p, (char **)&p, 10);
            int k = e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : e == 8 ? 3 : e == 16 ? 4 : -1;
            if (k < 0 || (*p && *p != ','))
                return -1;
            o->esizes |= 1u << k;
            if (*p == ',')
                p++;
        }
        return o->esizes ? 2 : -1;
    }
    if (!strcmp(opt, "-s") || !strcmp(opt, "-b")) {
        long v = atol(val);
        if (v < 1)
            return -1;
        *(!strcmp(opt, "-s") ? &o->stride : &o->block) = v;
        return 2;
    }
    return -1;
}

/* Strided transfer of n elements of e bytes in blocks of b, stride s. */
static void xfer(int is_put, size_t e, void *dst, const void *src, long s, long b, size_t n,
                 int pe)
{
    if (b == 1) {
        ptrdiff_t ds = is_put ? s : 1, ss = is_put ? 1 : s;
        switch (e) {
        case 1: is_put ? shmem_iput8(dst, src, ds, ss, n, pe) : shmem_iget8(dst, src, ds, ss, n, pe); break;
        case 2: is_put ? shmem_iput16(dst, src, ds, ss, n, pe) : shmem_iget16(dst, src, ds, ss, n, pe); break;
        case 4: is_put ? shmem_iput32(dst, src, ds, ss, n, pe) : shmem_iget32(dst, src, ds, ss, n, pe); break;
        case 8: is_put ? shmem_iput64(dst, src, ds, ss, n, pe) : shmem_iget64(dst, src, ds, ss, n, pe); break;
        default: is_put ? shmem_iput128(dst, src, ds, ss, n, pe) : shmem_iget128(dst, src, ds, ss, n, pe); break;
        }
        return;
    }
#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 106
    size_t nb = n / (size_t)b;
    ptrdiff_t ds = is_put ? s : b, ss = is_put ? b : s;
    switch (e) {
    case 1: is_put ? shmem_ibput8(dst, src, ds, ss, b, nb, pe) : shmem_ibget8(dst, src, ds, ss, b, nb, pe); break;
    case 2: is_put ? shmem_ibput16(dst, src, ds, ss, b, nb, pe) : shmem_ibget16(dst, src, ds, ss, b, nb, pe); break;
    case 4: is_put ? shmem_ibput32(dst, src, ds, ss, b, nb, pe) : shmem_ibget32(dst, src, ds, ss, b, nb, pe); break;
    case 8: is_put ? shmem_ibput64(dst, src, ds, ss, b, nb, pe) : shmem_ibget64(dst, src, ds, ss, b, nb, pe); break;
    default: is_put ? shmem_ibput128(dst, src, ds, ss, b, nb, pe) : shmem_ibget128(dst, src, ds, ss, b, nb, pe); break;
    }
#else
    osu_fail("-b %ld: this OpenSHMEM (%d.%d) has no shmem_ibput/ibget", b, SHMEM_MAJOR_VERSION,
             SHMEM_MINOR_VERSION);
#endif
}

/* Element k of the pattern, as bytes of element size e. */
static void elem_fill(unsigned char *p, size_t e, size_t k, unsigned seed)
{
    for (size_t i = 0; i < e; i++)
        p[i] = (unsigned char)(k * 131u + i * 7u + seed);
}

static void check_elems(const unsigned char *buf, size_t e, size_t n, long stride, long block,
                        unsigned seed, const char *what)
{
    unsigned char want[16];
    for (size_t k = 0; k < n; k++) {
        size_t at = (k / (size_t)block) * (size_t)stride + k % (size_t)block;
        elem_fill(want, e, k, seed);
        if (memcmp(buf + at * e, want, e) != 0)
            osu_fail("%s: element %zu (at %zu) is wrong", what, k, at);
    }
}

int main(int argc, char **argv)
{
    bench_args_t a;
    bench_args_init(&a, 4096, 4096);
    opts_t o = {.esizes = 1u << 3, .stride = 2, .block = 1};
    static const char help[] =
        "  -e LIST       element sizes in bytes, comma-separated: 1,2,4,8,16 (default 8)\n"
        "  -s S          stride in elements (default 2)\n"
        "  -b B          block size in elements (default 1: shmem_iput/iget)\n";
    int rc = osu_start(&a, argc, argv, 2, opt_fn, &o, help);
    if (rc)
        return rc;
    if (o.block > o.stride) {
        if (shmem_my_pe() == 0)
            fprintf(stderr, "-b %ld is larger than the stride %ld\n", o.block, o.stride);
        shmem_finalize();
        return 2;
    }
    int me = shmem_my_pe();
    size_t span = (a.max_size / (size_t)o.block + 1) * (size_t)o.stride * 16;
    unsigned char *rbuf = osu_malloc(span);  /* strided side, on PE 1 */
    unsigned char *lbuf = osu_malloc(a.max_size * 16); /* contiguous side */
    unsigned char *cbuf = osu_malloc(a.max_size * 16); /* contiguous target on PE 1 */

    if (me == 0) {
        printf("# OSU-style strided transfers (stride %ld, block %ld) vs contiguous, PE 0 <-> PE 1\n"
               "%-6s%-10s%12s%12s%12s%12s%9s%9s\n",
               o.stride, o.block, "E", "N", "iput(us)", "put(us)", "iget(us)", "get(us)",
               "put/iput", "get/iget");
        fflush(stdout);
    }
    for (int k = 0; k < 5; k++) {
        if (!(o.esizes & (1u << k)))
            continue;
        size_t e = (size_t)1 << k;
        for (size_t n = a.min_size; n <= a.max_size; n *= 2) {
            if (o.block > 1 && n % (size_t)o.block)
                continue;
            long iters = a.iters > 0 ? a.iters : (n * e > 65536 ? 20 : 100);
            long warm = a.warmup >= 0 ? a.warmup : 2;
            double t[4][BENCH_MAX_REPS], rp[BENCH_MAX_REPS], rg[BENCH_MAX_REPS];
            for (int rep = 0; rep < a.reps; rep++) {
                unsigned seed = osu_seed(n * e, rep);
                if (me == 0)
                    for (size_t i = 0; i < n; i++)
                        elem_fill(lbuf + i * e, e, i, seed);
                memset(rbuf, 0, span);
                shmem_barrier_all();
                /* 0 iput, 1 put, 2 iget, 3 get; strided first in odd reps. */
                for (int j = 0; j < 4; j++) {
                    int which = (rep % 2 == 0) ? j : (j ^ 1);
                    if (me == 0) {
                        double t0 = 0;
                        if (which == 2) /* the check must see what iget wrote */
                            memset(lbuf, 0, n * e);
                        for (long i = 0; i < warm + iters; i++) {
                            if (i == warm)
                                t0 = bench_now_us();
                            switch (which) {
                            case 0:
                                xfer(1, e, rbuf, lbuf, o.stride, o.block, n, 1);
                                shmem_quiet();
                                break;
                            case 1:
                                shmem_putmem(cbuf, lbuf, n * e, 1);
                                shmem_quiet();
                                break;
                            case 2: xfer(0, e, lbuf, rbuf, o.stride, o.block, n, 1); break;
                            default: shmem_getmem(lbuf, cbuf, n * e, 1); break;
                            }
                        }
                        t[which][rep] = (bench_now_us() - t0) / (double)iters;
                    }
                    shmem_barrier_all();
                    if (which == 0 && me == 1)
                        check_elems(rbuf, e, n, o.stride, o.block, seed, "iput");
                    if (which == 2 && me == 0)
                        check_elems(lbuf, e, n, 1, 1, seed, "iget");
                    shmem_barrier_all();
                }
                rp[rep] = t[1][rep] / t[0][rep];
                rg[rep] = t[3][rep] / t[2][rep];
            }
            if (me == 0) {
                double m[4];
                for (int j = 0; j < 4; j++)
                    m[j] = bench_median(t[j], a.reps);
                double mp = bench_median(rp, a.reps), mg = bench_median(rg, a.reps);
                printf("%-6zu%-10zu%12.2f%12.2f%12.2f%12.2f%9.3f%9.3f\n", e, n, m[0], m[1], m[2],
                       m[3], mp, mg);
                fflush(stdout);
                char name[4][64], bs[32] = "";
                if (o.block > 1)
                    snprintf(bs, sizeof(bs), "_b%ld", o.block);
                snprintf(name[0], 64, "i%sput%zu%s_s%ld_us", o.block > 1 ? "b" : "", e * 8, bs,
                         o.stride);
                snprintf(name[1], 64, "put%zu_us", e * 8);
                snprintf(name[2], 64, "i%sget%zu%s_s%ld_us", o.block > 1 ? "b" : "", e * 8, bs,
                         o.stride);
                snprintf(name[3], 64, "get%zu_us", e * 8);
                for (int j = 0; j < 4; j++)
                    bench_csv(&a, "strided", n, name[j], m[j]);
                char r[64];
                snprintf(r, sizeof(r), "%.*s_ratio", (int)(strlen(name[0]) - 3), name[0]);
                bench_csv(&a, "strided", n, r, mp);
                snprintf(r, sizeof(r), "%.*s_ratio", (int)(strlen(name[2]) - 3), name[2]);
                bench_csv(&a, "strided", n, r, mg);
            }
        }
    }
    shmem_barrier_all();
    osu_free(cbuf);
    osu_free(lbuf);
    osu_free(rbuf);
    shmem_finalize();
    return 0;
}
