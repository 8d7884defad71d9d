// SPDX-License-Identifier: BSD-3-Clause
/*
 * Globals on the same-host direct path. At shmem_init the executable's
 * writable data+BSS (the DATA segment, heap.c) is moved onto a memfd: its
 * current contents are copied into the memfd, which is then mapped
 * MAP_SHARED|MAP_FIXED over the same addresses. The program sees the same
 * bytes at the same addresses, and the PEs of its host can map the memfd
 * (shared.c), so RMA, AMOs, signals and shmem_ptr on globals take the road
 * of the heap.
 *
 * What makes it delicate:
 *  - edge pages: only whole pages that /proc/self/maps shows private and
 *    writable (rw-p) are moved, the largest contiguous run of them in the
 *    segment. A page that also holds read-only data (RELRO that did not end
 *    on a page boundary) stays where it is, and its globals are reached
 *    through the fabric (shm_seg_peer_g[].lo/len say which part is mapped).
 *  - sparseness: a memfd page costs memory once written, so only pages that
 *    may hold something are copied, and only when not all zero: the pages of
 *    the file-backed part (.data: an untouched page there still holds the
 *    file's bytes) and the pages of the anonymous part (.bss) that
 *    /proc/self/pagemap shows present or swapped (without pagemap, every page
 *    is read: an untouched one reads as the shared zero page). A 1 GiB static
 *    array costs nothing until it is touched.
 *  - threads already running (started by a library constructor): a store into
 *    a global between the copy of its page and the remap would be lost. Pages
 *    are copied and remapped in chunks of at most CHUNK_PAGES copied pages,
 *    each remapped right after its copy, so the window is microseconds per
 *    chunk. A program that stores into globals from other threads during
 *    shmem_init must not count on those stores (docs/GETTING_STARTED.md).
 *  - position-independent executables: the segment is at a different address
 *    in every PE but its layout is the same; peers map it anywhere and use
 *    offsets (shared.c checks that the layouts agree).
 *  - fork after init: a MAP_SHARED mapping is shared with the child. A
 *    pthread_atfork handler gives the child private globals again (a copy
 *    taken at fork); the heap and the peers' mappings stay shared with it.
 * A failure leaves every page with its contents (pages already moved stay on
 * the memfd, which is harmless) and the segment is reached through the fabric
 * after one warning saying why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "heap/heap.h"

#define CHUNK_PAGES 16
#define PAGEMAP_BATCH 512

typedef struct {
    uintptr_t lo, hi;
    int file; /* backed by the executable's file (the .data part) */
} globals_run_t;

/* The moved range, for the fork handler. */
static struct {
    int fd;
    uintptr_t lo;
    size_t len;
} moved = {.fd = -1};

/*
 * The largest run of contiguous rw-p mappings within [lo, hi), clipped to it.
 * Fills runs (the mappings of that run, in order); returns how many, or -1.
 */
static int window_find(uintptr_t lo, uintptr_t hi, globals_run_t **runs_p)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (f == NULL)
        return -1;
    globals_run_t *cur = NULL, *best = NULL;
    int ncur = 0, nbest = 0;
    size_t cur_len = 0, best_len = 0;
    char *line = NULL;
    size_t cap = 0;
    int fail = 0;
    for (;;) {
        ssize_t n = getline(&line, &cap, f);
        unsigned long a = 0, b = 0, ino = 0;
        char perms[8] = "";
        int ok = n > 0 && sscanf(line, "%lx-%lx %7s %*s %*s %lu", &a, &b, perms, &ino) == 4;
        int usable = ok && b > lo && a < hi && strcmp(perms, "rw-p") == 0;
        if (ok && !(b > lo && a < hi))
            continue; /* outside the segment: neither extends nor breaks a run */
        if (usable) {
            a = a < lo ? lo : a;
            b = b > hi ? hi : b;
        }
        /* A run continues while the next usable mapping starts where it ends. */
        if (usable && ncur > 0 && cur[ncur - 1].hi == a) {
            /* extend */
        } else if (ncur > 0) {
            if (cur_len > best_len) {
                free(best);
                best = cur;
                nbest = ncur;
                best_len = cur_len;
            } else {
                free(cur);
            }
            cur = NULL;
            ncur = 0;
            cur_len = 0;
        }
        if (!usable) {
            if (n <= 0)
                break;
            continue;
        }
        globals_run_t *g = realloc(cur, (size_t)(ncur + 1) * sizeof(*cur));
        if (g == NULL) {
            fail = 1;
            break;
        }
        cur = g;
        cur[ncur++] = (globals_run_t){.lo = a, .hi = b, .file = ino != 0};
        cur_len += b - a;
    }
    free(line);
    fclose(f);
    free(cur);
    if (fail || nbest == 0) {
        free(best);
        return fail ? -1 : 0;
    }
    *runs_p = best;
    return nbest;
}

