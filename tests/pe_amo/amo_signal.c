// SPDX-License-Identifier: BSD-3-Clause
//
// Put-with-signal: when the receiver sees the signal, all the data of that
// put is there. Each PE sends to its right neighbour, for payloads of 8 B
// and 256 KiB, rounds of: put_signal (typed, sized, mem, ctx, generic; SET
// and ADD; blocking and nbi), receiver waits for the signal and checks
// every byte of the round's pattern, then acks with shmem_signal_add so the
// sender may overwrite. Also signal_set/add/fetch and signal_wait_until's
// return value.
#include "amo_check.h"

#define BIG (256 * 1024)
#define ROUNDS 12

static uint64_t ack_g; // .bss signal

static void send_round(int r, char *dst, char *src, size_t len, uint64_t *sig, int to)
{
    pe_fill(src, len, pe_me_g, (uint32_t)r, 0);
    const uint64_t sv = (uint64_t)r;
    switch (r % 12) {
    case 0: shmem_putmem_signal(dst, src, len, sig, sv, SHMEM_SIGNAL_SET, to); break;
    case 1: shmem_putmem_signal_nbi(dst, src, len, sig, sv, SHMEM_SIGNAL_SET, to); break;
    case 2: shmem_put64_signal(dst, src, len / 8, sig, 1, SHMEM_SIGNAL_ADD, to); break;
    case 3: shmem_long_put_signal((long *)dst, (long *)src, len / 8, sig, sv, SHMEM_SIGNAL_SET, to); break;
    case 4: shmem_ctx_putmem_signal(SHMEM_CTX_DEFAULT, dst, src, len, sig, 1, SHMEM_SIGNAL_ADD, to); break;
    case 5: shmem_ctx_int_put_signal_nbi(SHMEM_CTX_DEFAULT, (int *)dst, (int *)src, len / 4, sig, sv, SHMEM_SIGNAL_SET, to); break;
    case 6: shmem_put_signal((double *)dst, (double *)src, len / 8, sig, sv, SHMEM_SIGNAL_SET, to); break;
    case 7: shmem_put_signal_nbi(SHMEM_CTX_DEFAULT, (char *)dst, src, len, sig, 1, SHMEM_SIGNAL_ADD, to); break;
    case 8: shmem_put8_signal_nbi(dst, src, len, sig, sv, SHMEM_SIGNAL_SET, to); break;
    case 9: // 128-bit elements: not for the 8-byte payload
        if (len >= 16)
            shmem_ctx_put128_signal(SHMEM_CTX_DEFAULT, dst, src, len / 16, sig, sv, SHMEM_SIGNAL_SET, to);
        else
            shmem_ctx_put64_signal_nbi(SHMEM_CTX_DEFAULT, dst, src, len / 8, sig, sv, SHMEM_SIGNAL_SET, to);
        break;
    case 10: shmem_uint8_put_signal((uint8_t *)dst, (uint8_t *)src, len, sig, 1, SHMEM_SIGNAL_ADD, to); break;
    default: shmem_put32_signal(dst, src, len / 4, sig, sv, SHMEM_SIGNAL_SET, to); break;
    }
    // nbi forms are complete after a quiet; the blocking ones need none,
    // and the data is checked only once the signal is seen anyway.
    if (r & 1)
        shmem_quiet();
}

static void run(size_t len, const char *what)
{
    char *dst = shmem_malloc(len), *src = malloc(len);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    ack_g = 0;
    shmem_barrier_all();
    const int to = pe_right(), from = pe_left();
    for (int r = 1; r <= ROUNDS; r++) {
        // Sender: wait until the receiver acked round r-1 (it checked it).
        pe_step("%s round %d: waiting for PE %d's ack of round %d", what, r, to, r - 1);
        shmem_uint64_wait_until(&ack_g, SHMEM_CMP_GE, (uint64_t)(r - 1));
        send_round(r, dst, src, len, sig, to);
        // Receiver: the signal is r (SET) or the r-th ADD of 1.
        pe_step("%s round %d: waiting for the signal from PE %d", what, r, from);
        uint64_t got = shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)r);
        PE_EXPECT_EQ(got, (uint64_t)r, "%s round %d: signal_wait_until return value", what, r);
        char buf[96];
        snprintf(buf, sizeof buf, "%s round %d: data from PE %d once its signal was seen", what, r,
                 from);
        pe_check_fill(dst, len, from, (uint32_t)r, 0, buf);
        shmem_signal_add(&ack_g, 1, from);
    }
    shmem_quiet();
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(dst);
    free(src);
}

int main(void)
{
    shmem_init();
    pe_begin("amo_signal");
    run(8, "8 B");
    run(BIG, "256 KiB");

    // signal_set / signal_add / signal_fetch, plain and ctx forms.
    uint64_t *s = shmem_calloc(2, sizeof(uint64_t));
    shmem_barrier_all();
    shmem_signal_set(&s[0], 1000 + (uint64_t)pe_me_g, pe_right());
    shmem_ctx_signal_set(SHMEM_CTX_DEFAULT, &s[1], 7, pe_right());
    shmem_quiet();
    shmem_barrier_all();
    shmem_signal_add(&s[0], 5, pe_right());
    shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, &s[1], 0x100000000ULL, pe_right());
    shmem_quiet();
    shmem_barrier_all();
    PE_EXPECT_EQ(shmem_signal_fetch(&s[0]), 1005 + (uint64_t)pe_left(), "signal_set then signal_add");
    PE_EXPECT_EQ(shmem_signal_fetch(&s[1]), 0x100000007ULL, "ctx signal_set then ctx signal_add");
    shmem_barrier_all();
    shmem_free(s);
    shmem_finalize();
    return pe_end();
}
