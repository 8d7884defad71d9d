// SPDX-License-Identifier: BSD-3-Clause
/*
 * Same-host direct path, memory side: each PE's heap is a POSIX shared-memory
 * object that the other PEs of its host map, so RMA to them is a memcpy and
 * shmem_ptr returns a usable pointer. The object is unlinked as soon as every
 * local PE has mapped it (end of shmem_init), so a crash afterwards leaves
 * nothing behind; oshrun sweeps the job's names if a PE dies before that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "heap/heap.h"

uintptr_t *shm_heap_peer_g;

static char own_name[256];
static int own_linked;
static int npeers;
static size_t peer_len;

void shm_heap_shared_name(char *buf, size_t len, const char *nspace, int rank)
{
    int n = snprintf(buf, len, "/ofishmem-%s-%d", nspace, rank);
    /* Namespaces may contain '/', which shm_open does not allow past the first. */
    for (int i = 1; i < n && (size_t)i < len; i++)
        if (buf[i] == '/')
            buf[i] = '_';
}

shm_status_t shm_heap_shared_create(void *addr, size_t len, const char *nspace, int rank)
{
    shm_heap_shared_name(own_name, sizeof(own_name), nspace, rank);
    shm_unlink(own_name); /* a stale object of a dead job with our name */
    int fd = shm_open(own_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        SHM_WARN(HEAP, "shm_open(%s): %s; same-host direct path off", own_name, strerror(errno));
        return SHM_ERR_NOSYS;
    }
    own_linked = 1;
    if (ftruncate(fd, (off_t)len) != 0 ||
        mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        SHM_WARN(HEAP, "cannot size or map %s (%zu bytes): %s; same-host direct path off",
                 own_name, len, strerror(errno));
        close(fd);
        shm_heap_shared_unlink();
        return SHM_ERR_NOSYS;
    }
    close(fd);
    peer_len = len;
    return SHM_OK;
}

/*
 * Is rank `me` in list (SHMEM_DIRECT_NOMAP: "1,3-5")? Stops the job with a
 * message naming the variable when the list is malformed.
 */
static int nomap_listed(const char *list, int me)
{
    const char *p = list;
    int hit = 0;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            goto bad;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                goto bad;
        }
        if (me >= a && me <= b)
            hit = 1;
        if (*end == ',' && end[1] != '\0')
            end++;
        else if (*end != '\0')
            goto bad;
        p = end;
    }
    return hit;
bad:
    shm_fatal("SHMEM_DIRECT_NOMAP='%s' is not valid: expected PE numbers and ranges a-b "
              "separated by commas, e.g. '1,3-5'",
              list);
}

shm_status_t shm_heap_shared_map_peers(const char *nspace, int me, int npes,
                                       const int *local_peers, int nlocal)
{
    shm_heap_peer_g = calloc((size_t)npes, sizeof(uintptr_t));
    if (shm_heap_peer_g == NULL)
        return SHM_ERR_NOMEM;
    npeers = npes;
    /* Testing the mix of paths: a listed PE maps only its own heap. */
    const char *nomap = shm_env_g.DIRECT_NOMAP;
    int skip_others = nomap && *nomap && nomap_listed(nomap, me);
    if (skip_others)
        SHM_INFO(HEAP, "SHMEM_DIRECT_NOMAP: PE %d maps no other PE's heap", me);
    for (int i = 0; i < nlocal; i++) {
        int pe = local_peers[i];
        if (pe == me) {
            shm_heap_peer_g[pe] = shm_seg_g[SHM_SEG_HEAP].base;
            continue;
        }
        if (skip_others)
            continue;
        char name[256];
        shm_heap_shared_name(name, sizeof(name), nspace, pe);
        int fd = shm_open(name, O_RDWR, 0);
        void *m = MAP_FAILED;
        if (fd >= 0) {
            m = mmap(NULL, peer_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
            close(fd);
        }
        if (m == MAP_FAILED) {
            /* That PE is then reached through the fabric: slower, still correct. */
            SHM_WARN(HEAP, "cannot map PE %d's heap (%s): %s; using the fabric for it", pe, name,
                     strerror(errno));
            continue;
        }
        shm_heap_peer_g[pe] = (uintptr_t)m;
    }
    return SHM_OK;
}

void shm_heap_shared_unlink(void)
{
    if (own_linked) {
        shm_unlink(own_name);
        own_linked = 0;
    }
}

void shm_heap_shared_fini(void)
{
    shm_heap_shared_unlink();
    if (shm_heap_peer_g) {
        for (int pe = 0; pe < npeers; pe++)
            if (shm_heap_peer_g[pe] && shm_heap_peer_g[pe] != shm_seg_g[SHM_SEG_HEAP].base)
                munmap((void *)shm_heap_peer_g[pe], peer_len);
        free(shm_heap_peer_g);
        shm_heap_peer_g = NULL;
    }
    npeers = 0;
}
