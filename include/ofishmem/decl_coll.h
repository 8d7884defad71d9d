/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives: declarations (from the type tables) and C11 generics.
 * Included by <shmem.h>; not meant to be included on its own.
 */
#ifndef OFISHMEM_DECL_COLL_H
#define OFISHMEM_DECL_COLL_H

#endif /* OFISHMEM_DECL_COLL_H */
