// SPDX-License-Identifier: BSD-3-Clause
//
// Every team collective, on every team shape (world, strided, reversed,
// both teams of a 2-D split), against a sequential model computed locally:
//   team_sync, broadcast (every root; typed, mem; in place), fcollect,
//   collect (ragged and all-empty), alltoall, alltoalls (strided),
//   reductions (every type x operation of the 1.6 table; long sums at
//   several counts; in place), inscan/exscan (in place too), zero-element
//   calls, and back-to-back calls into distinct buffers without syncs.
// argv[1] picks the algorithm set (coll_test.h); argv[2] scales the large
// counts (default 1).
#include "coll_test.h"

#ifndef COLL_SET
#define COLL_SET "auto" // coll_ops_<set>.c include this file with another set
#endif
#ifndef COLL_SCALE
#define COLL_SCALE 1 // large counts: COLL_SCALE x 256 KiB
#endif

#define NB2B 6              // back-to-back calls
#define BIG ((size_t)256 << 10)

static char *src, *dst, *b2b;  // symmetric
static size_t cap;             // bytes of src and dst
static long scale = COLL_SCALE;
static long *slots;            // team_sync check: one word per world PE

static void sync_team(shmem_team_t t)
{
    if (shmem_team_sync(t) != 0)
        pe_fail("shmem_team_sync returned nonzero");
}

static void fill_src(int wpe, uint32_t tag, size_t len)
{
    pe_fill(src, len, wpe, tag, 0);
}

static void test_sync(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    for (long it = 1; it <= 30; it++) {
        pe_step("%s: team_sync %ld", name, it);
        for (int r = 0; r < n; r++)
            if (r != me)
                shmem_long_p(&slots[shmem_my_pe()], it, coll_world(t, r));
        shmem_quiet();
        sync_team(t);
        for (int r = 0; r < n; r++)
            if (r != me)
                PE_EXPECT_EQ(slots[coll_world(t, r)], it, "%s: team_sync %ld: word of team rank %d",
                             name, it, r);
        sync_team(t); // nobody writes the next iteration before everyone checked
    }
}

static void test_bcast(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    size_t sizes[] = {0, 1, 7, 1000, (size_t)(BIG * scale) + 3};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t len = sizes[si] < cap ? sizes[si] : cap;
        for (int root = 0; root < n; root++) {
            uint32_t tag = (uint32_t)(100 + si * 16 + (size_t)root);
            int wroot = coll_world(t, root);
            pe_step("%s: broadcastmem %zu bytes root %d", name, len, root);
            fill_src(shmem_my_pe(), tag, len);
            memset(dst, 0xEE, len + 8);
            sync_team(t);
            if (shmem_broadcastmem(t, dst, src, len, root) != 0)
                pe_fail("%s: broadcastmem returned nonzero", name);
            pe_check_fill(dst, len, wroot, tag, 0, "broadcastmem dest");
            pe_check_byte(dst + len, 8, 0xEE, "broadcastmem past the end");
            sync_team(t);
        }
    }
    // Typed, root in the middle; and in place (dest == source everywhere).
    int root = n / 2, wroot = coll_world(t, root);
    long *s = (long *)src, *d = (long *)dst;
    for (int i = 0; i < 100; i++)
        s[i] = (long)shmem_my_pe() * 1000 + i;
    sync_team(t);
    pe_step("%s: long_broadcast", name);
    shmem_long_broadcast(t, d, s, 100, root);
    for (int i = 0; i < 100; i++)
        PE_EXPECT_EQ(d[i], (long)wroot * 1000 + i, "%s: long_broadcast[%d]", name, i);
    sync_team(t);
    pe_step("%s: broadcast in place", name);
    shmem_double_broadcast(t, (double *)s, (double *)s, 50, root);
    for (int i = 0; i < 50; i++) {
        long v = (long)wroot * 1000 + i;
        double e;
        memcpy(&e, &v, sizeof e);
        PE_EXPECT(memcmp(&((double *)s)[i], &e, sizeof e) == 0,
                  "%s: broadcast in place: element %d differs", name, i);
    }
    (void)me;
    sync_team(t);
}

