// SPDX-License-Identifier: BSD-3-Clause
/*
 * Deprecated names that are not typed families: the pre-1.2 allocation
 * names, still required by 1.6 (chapter "Deprecated API": "Last Version
 * Supported: Current"), and the SHMEM_CACHE calls, last specified in 1.4
 * and kept for programs written before.
 * The typed deprecated families (shmem_TYPE_wait, *_to_all, shmem_TYPE_add,
 * ...) live beside their current forms.
 */
#include "api/api.h"

/* Defined in api_setup.c. */
extern __typeof__(shmem_malloc) pshmem_malloc;
extern __typeof__(shmem_free) pshmem_free;
extern __typeof__(shmem_realloc) pshmem_realloc;
extern __typeof__(shmem_align) pshmem_align;

/* 1.2: shmalloc, shfree, shrealloc, shmemalign became shmem_malloc, ... */
SHM_DEFINE(void *, shmalloc, (size_t size), { return pshmem_malloc(size); })
SHM_DEFINE(void, shfree, (void *ptr), { pshmem_free(ptr); })
SHM_DEFINE(void *, shrealloc, (void *ptr, size_t size), { return pshmem_realloc(ptr, size); })
SHM_DEFINE(void *, shmemalign, (size_t alignment, size_t size),
           { return pshmem_align(alignment, size); })

/*
 * SHMEM_CACHE (deprecated 1.3, removed after 1.4) managed caches that were not coherent with remote
 * writes. Every cache this library runs on is coherent (remote writes land
 * by DMA or by another core's stores), so there is nothing to enable,
 * disable, invalidate or flush: each call has no effect.
 */
SHM_DEFINE(void, shmem_clear_cache_inv, (void), {})
SHM_DEFINE(void, shmem_set_cache_inv, (void), {})
SHM_DEFINE(void, shmem_clear_cache_line_inv, (void *dest), { (void)dest; })
SHM_DEFINE(void, shmem_set_cache_line_inv, (void *dest), { (void)dest; })
SHM_DEFINE(void, shmem_udcflush, (void), {})
SHM_DEFINE(void, shmem_udcflush_line, (void *dest), { (void)dest; })
