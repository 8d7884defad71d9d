// SPDX-License-Identifier: BSD-3-Clause
/* Setup, query, memory management, ordering and barriers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <shmemx.h>

#include "api/api.h"
#include "core/init.h"
#include "runtime/rt.h"

SHM_DEFINE(void, shmem_init, (void), { shm_core_init(SHMEM_THREAD_SINGLE); })

SHM_DEFINE(int, shmem_init_thread, (int requested, int *provided), {
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        /* The spec: nonzero on failure, the library stays uninitialised. */
        shm_error("shmem_init_thread: unknown thread level %d (expected SHMEM_THREAD_SINGLE, "
                  "_FUNNELED, _SERIALIZED or _MULTIPLE)",
                  requested);
        return 1;
    }
    shm_core_init(requested);
    if (provided)
        *provided = shm_state_g.thread_level;
    return 0;
})

SHM_DEFINE(void, shmem_query_thread, (int *provided), {
    shm_check_running(__func__);
    *provided = shm_state_g.thread_level;
})

SHM_DEFINE(void, shmem_finalize, (void), { shm_core_finalize(); })

SHM_DEFINE(int, shmem_query_initialized, (int *initialized), {
    *initialized = shm_state_g.run_state == SHM_STATE_RUNNING;
    return 0;
})

SHM_DEFINE(void, shmem_global_exit, (int status), {
    char msg[64];
    /* shm_rt_abort flushes stdio once the PE's end is bounded (a flush may
     * block on a stopped reader). */
    snprintf(msg, sizeof(msg), "shmem_global_exit(%d)", status);
    shm_rt_abort(status, msg);
})

SHM_DEFINE(int, shmem_my_pe, (void), { return shm_state_g.run_state ? shm_state_g.me : -1; })
SHM_DEFINE(int, shmem_n_pes, (void), { return shm_state_g.run_state ? shm_state_g.npes : -1; })
SHM_DEFINE(int, _my_pe, (void), { return pshmem_my_pe(); })
SHM_DEFINE(int, _num_pes, (void), { return pshmem_n_pes(); })
SHM_DEFINE(void, start_pes, (int npes), {
    (void)npes; /* ignored since OpenSHMEM 1.2: the launcher sets the job size */
    shm_core_init(SHMEM_THREAD_SINGLE);
})

SHM_DEFINE(int, shmem_pe_accessible, (int pe), {
    return shm_state_g.run_state == SHM_STATE_RUNNING && pe >= 0 && pe < shm_state_g.npes;
})

SHM_DEFINE(int, shmem_addr_accessible, (const void *addr, int pe), {
    size_t off;
    if (!pshmem_pe_accessible(pe))
        return 0;
    return shm_heap_xlate(addr, 1, &off) >= 0;
})

SHM_DEFINE(void *, shmem_ptr, (const void *dest, int pe), {
    size_t off;
    shm_check_running(__func__);
    int seg = shm_heap_xlate(dest, 1, &off);
    if (seg < 0 || !pshmem_pe_accessible(pe))
        return NULL;
    if (pe == shm_state_g.me)
        return (void *)dest;
    /* Other PEs: objects of PEs on this host whose memory is mapped here. */
    return shm_seg_peer_addr(seg, pe, off, 1);
})

SHM_DEFINE(void, shmem_info_get_version, (int *major, int *minor), {
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
})

SHM_DEFINE(void, shmem_info_get_name, (char *name), {
    strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
    name[SHMEM_MAX_NAME_LEN - 1] = '\0';
})

/* Profiling control: the level is kept for tools; the library has no profiler of its own. */
static int pcontrol_level = 1;
SHM_DEFINE(void, shmem_pcontrol, (const int level, ...), { pcontrol_level = level; })

/* ---- memory management ---- */

static void *heap_alloc_collective(const char *fn, size_t bytes, size_t align)
{
    shm_check_running(fn);
    void *p = shm_heap_alloc(bytes, align);
    if (p == NULL && bytes != 0 && shm_state_g.debug) {
        shm_heap_stats_t st;
        shm_heap_stats(&st);
        shm_error("%s(%zu): does not fit in the symmetric heap (%zu bytes, %zu in use, "
                  "largest free block %zu); raise SHMEM_SYMMETRIC_SIZE",
                  fn, bytes, st.size, st.used, st.largest_free);
    }
    /* Allocation is collective: nobody uses the block before everyone has it. */
    shm_coll_barrier_world();
    return p;
}

SHM_DEFINE(void *, shmem_malloc, (size_t size),
           { return heap_alloc_collective(__func__, size, 0); })

