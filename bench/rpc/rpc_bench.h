// SPDX-License-Identifier: BSD-3-Clause
/*
 * What every RPC benchmark's forked server and its clients share: the
 * server's address handed over in a file (written whole, then renamed, so a
 * reader never sees half of it). Header-only: each benchmark is one program.
 */
#ifndef OFISHMEM_BENCH_RPC_BENCH_H
#define OFISHMEM_BENCH_RPC_BENCH_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ofishmem_rpc.h"

/* Server side: publish rpc's address in af. 0 or -1. */
static inline int rpcb_publish_addr(orpc_t *rpc, const char *af)
{
    char addr[ORPC_ADDR_STRLEN], tmp[700];
    if (orpc_addr(rpc, addr, sizeof(addr)) != ORPC_OK)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.tmp", af);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    int ok = fprintf(f, "%s\n", addr) > 0;
    ok &= fclose(f) == 0;
    return ok && rename(tmp, af) == 0 ? 0 : -1;
}

/* Client side: the address in af, waiting up to wait_ms for it. 0 or -1. */
static inline int rpcb_read_addr(const char *af, char *addr, size_t len, int wait_ms)
{
    for (int i = 0; i < wait_ms / 10 && access(af, R_OK) != 0; i++)
        usleep(10000);
    FILE *f = fopen(af, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(addr, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    addr[strcspn(addr, "\n")] = '\0';
    return 0;
}

#endif
