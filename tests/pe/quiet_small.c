// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_quiet after many *small* puts: 100 iterations, each writes 16384
// words to the right neighbour as 8-, 16-, 32- and 64-byte puts (blocking
// and nbi, the sizes a provider injects) on a context of its own, then quiets
// it (or fences, or pe_quiets) and sets a flag with shmem_long_p on the
// default context (another endpoint, another connection, so the flag cannot
// queue behind the data). The receiver waits for the flag and must see every
// word of that iteration. Where injected puts are not
// delivery-complete (tcp;ofi_rxm), quiet must still make them land: with
// SHMEM_QUIET_FLUSH it reads back from each PE written, and this test fails
// if a put can still be in flight after quiet returns.
//   quiet_small [WORDS]   words per iteration (default and most: 16384)
#include "pe_check.h"

#define ITERS 40
#define WORDS 16384

static uint64_t buf[WORDS];
static long flag, ack;

static inline uint64_t word(int pe, long it, size_t w)
{
    return ((uint64_t)it << 40) ^ ((uint64_t)(pe + 1) << 32) ^ (w * 2654435761u) ^ 1;
}

int main(int argc, char **argv)
{
    shmem_init();
    pe_begin("quiet_small");
    char *end = NULL;
    const long nw = argc > 1 ? strtol(argv[1], &end, 10) : WORDS;
    if (nw < 1 || nw > WORDS || (end != NULL && *end != '\0')) {
        pe_fail("words per iteration: %s is not in 1..%d", argv[1], WORDS);
        shmem_finalize();
        return pe_end();
    }
    const size_t words = (size_t)nw;
    const int right = pe_right(), left = pe_left();
    static uint64_t src[WORDS];
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    for (long it = 1; it <= ITERS; it++) {
        pe_step("iteration %ld: small puts to PE %d", it, right);
        // The right PE has checked the previous iteration before we overwrite it.
        shmem_long_wait_until(&ack, SHMEM_CMP_GE, it - 1);
        for (size_t w = 0; w < words; w++)
            src[w] = word(pe_me_g, it, w);
        size_t w = 0;
        const size_t sizes[] = {1, 2, 4, 8}; // words: 8..64 bytes
        for (int k = 0; w < words; k = (k + 1) % 4) {
            size_t n = sizes[k];
            if (n > words - w)
                n = words - w;
            if ((w / 8) % 2)
                shmem_ctx_putmem_nbi(ctx, &buf[w], &src[w], n * sizeof(uint64_t), right);
            else
                shmem_ctx_putmem(ctx, &buf[w], &src[w], n * sizeof(uint64_t), right);
            w += n;
        }
        switch (it % 3) {
        case 0: shmem_ctx_quiet(ctx); break;
        case 1: shmem_ctx_quiet(ctx); shmem_fence(); break;
        default: shmem_ctx_pe_quiet(ctx, &right, 1); break;
        }
        shmem_long_p(&flag, it, right);
        pe_step("iteration %ld: waiting for PE %d's data", it, left);
        shmem_long_wait_until(&flag, SHMEM_CMP_GE, it);
        long bad = 0;
        for (size_t v = 0; v < words; v++)
            if (buf[v] != word(left, it, v) && bad++ < 3)
                pe_fail("iteration %ld: word %zu from PE %d: expected %llx got %llx", it, v, left,
                        (unsigned long long)word(left, it, v), (unsigned long long)buf[v]);
        pe_checks_g++;
        shmem_long_p(&ack, it, left);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_finalize();
    return pe_end();
}