SHM_DEFINE(void *, shmem_malloc_with_hints, (size_t size, long hints), {
    (void)hints; /* every block already suits atomics and signals */
    return heap_alloc_collective(__func__, size, 0);
})

SHM_DEFINE(void *, shmem_calloc, (size_t count, size_t size), {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        shm_check_running(__func__);
        shm_coll_barrier_world();
        return NULL;
    }
    void *p = heap_alloc_collective(__func__, bytes, 0);
    if (p)
        memset(p, 0, bytes);
    shm_coll_barrier_world(); /* zeroed everywhere before anyone writes */
    return p;
})

SHM_DEFINE(void *, shmem_align, (size_t alignment, size_t size), {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        if (shm_state_g.debug)
            shm_error("shmem_align: alignment %zu is not a power of two", alignment);
        shm_coll_barrier_world();
        return NULL;
    }
    return heap_alloc_collective(__func__, size, alignment);
})

SHM_DEFINE(void *, shmem_realloc, (void *ptr, size_t size), {
    shm_check_running(__func__);
    if (ptr == NULL)
        return heap_alloc_collective(__func__, size, 0);
    if (size == 0) {
        shm_coll_barrier_world();
        shm_heap_free(ptr);
        return NULL;
    }
    shm_coll_barrier_world(); /* nobody is still writing into the old block */
    void *p = shm_heap_realloc(ptr, size);
    shm_coll_barrier_world();
    return p;
})

SHM_DEFINE(void, shmem_free, (void *ptr), {
    shm_check_running(__func__);
    shm_coll_barrier_world();
    shm_heap_free(ptr);
})

/* ---- ordering ---- */

#define CTXP(c) ((struct shm_ctx *)(c))

/* SHMEM_CTX_INVALID: no operation is performed (as the spec says for fence and quiet). */
SHM_DEFINE(void, shmem_ctx_fence, (shmem_ctx_t ctx), {
    if (ctx == SHMEM_CTX_INVALID)
        return;
    shm_check_ctx_live(__func__, CTXP(ctx));
    cdt_fence(&CTXP(ctx)->cdt);
})
SHM_DEFINE(void, shmem_fence, (void), { cdt_fence(&shm_ctx_default_g.cdt); })
SHM_DEFINE(void, shmem_ctx_quiet, (shmem_ctx_t ctx), {
    if (ctx == SHMEM_CTX_INVALID)
        return;
    shm_check_ctx_live(__func__, CTXP(ctx));
    cdt_quiet(&CTXP(ctx)->cdt);
})
SHM_DEFINE(void, shmem_quiet, (void), { cdt_quiet(&shm_ctx_default_g.cdt); })

static void pe_quiet(const char *fn, struct shm_ctx *ctx, const int *pes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        shm_check_pe(fn, shm_ctx_world_pe(fn, ctx, pes[i]));
    /* Counters are per context, not per peer: completing all is a superset. */
    if (n)
        cdt_quiet(&ctx->cdt);
}
SHM_DEFINE(void, shmem_ctx_pe_quiet, (shmem_ctx_t ctx, const int *pes, size_t n),
           { pe_quiet(__func__, CTXP(ctx), pes, n); })
SHM_DEFINE(void, shmem_pe_quiet, (const int *pes, size_t n),
           { pe_quiet(__func__, &shm_ctx_default_g, pes, n); })

/* ---- barriers ---- */

SHM_DEFINE(void, shmem_barrier_all, (void), {
    shm_check_running(__func__);
    shm_coll_barrier_world();
})

SHM_DEFINE(void, shmem_sync_all, (void), {
    shm_check_running(__func__);
    shm_coll_sync_world();
})

/* ---- extensions ---- */

SHM_DEFINE(double, shmemx_wtime, (void), {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
})

SHM_DEFINE(size_t, shmemx_heap_size, (void), {
    shm_heap_stats_t st;
    shm_heap_stats(&st);
    return st.size;
})

SHM_DEFINE(size_t, shmemx_heap_used, (void), {
    shm_heap_stats_t st;
    shm_heap_stats(&st);
    return st.used;
})

SHM_DEFINE(void, shmemx_heap_query, (shmemx_heap_info_t * info), {
    shm_heap_stats_t st;
    shm_heap_stats(&st);
    info->size = st.size;
    info->used = st.used;
    info->largest_free = st.largest_free;
    info->nblocks = st.nblocks;
})

SHM_DEFINE(const char *, shmemx_provider_name, (void), { return cdt_provider_name(); })
