// SPDX-License-Identifier: BSD-3-Clause
//
// RMA under SHMEM_THREAD_MULTIPLE on the default context, which the threads
// share (so every shmem_quiet below runs while other threads issue).
// THR_N threads per PE.
//
// Phase 1, round trips: each round a thread writes a pattern of a round-
// dependent size (8 B .. 32 KiB: inject, bounce and fragment paths) to its
// own region of a heap buffer and of a .bss buffer on every PE, quiets,
// reads it back and compares. Three ways in turn: putmem + quiet + getmem;
// putmem_nbi + quiet + getmem_nbi + quiet; long_p + quiet + long_g. A quiet
// that returned before this thread's puts landed, or a get before its data
// arrived, shows as a wrong byte. At the end every PE checks that each
// region holds the last pattern its writer put there.
//
// Phase 2, a ring of put-with-signal: thread t of each PE sends round r to
// thread t of the right neighbour (double-buffered slot, signal add), waits
// for the left neighbour's round r, checks its data and acknowledges with
// an atomic add, which the sender waits for before reusing the slot.
//
// argv[1]: rounds per thread (default 30).
#include "thread_check.h"

#define SLOT (32 * 1024) // heap bytes per (writer PE, thread) region
#define BSS_SLOT 4096
#define RING 4096

static char bss_dst_g[THR_MAX_PES * THR_N * BSS_SLOT];

static char *heap_dst_g, *ring_buf_g;
static uint64_t *ring_sig_g, *ring_ack_g;
static long rounds_g;

static const size_t sizes_g[] = {8, 200, 3000, 20000, SLOT};
#define NSIZES (sizeof(sizes_g) / sizeof(sizes_g[0]))

static size_t round_size(long r, int t, size_t cap)
{
    size_t s = sizes_g[(size_t)(r + t) % NSIZES];
    return s < cap ? s : cap;
}

static uint32_t round_tag(long r, int t) { return (uint32_t)(r * THR_N + t); }

// Writes src (len bytes) to dest on PE k one way, reads it back into back.
static void round_trip(int how, char *dest, const char *src, char *back, size_t len, int k)
{
    switch (how) {
    case 0:
        shmem_putmem(dest, src, len, k);
        shmem_quiet();
        shmem_getmem(back, dest, len, k);
        break;
    case 1:
        shmem_putmem_nbi(dest, src, len, k);
        shmem_quiet();
        shmem_getmem_nbi(back, dest, len, k);
        shmem_quiet();
        break;
    default: { // whole longs, one at a time (len is a multiple of 8 here)
        long w;
        for (size_t i = 0; i + 8 <= len && i < 256; i += 8) {
            memcpy(&w, src + i, 8);
            shmem_long_p((long *)(dest + i), w, k);
        }
        shmem_quiet();
        for (size_t i = 0; i + 8 <= len && i < 256; i += 8) {
            w = shmem_long_g((long *)(dest + i), k);
            memcpy(back + i, &w, 8);
        }
        break;
    }
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    const int me = pe_me_g, n = pe_npes_g;
    char *src = malloc(SLOT), *back = malloc(SLOT);
    if (src == NULL || back == NULL)
        abort();
    thr_go();
    for (long r = 0; r < rounds_g; r++) {
        int how = (int)(r % 3);
        for (int j = 0; j < n; j++) {
            int k = (j + t + me) % n;
            for (int s = 0; s < 2; s++) {
                size_t cap = s == 0 ? SLOT : BSS_SLOT;
                size_t len = round_size(r, t, cap);
                if (how == 2 && len > 256)
                    len = 256;
                char *dest = s == 0 ? heap_dst_g + (size_t)(me * THR_N + t) * SLOT
                                    : bss_dst_g + (size_t)(me * THR_N + t) * BSS_SLOT;
                pe_fill(src, len, me, round_tag(r, t), 0);
                memset(back, 0xee, len);
                round_trip(how, dest, src, back, len, k);
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < len; i++)
                    if (back[i] != src[i] && bad++ == 0)
                        first = i;
                THR_EXPECT(bad == 0,
                           "thread %d round %ld: %s %zu B to PE %d (way %d) read back wrong: "
                           "%zu bytes, first at %zu",
                           t, r, s == 0 ? "heap" : ".bss", len, k, how, bad, first);
            }
        }
    }

    // Phase 2: the ring.
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    for (long r = 0; r < rounds_g; r++) {
        size_t len = (size_t[]){8, 512, RING}[r % 3];
        char *slot = ring_buf_g + ((size_t)t * 2 + (size_t)(r % 2)) * RING;
        if (r >= 2)
            shmem_uint64_wait_until(&ring_ack_g[t], SHMEM_CMP_GE, (uint64_t)(r - 1));
        pe_fill(src, len, me, 0x10000 + round_tag(r, t), 0);
        if (r % 2) {
            shmem_putmem_signal_nbi(slot, src, len, &ring_sig_g[t], 1, SHMEM_SIGNAL_ADD, right);
            shmem_quiet();
        } else {
            shmem_putmem_signal(slot, src, len, &ring_sig_g[t], 1, SHMEM_SIGNAL_ADD, right);
        }
        shmem_signal_wait_until(&ring_sig_g[t], SHMEM_CMP_GE, (uint64_t)(r + 1));
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < len; i++)
            if ((uint8_t)slot[i] != pe_pattern(left, 0x10000 + round_tag(r, t), i) && bad++ == 0)
                first = i;
        THR_EXPECT(bad == 0,
                   "thread %d ring round %ld: %zu B from PE %d wrong at the signal: %zu bytes, "
                   "first at %zu",
                   t, r, len, left, bad, first);
        shmem_uint64_atomic_add(&ring_ack_g[t], 1, left);
    }
    shmem_quiet();
    free(back);
    free(src);
    return NULL;
}

