// SPDX-License-Identifier: BSD-3-Clause
/*
 * osh_info: what this ofishmem is and what it would use.
 *   osh_info              version, build, providers found, the env table with current values
 *   osh_info --env-markdown   the env table as docs/ENV.md's markdown table
 *   osh_info --version
 *   osh_info --help
 */
#include <limits.h>
#include <pmix.h>
#include <rdma/fabric.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>

#include "conduit/ofi/ofi.h"
#include "core/env.h"

#ifndef OFISHMEM_VERSION_STRING
#define OFISHMEM_VERSION_STRING "unknown"
#endif
#ifndef OFISHMEM_COMPILER
#define OFISHMEM_COMPILER "unknown"
#endif
#ifndef OFISHMEM_PREFIX
#define OFISHMEM_PREFIX "unknown"
#endif
#ifndef OFISHMEM_BINDIR
#define OFISHMEM_BINDIR "bin"
#endif
#ifndef OFISHMEM_BUILD_TYPE
#define OFISHMEM_BUILD_TYPE "unknown"
#endif

/* Where this osh_info is installed: PREFIX/BINDIR/osh_info, found from
 * /proc/self/exe because a prefix may be moved as a whole; the configured
 * prefix if that fails, and "build tree" when it runs from the build. */
static const char *installed_prefix(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0)
        return OFISHMEM_PREFIX;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash == NULL)
        return OFISHMEM_PREFIX;
    *slash = '\0';
    size_t bl = strlen(OFISHMEM_BINDIR);
    size_t l = strlen(buf);
    if (l <= bl || strcmp(buf + l - bl, OFISHMEM_BINDIR) != 0 || buf[l - bl - 1] != '/')
        return "none (run from the build tree)";
    buf[l - bl - 1] = '\0';
    return buf;
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
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: osh_info [--version | --env-markdown | --help]\n"
               "Prints the version, build options, libfabric providers found and every\n"
               "environment variable with its current value. See osh_info(1).\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "osh_info: unknown argument '%s'\n"
                        "usage: osh_info [--version | --env-markdown | --help]\n", argv[1]);
        return 2;
    }
    printf("ofishmem %s, OpenSHMEM %d.%d\n", OFISHMEM_VERSION_STRING, SHMEM_MAJOR_VERSION,
           SHMEM_MINOR_VERSION);
    printf("  vendor string: %s\n", SHMEM_VENDOR_STRING);
    char prefix[PATH_MAX];
    printf("  build: %s, compiler %s, prefix %s\n", OFISHMEM_BUILD_TYPE, OFISHMEM_COMPILER,
           installed_prefix(prefix, sizeof(prefix)));
    printf("  libfabric: API %u.%u, runtime %u.%u\n", FI_MAJOR_VERSION, FI_MINOR_VERSION,
           FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    printf("  PMIx: %s (launchers: oshrun, srun --mpi=pmix, Open MPI mpirun)\n",
           PMIx_Get_version());
    /* The library's own choice (conduit/ofi/ofi_select.c), through its loader:
     * SHMEM_OFI_LIBRARY and FI_PROVIDER apply as they do to a job. */
    char err[256];
    if (shm_env_load(&shm_env_g, shm_env_from_process, err, sizeof(err)) != SHM_OK) {
        fprintf(stderr, "osh_info: %s\n", err);
        return 1;
    }
    if (cdt_ofi_dl_load() == 0) {
        printf("  libfabric loaded: %s (runtime %u.%u)\n", cdt_ofi_dl_name(), FI_MAJOR(fi_version()),
               FI_MINOR(fi_version()));
        cdt_ofi_candidates_print(stdout, 1, NULL, NULL);
        cdt_ofi_candidates_print(stdout, 2, NULL, NULL);
        printf("  (SHMEM_OFI_PROVIDER or FI_PROVIDER names one; a job on one host whose PEs map\n"
               "   each other's memory opens none: SHMEM_FABRIC)\n");
    }
    printf("\n");

    printf("\n");
    shm_env_print(stdout, &shm_env_g, 0);
    return 0;
}
