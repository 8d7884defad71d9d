// SPDX-License-Identifier: BSD-3-Clause
/*
 * Symmetric memory: the heap mapping, the executable's data+BSS, and the
 * translation of a local address to (segment, offset). The same offset names
 * the same object on every PE; the conduit adds each PE's own base.
 */
#ifndef SHM_HEAP_HEAP_H
#define SHM_HEAP_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef enum { SHM_SEG_HEAP = 0, SHM_SEG_DATA = 1, SHM_NSEGS = 2 } shm_seg_id_t;

typedef struct {
    uintptr_t base;
    size_t len;
} shm_seg_t;

extern shm_seg_t shm_seg_g[SHM_NSEGS];

/*
 * Which segment holds [addr, addr+len)? Returns the segment id and sets
 * *off_p, or -1 if the range is not (entirely) symmetric. Two compares per
 * segment: the hot path of every RMA call.
 */
static inline int shm_heap_xlate(const void *addr, size_t len, size_t *off_p)
{
    uintptr_t a = (uintptr_t)addr;
    for (int s = 0; s < SHM_NSEGS; s++) {
        uintptr_t off = a - shm_seg_g[s].base;
        if (off < shm_seg_g[s].len && len <= shm_seg_g[s].len - off) {
            *off_p = off;
            return s;
        }
    }
    /* A zero-length range at the very end of a segment is still symmetric. */
    for (int s = 0; s < SHM_NSEGS; s++)
        if (len == 0 && a == shm_seg_g[s].base + shm_seg_g[s].len && shm_seg_g[s].len) {
            *off_p = shm_seg_g[s].len;
            return s;
        }
    return -1;
}

/*
 * Maps the heap and finds data+BSS; fills shm_seg_g. With shared_nspace, the
 * heap is a shared-memory object other PEs of this host can map (direct path).
 */
shm_status_t shm_heap_init(size_t heap_size, const char *shared_nspace, int rank);

/*
 * Same-host direct path (shared.c). shm_heap_peer_g[pe] is where PE pe's heap
 * is mapped in this process, or 0 when pe is reached through the fabric.
 */
extern uintptr_t *shm_heap_peer_g;
void shm_heap_shared_name(char *buf, size_t len, const char *nspace, int rank);
shm_status_t shm_heap_shared_create(void *addr, size_t len, const char *nspace, int rank);
/* After every local PE created its object (i.e. after the init exchange). */
shm_status_t shm_heap_shared_map_peers(const char *nspace, int me, int npes,
                                       const int *local_peers, int nlocal);
/* Once every local PE has mapped it (after the init barrier). */
void shm_heap_shared_unlink(void);
void shm_heap_shared_fini(void);

/* Address of offset off in PE pe's heap if it is mapped here, else NULL. */
static inline void *shm_heap_peer_addr(int pe, size_t off)
{
    uintptr_t b = shm_heap_peer_g ? shm_heap_peer_g[pe] : 0;
    return b ? (void *)(b + off) : NULL;
}
void shm_heap_fini(void);

/* Writable PT_LOAD of the main executable, RELRO excluded (page aligned). */
shm_status_t shm_heap_find_data_segment(uintptr_t *base_p, size_t *len_p);

/* Allocation (thread safe); NULL when it does not fit. align 0: default. */
void *shm_heap_alloc(size_t bytes, size_t align);
void shm_heap_free(void *ptr);
void *shm_heap_realloc(void *ptr, size_t bytes);
/* Nonzero if ptr is the start of a live block. */
int shm_heap_is_block(const void *ptr);

typedef struct {
    size_t size, used, largest_free, nblocks;
} shm_heap_stats_t;
void shm_heap_stats(shm_heap_stats_t *st_p);

#endif /* SHM_HEAP_HEAP_H */