/*
 * The program's globals are read word by word, not with memcpy or write():
 * under AddressSanitizer the redzones between globals are poisoned, and an
 * instrumented (or intercepted) read of them would be reported. volatile
 * keeps the compiler from turning the loops back into library calls.
 */
#define SHM_NO_ASAN __attribute__((no_sanitize_address))

SHM_NO_ASAN static int page_is_zero(const void *p, size_t len)
{
    const volatile uint64_t *w = p;
    for (size_t i = 0; i < len / sizeof(uint64_t); i++)
        if (w[i])
            return 0;
    return 1;
}

SHM_NO_ASAN static void copy_words(void *dst, const void *src, size_t len)
{
    volatile uint64_t *d = dst;
    const volatile uint64_t *s = src;
    for (size_t i = 0; i < len / sizeof(uint64_t); i++)
        d[i] = s[i];
}

static void globals_atfork_child(void)
{
    /* Give the child its own copy: only the memfd's data extents hold bytes. */
    void *tmp = mmap(NULL, moved.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp == MAP_FAILED)
        return; /* stays shared with the parent (documented) */
    off_t off = 0, d, h;
    while ((d = lseek(moved.fd, off, SEEK_DATA)) >= 0 && (size_t)d < moved.len) {
        h = lseek(moved.fd, d, SEEK_HOLE);
        if (h < 0 || (size_t)h > moved.len)
            h = (off_t)moved.len;
        copy_words((char *)tmp + d, (char *)moved.lo + d, (size_t)(h - d));
        off = h;
    }
    if (mremap(tmp, moved.len, moved.len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)moved.lo) ==
        MAP_FAILED) {
        munmap(tmp, moved.len);
        return;
    }
    close(moved.fd);
    moved.fd = -1;
}

