// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_quiet / shmem_pe_quiet must mean *remote* completion: 200 times, a
// 1 MiB putmem_nbi to the right neighbour, then quiet (or pe_quiet on that
// PE), then a flag put with shmem_long_p. The receiver waits for the flag with
// shmem_long_wait_until(flag, SHMEM_CMP_EQ, iter) and must then see all the
// data of that iteration (the pattern depends on the iteration). An ack flag
// back to the sender keeps it from overwriting data not yet checked.
//
// Providers that count a write complete before it has landed (tcp;ofi_rxm
// with default completion) break this unless quiet asks for more.
#include "pe_check.h"

#define ITERS 200
#define BYTES (1u << 20)

static long flag; // set by the left PE: iteration whose data has landed
static long ack;  // set by the right PE: iteration it has checked

// Word w of iteration it from PE pe.
static inline uint64_t word(int pe, long it, size_t w)
{
    return ((uint64_t)it << 40) ^ ((uint64_t)(pe + 1) << 32) ^ (w * 2654435761u);
}

static void run(const char *variant, int use_pe_quiet, uint64_t *buf, uint64_t *src)
{
    const int right = pe_right(), left = pe_left();
    const size_t nw = BYTES / sizeof(uint64_t);
    flag = 0;
    ack = 0;
    shmem_barrier_all();
    for (long it = 1; it <= ITERS; it++) {
        // Wait until the right PE has checked the previous iteration.
        pe_step("%s iter %ld: waiting for ack %ld from PE %d (ack is %ld)", variant, it, it - 1,
                right, ack);
        shmem_long_wait_until(&ack, SHMEM_CMP_GE, it - 1);
        for (size_t w = 0; w < nw; w++)
            src[w] = word(pe_me_g, it, w);
        shmem_putmem_nbi(buf, src, BYTES, right);
        if (use_pe_quiet) {
            shmem_pe_quiet(&right, 1);
        } else {
            shmem_quiet();
        }
        shmem_long_p(&flag, it, right);

        pe_step("%s iter %ld: waiting for flag == %ld from PE %d (flag is %ld)", variant, it, it,
                left, flag);
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, it);
        size_t bad = 0, first = 0;
        for (size_t w = 0; w < nw; w++) {
            if (buf[w] != word(left, it, w)) {
                if (!bad)
                    first = w;
                bad++;
            }
        }
        pe_checks_g++;
        if (bad) {
            uint64_t got = buf[first];
            long got_it = (long)(got >> 40);
            pe_fail("%s iter %ld: flag seen but data of PE %d incomplete: word %zu of %zu: "
                    "expected 0x%016llx got 0x%016llx (looks like iteration %ld); %zu words wrong",
                    variant, it, left, first, nw, (unsigned long long)word(left, it, first),
                    (unsigned long long)got, got_it, bad);
        }
        shmem_long_p(&ack, it, left);
    }
    pe_step("%s: final barrier", variant);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    pe_begin("quiet_remote");
    uint64_t *buf = shmem_malloc(BYTES);
    uint64_t *src = malloc(BYTES);
    if (!buf || !src) {
        pe_fail("allocation of %u bytes failed", BYTES);
        shmem_global_exit(1);
    }
    memset(buf, 0, BYTES);
    run("shmem_quiet", 0, buf, src);
    run("shmem_pe_quiet", 1, buf, src);
    shmem_free(buf);
    free(src);
    shmem_finalize();
    return pe_end();
}
