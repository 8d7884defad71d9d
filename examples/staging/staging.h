/* SPDX-License-Identifier: BSD-3-Clause */
/* DART-style staging: names and the data pattern both sides agree on. */
#ifndef STAGING_H
#define STAGING_H

#include <stdint.h>

/* args: a scatter-gather descriptor of two segments (the step's header,
 * then its payload of len bytes), u32 pe, u32 step, u64 len */
#define STAGE_PUT "stage.put"
#define STAGE_MAGIC 0x4754535453414447ull /* "GDASTSTG" */

/* What a PE says about a step, in its own small buffer beside the payload. */
typedef struct {
    uint64_t magic;
    uint32_t pe, step;
    uint64_t len; /* payload bytes */
    uint64_t sum; /* of the payload's words */
} stage_hdr_t;

/* Word i of PE pe's buffer at step s. */
static inline uint64_t stage_word(uint32_t pe, uint32_t step, uint64_t i)
{
    return (uint64_t)pe << 48 | (uint64_t)step << 32 | (i & 0xffffffffu);
}

#endif
