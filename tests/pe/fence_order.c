// SPDX-License-Identifier: BSD-3-Clause
//
// shmem_fence orders puts to the same PE: many rounds of
//   long_p + putmem (256 B) + long_put_nbi (8 KiB) + putmem (20 KiB) and,
//   every 8th round, putmem_nbi (1.5 MiB)  ->  shmem_fence  ->  long_p(flag)
// to the right neighbour. The receiver waits on the flag and checks that all
// the data of that round is there. The sizes go through the inject, bounce
// and fragmented paths. Run with 1 slot (lock-step: the receiver acks each
// round) and with 4 slots (up to 4 rounds in flight, so a fence must also
// order data of one round behind the flags of earlier ones).
//
// Providers may reorder writes (shm without ordering, tcp;ofi_rxm seen too),
// so a fence that leans on provider ordering fails here.
#include "pe_check.h"

#define ROUNDS 400
#define MAXSLOTS 4
#define NA 32        // 256 B
#define NB 1024      // 8 KiB
#define NC 2560      // 20 KiB
#define NBIG (196608) // 1.5 MiB in words
#define BIG_EVERY 8

typedef struct slot {
    long small;
    uint64_t a[NA];
    uint64_t b[NB];
    uint64_t c[NC];
} slot_t;

static long flag; // last round announced by the left PE
static long ack;  // last round checked by the right PE

static inline uint64_t word(int pe, long r, size_t w)
{
    return ((uint64_t)r << 40) ^ ((uint64_t)(pe + 1) << 32) ^ (w * 2654435761u + 1);
}

static void fill(uint64_t *p, size_t n, int pe, long r, size_t w0)
{
    for (size_t i = 0; i < n; i++)
        p[i] = word(pe, r, w0 + i);
}

static void check(const uint64_t *p, size_t n, int pe, long r, size_t w0, const char *what,
                  const char *variant)
{
    size_t bad = 0, first = 0;
    pe_checks_g++;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != word(pe, r, w0 + i)) {
            if (!bad)
                first = i;
            bad++;
        }
    }
    if (bad)
        pe_fail("%s round %ld: flag seen but %s of PE %d not all there: word %zu of %zu: expected "
                "0x%016llx got 0x%016llx (round %lld); %zu words wrong",
                variant, r, what, pe, first, n, (unsigned long long)word(pe, r, w0 + first),
                (unsigned long long)p[first], (long long)(p[first] >> 40), bad);
}

static void check_round(const slot_t *slots, const uint64_t *big, int nslots, long cr, int left,
                        const char *variant)
{
    const int cs = (int)(cr % nslots);
    const slot_t *c = &slots[cs];
    pe_checks_g++;
    if ((uint64_t)c->small != word(left, cr, 0))
        pe_fail("%s round %ld: flag seen but long_p word of PE %d: expected 0x%016llx got "
                "0x%016llx",
                variant, cr, left, (unsigned long long)word(left, cr, 0),
                (unsigned long long)c->small);
    check(c->a, NA, left, cr, 1, "putmem 256 B", variant);
    check(c->b, NB, left, cr, 1 + NA, "long_put_nbi 8 KiB", variant);
    check(c->c, NC, left, cr, 1 + NA + NB, "putmem 20 KiB", variant);
    if (cr % BIG_EVERY == 0)
        check(big + (size_t)cs * NBIG, NBIG, left, cr, 7, "putmem_nbi 1.5 MiB", variant);
}

static void run(int nslots, slot_t *slots, uint64_t *big, slot_t *src, uint64_t *bigsrc)
{
    const int right = pe_right(), left = pe_left();
    char variant[32];
    snprintf(variant, sizeof variant, "%d slot%s", nslots, nslots > 1 ? "s" : "");
    flag = 0;
    ack = 0;
    shmem_barrier_all();

    long next_check = 1; // oldest round of the left PE not yet checked
    for (long r = 1; r <= ROUNDS; r++) {
        // Slot r % nslots was last used by round r - nslots.
        pe_step("%s round %ld: waiting for ack >= %ld from PE %d (ack is %ld)", variant, r,
                r - nslots, right, ack);
        shmem_long_wait_until(&ack, SHMEM_CMP_GE, r - nslots);
        const int s = (int)(r % nslots);
        slot_t *d = &slots[s];
        fill(src->a, NA, pe_me_g, r, 1);
        fill(src->b, NB, pe_me_g, r, 1 + NA);
        fill(src->c, NC, pe_me_g, r, 1 + NA + NB);

        shmem_long_p(&d->small, (long)word(pe_me_g, r, 0), right);
        shmem_putmem(d->a, src->a, sizeof src->a, right);
        shmem_long_put_nbi((long *)d->b, (const long *)src->b, NB, right);
        shmem_putmem(d->c, src->c, sizeof src->c, right);
        if (r % BIG_EVERY == 0) {
            fill(bigsrc, NBIG, pe_me_g, r, 7);
            shmem_putmem_nbi(big + (size_t)s * NBIG, bigsrc, NBIG * sizeof(uint64_t), right);
        }
        shmem_fence();
        shmem_long_p(&flag, r, right);

        // Rounds up to r - nslots + 1 must be checked now (the left PE needs
        // the ack to reuse the slot); newer ones only if already announced.
        while (next_check <= r) {
            if (next_check > r - nslots + 1 && !shmem_long_test(&flag, SHMEM_CMP_GE, next_check))
                break;
            pe_step("%s: waiting for flag >= %ld from PE %d (flag is %ld)", variant, next_check,
                    left, flag);
            shmem_long_wait_until(&flag, SHMEM_CMP_GE, next_check);
            check_round(slots, big, nslots, next_check, left, variant);
            shmem_long_p(&ack, next_check, left);
            next_check++;
        }
        // The nbi sources are rewritten next round: complete them first.
        // (Ordering within the round above relies on the fence alone.)
        shmem_quiet();
    }
    while (next_check <= ROUNDS) {
        pe_step("%s: draining, waiting for flag >= %ld from PE %d (flag is %ld)", variant,
                next_check, left, flag);
        shmem_long_wait_until(&flag, SHMEM_CMP_GE, next_check);
        check_round(slots, big, nslots, next_check, left, variant);
        shmem_long_p(&ack, next_check, left);
        next_check++;
    }
    pe_step("%s: final barrier", variant);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    pe_begin("fence_order");
    slot_t *slots = shmem_calloc(MAXSLOTS, sizeof(slot_t));
    uint64_t *big = shmem_calloc((size_t)MAXSLOTS * NBIG, sizeof(uint64_t));
    slot_t *src = malloc(sizeof(slot_t));
    uint64_t *bigsrc = malloc(NBIG * sizeof(uint64_t));
    if (!slots || !big || !src || !bigsrc) {
        pe_fail("allocation failed");
        shmem_global_exit(1);
    }
    run(1, slots, big, src, bigsrc);
    run(MAXSLOTS, slots, big, src, bigsrc);
    shmem_free(big);
    shmem_free(slots);
    free(src);
    free(bigsrc);
    shmem_finalize();
    return pe_end();
}
