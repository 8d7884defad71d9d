// SPDX-License-Identifier: BSD-3-Clause
/*
 * Helpers of the typed API. Every public function is defined as
 * pshmem_<name> and exported as a weak alias shmem_<name>, so profiling
 * tools can interpose on shmem_<name> and call pshmem_<name>.
 */
#ifndef SHM_API_API_H
#define SHM_API_API_H

#include <shmem.h>

#include "core/rma.h"
#include "core/state.h"

#define SHM_EXPORT __attribute__((visibility("default")))

/* Declares the public name of an already defined pshmem_<name>. */
#define SHM_ALIAS(name)                                                        \
    extern __typeof__(p##name) name SHM_EXPORT __attribute__((weak, alias("p" #name)));

/* Defines pshmem_<name>(args) and its public alias; body follows in braces. */
#define SHM_DEFINE(ret, name, args, ...)                                       \
    SHM_EXPORT ret p##name args;                                               \
    SHM_EXPORT ret p##name args __VA_ARGS__                                    \
    SHM_ALIAS(name)

#endif /* SHM_API_API_H */
