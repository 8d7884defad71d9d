// SPDX-License-Identifier: BSD-3-Clause
/*
 * Distributed locks: an MCS queue lock on the user's symmetric long.
 *
 * The long is two 32-bit words. Word 0, on the lock's home PE only, is the
 * queue's tail: 0 when the lock is free, else 1 + the PE that asked last.
 * Word 1, on every PE, is that PE's queue node: bits 0-30 hold 1 + the PE
 * queued behind it (0: none yet), bit 31 is set by the predecessor when the
 * lock passes to this PE. A requester swaps itself into the tail; if there
 * was a predecessor it ORs its number into the predecessor's node and then
 * spins on its OWN node (local memory, driving progress), so waiters do not
 * touch the network. The lock is handed over in FIFO order.
 *
 * Nobody writes a PE's node while that PE is out of the queue (its
 * successor learns of it only through the tail, its predecessor only
 * through the node), so the PE clears its node with a store (no
 * read-modify-write) before it queues. The home PE is spread by address so
 * that several locks do not all load PE 0.
 *
 * Threads: the queue has one node per PE, so only one thread of a PE may be
 * in a lock's queue at a time. Under SHMEM_THREAD_MULTIPLE a thread first
 * claims the lock among its PE's threads (a small table of the locks this PE
 * holds or is queued for): another thread of the PE that wants the same lock
 * sleeps until it is cleared, and shmem_test_lock answers "set" at once.
 * Without this, two threads of one PE asking for one lock both swapped into
 * the tail and the second waited on its own node for ever (SOS mt_locking).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "atomics/amo.h"

#define LOCK_SIGNAL 0x80000000u
#define LOCK_NEXT_MASK 0x7fffffffu

#define DFLT (&shm_ctx_default_g)

typedef struct {
    uint32_t *tail;          /* word 0: meaningful on home */
    uint32_t *node;          /* word 1: ours; atomic loads and stores only */
    int home;
    uint32_t me1;
} lock_ref_t;

static lock_ref_t lock_ref(const char *fn, long *lock)
{
    size_t off;
    shm_check_running(fn);
    int seg = shm_xlate_or_die(fn, lock, sizeof(long), &off, "lock");
    if (((uintptr_t)lock & (sizeof(uint32_t) - 1)) != 0)
        shm_amo_misaligned(fn, lock, sizeof(uint32_t), shm_state_g.me);
    if ((uint64_t)shm_state_g.npes > LOCK_NEXT_MASK)
        shm_fatal("%s: locks support at most %u PEs", fn, LOCK_NEXT_MASK);
    lock_ref_t r = {
        .tail = (uint32_t *)lock,
        .node = (uint32_t *)lock + 1,
        .home = (int)(((off / sizeof(long)) + (size_t)seg) % (size_t)shm_state_g.npes),
        .me1 = (uint32_t)shm_state_g.me + 1,
    };
    return r;
}

/*
 * The node is read and written with atomics: other PEs OR into it (CPU
 * atomics on the mapped word, or the provider's), and on the active-message
 * path another thread of this PE does so while serving their requests.
 */
static void lock_enter(const lock_ref_t *r)
{
    __atomic_store_n(r->node, 0, __ATOMIC_SEQ_CST);
}

static uint32_t lock_node(const lock_ref_t *r)
{
    return __atomic_load_n(r->node, __ATOMIC_ACQUIRE);
}

/* ---- the claim among the threads of this PE (SHMEM_THREAD_MULTIPLE) ---- */

static pthread_mutex_t claim_mu_g = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t claim_cv_g = PTHREAD_COND_INITIALIZER;
static const long **claims_g; /* locks this PE holds or is queued for */
static size_t nclaims_g, claims_cap_g;

static int claims_needed(void)
{
    return shm_state_g.thread_level == SHMEM_THREAD_MULTIPLE;
}

static size_t claim_find(const long *lock)
{
    for (size_t i = 0; i < nclaims_g; i++)
        if (claims_g[i] == lock)
            return i;
    return SIZE_MAX;
}

/* Claims lock for the calling thread; if another thread of this PE has it,
 * waits (wait != 0) or returns 0 at once. 1: claimed. */