static void test_fcollect(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t);
    size_t sizes[] = {0, 1, 13, 4096, (size_t)(BIG * scale) / 4 + 5};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t len = sizes[si];
        if (len * (size_t)n > cap)
            len = cap / (size_t)n;
        uint32_t tag = (uint32_t)(300 + si);
        pe_step("%s: fcollectmem %zu bytes", name, len);
        fill_src(shmem_my_pe(), tag, len);
        memset(dst, 0xEE, len * (size_t)n + 8);
        sync_team(t);
        if (shmem_fcollectmem(t, dst, src, len) != 0)
            pe_fail("%s: fcollectmem returned nonzero", name);
        for (int r = 0; r < n; r++)
            pe_check_fill(dst + (size_t)r * len, len, coll_world(t, r), tag, 0,
                          "fcollectmem block");
        pe_check_byte(dst + len * (size_t)n, 8, 0xEE, "fcollectmem past the end");
        sync_team(t);
    }
    int *s = (int *)src, *d = (int *)dst;
    for (int i = 0; i < 3; i++)
        s[i] = shmem_my_pe() * 10 + i;
    sync_team(t);
    pe_step("%s: int_fcollect", name);
    shmem_int_fcollect(t, d, s, 3);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < 3; i++)
            PE_EXPECT_EQ(d[r * 3 + i], coll_world(t, r) * 10 + i, "%s: int_fcollect[%d][%d]",
                          name, r, i);
    sync_team(t);
}

static void test_collect(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    // Ragged (some ranks empty), all empty, and a large one.
    for (int c = 0; c < 3; c++) {
        size_t lens[64], total = 0, off = 0;
        for (int r = 0; r < n; r++) {
            lens[r] = c == 0 ? (size_t)((r * 7) % 5) * 3 : c == 1 ? 0 : (size_t)(BIG * scale) / 8 + (size_t)r;
            total += lens[r];
        }
        if (total > cap)
            continue;
        uint32_t tag = (uint32_t)(400 + c);
        pe_step("%s: collectmem case %d (%zu bytes)", name, c, total);
        fill_src(shmem_my_pe(), tag, lens[me]);
        memset(dst, 0xEE, total + 8);
        sync_team(t);
        if (shmem_collectmem(t, dst, src, lens[me]) != 0)
            pe_fail("%s: collectmem returned nonzero", name);
        for (int r = 0; r < n; r++) {
            pe_check_fill(dst + off, lens[r], coll_world(t, r), tag, 0, "collectmem block");
            off += lens[r];
        }
        pe_check_byte(dst + total, 8, 0xEE, "collectmem past the end");
        sync_team(t);
    }
    short *s = (short *)src, *d = (short *)dst;
    int mine = me % 3 + 1, at = 0;
    for (int i = 0; i < mine; i++)
        s[i] = (short)(shmem_my_pe() * 10 + i);
    sync_team(t);
    pe_step("%s: short_collect", name);
    shmem_short_collect(t, d, s, (size_t)mine);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < r % 3 + 1; i++, at++)
            PE_EXPECT_EQ(d[at], (short)(coll_world(t, r) * 10 + i), "%s: short_collect rank %d [%d]",
                          name, r, i);
    sync_team(t);
}

