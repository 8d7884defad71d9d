/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Glue shared by the OSU-style OpenSHMEM benchmarks. Only the public
 * OpenSHMEM 1.6 API is used, so the same sources build against any
 * implementation.
 */
#ifndef BENCH_OSU_COMMON_H
#define BENCH_OSU_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

#include "harness.h"

static char osu_label_g[96];

/*
 * --globals: the symmetric buffers are carved from a static array (.bss)
 * instead of shmem_malloc, as in programs whose symmetric data are globals.
 * Same order of calls on every PE, so the same offsets: symmetric.
 */
#ifndef OSU_GLOBAL_POOL
#define OSU_GLOBAL_POOL (16u << 20)
#endif
static int osu_globals_g;
static size_t osu_pool_used_g;
static char osu_pool_g[OSU_GLOBAL_POOL] __attribute__((aligned(4096)));

/* Report a wrong value and end the whole job. */
static inline void osu_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[PE %d] ", shmem_my_pe());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    shmem_global_exit(1);
}

/*
 * Parse the arguments (every PE parses the same argv), start OpenSHMEM,
 * insist on min_pes PEs. Returns 0 to go on; otherwise the exit code, with
 * OpenSHMEM finalized or never started.
 */
static inline int osu_start(bench_args_t *a, int argc, char **argv,
                            int min_pes, bench_opt_fn extra, void *ctx,
                            const char *extra_help)
{
    /* --globals is ours: taken out before the harness parses the rest. */
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--globals") == 0)
            osu_globals_g = 1;
        else
            argv[n++] = argv[i];
    }
    argc = n;
    char help[512];
    snprintf(help, sizeof(help), "%s%s  --globals          symmetric buffers are static "
             "arrays (.bss), not shmem_malloc\n", extra_help ? extra_help : "",
             extra_help && *extra_help && extra_help[strlen(extra_help) - 1] != '\n' ? "\n" : "");
    int prc = bench_args_parse(a, argc, argv, 1, extra, ctx, "[options]",
                               help);
    if (prc)
        return prc > 0 ? 0 : 2;
    if (!a->label) {
        const char *prov = getenv("SHMEM_OFI_PROVIDER");
        snprintf(osu_label_g, sizeof(osu_label_g), "ofishmem%s%s%s",
                 prov ? ":" : "", prov ? prov : "",
                 osu_globals_g ? ":globals" : "");
        a->label = osu_label_g;
    }
    shmem_init();
    if (shmem_n_pes() < min_pes) {
        if (shmem_my_pe() == 0)
            fprintf(stderr, "%s: needs at least %d PEs\n", argv[0], min_pes);
        shmem_finalize();
        return 2;
    }
    return 0;
}

/* Symmetric allocation that cannot silently fail. */
static inline void *osu_malloc(size_t len)
{
    if (osu_globals_g) {
        /*
         * At the same offset within a page as the heap block this call
         * would have returned (reserved and left unused), so that only the
         * road differs from a heap run: with src and dst both page-aligned,
         * x86 memcpy hits a 4 KiB-aliasing slow case at some sizes.
         */
        void *shadow = shmem_malloc(len ? len : 1);
        if (!shadow)
            osu_fail("shmem_malloc(%zu) failed (symmetric heap too small?)", len);
        size_t at = ((osu_pool_used_g + 4095) & ~(size_t)4095) + ((uintptr_t)shadow & 4095);
        if (at + len > sizeof(osu_pool_g))
            osu_fail("--globals: %zu bytes do not fit the static pool (%zu bytes left)", len,
                     sizeof(osu_pool_g) - at);
        osu_pool_used_g = at + (len ? len : 1);
        return osu_pool_g + at;
    }
    void *p = shmem_malloc(len ? len : 1);
    if (!p)
        osu_fail("shmem_malloc(%zu) failed (symmetric heap too small?)", len);
    return p;
}

static inline void osu_free(void *p)
{
    if (!osu_globals_g)
        shmem_free(p);
}

/* Seed of the data pattern for one (size, repetition): stale data from an
 * earlier size or repetition does not pass the check. */
static inline unsigned osu_seed(size_t size, int rep)
{
    return (unsigned)(size * 31u) + (unsigned)rep;
}

static inline void osu_check(const void *buf, size_t len, unsigned seed,
                             const char *what, size_t size)
{
    long bad = bench_check(buf, len, seed);
    if (bad >= 0)
        osu_fail("%s size %zu: wrong byte at offset %ld", what, size, bad);
}

#endif