static int claim(const char *fn, const long *lock, int wait)
{
    pthread_mutex_lock(&claim_mu_g);
    while (claim_find(lock) != SIZE_MAX) {
        if (!wait) {
            pthread_mutex_unlock(&claim_mu_g);
            return 0;
        }
        pthread_cond_wait(&claim_cv_g, &claim_mu_g);
    }
    if (nclaims_g == claims_cap_g) {
        size_t cap = claims_cap_g ? 2 * claims_cap_g : 16;
        const long **n = realloc(claims_g, cap * sizeof(*n));
        if (n == NULL) {
            pthread_mutex_unlock(&claim_mu_g);
            shm_fatal("%s: out of memory for the table of held locks", fn);
        }
        claims_g = n;
        claims_cap_g = cap;
    }
    claims_g[nclaims_g++] = lock;
    pthread_mutex_unlock(&claim_mu_g);
    return 1;
}

static void unclaim(const long *lock)
{
    pthread_mutex_lock(&claim_mu_g);
    size_t i = claim_find(lock);
    if (i != SIZE_MAX) {
        claims_g[i] = claims_g[--nclaims_g];
        pthread_cond_broadcast(&claim_cv_g);
    }
    pthread_mutex_unlock(&claim_mu_g);
}

void shm_lock_set(const char *fn, long *lock)
{
    lock_ref_t r = lock_ref(fn, lock);
    uint32_t prev;
    if (claims_needed())
        claim(fn, lock, 1);
    lock_enter(&r);
    shm_amo_fetch(fn, DFLT, CDT_AMO_UINT32, CDT_AMO_SWAP, r.tail, sizeof(uint32_t), &r.me1,
                  &prev, r.home, 0);
    if (prev != 0) {
        shm_amo_post(fn, DFLT, CDT_AMO_UINT32, CDT_AMO_OR, r.node, sizeof(uint32_t),
                     &r.me1, (int)prev - 1);
        while (!(lock_node(&r) & LOCK_SIGNAL))
            shm_core_wait_progress();
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

int shm_lock_test(const char *fn, long *lock)
{
    lock_ref_t r = lock_ref(fn, lock);
    uint32_t zero = 0, cur;
    int claimed = claims_needed();
    if (claimed && !claim(fn, lock, 0)) {
        /* Another thread of this PE holds it or is queued for it. Callers
         * spin on test_lock; under THREAD_MULTIPLE the library yields while
         * it waits (init.c), so give the holder the core here too. */
        sched_yield();
        return 1;
    }
    lock_enter(&r);
    shm_amo_cswap(fn, DFLT, CDT_AMO_UINT32, r.tail, sizeof(uint32_t), &zero, &r.me1, &cur, r.home,
                  0);
    if (cur != 0) {
        if (claimed)
            unclaim(lock);
        return 1;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return 0;
}

void shm_lock_clear(const char *fn, long *lock)
{
    lock_ref_t r = lock_ref(fn, lock);
    uint32_t zero = 0, cur;
    /* What the critical section wrote is complete before anyone else enters. */
    cdt_quiet(&DFLT->cdt);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    shm_amo_cswap(fn, DFLT, CDT_AMO_UINT32, r.tail, sizeof(uint32_t), &r.me1, &zero, &cur, r.home,
                  0);
    if (cur == r.me1) {
        if (claims_needed())
            unclaim(lock);
        return; /* nobody queued behind us */
    }
    uint32_t next;
    while (((next = lock_node(&r)) & LOCK_NEXT_MASK) == 0)
        shm_core_wait_progress();
    uint32_t sig = LOCK_SIGNAL;
    shm_amo_post(fn, DFLT, CDT_AMO_UINT32, CDT_AMO_OR, r.node, sizeof(uint32_t), &sig,
                 (int)(next & LOCK_NEXT_MASK) - 1);
    /* Hand-over done before we return: a PE that computes next without
     * calling the library must not leave its successor waiting. */
    cdt_quiet(&DFLT->cdt);
    if (claims_needed())
        unclaim(lock);
}