static void test_alltoall(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    size_t sizes[] = {0, 1, 24, (size_t)(BIG * scale) / 8 + 8};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t len = sizes[si];
        if (len * (size_t)n > cap)
            len = cap / (size_t)n;
        uint32_t tag = (uint32_t)(500 + si);
        pe_step("%s: alltoallmem %zu bytes", name, len);
        // Block for rank r: pattern(me, tag, r * len ...).
        fill_src(shmem_my_pe(), tag, len * (size_t)n);
        memset(dst, 0xEE, len * (size_t)n + 8);
        sync_team(t);
        if (shmem_alltoallmem(t, dst, src, len) != 0)
            pe_fail("%s: alltoallmem returned nonzero", name);
        for (int r = 0; r < n; r++)
            pe_check_fill(dst + (size_t)r * len, len, coll_world(t, r), tag, (uint64_t)me * len,
                          "alltoallmem block");
        pe_check_byte(dst + len * (size_t)n, 8, 0xEE, "alltoallmem past the end");
        sync_team(t);
    }
    // Strided: element i for rank r at source (r*ne + i)*sst, lands at (me*ne + i)*dst.
    const size_t ne = 5;
    const ptrdiff_t sst = 3, dstr = 2;
    long *s = (long *)src, *d = (long *)dst;
    for (size_t k = 0; k < (size_t)n * ne * (size_t)sst; k++)
        s[k] = -1;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < ne; i++)
            s[((size_t)r * ne + i) * (size_t)sst] = (long)shmem_my_pe() * 10000 + r * 100 + (long)i;
    for (size_t k = 0; k < (size_t)n * ne * (size_t)dstr; k++)
        d[k] = -7;
    sync_team(t);
    pe_step("%s: long_alltoalls", name);
    shmem_long_alltoalls(t, d, s, dstr, sst, ne);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < ne; i++) {
            size_t k = ((size_t)r * ne + i) * (size_t)dstr;
            PE_EXPECT_EQ(d[k], (long)coll_world(t, r) * 10000 + me * 100 + (long)i,
                         "%s: long_alltoalls from rank %d [%zu]", name, r, i);
            PE_EXPECT_EQ(d[k + 1], -7L, "%s: long_alltoalls gap after rank %d [%zu]", name, r, i);
        }
    sync_team(t);
    int *si = (int *)src, *di = (int *)dst;
    for (int r = 0; r < n; r++)
        si[r] = shmem_my_pe() * 100 + r;
    sync_team(t);
    pe_step("%s: int_alltoall", name);
    shmem_int_alltoall(t, di, si, 1);
    for (int r = 0; r < n; r++)
        PE_EXPECT_EQ(di[r], coll_world(t, r) * 100 + me, "%s: int_alltoall from rank %d", name, r);
    sync_team(t);
}