shm_status_t shm_heap_globals_share(const shm_seg_t *seg, shm_seg_share_t *out_p)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    globals_run_t *runs = NULL;
    const char *why;
    int fd = -1, pm = -1;
    uint64_t *pmbuf = NULL;
    char *staging = MAP_FAILED;
    size_t wlen = 0;
    if (moved.fd >= 0) {
        /* Already moved (a second init is refused before this; keep it simple). */
        *out_p = (shm_seg_share_t){.fd = moved.fd, .lo = moved.lo - seg->base, .len = moved.len};
        return SHM_OK;
    }
    int nruns = window_find(seg->base, seg->base + seg->len, &runs);
    why = "cannot read /proc/self/maps";
    if (nruns < 0)
        goto fail_errno;
    why = "no page of it is private and writable";
    if (nruns == 0)
        goto fail;
    uintptr_t wlo = runs[0].lo, whi = runs[nruns - 1].hi;
    wlen = whi - wlo;
    if (wlo != seg->base || whi != seg->base + seg->len)
        SHM_INFO(HEAP, "data+BSS: pages %#lx..%#lx shared; the rest of [%#lx, %#lx) is not "
                 "private and writable and is reached through the fabric",
                 (unsigned long)wlo, (unsigned long)whi, (unsigned long)seg->base,
                 (unsigned long)(seg->base + seg->len));
    why = "memfd_create";
    fd = memfd_create("ofishmem-data", MFD_CLOEXEC);
    if (fd < 0)
        goto fail_errno;
    why = "ftruncate";
    if (ftruncate(fd, (off_t)wlen) != 0)
        goto fail_errno;
    why = "mmap of the memfd";
    staging = mmap(NULL, wlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (staging == MAP_FAILED)
        goto fail_errno;
    pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    pmbuf = malloc(PAGEMAP_BATCH * sizeof(uint64_t));
    why = "malloc";
    if (pmbuf == NULL)
        goto fail_errno;

    size_t copied = 0, chunks = 0, in_chunk = 0;
    uintptr_t chunk_lo = wlo;
    uintptr_t pm_lo = 0, pm_hi = 0; /* pages whose pagemap entries are in pmbuf */
    int r = 0;
    for (uintptr_t p = wlo; p < whi; p += page) {
        while (r < nruns - 1 && p >= runs[r].hi)
            r++;
        int candidate = runs[r].file || pm < 0;
        if (!candidate) {
            if (p < pm_lo || p >= pm_hi) {
                size_t n = (whi - p) / page;
                n = n > PAGEMAP_BATCH ? PAGEMAP_BATCH : n;
                ssize_t got = pread(pm, pmbuf, n * sizeof(uint64_t),
                                    (off_t)(p / page * sizeof(uint64_t)));
                if (got < (ssize_t)sizeof(uint64_t)) {
                    /* No pagemap after all: read every page. */
                    close(pm);
                    pm = -1;
                    p -= page;
                    continue;
                }
                pm_lo = p;
                pm_hi = p + (size_t)got / sizeof(uint64_t) * page;
            }
            uint64_t e = pmbuf[(p - pm_lo) / page];
            candidate = (e >> 63) & 1 || (e >> 62) & 1; /* present or swapped */
        }
        if (candidate && !page_is_zero((void *)p, page)) {
            copy_words(staging + (p - wlo), (void *)p, page);
            copied++;
            in_chunk++;
        }
        int last = p + page >= whi;
        if (in_chunk >= CHUNK_PAGES || last) {
            /* Remap what was just copied (and the empty pages among it). */
            uintptr_t end = p + page;
            why = "mmap over the data+BSS";
            if (mmap((void *)chunk_lo, end - chunk_lo, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED, fd, (off_t)(chunk_lo - wlo)) == MAP_FAILED)
                goto fail_errno;
            chunks++;
            chunk_lo = end;
            in_chunk = 0;
        }
    }
    if (pm >= 0)
        close(pm);
    munmap(staging, wlen);
    free(pmbuf);
    free(runs);
    moved.fd = fd;
    moved.lo = wlo;
    moved.len = wlen;
    static int atfork_done;
    if (!atfork_done && pthread_atfork(NULL, NULL, globals_atfork_child) == 0)
        atfork_done = 1;
    SHM_DEBUG(HEAP, "data+BSS %#lx+%zu on a memfd: %zu pages copied, %zu remaps",
              (unsigned long)wlo, wlen, copied, chunks);
    *out_p = (shm_seg_share_t){.fd = fd, .lo = wlo - seg->base, .len = wlen};
    return SHM_OK;

fail_errno:
    SHM_WARN(HEAP, "globals (data+BSS) stay off the same-host direct path, through the fabric: "
             "%s: %s",
             why, strerror(errno));
    goto out;
fail:
    SHM_WARN(HEAP, "globals (data+BSS) stay off the same-host direct path, through the fabric: "
             "%s",
             why);
out:
    if (staging != MAP_FAILED)
        munmap(staging, wlen);
    if (pm >= 0)
        close(pm);
    if (fd >= 0)
        close(fd); /* pages already moved keep it alive, with their contents */
    free(pmbuf);
    free(runs);
    return SHM_ERR_NOSYS;
}
