// SPDX-License-Identifier: BSD-3-Clause
/*
 * libfabric 1.17's shm provider keeps its regions in /dev/shm/<pid>:<ep>:<dom>
 * and a dead process leaves them behind. The one place that knows the name:
 * header-only, so that oshrun (which does not link the library) shares it.
 */
#ifndef SHM_CONDUIT_OFI_REGIONS_H
#define SHM_CONDUIT_OFI_REGIONS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Removes the shm provider's region files of process pid. */
static inline void cdt_ofi_regions_unlink(pid_t pid)
{
    char prefix[32];
    int plen = snprintf(prefix, sizeof(prefix), "%d:", (int)pid);
    DIR *d = opendir("/dev/shm");
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, (size_t)plen) == 0)
            unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
}

#endif /* SHM_CONDUIT_OFI_REGIONS_H */
