// SPDX-License-Identifier: BSD-3-Clause
/* Configuration from the environment, generated from env.def. */
#ifndef SHM_CORE_ENV_H
#define SHM_CORE_ENV_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"

typedef int shm_env_BOOL_t;
typedef long shm_env_INT_t;
typedef size_t shm_env_SIZE_t;
typedef const char *shm_env_STR_t;

typedef struct {
#define SHM_ENV(name, type, dflt, cat, help) shm_env_##type##_t name;
#include "core/env.def"
#undef SHM_ENV
} shm_env_t;

extern shm_env_t shm_env_g;

/*
 * Reads every variable of the table through `lookup` (getenv in the library,
 * a fake in unit tests). On a malformed value returns SHM_ERR_ENV and writes
 * a message naming the variable into err (size errlen).
 */
typedef const char *(*shm_env_lookup_fn)(const char *name);
shm_status_t shm_env_load(shm_env_t *env_p, shm_env_lookup_fn lookup, char *err, size_t errlen);

/* Parsers, exposed for unit tests. */
shm_status_t shm_env_parse_size(const char *s, size_t *out_p);
shm_status_t shm_env_parse_bool(const char *s, int *out_p);
shm_status_t shm_env_parse_int(const char *s, long *out_p);

/* SHMEM_INFO listing; markdown=1 writes docs/ENV.md's table. */
void shm_env_print(FILE *f, const shm_env_t *env, int markdown);

/* The process environment as the library reads it (the one getenv). */
const char *shm_env_from_process(const char *name);

#endif /* SHM_CORE_ENV_H */
