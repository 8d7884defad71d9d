// SPDX-License-Identifier: BSD-3-Clause
/*
 * Service auth keys: 16 random bytes, as 32 hex digits in a file only the
 * user can read (0600), or given by SHMEM_RPC_AUTH_KEY.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "rpc/rpc.h"

int rpc_auth_parse_hex(const char *hex, uint8_t key[RPC_AUTH_LEN])
{
    uint8_t k[RPC_AUTH_LEN];
    for (int i = 0; i < 2 * RPC_AUTH_LEN; i++) {
        int c = hex[i], v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            return ORPC_EINVAL;
        if (i % 2 == 0)
            k[i / 2] = (uint8_t)(v << 4);
        else
            k[i / 2] |= (uint8_t)v;
    }
    const char *rest = hex + 2 * RPC_AUTH_LEN;
    while (*rest == '\n' || *rest == '\r' || *rest == ' ')
        rest++;
    if (*rest != '\0')
        return ORPC_EINVAL;
    memcpy(key, k, RPC_AUTH_LEN);
    return ORPC_OK;
}

void rpc_auth_to_hex(const uint8_t key[RPC_AUTH_LEN], char hex[2 * RPC_AUTH_LEN + 1])
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < RPC_AUTH_LEN; i++) {
        hex[2 * i] = d[key[i] >> 4];
        hex[2 * i + 1] = d[key[i] & 15];
    }
    hex[2 * RPC_AUTH_LEN] = '\0';
}

int rpc_auth_random(uint8_t key[RPC_AUTH_LEN])
{
    if (getrandom(key, RPC_AUTH_LEN, 0) != RPC_AUTH_LEN) {
        shm_error("getrandom for an RPC auth key failed: %s", strerror(errno));
        return ORPC_EFABRIC;
    }
    return ORPC_OK;
}

/* Written to a fresh file then renamed, so no reader ever sees a wider mode. */
int rpc_auth_write_file(const char *path, const uint8_t key[RPC_AUTH_LEN])
{
    char tmp[300], hex[2 * RPC_AUTH_LEN + 1];
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        shm_error("cannot create the RPC auth key file %s: %s", tmp, strerror(errno));
        return ORPC_EINVAL;
    }
    rpc_auth_to_hex(key, hex);
    hex[2 * RPC_AUTH_LEN] = '\n';
    int ok = fchmod(fd, 0600) == 0 && write(fd, hex, sizeof(hex)) == (ssize_t)sizeof(hex);
    ok = (close(fd) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        shm_error("cannot write the RPC auth key file %s: %s", path, strerror(errno));
        unlink(tmp);
        return ORPC_EINVAL;
    }
    return ORPC_OK;
}

int rpc_auth_read_file(const char *path, uint8_t key[RPC_AUTH_LEN])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        shm_error("cannot open the RPC auth key file %s: %s", path, strerror(errno));
        return ORPC_EAUTH;
    }
    struct stat sb;
    char buf[80];
    ssize_t n = -1;
    if (fstat(fd, &sb) == 0) {
        /* A key others can read is no secret: refuse it like ssh does. */
        if (sb.st_mode & 077) {
            shm_error("RPC auth key file %s is readable by others (mode %o): chmod 600 it",
                      path, (unsigned)(sb.st_mode & 0777));
            close(fd);
            return ORPC_EAUTH;
        }
        n = read(fd, buf, sizeof(buf) - 1);
    }
    close(fd);
    if (n <= 0)
        return ORPC_EAUTH;
    buf[n] = '\0';
    if (rpc_auth_parse_hex(buf, key) != ORPC_OK) {
        shm_error("RPC auth key file %s does not hold 32 hex digits", path);
        return ORPC_EAUTH;
    }
    return ORPC_OK;
}

int rpc_auth_resolve(const char *spec, uint8_t key[RPC_AUTH_LEN])
{
    if (spec && spec[0] == '@')
        return rpc_auth_read_file(spec + 1, key);
    if (spec && *spec)
        return rpc_auth_parse_hex(spec, key) == ORPC_OK ? ORPC_OK : ORPC_EAUTH;
    if (shm_env_g.RPC_AUTH_KEY && *shm_env_g.RPC_AUTH_KEY) {
        if (rpc_auth_parse_hex(shm_env_g.RPC_AUTH_KEY, key) != ORPC_OK) {
            shm_error("SHMEM_RPC_AUTH_KEY must be 32 hex digits");
            return ORPC_EAUTH;
        }
        return ORPC_OK;
    }
    if (shm_env_g.RPC_AUTH_FILE && *shm_env_g.RPC_AUTH_FILE)
        return rpc_auth_read_file(shm_env_g.RPC_AUTH_FILE, key);
    shm_error("no RPC auth key: pass one to orpc_lookup or set SHMEM_RPC_AUTH_KEY or "
              "SHMEM_RPC_AUTH_FILE");
    return ORPC_EAUTH;
}
