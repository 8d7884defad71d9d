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
 * heap is a memfd other PEs of this host map (the same-host direct path), and
 * with SHMEM_DIRECT_GLOBALS the data+BSS is moved onto one as well (globals.c).
 */
shm_status_t shm_heap_init(size_t heap_size, const char *shared_nspace, int rank);

/*
 * Same-host direct path (shared.c). For each segment, base[pe] + off is where
 * offset off of PE pe's segment is mapped in this process (base[pe] == 0: pe
 * is reached through the fabric). Only offsets in [lo, lo + len) are mapped:
 * the whole heap; for data+BSS, the whole pages that could be shared (an edge
 * page that also holds read-only data is left to the fabric).
 */
typedef struct {
    uintptr_t *base; /* npes entries, or NULL: nothing mapped */
    size_t lo, len;
} shm_seg_peers_t;

extern shm_seg_peers_t shm_seg_peer_g[SHM_NSEGS];

/* This PE's own memory objects, served to its local peers (shared.c). */
typedef struct {
    int fd;         /* memfd, or -1 */
    size_t lo, len; /* the part of the segment it backs */
} shm_seg_share_t;

/* Heap: a memfd mapped over [addr, addr+len). */
shm_status_t shm_heap_shared_create(void *addr, size_t len);
/* Data+BSS: moves the shareable pages of seg onto a memfd (globals.c). */
shm_status_t shm_heap_globals_share(const shm_seg_t *seg, shm_seg_share_t *out_p);
/* Offer a shared segment (the data+BSS memfd stays globals.c's: not closed). */
void shm_heap_shared_add(int seg, const shm_seg_share_t *sh);
/* Nonzero when every segment of this PE (the heap; data+BSS when found) is
 * offered whole to its local peers: they can map all of it (SHMEM_FABRIC). */
int shm_heap_shared_whole(void);
/*
 * Before the init exchange: listen for the local peers (abstract Unix
 * socket named from nspace and rank) and publish how to reach us.
 */
shm_status_t shm_heap_shared_serve(const char *nspace, int rank);
/* After the init exchange: fetch every local peer's memfds and map them. */
shm_status_t shm_heap_shared_map_peers(const char *nspace, int me, int npes,
                                       const int *local_peers, int nlocal);
/* Once every local PE has mapped ours (after the init barrier): stop serving. */
void shm_heap_shared_done(void);
void shm_heap_shared_fini(void);

/*
 * Address of [off, off+len) of segment seg on PE pe if it is mapped here,
 * else NULL. A few compares: the hot path of every same-host transfer.
 */
static inline void *shm_seg_peer_addr(int seg, int pe, size_t off, size_t len)
{
    const shm_seg_peers_t *p = &shm_seg_peer_g[seg];
    uintptr_t b = p->base ? p->base[pe] : 0;
    size_t rel = off - p->lo;
    if (b == 0 || rel >= p->len || len > p->len - rel)
        return NULL;
    return (void *)(b + off);
}

/* Address of offset off in PE pe's heap if it is mapped here, else NULL. */
static inline void *shm_heap_peer_addr(int pe, size_t off)
{
    return shm_seg_peer_addr(SHM_SEG_HEAP, pe, off, 0);
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
