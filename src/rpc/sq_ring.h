// SPDX-License-Identifier: BSD-3-Clause
/*
 * Single-producer single-consumer byte ring in shared memory: the queues of
 * the same-host RPC transport (sq.c). Pure functions over memory, no
 * syscall, no lock, no allocation, so unit-tested alone (test_rpc_sq.c).
 *
 * Records are [u64 header][message, padded to 8]. The header is written last
 * (release) and is 0 until then: before publishing a record the producer
 * zeroes the 8 bytes behind it, so the consumer never mistakes old bytes for
 * the next header and never reads the producer's position (one cache line
 * fewer per message). A record that would cross the end of the ring is
 * preceded by a pad record that fills the end. The consumer publishes how
 * far it got (tail); the producer reads it only when its cached copy says
 * the ring is full. The producer may be another, untrusted process: every
 * header is checked against the ring's bounds before use.
 */
#ifndef SHM_RPC_SQ_RING_H
#define SHM_RPC_SQ_RING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SQ_REC_MSG 1u
#define SQ_REC_PAD 2u

/* The consumer's published position, alone on its cache line. */
typedef struct {
    _Alignas(64) uint64_t tail;
    uint8_t pad_[56];
} sq_ring_ctl_t;

/* One end of a ring, in the process's own memory. */
typedef struct {
    uint8_t *data;      /* cap bytes, shared */
    uint64_t *tail;     /* shared: consumer's position */
    uint64_t cap, mask; /* power of two */
    uint64_t pos;       /* producer: next write; consumer: next read */
    uint64_t lim;       /* producer: tail + cap as last seen */
} sq_end_t;

static inline void sq_end_init(sq_end_t *e, void *data, uint64_t cap, sq_ring_ctl_t *ctl)
{
    e->data = (uint8_t *)data;
    e->tail = &ctl->tail;
    e->cap = cap;
    e->mask = cap - 1;
    e->pos = 0;
    e->lim = cap;
}

static inline uint64_t sq_rec_len(size_t n)
{
    return 8 + (((uint64_t)n + 7) & ~(uint64_t)7);
}

/* Largest message a ring of cap bytes carries (a record and its pad fit twice). */
static inline size_t sq_max_msg(uint64_t cap)
{
    return (size_t)(cap / 2 - 16);
}

static inline int sq_room(sq_end_t *e, uint64_t need)
{
    if (e->pos + need <= e->lim)
        return 1;
    e->lim = __atomic_load_n(e->tail, __ATOMIC_ACQUIRE) + e->cap;
    return e->pos + need <= e->lim;
}

/*
 * Appends one message made of a then b. Returns 0, 1 when the ring is full
 * for now (the consumer is behind), or -1 when the message can never fit.
 */
static inline int sq_push2(sq_end_t *e, const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen + blen;
    if (n > sq_max_msg(e->cap))
        return -1;
    uint64_t rec = sq_rec_len(n);
    uint64_t off = e->pos & e->mask;
    uint64_t pad = off + rec > e->cap ? e->cap - off : 0;
    /* + 8: the zeroed header slot behind the record must be free too. */
    if (!sq_room(e, pad + rec + 8))
        return 1;
    if (pad) {
        *(uint64_t *)(void *)e->data = 0; /* behind the pad: start of the next lap */
        __atomic_store_n((uint64_t *)(void *)(e->data + off),
                         (uint64_t)SQ_REC_PAD << 32 | (pad - 8), __ATOMIC_RELEASE);
        e->pos += pad;
        off = 0;
    }
    uint8_t *p = e->data + off;
    if (alen)
        memcpy(p + 8, a, alen);
    if (blen)
        memcpy(p + 8 + alen, b, blen);
    *(uint64_t *)(void *)(e->data + ((off + rec) & e->mask)) = 0;
    __atomic_store_n((uint64_t *)(void *)p, (uint64_t)SQ_REC_MSG << 32 | n, __ATOMIC_RELEASE);
    e->pos += rec;
    return 0;
}

/*
 * The next message, in place: 1 and *msg, *len; 0 when the ring is empty;
 * -1 when the producer wrote something that is not a record (the ring is
 * then unusable).
 */
static inline int sq_peek(sq_end_t *e, const void **msg, size_t *len)
{
    for (;;) {
        uint64_t off = e->pos & e->mask;
        uint64_t h = __atomic_load_n((uint64_t *)(void *)(e->data + off), __ATOMIC_ACQUIRE);
        if (h == 0)
            return 0;
        uint32_t kind = (uint32_t)(h >> 32), n = (uint32_t)h;
        if (kind == SQ_REC_PAD && off + 8 + n == e->cap && n % 8 == 0) {
            e->pos += e->cap - off;
            continue;
        }
        if (kind != SQ_REC_MSG || sq_rec_len(n) > e->cap - off || n > sq_max_msg(e->cap))
            return -1;
        *msg = e->data + off + 8;
        *len = n;
        return 1;
    }
}

/* Done with the message sq_peek gave: its space goes back to the producer. */
static inline void sq_release(sq_end_t *e, size_t len)
{
    e->pos += sq_rec_len(len);
    __atomic_store_n(e->tail, e->pos, __ATOMIC_RELEASE);
}

static inline int sq_empty(const sq_end_t *e)
{
    return __atomic_load_n((const uint64_t *)(const void *)(e->data + (e->pos & e->mask)),
                           __ATOMIC_ACQUIRE) == 0;
}

#endif /* SHM_RPC_SQ_RING_H */
