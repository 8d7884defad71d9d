// SPDX-License-Identifier: BSD-3-Clause
/*
 * Communication contexts: each has its own conduit context (endpoint and
 * completion counters), so quieting one never waits for another's traffic.
 * Live contexts are kept on one list: a team takes its contexts with it,
 * and finalize closes whatever the program left open.
 *
 * A destroyed context's endpoint is kept (quiet, on ctx_pool) and given to
 * the next context created with the same flags, and closed only at
 * finalize. libfabric's shm provider gives every remote endpoint that ever
 * reached a PE an entry of that PE's peer table (256 entries) and does not
 * free it when the endpoint closes: creating a new endpoint per context,
 * a 2-PE job hung at its ~125th context (tests/reliability exhaustion
 * ctx_churn). With the pool a job uses at most as many endpoints as it has
 * contexts at once (SHMEM_CTX_MAX).
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/team.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_ctx *ctx_list;
static long ctx_count; /* live contexts on ctx_list (SHMEM_CTX_MAX) */
static struct shm_ctx *ctx_pool; /* destroyed contexts, endpoints open and quiet */

/* Only a context several threads may use at once pays for atomic counters. */
static unsigned ctx_cdt_flags(long options)
{
    if (shm_state_g.thread_level == SHMEM_THREAD_MULTIPLE &&
        !(options & (SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE)))
        return CDT_CTX_SHARED;
    return 0;
}

/* A pooled context whose endpoint was made with these flags, or NULL. */
static struct shm_ctx *ctx_pool_take(unsigned flags)
{
    pthread_mutex_lock(&ctx_lock);
    struct shm_ctx **pp = &ctx_pool;
    while (*pp && ctx_cdt_flags((*pp)->options) != flags)
        pp = &(*pp)->next;
    struct shm_ctx *c = *pp;
    if (c)
        *pp = c->next;
    pthread_mutex_unlock(&ctx_lock);
    return c;
}

int shm_ctx_create(shm_team_t *team, long options, struct shm_ctx **ctx_p)
{
    /* Reserve a place first: two threads must not both take the last one. */
    pthread_mutex_lock(&ctx_lock);
    int full = ctx_count >= shm_env_g.CTX_MAX;
    if (!full)
        ctx_count++;
    pthread_mutex_unlock(&ctx_lock);
    if (full) {
        if (shm_state_g.debug)
            shm_error("shmem_ctx_create: SHMEM_CTX_MAX=%ld contexts already exist on this PE "
                      "(destroy some, or raise SHMEM_CTX_MAX)",
                      shm_env_g.CTX_MAX);
        return -1;
    }
    unsigned flags = ctx_cdt_flags(options);
    struct shm_ctx *c = ctx_pool_take(flags);
    if (c != NULL)
        goto link;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        goto out_count;
    shm_status_t st = cdt_ctx_init(&c->cdt, flags);
    if (st != SHM_OK) {
        SHM_WARN(COLL, "cannot create a context: %s", shm_status_str(st));
        cdt_ctx_fini(&c->cdt);
        free(c);
        goto out_count;
    }
link:
    c->options = options;
    c->team = team;
    c->prev = NULL;
    pthread_mutex_lock(&ctx_lock);
    c->next = ctx_list;
    if (ctx_list)
        ctx_list->prev = c;
    ctx_list = c;
    pthread_mutex_unlock(&ctx_lock);
    *ctx_p = c;
    return 0;

out_count:
    pthread_mutex_lock(&ctx_lock);
    ctx_count--;
    pthread_mutex_unlock(&ctx_lock);
    return -1;
}

void shm_ctx_destroy(struct shm_ctx *c)
{
    pthread_mutex_lock(&ctx_lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        ctx_list = c->next;
    if (c->next)
        c->next->prev = c->prev;
    ctx_count--;
    pthread_mutex_unlock(&ctx_lock);
    /* Destroying a context completes what it issued; its endpoint is kept. */
    cdt_quiet(&c->cdt);
    pthread_mutex_lock(&ctx_lock);
    c->team = NULL;
    c->prev = NULL;
    c->next = ctx_pool;
    ctx_pool = c;
    pthread_mutex_unlock(&ctx_lock);
}

void shm_ctx_destroy_all(shm_team_t *team)
{
    for (;;) {
        pthread_mutex_lock(&ctx_lock);
        struct shm_ctx *c = ctx_list;
        while (c && team && c->team != team)
            c = c->next;
        pthread_mutex_unlock(&ctx_lock);
        if (c == NULL)
            break;
        shm_ctx_destroy(c);
    }
    if (team != NULL)
        return;
    /* Finalize: close the pooled endpoints too. */
    pthread_mutex_lock(&ctx_lock);
    struct shm_ctx *c = ctx_pool;
    ctx_pool = NULL;
    pthread_mutex_unlock(&ctx_lock);
    while (c) {
        struct shm_ctx *next = c->next;
        cdt_ctx_fini(&c->cdt);
        free(c);
        c = next;
    }
}

void shm_ctx_quiet_all(void)
{
    cdt_quiet(&shm_ctx_default_g.cdt);
    pthread_mutex_lock(&ctx_lock);
    for (struct shm_ctx *c = ctx_list; c; c = c->next)
        cdt_quiet(&c->cdt);
    pthread_mutex_unlock(&ctx_lock);
}

/* SHMEM_DEBUG: is c a context this program created and has not destroyed? */
int shm_ctx_is_live(const struct shm_ctx *c)
{
    if (c == &shm_ctx_default_g)
        return 1;
    pthread_mutex_lock(&ctx_lock);
    const struct shm_ctx *p = ctx_list;
    while (p && p != c)
        p = p->next;
    pthread_mutex_unlock(&ctx_lock);
    return p != NULL;
}
