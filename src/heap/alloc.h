// SPDX-License-Identifier: BSD-3-Clause
//
// Symmetric-heap allocator: hands out offsets in [0, size). Remote PEs may write the heap at any
// time, so all metadata lives in ordinary malloc'd memory and the heap itself is never touched.
// Results depend only on the sequence of calls, so PEs making the same calls get the same offsets.
// Not thread-safe: the caller serialises access.
//
// Offsets are aligned relative to offset 0; the caller's heap base must be aligned at least as
// strictly as the largest alignment it asks for.

#ifndef SHM_HEAP_ALLOC_H
#define SHM_HEAP_ALLOC_H

#include <stddef.h>

typedef struct shm_alloc shm_alloc_t; /* opaque */

#define SHM_ALLOC_FAIL ((size_t)-1)

/* size: heap bytes (rounded down to a multiple of min_align); min_align: power of two >= 16,
   every block is aligned to it and its size is a multiple of it. NULL on ENOMEM/bad args. */
shm_alloc_t *shm_alloc_create(size_t size, size_t min_align);
void shm_alloc_destroy(shm_alloc_t *a);

/* align 0 = min_align; must be a power of two else FAIL; bytes 0 -> FAIL (callers handle 0). */
size_t shm_alloc_alloc(shm_alloc_t *a, size_t bytes, size_t align);

/* 0 ok; -1 if off is not the start of a live block (double free, interior pointer): nothing
   changes then. */
int shm_alloc_free(shm_alloc_t *a, size_t off);

/* Usable size of the live block at off, 0 if none. */
size_t shm_alloc_block_size(const shm_alloc_t *a, size_t off);

/* Realloc in place if it can (shrink, or grow into the following free space); returns off on
   success, SHM_ALLOC_FAIL if it cannot be done in place (caller then allocs+copies+frees).
   Nothing changes on FAIL. */
size_t shm_alloc_resize(shm_alloc_t *a, size_t off, size_t bytes);

typedef struct {
    size_t size, used, free_total, largest_free, nblocks_live, nblocks_free;
} shm_alloc_stats_t;

void shm_alloc_stats(const shm_alloc_t *a, shm_alloc_stats_t *st_p);

/* Debug: walk all metadata and check invariants (blocks tile [0,size), no two adjacent free
   blocks, stats consistent); returns 0 if sound, else -1. */
int shm_alloc_check(const shm_alloc_t *a);

#endif /* SHM_HEAP_ALLOC_H */
