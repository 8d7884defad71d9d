// SPDX-License-Identifier: BSD-3-Clause
/**
 * @file conduit.h
 * The narrow interface between the library and the network. Everything
 * above the conduit calls only these; nothing above it includes the rdma/ headers.
 *
 * Addressing: a PE number is the conduit's peer address. Remote memory is
 * named by (segment id, offset): the conduit adds the remote base of that
 * segment on that PE (or not, where the provider addresses by offset).
 *
 * Completion model: every context counts issued and completed operations.
 * Blocking puts return once the source buffer is reusable; cdt_quiet()
 * returns once everything the context issued is complete at its target.
 */
#ifndef SHM_CONDUIT_H
#define SHM_CONDUIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

/** Settings the conduit takes from the runtime and the env table. */
typedef struct {
    int rank, size;          /**< this PE, job size */
    int local_size;          /**< PEs on this host */
    int nnodes;              /**< hosts in the job */
    const char *provider;    /**< NULL/"" = choose */
    const char *domain;      /**< NULL/"" = first */
    int thread_safe;         /**< several threads may call in at once */
    size_t inject_size;      /**< 0 = provider's */
    size_t bounce_size;      /**< medium-put threshold */
    long bounce_buffers;     /**< per context */
    size_t fragment_size;    /**< large transfers split into these */
    int progress_thread;     /**< start a progress thread */
    long progress_interval_us;
    int yield;               /**< sched_yield while polling */
} cdt_config_t;

/** Opens the fabric: provider choice, domain, address vector, default endpoint. */
shm_status_t cdt_init(const cdt_config_t *cfg);
/** Registers [base, base+len) as segment seg (before cdt_connect). */
shm_status_t cdt_seg_expose(int seg, void *base, size_t len);
/** Exchanges endpoint names and segment keys/bases with every PE (one fence). */
shm_status_t cdt_connect(void);
/** Closes everything; outstanding operations must be quieted first. */
void cdt_fini(void);
/** Drives incoming operations (target-side progress); cheap, call while waiting. */
void cdt_progress(void);
/** Polls or yields, for wait loops that found nothing: progress + maybe sched_yield. */
void cdt_poll_idle(void);
/** Starts the optional progress thread (after the default context exists). */
shm_status_t cdt_progress_thread_start(void);
/** Provider in use, e.g. "shm" or "tcp;ofi_rxm". */
const char *cdt_provider_name(void);
/** Human-readable summary of the capability table (SHMEM_INFO). */
void cdt_info_print(FILE *f);

typedef struct cdt_ctx cdt_ctx_t;

/** Context option: several threads may use it at once. */
#define CDT_CTX_SHARED 0x1

shm_status_t cdt_ctx_init(cdt_ctx_t *ctx, unsigned flags);
void cdt_ctx_fini(cdt_ctx_t *ctx);

/*
 * The data path, inline (see ofi/ofi_inline.h):
 *   void cdt_put(cdt_ctx_t *, int seg, size_t off, const void *src, size_t n, int pe);
 *   void cdt_put_nbi(cdt_ctx_t *, int seg, size_t off, const void *src, size_t n, int pe);
 *   void cdt_get(cdt_ctx_t *, void *dst, int seg, size_t off, size_t n, int pe);
 *   void cdt_get_nbi(cdt_ctx_t *, void *dst, int seg, size_t off, size_t n, int pe);
 *   void cdt_quiet(cdt_ctx_t *);   remote completion of all the context issued
 *   void cdt_fence(cdt_ctx_t *);   ordering of what came before against what follows
 * Every byte count is > 0 and pe is valid and not this PE: the caller checks.
 */
#include "conduit/ofi/ofi_inline.h"
#include "conduit/ofi/ofi_amo_inline.h"

#endif /* SHM_CONDUIT_H */
