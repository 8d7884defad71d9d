/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The staging server's file: a sequence of self-describing records, each a
 * stage_hdr_t followed by its payload of hdr.len bytes. The server appends a
 * record, fdatasyncs, and only then answers; on (re)start it scans the file
 * (stage_scan) to learn which (PE, step) records are complete, and cuts a
 * torn last record away. The checker (staging_check) uses the same scan.
 */
#ifndef STAGING_FILE_H
#define STAGING_FILE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "staging.h"

#define STAGE_MAX_BYTES (64u << 20)

/* A set of (PE, step) keys: open addressing, grows at half full. */
typedef struct {
    uint64_t *k; /* 0: empty (keys are stored +1) */
    size_t cap, n;
} stage_set_t;

static inline uint64_t stage_key(uint32_t pe, uint32_t step)
{
    return ((uint64_t)pe << 32 | step) + 1;
}

static inline size_t stage_slot(const stage_set_t *s, uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (s->cap - 1);
    while (s->k[i] != 0 && s->k[i] != key)
        i = (i + 1) & (s->cap - 1);
    return i;
}

static inline int stage_set_has(const stage_set_t *s, uint32_t pe, uint32_t step)
{
    return s->cap != 0 && s->k[stage_slot(s, stage_key(pe, step))] != 0;
}

/* 1: added, 0: already there, -1: out of memory. */
static inline int stage_set_add(stage_set_t *s, uint32_t pe, uint32_t step)
{
    if (2 * (s->n + 1) > s->cap) {
        stage_set_t b = {calloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)),
                         s->cap ? 2 * s->cap : 1024, s->n};
        if (b.k == NULL)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->k[i])
                b.k[stage_slot(&b, s->k[i])] = s->k[i];
        free(s->k);
        *s = b;
    }
    size_t i = stage_slot(s, stage_key(pe, step));
    if (s->k[i] != 0)
        return 0;
    s->k[i] = stage_key(pe, step);
    s->n++;
    return 1;
}

typedef struct {
    uint64_t records, bytes;  /* complete records, their payload bytes */
    uint64_t dups;            /* complete records whose (PE, step) came before */
    uint64_t bad_words;       /* records whose payload is not stage_word's pattern */
    uint64_t end;             /* offset just past the last complete record */
    uint64_t size;            /* the file's size (end < size: a torn or bad tail) */
} stage_scan_t;

/* Reads f from the start; a record counts when its header is sane, its
 * payload is all there and sums to the header's sum. The first record that
 * does not ends the scan (a kill can only leave a prefix of one record).
 * buf: STAGE_MAX_BYTES of scratch. Adds each record's key to set.
 * check_words: also compare every word with stage_word. */
static inline int stage_scan(FILE *f, void *buf, stage_set_t *set, int check_words,
                             stage_scan_t *r)
{
    memset(r, 0, sizeof(*r));
    if (fseeko(f, 0, SEEK_END) != 0)
        return -1;
    r->size = (uint64_t)ftello(f);
    rewind(f);
    for (;;) {
        stage_hdr_t h;
        if (fread(&h, sizeof(h), 1, f) != 1)
            break;
        if (h.magic != STAGE_MAGIC || h.len > STAGE_MAX_BYTES || h.len % 8 != 0)
            break;
        if (h.len != 0 && fread(buf, h.len, 1, f) != 1)
            break;
        const uint64_t *w = buf;
        uint64_t sum = 0;
        for (uint64_t i = 0; i < h.len / 8; i++)
            sum += w[i];
        if (sum != h.sum)
            break;
        if (check_words)
            for (uint64_t i = 0; i < h.len / 8; i++)
                if (w[i] != stage_word(h.pe, h.step, i)) {
                    r->bad_words++;
                    break;
                }
        int a = stage_set_add(set, h.pe, h.step);
        if (a < 0)
            return -1;
        r->dups += a == 0;
        r->records++;
        r->bytes += h.len;
        r->end += sizeof(h) + h.len;
    }
    return ferror(f) ? -1 : 0;
}

#endif
