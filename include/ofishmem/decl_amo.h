/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomic memory operations, signals, distributed locks and the
 * wait/test families beyond wait_until/test: declarations (from the type tables) and C11 generics.
 * Included by <shmem.h>; not meant to be included on its own.
 */
#ifndef OFISHMEM_DECL_AMO_H
#define OFISHMEM_DECL_AMO_H

#endif /* OFISHMEM_DECL_AMO_H */
