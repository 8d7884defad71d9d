// SPDX-License-Identifier: BSD-3-Clause
//
// Helpers of the SHMEM_THREAD_MULTIPLE tests: pe_check.h made safe for
// several threads (checks and failure lines under one mutex), a start that
// asks for MULTIPLE and checks it was granted, and a team of THR_N threads
// released together so that they really contend.
//
// Only the main thread calls pe_step(): the watchdog prints that step.
#ifndef THREAD_CHECK_H
#define THREAD_CHECK_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "pe_check.h"

#ifndef THR_N
#define THR_N 4 // threads per PE (the *_t8.c variants: 8)
#endif
#define THR_MAX_PES 16 // arrays indexed by PE are sized for this

static pthread_mutex_t thr_report_lock_g __attribute__((unused)) = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t thr_go_g;

// PE_EXPECT for any thread.
#define THR_EXPECT(cond, ...)                                                                \
    do {                                                                                     \
        int thr_ok_ = !!(cond);                                                              \
        pthread_mutex_lock(&thr_report_lock_g);                                              \
        pe_checks_g++;                                                                       \
        if (!thr_ok_)                                                                        \
            pe_fail(__VA_ARGS__);                                                            \
        pthread_mutex_unlock(&thr_report_lock_g);                                            \
    } while (0)

// PE_EXPECT_EQ for any thread, on integers.
#define THR_EXPECT_EQ(got, exp, fmt, ...)                                                    \
    do {                                                                                     \
        long long thr_g_ = (long long)(got), thr_e_ = (long long)(exp);                      \
        THR_EXPECT(thr_g_ == thr_e_, fmt ": expected %lld got %lld", __VA_ARGS__, thr_e_,    \
                   thr_g_);                                                                  \
    } while (0)

// shmem_init_thread(SHMEM_THREAD_MULTIPLE) + pe_begin; the library must grant
// MULTIPLE (it is what these tests are about), and query_thread must agree.
static inline void thr_init(const char *name)
{
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    pe_begin(name);
    PE_EXPECT_EQ(rc, 0, "shmem_init_thread(SHMEM_THREAD_MULTIPLE) return value");
    int queried = -1;
    shmem_query_thread(&queried);
    PE_EXPECT_EQ(provided, SHMEM_THREAD_MULTIPLE, "shmem_init_thread: provided level");
    PE_EXPECT_EQ(queried, SHMEM_THREAD_MULTIPLE, "shmem_query_thread");
    if (pe_npes_g > THR_MAX_PES) {
        fprintf(stderr, "PE %d: %s supports at most %d PEs\n", pe_me_g, name, THR_MAX_PES);
        shmem_global_exit(2);
    }
}

// Runs fn(0..THR_N-1) on THR_N threads, released together, and joins them.
static inline void thr_run(void *(*fn)(void *))
{
    pthread_t tid[THR_N];
    pthread_barrier_init(&thr_go_g, NULL, THR_N);
    for (intptr_t t = 0; t < THR_N; t++)
        if (pthread_create(&tid[t], NULL, fn, (void *)t) != 0) {
            fprintf(stderr, "PE %d: pthread_create failed\n", pe_me_g);
            shmem_global_exit(2);
        }
    for (int t = 0; t < THR_N; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&thr_go_g);
}

// First thing a thread body does: wait until all THR_N are started.
static inline void thr_go(void) { pthread_barrier_wait(&thr_go_g); }

// A small per-thread pseudo-random generator (xorshift), seeded per PE and thread.
static inline uint32_t thr_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return (uint32_t)(x >> 16);
}

static inline uint64_t thr_seed(int t) { return 0x9E3779B97F4A7C15ULL * (uint64_t)(pe_me_g * 64 + t + 1); }

#endif
