// SPDX-License-Identifier: BSD-3-Clause
/*
 * Communication contexts: each has its own conduit context (endpoint and
 * completion counters), so quieting one never waits for another's traffic.
 * Live contexts are kept on one list: a team takes its contexts with it,
 * and finalize closes whatever the program left open.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/team.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_ctx *ctx_list;

int shm_ctx_create(shm_team_t *team, long options, struct shm_ctx **ctx_p)
{
    struct shm_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    /* Only a context several threads may use at once pays for atomic counters. */
    unsigned flags = 0;
    if (shm_state_g.thread_level == SHMEM_THREAD_MULTIPLE &&
        !(options & (SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE)))
        flags |= CDT_CTX_SHARED;
    shm_status_t st = cdt_ctx_init(&c->cdt, flags);
    if (st != SHM_OK) {
        SHM_WARN(COLL, "cannot create a context: %s", shm_status_str(st));
        cdt_ctx_fini(&c->cdt);
        free(c);
        return -1;
    }
    c->options = options;
    c->team = team;
    pthread_mutex_lock(&ctx_lock);
    c->next = ctx_list;
    if (ctx_list)
        ctx_list->prev = c;
    ctx_list = c;
    pthread_mutex_unlock(&ctx_lock);
    *ctx_p = c;
    return 0;
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
    pthread_mutex_unlock(&ctx_lock);
    /* Destroying a context completes what it issued. */
    cdt_quiet(&c->cdt);
    cdt_ctx_fini(&c->cdt);
    free(c);
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
            return;
        shm_ctx_destroy(c);
    }
}
