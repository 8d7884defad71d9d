// SPDX-License-Identifier: BSD-3-Clause
#define _GNU_SOURCE
#include "heap/heap.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "heap/alloc.h"
#include "runtime/rt.h"

shm_seg_t shm_seg_g[SHM_NSEGS];

#define HEAP_MIN_ALIGN 64 /* a cache line: AMO words never share one by accident */
#define HEAP_BASE_ALIGN ((size_t)1 << 30) /* the largest alignment shmem_align honours */

static shm_alloc_t *heap_alloc;
static void *heap_map;
static size_t heap_map_len;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    uintptr_t lo, hi, relro_hi;
    int found;
} data_seg_probe_t;

static int probe_phdr(struct dl_phdr_info *info, size_t sz, void *arg)
{
    data_seg_probe_t *pr = arg;
    (void)sz;
    /* The first object is the main executable. */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            if (!pr->found || start < pr->lo)
                pr->lo = start;
            if (!pr->found || start + ph->p_memsz > pr->hi)
                pr->hi = start + ph->p_memsz;
            pr->found = 1;
        } else if (ph->p_type == PT_GNU_RELRO) {
            pr->relro_hi = start + ph->p_memsz;
        }
    }
    return 1; /* stop after the executable */
}

shm_status_t shm_heap_find_data_segment(uintptr_t *base_p, size_t *len_p)
{
    data_seg_probe_t pr = {0};
    dl_iterate_phdr(probe_phdr, &pr);
    if (!pr.found)
        return SHM_ERR_NOT_FOUND;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = pr.lo;
    /* RELRO becomes read-only after relocation: keep it out of the segment. */
    if (pr.relro_hi > lo && pr.relro_hi < pr.hi)
        lo = pr.relro_hi;
    lo = lo & ~(page - 1);
    uintptr_t hi = (pr.hi + page - 1) & ~(page - 1);
    *base_p = lo;
    *len_p = hi - lo;
    return SHM_OK;
}

shm_status_t shm_heap_init(size_t heap_size, const char *shared_nspace, int rank)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (heap_size < page)
        heap_size = page;
    heap_size = (heap_size + page - 1) & ~(page - 1);
    /*
     * The allocator aligns offsets, so the base must be at least as aligned
     * as any block: reserve extra address space and trim it to HEAP_BASE_ALIGN.
     */
    size_t reserve = heap_size + HEAP_BASE_ALIGN;
    char *r = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        int e = errno;
        char hint[512];
        shm_rt_hint_mapping(hint, sizeof hint, reserve);
        shm_error("cannot map a symmetric heap of %zu bytes (SHMEM_SYMMETRIC_SIZE, plus the "
                  "library's own; reserved with %zu MiB of room to align it): %s%s",
                  heap_size, (size_t)(HEAP_BASE_ALIGN >> 20), strerror(e), hint);
        return SHM_ERR_NOMEM;
    }
    char *m = (char *)(((uintptr_t)r + HEAP_BASE_ALIGN - 1) & ~(uintptr_t)(HEAP_BASE_ALIGN - 1));
    if (m > r)
        munmap(r, (size_t)(m - r));
    if (r + reserve > m + heap_size)
        munmap(m + heap_size, (size_t)(r + reserve - (m + heap_size)));
    shm_status_t sst = shared_nspace ? shm_heap_shared_create(m, heap_size) : SHM_ERR_NOSYS;
    if (sst == SHM_OK) {
        /* mapped MAP_SHARED over the reservation */
    } else if (sst == SHM_ERR_NOMEM) {
        munmap(m, heap_size); /* said why */
        return sst;
    } else if (mprotect(m, heap_size, PROT_READ | PROT_WRITE) != 0) {
        shm_error("cannot map a symmetric heap of %zu bytes: %s", heap_size, strerror(errno));
        munmap(m, heap_size);
        return SHM_ERR_NOMEM;
    }
    heap_alloc = shm_alloc_create(heap_size, HEAP_MIN_ALIGN);
    if (heap_alloc == NULL) {
        shm_error("cannot allocate the symmetric heap's allocator (malloc failed)");
        munmap(m, heap_size);
        return SHM_ERR_NOMEM;
    }
    heap_map = m;
    heap_map_len = heap_size;
    shm_seg_g[SHM_SEG_HEAP].base = (uintptr_t)m;
    shm_seg_g[SHM_SEG_HEAP].len = heap_size;

    uintptr_t dbase;
    size_t dlen;
    if (shm_heap_find_data_segment(&dbase, &dlen) == SHM_OK) {
        shm_seg_g[SHM_SEG_DATA].base = dbase;
        shm_seg_g[SHM_SEG_DATA].len = dlen;
    } else {
        SHM_WARN(HEAP, "no writable data segment found: globals are not symmetric");
    }
    if (shared_nspace) {
        shm_seg_share_t sh;
        if (shm_seg_g[SHM_SEG_DATA].len && shm_env_g.DIRECT_GLOBALS &&
            shm_heap_globals_share(&shm_seg_g[SHM_SEG_DATA], &sh) == SHM_OK)
            shm_heap_shared_add(SHM_SEG_DATA, &sh);
        if (shm_heap_shared_serve(shared_nspace, rank) != SHM_OK) {
            shm_error("cannot publish how to reach this PE's memory (PMIx)");
            return SHM_ERR_RUNTIME;
        }
    }
    SHM_DEBUG(HEAP, "heap %p+%zu, data+bss %#lx+%zu", m, heap_size,
              (unsigned long)shm_seg_g[SHM_SEG_DATA].base, shm_seg_g[SHM_SEG_DATA].len);
    return SHM_OK;
}