// One reduction of count elements of every type, every op; model in rank order.
#define NRED 5
#define RED_CASE(T, N, OP, VAL, EXPR)                                                        \
    do {                                                                                     \
        T *s_ = (T *)src, *d_ = (T *)dst;                                                    \
        for (int i = 0; i < NRED; i++)                                                       \
            s_[i] = VAL(T, me, i);                                                           \
        sync_team(t);                                                                        \
        pe_step("%s: " #N "_" #OP "_reduce", name);                                         \
        if (shmem_##N##_##OP##_reduce(t, d_, s_, NRED) != 0)                                 \
            pe_fail("%s: " #N "_" #OP "_reduce returned nonzero", name);                    \
        for (int i = 0; i < NRED; i++) {                                                     \
            T e_ = VAL(T, 0, i);                                                             \
            for (int r = 1; r < n; r++) {                                                    \
                T a = e_, b = VAL(T, r, i);                                                  \
                e_ = (EXPR);                                                                 \
            }                                                                                \
            PE_EXPECT(memcmp(&d_[i], &e_, sizeof(T)) == 0 || d_[i] == e_,                    \
                      "%s: " #N "_" #OP "_reduce[%d] wrong", name, i);                      \
        }                                                                                    \
        sync_team(t);                                                                        \
    } while (0);
#define RED_BITWISE(T, N)                                                                    \
    RED_CASE(T, N, and, CT_VAL, a & b) RED_CASE(T, N, or, CT_VAL, a | b)                     \
    RED_CASE(T, N, xor, CT_VAL, a ^ b)
#define RED_MINMAX(T, N)                                                                     \
    RED_CASE(T, N, max, CT_VAL, a > b ? a : b) RED_CASE(T, N, min, CT_VAL, a < b ? a : b)
#define RED_ARITH(T, N) RED_CASE(T, N, sum, CT_VAL, a + b) RED_CASE(T, N, prod, CT_PVAL, a * b)

static void test_reduce_types(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    CT_BITWISE_TYPES(RED_BITWISE)
    CT_MINMAX_TYPES(RED_MINMAX)
    CT_ARITH_TYPES(RED_ARITH)
    // Complex with imaginary parts.
    double _Complex *s = (double _Complex *)src, *d = (double _Complex *)dst;
    for (int i = 0; i < NRED; i++)
        s[i] = (double)(me + i) + (double)(2 * me - i) * I;
    sync_team(t);
    pe_step("%s: complexd_sum_reduce (imaginary parts)", name);
    shmem_complexd_sum_reduce(t, d, s, NRED);
    for (int i = 0; i < NRED; i++) {
        double _Complex e = 0;
        for (int r = 0; r < n; r++)
            e += (double)(r + i) + (double)(2 * r - i) * I;
        PE_EXPECT(d[i] == e, "%s: complexd_sum_reduce[%d]: expected %g%+gi got %g%+gi", name, i,
                  creal(e), cimag(e), creal(d[i]), cimag(d[i]));
    }
    sync_team(t);
}

static void test_reduce_counts(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    size_t counts[] = {0, 1, 600, 3000, (size_t)(BIG * scale) / sizeof(long) + 11};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        size_t cnt = counts[ci];
        if (cnt * sizeof(long) > cap)
            cnt = cap / sizeof(long);
        for (int inplace = 0; inplace < 2; inplace++) {
            long *s = (long *)src, *d = inplace ? s : (long *)dst;
            for (size_t i = 0; i < cnt; i++)
                s[i] = (long)(me + 1) * (long)(i % 1000 + 1);
            d[cnt] = -5; // guard
            sync_team(t);
            pe_step("%s: long_sum_reduce %zu%s", name, cnt, inplace ? " in place" : "");
            shmem_long_sum_reduce(t, d, s, cnt);
            long nn = (long)n * (n + 1) / 2;
            size_t bad = 0;
            for (size_t i = 0; i < cnt; i++)
                if (d[i] != nn * (long)(i % 1000 + 1) && !bad++)
                    pe_fail("%s: long_sum_reduce %zu%s: [%zu] expected %ld got %ld", name, cnt,
                            inplace ? " in place" : "", i, nn * (long)(i % 1000 + 1), d[i]);
            pe_checks_g++;
            PE_EXPECT_EQ(d[cnt], -5L, "%s: long_sum_reduce %zu: guard", name, cnt);
            sync_team(t);
        }
    }
    // A floating sum: identical bits on every PE (compare with rank 0's via fcollect).
    double *s = (double *)src, *d = (double *)dst;
    for (int i = 0; i < 700; i++)
        s[i] = 1.0 / (double)(me * 7 + i + 3);
    sync_team(t);
    pe_step("%s: double_sum_reduce (same bits everywhere)", name);
    shmem_double_sum_reduce(t, d, s, 700);
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 700; i++) {
        uint64_t b;
        memcpy(&b, &d[i], 8);
        h = (h ^ b) * 1099511628211ULL;
    }
    uint64_t *hs = (uint64_t *)(dst + 8192);
    hs[0] = h;
    sync_team(t);
    shmem_uint64_fcollect(t, hs + 1, hs, 1);
    for (int r = 0; r < n; r++)
        PE_EXPECT(hs[1 + r] == h, "%s: double_sum_reduce: rank %d has other bits than this PE",
                  name, r);
    sync_team(t);
}

static void test_scan(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    size_t counts[] = {0, 3, 5000};
    for (size_t ci = 0; ci < 3; ci++)
        for (int inplace = 0; inplace < 2; inplace++)
            for (int incl = 0; incl < 2; incl++) {
                size_t cnt = counts[ci];
                long *s = (long *)src, *d = inplace ? s : (long *)dst;
                for (size_t i = 0; i < cnt; i++)
                    s[i] = (long)(me + 1) * (long)(i + 1);
                sync_team(t);
                pe_step("%s: long_sum_%sscan %zu%s", name, incl ? "in" : "ex", cnt,
                        inplace ? " in place" : "");
                int rc = incl ? shmem_long_sum_inscan(t, d, s, cnt)
                              : shmem_long_sum_exscan(t, d, s, cnt);
                if (rc != 0)
                    pe_fail("%s: scan returned nonzero", name);
                long upto = incl ? me + 1 : me; // ranks 0..upto-1 contribute
                long f = upto * (upto + 1) / 2;
                size_t bad = 0;
                for (size_t i = 0; i < cnt; i++)
                    if (d[i] != f * (long)(i + 1) && !bad++)
                        pe_fail("%s: long_sum_%sscan %zu%s: [%zu] expected %ld got %ld", name,
                                incl ? "in" : "ex", cnt, inplace ? " in place" : "", i,
                                f * (long)(i + 1), d[i]);
                pe_checks_g++;
                sync_team(t);
            }
    // Complex and float scans.
    float _Complex *s = (float _Complex *)src, *d = (float _Complex *)dst;
    for (int i = 0; i < 4; i++)
        s[i] = (float)(me + i) + (float)me * I;
    sync_team(t);
    pe_step("%s: complexf_sum_inscan", name);
    shmem_complexf_sum_inscan(t, d, s, 4);
    for (int i = 0; i < 4; i++) {
        float _Complex e = 0;
        for (int r = 0; r <= me; r++)
            e += (float)(r + i) + (float)r * I;
        PE_EXPECT(d[i] == e, "%s: complexf_sum_inscan[%d]", name, i);
    }
    (void)n;
    sync_team(t);
}

// Back to back, no syncs between the calls: distinct destinations.
static void test_back_to_back(shmem_team_t t, const char *name)
{
    int n = shmem_team_n_pes(t), me = shmem_team_my_pe(t);
    const size_t len = 64;
    long *s = (long *)src;
    for (int k = 0; k < 8 * n; k++)
        s[k] = (long)shmem_my_pe() * 100 + k;
    memset(b2b, 0, (size_t)NB2B * 4 * len * (size_t)n);
    sync_team(t);
    pe_step("%s: back-to-back", name);
    for (int k = 0; k < NB2B; k++) {
        char *slot = b2b + (size_t)k * 4 * len * (size_t)n;
        int root = k % n;
        shmem_long_broadcast(t, (long *)slot, s + k, 1, root);
        shmem_long_sum_reduce(t, (long *)(slot + len), s + k, 2);
        shmem_long_fcollect(t, (long *)(slot + 2 * len), s + k, 1);
        shmem_long_alltoall(t, (long *)(slot + 2 * len + (size_t)n * 8), s, 1);
    }
    for (int k = 0; k < NB2B; k++) {
        long *slot = (long *)(b2b + (size_t)k * 4 * len * (size_t)n);
        int root = k % n;
        PE_EXPECT_EQ(slot[0], (long)coll_world(t, root) * 100 + k, "%s: b2b %d broadcast", name, k);
        long e0 = 0, e1 = 0;
        for (int r = 0; r < n; r++) {
            e0 += (long)coll_world(t, r) * 100 + k;
            e1 += (long)coll_world(t, r) * 100 + k + 1;
        }
        PE_EXPECT_EQ(slot[len / 8], e0, "%s: b2b %d reduce[0]", name, k);
        PE_EXPECT_EQ(slot[len / 8 + 1], e1, "%s: b2b %d reduce[1]", name, k);
        for (int r = 0; r < n; r++) {
            PE_EXPECT_EQ(slot[2 * len / 8 + (size_t)r], (long)coll_world(t, r) * 100 + k,
                         "%s: b2b %d fcollect rank %d", name, k, r);
            PE_EXPECT_EQ(slot[2 * len / 8 + (size_t)n + (size_t)r],
                         (long)coll_world(t, r) * 100 + me, "%s: b2b %d alltoall rank %d", name,
                         k, r);
        }
    }
    sync_team(t);
}

int main(int argc, char **argv)
{
    const char *set = argc > 1 ? argv[1] : COLL_SET;
    if (argc > 2)
        scale = atol(argv[2]);
    coll_set_algorithms(set);
    shmem_init();
    pe_begin("coll_ops");
    pe_watchdog(110);
    int npes = shmem_n_pes();
    cap = (size_t)(BIG * scale) * 2 + 65536;
    if (cap < (size_t)npes * 8192)
        cap = (size_t)npes * 8192;
    src = shmem_malloc(cap);
    dst = shmem_malloc(cap + 64);
    b2b = shmem_malloc((size_t)NB2B * 4 * 64 * (size_t)npes);
    slots = shmem_calloc((size_t)npes, sizeof(long));
    if (!src || !dst || !b2b || !slots) {
        pe_fail("shmem_malloc failed");
        shmem_global_exit(1);
    }
    shape_t shapes[MAX_SHAPES];
    pe_step("making team shapes");
    int k = coll_make_shapes(shapes);
    for (int i = 0; i < k; i++) {
        shmem_team_t t = shapes[i].team;
        shmem_barrier_all();
        if (t == SHMEM_TEAM_INVALID)
            continue;
        char name[128];
        snprintf(name, sizeof name, "[%s] %s", set, shapes[i].name);
        test_sync(t, name);
        test_bcast(t, name);
        test_fcollect(t, name);
        test_collect(t, name);
        test_alltoall(t, name);
        test_reduce_types(t, name);
        test_reduce_counts(t, name);
        test_scan(t, name);
        test_back_to_back(t, name);
    }
    shmem_barrier_all();
    coll_free_shapes(shapes, k);
    shmem_free(slots);
    shmem_free(b2b);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return pe_end();
}
