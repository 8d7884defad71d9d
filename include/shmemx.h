/* SPDX-License-Identifier: BSD-3-Clause */
/* ofishmem extensions to OpenSHMEM (names as in Sandia OpenSHMEM where they exist). */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since an arbitrary point, monotonic (as Sandia's shmemx_wtime).
 * HAVE_SHMEMX_WTIME tells programs so, as Sandia's <shmemx.h> does (its test
 * suite defines its own shmemx_wtime without it). */
#define HAVE_SHMEMX_WTIME 1
double shmemx_wtime(void);

/* Symmetric heap: total size and bytes in use on this PE. */
size_t shmemx_heap_size(void);
size_t shmemx_heap_used(void);

typedef struct {
    size_t size;         /* SHMEM_SYMMETRIC_SIZE, rounded to pages */
    size_t used;         /* bytes in live blocks (including the library's own) */
    size_t largest_free; /* the largest block shmem_malloc could return now */
    size_t nblocks;      /* live blocks */
} shmemx_heap_info_t;
void shmemx_heap_query(shmemx_heap_info_t *info);

/* libfabric provider in use, e.g. "shm" or "tcp;ofi_rxm". */
const char *shmemx_provider_name(void);

#ifdef __cplusplus
}
#endif

#endif /* SHMEMX_H */
