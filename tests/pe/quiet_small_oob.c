// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_quiet means landed, checked out of band. Each even PE sends its odd
// neighbour many small puts (8..64 bytes, blocking and nbi: the sizes a
// provider injects), quiets (or fences + quiets, or pe_quiets), and then
// raises a flag in a plain shared-memory page that both processes mapped,
// outside the library. The receiver alternates between one look at that
// page and one shmem_test (which drives its endpoint: run with
// SHMEM_PROGRESS_THREAD=off, so data lands only there), and checks every
// word as soon as it sees the flag, before it calls the library again. A
// flag sent through the library (quiet_small.c) travels the provider's
// queues too and can arrive behind the data even when quiet returned early;
// this one waits for nothing. Over tcp;ofi_rxm with the injected puts
// counted at send and no read-back (a build with the read-back taken out),
// the check failed in the first iterations.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pe_check.h"

#define ITERS 60
#define WORDS 4096

static uint64_t buf[WORDS];
static uint64_t src[WORDS];
static long owner_pid, never;

typedef struct {
    volatile long flag[2]; // [pair slot]: iteration whose data has landed
    volatile long ack[2];  // [pair slot]: iteration checked by the receiver
} oob_t;

static inline uint64_t word(int pe, long it, size_t w)
{
    return ((uint64_t)it << 40) ^ ((uint64_t)(pe + 1) << 32) ^ (w * 2654435761u) ^ 1;
}

static void spin_until(volatile long *p, long v, const char *what)
{
    pe_step("waiting (out of band) for %s %ld", what, v);
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < v)
        sched_yield();
}

int main(void)
{
    shmem_init();
    pe_begin("quiet_small_oob");
    if (pe_npes_g < 2 || pe_npes_g % 2) {
        pe_fail("needs an even number of PEs (got %d)", pe_npes_g);
        shmem_finalize();
        return pe_end();
    }
    // One page per job: PE 0's pid names it, handed to all through the library.
    if (pe_me_g == 0)
        owner_pid = (long)getpid();
    shmem_broadcastmem(SHMEM_TEAM_WORLD, &owner_pid, &owner_pid, sizeof(long), 0);
    char name[64];
    snprintf(name, sizeof(name), "/ofishmem-qsoob-%ld", owner_pid);
    if (pe_me_g == 0) {
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            pe_fail("shm_open %s: %m", name);
        if (fd >= 0)
            close(fd);
    }
    shmem_barrier_all();
    int fd = shm_open(name, O_RDWR, 0600);
    oob_t *oob = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    shmem_barrier_all();
    if (pe_me_g == 0)
        shm_unlink(name); // mapped by all: gone from the namespace, kept until unmapped
    if (oob == MAP_FAILED) {
        pe_fail("cannot map the out-of-band page %s", name);
        shmem_finalize();
        return pe_end();
    }
    // Pairs (0,1), (2,3), ...; one page slot per pair (pairs beyond 2 share
    // nothing but the page: slot pair % 2, used only by 2- and 4-PE jobs).
    const int sender = pe_me_g % 2 == 0, peer = sender ? pe_me_g + 1 : pe_me_g - 1;
    const int slot = (pe_me_g / 2) % 2;
    if (pe_npes_g > 4)
        pe_fail("at most 4 PEs (one slot per pair in the page)");
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    for (long it = 1; it <= ITERS && pe_errors_g == 0; it++) {
        if (sender) {
            pe_step("iteration %ld: small puts to PE %d", it, peer);
            for (size_t w = 0; w < WORDS; w++)
                src[w] = word(pe_me_g, it, w);
            const size_t sizes[] = {1, 2, 4, 8}; // words: 8..64 bytes
            size_t w = 0;
            for (int k = 0; w < WORDS; k = (k + 1) % 4) {
                size_t n = sizes[k] < WORDS - w ? sizes[k] : WORDS - w;
                if ((w / 8) % 2)
                    shmem_ctx_putmem_nbi(ctx, &buf[w], &src[w], n * sizeof(uint64_t), peer);
                else
                    shmem_ctx_putmem(ctx, &buf[w], &src[w], n * sizeof(uint64_t), peer);
                w += n;
            }
            // The last put is a single word, alone after a quiet-free stretch.
            switch (it % 3) {
            case 0: shmem_ctx_quiet(ctx); break;
            case 1: shmem_ctx_fence(ctx); shmem_ctx_quiet(ctx); break;
            default: shmem_ctx_pe_quiet(ctx, &peer, 1); break;
            }
            __atomic_store_n(&oob->flag[slot], it, __ATOMIC_RELEASE);
            spin_until(&oob->ack[slot], it, "the receiver's check of iteration");
        } else {
            pe_step("iteration %ld: waiting (out of band) for PE %d's flag", it, peer);
            while (__atomic_load_n(&oob->flag[slot], __ATOMIC_ACQUIRE) < it)
                (void)shmem_long_test(&never, SHMEM_CMP_NE, 0); // progress, once

            long bad = 0;
            for (size_t v = 0; v < WORDS; v++) {
                uint64_t got = __atomic_load_n(&buf[v], __ATOMIC_RELAXED);
                if (got != word(peer, it, v) && bad++ < 3)
                    pe_fail("iteration %ld: word %zu from PE %d not landed after its quiet: "
                            "expected %llx got %llx",
                            it, v, peer, (unsigned long long)word(peer, it, v),
                            (unsigned long long)got);
            }
            pe_checks_g++;
            __atomic_store_n(&oob->ack[slot], it, __ATOMIC_RELEASE);
        }
    }
    // A failed receiver stops early: release its sender.
    if (!sender)
        __atomic_store_n(&oob->ack[slot], ITERS, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&oob->flag[slot], ITERS, __ATOMIC_RELEASE);
    pe_step("final barrier");
    shmem_barrier_all();
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    munmap(oob, 4096);
    shmem_finalize();
    return pe_end();
}