int main(int argc, char **argv)
{
    thr_init("thread_rma");
    rounds_g = argc > 1 ? atol(argv[1]) : 30;
    const int n = pe_npes_g;
    heap_dst_g = shmem_calloc((size_t)n * THR_N, SLOT);
    ring_buf_g = shmem_calloc((size_t)THR_N * 2, RING);
    ring_sig_g = shmem_calloc(THR_N, sizeof(uint64_t));
    ring_ack_g = shmem_calloc(THR_N, sizeof(uint64_t));
    shmem_barrier_all();

    pe_step("%d threads x %ld rounds: round trips to every PE, then the signal ring", THR_N,
            rounds_g);
    thr_run(worker);
    pe_step("checking the regions");
    shmem_barrier_all();

    // Each region holds its writer's last round (every writer wrote every PE).
    long r = rounds_g - 1;
    int how = (int)(r % 3);
    for (int p = 0; p < n; p++)
        for (int t = 0; t < THR_N; t++)
            for (int s = 0; s < 2; s++) {
                size_t len = round_size(r, t, s == 0 ? SLOT : BSS_SLOT);
                if (how == 2 && len > 256)
                    len = 256;
                const char *reg = s == 0 ? heap_dst_g + (size_t)(p * THR_N + t) * SLOT
                                         : bss_dst_g + (size_t)(p * THR_N + t) * BSS_SLOT;
                char what[96];
                snprintf(what, sizeof what, "%s region of PE %d thread %d after the last round",
                         s == 0 ? "heap" : ".bss", p, t);
                pe_check_fill(reg, len, p, round_tag(r, t), 0, what);
            }
    for (int t = 0; t < THR_N; t++) {
        PE_EXPECT_EQ(ring_sig_g[t], (uint64_t)rounds_g, "ring signal of thread %d", t);
        PE_EXPECT_EQ(ring_ack_g[t], (uint64_t)rounds_g, "ring acknowledgements of thread %d", t);
    }

    shmem_barrier_all();
    shmem_free(ring_ack_g);
    shmem_free(ring_sig_g);
    shmem_free(ring_buf_g);
    shmem_free(heap_dst_g);
    shmem_finalize();
    return pe_end();
}
