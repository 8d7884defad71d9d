// SPDX-License-Identifier: BSD-3-Clause
/*
 * osh_info: what this ofishmem is and what it would use.
 *   osh_info              version, build, providers found, the env table with current values
 *   osh_info --env-markdown   the env table as docs/ENV.md's markdown table
 *   osh_info --version
 */
#include <rdma/fabric.h>
#include <stdio.h>
#include <string.h>

#include <shmem.h>

#include "core/env.h"

#ifndef OFISHMEM_VERSION_STRING
#define OFISHMEM_VERSION_STRING "unknown"
#endif
#ifndef OFISHMEM_BUILD_TYPE
#define OFISHMEM_BUILD_TYPE "unknown"
#endif

static int provider_available(const char *name)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    if (hints == NULL)
        return 0;
    hints->caps = FI_RMA;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup(name);
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
    fi_freeinfo(hints);
    if (info)
        fi_freeinfo(info);
    return rc == 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--env-markdown") == 0) {
        shm_env_print(stdout, NULL, 1);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("ofishmem %s (OpenSHMEM %d.%d)\n", OFISHMEM_VERSION_STRING, SHMEM_MAJOR_VERSION,
               SHMEM_MINOR_VERSION);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: osh_info [--version | --env-markdown]\n");
        return 2;
    }
    printf("ofishmem %s, OpenSHMEM %d.%d\n", OFISHMEM_VERSION_STRING, SHMEM_MAJOR_VERSION,
           SHMEM_MINOR_VERSION);
    printf("  vendor string: %s\n", SHMEM_VENDOR_STRING);
    printf("  build: %s, libfabric API %u.%u (runtime %u.%u), PMIx client\n",
           OFISHMEM_BUILD_TYPE, FI_MAJOR_VERSION, FI_MINOR_VERSION, FI_MAJOR(fi_version()),
           FI_MINOR(fi_version()));
    static const char *const provs[] = {"shm", "tcp;ofi_rxm", "verbs;ofi_rxm", "sockets",
                                        "udp;ofi_rxd", "efa", "psm3", "cxi"};
    printf("  providers with RDM + RMA:");
    for (size_t i = 0; i < sizeof(provs) / sizeof(provs[0]); i++)
        if (provider_available(provs[i]))
            printf(" %s", provs[i]);
    printf("\n\n");

    shm_env_t env;
    char err[256];
    if (shm_env_load(&env, shm_env_from_process, err, sizeof(err)) != SHM_OK) {
        fprintf(stderr, "osh_info: %s\n", err);
        return 1;
    }
    shm_env_print(stdout, &env, 0);
    return 0;
}
