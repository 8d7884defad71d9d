// SPDX-License-Identifier: BSD-3-Clause
/*
 * The strided copy loop: nblocks blocks of bsize elements of esize bytes,
 * block b from src + b*sstride to dst + b*dstride (strides in bytes). Used
 * by the same-host path of shmem_iput/iget/ibput/ibget (src/api/api_rma.c)
 * and by the conduit to pack and scatter strided data
 * (src/conduit/ofi/ofi_strided.c).
 *
 * One loop per element size, so each element is one load and one store of
 * a constant width (memcpy of a constant size compiles to a move and takes
 * any alignment); a generic memcpy per element costs a call each.
 * Elements are copied in increasing order, block by block, as the
 * element-by-element path did: an overlapping copy to this PE gives the
 * same result as before.
 */
#ifndef SHM_CORE_STRIDED_H
#define SHM_CORE_STRIDED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Blocks of at least this many bytes go by memcpy each. */
#define SHM_STRIDED_MEMCPY_MIN 128

#define SHM_STRIDED_LOOP(E)                                                    \
    do {                                                                       \
        if (bsize == 1) {                                                      \
            for (size_t b_ = 0; b_ < nblocks; b_++)                            \
                memcpy(d + b_ * dstride, s + b_ * sstride, E);                 \
        } else if (bsize * (E) >= SHM_STRIDED_MEMCPY_MIN) {                    \
            for (size_t b_ = 0; b_ < nblocks; b_++)                            \
                memcpy(d + b_ * dstride, s + b_ * sstride, bsize * (E));       \
        } else {                                                               \
            for (size_t b_ = 0; b_ < nblocks; b_++) {                          \
                unsigned char *db_ = d + b_ * dstride;                         \
                const unsigned char *sb_ = s + b_ * sstride;                   \
                for (size_t k_ = 0; k_ < bsize; k_++)                          \
                    memcpy(db_ + k_ * (E), sb_ + k_ * (E), E);                 \
            }                                                                  \
        }                                                                      \
    } while (0)

static inline void shm_strided_copy(void *dst, size_t dstride, const void *src, size_t sstride,
                                    size_t bsize, size_t nblocks, size_t esize)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    switch (esize) {
    case 1: SHM_STRIDED_LOOP(1); break;
    case 2: SHM_STRIDED_LOOP(2); break;
    case 4: SHM_STRIDED_LOOP(4); break;
    case 8: SHM_STRIDED_LOOP(8); break;
    case 16: SHM_STRIDED_LOOP(16); break;
    default:
        for (size_t b = 0; b < nblocks; b++)
            memmove(d + b * dstride, s + b * sstride, bsize * esize);
        break;
    }
}

#endif /* SHM_CORE_STRIDED_H */
