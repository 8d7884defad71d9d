/* SPDX-License-Identifier: BSD-3-Clause */
/* DART-style staging: names and the data pattern both sides agree on. */
#ifndef STAGING_H
#define STAGING_H

#include <stdint.h>

#define STAGE_PUT "stage.put" /* args: desc, u32 pe, u32 step, u64 len */

/* Word i of PE pe's buffer at step s. */
static inline uint64_t stage_word(uint32_t pe, uint32_t step, uint64_t i)
{
    return (uint64_t)pe << 48 | (uint64_t)step << 32 | (i & 0xffffffffu);
}

#endif