void shm_heap_fini(void)
{
    shm_heap_shared_fini();
    if (heap_alloc) {
        shm_alloc_destroy(heap_alloc);
        heap_alloc = NULL;
    }
    if (heap_map) {
        munmap(heap_map, heap_map_len);
        heap_map = NULL;
    }
    memset(shm_seg_g, 0, sizeof(shm_seg_g));
}

void *shm_heap_alloc(size_t bytes, size_t align)
{
    if (bytes == 0 || heap_alloc == NULL || align > HEAP_BASE_ALIGN)
        return NULL;
    pthread_mutex_lock(&heap_lock);
    size_t off = shm_alloc_alloc(heap_alloc, bytes, align);
    pthread_mutex_unlock(&heap_lock);
    if (off == SHM_ALLOC_FAIL)
        return NULL;
    return (char *)heap_map + off;
}

static int heap_offset(const void *ptr, size_t *off_p)
{
    uintptr_t off = (uintptr_t)ptr - (uintptr_t)heap_map;
    if (heap_map == NULL || off >= heap_map_len)
        return -1;
    *off_p = off;
    return 0;
}

void shm_heap_free(void *ptr)
{
    size_t off;
    if (ptr == NULL)
        return;
    if (heap_offset(ptr, &off) != 0)
        shm_fatal("shmem_free(%p): not an address in the symmetric heap", ptr);
    pthread_mutex_lock(&heap_lock);
    int rc = shm_alloc_free(heap_alloc, off);
    pthread_mutex_unlock(&heap_lock);
    if (rc != 0)
        shm_fatal("shmem_free(%p): not the start of a live symmetric allocation "
                  "(double free or interior pointer)", ptr);
}

void *shm_heap_realloc(void *ptr, size_t bytes)
{
    size_t off;
    if (heap_offset(ptr, &off) != 0)
        shm_fatal("shmem_realloc(%p): not an address in the symmetric heap", ptr);
    pthread_mutex_lock(&heap_lock);
    size_t old = shm_alloc_block_size(heap_alloc, off);
    if (old == 0) {
        pthread_mutex_unlock(&heap_lock);
        shm_fatal("shmem_realloc(%p): not the start of a live symmetric allocation", ptr);
    }
    size_t noff = shm_alloc_resize(heap_alloc, off, bytes);
    if (noff == SHM_ALLOC_FAIL) {
        noff = shm_alloc_alloc(heap_alloc, bytes, 0);
        if (noff != SHM_ALLOC_FAIL) {
            memcpy((char *)heap_map + noff, ptr, old < bytes ? old : bytes);
            shm_alloc_free(heap_alloc, off);
        }
    }
    pthread_mutex_unlock(&heap_lock);
    return noff == SHM_ALLOC_FAIL ? NULL : (char *)heap_map + noff;
}

int shm_heap_is_block(const void *ptr)
{
    size_t off;
    if (heap_offset(ptr, &off) != 0)
        return 0;
    pthread_mutex_lock(&heap_lock);
    int live = shm_alloc_block_size(heap_alloc, off) != 0;
    pthread_mutex_unlock(&heap_lock);
    return live;
}

void shm_heap_stats(shm_heap_stats_t *st_p)
{
    shm_alloc_stats_t st = {0};
    if (heap_alloc) {
        pthread_mutex_lock(&heap_lock);
        shm_alloc_stats(heap_alloc, &st);
        pthread_mutex_unlock(&heap_lock);
    }
    st_p->size = st.size;
    st_p->used = st.used;
    st_p->largest_free = st.largest_free;
    st_p->nblocks = st.nblocks_live;
}
