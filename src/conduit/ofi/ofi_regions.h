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

/* The pid of an endpoint's raw name "fi_shm://<pid>:<ep>:<dom>" (its region's
 * name after the scheme; it may end in NULs); 0 when it is not such a name. */
static inline int cdt_ofi_region_pid(const void *name, size_t len)
{
    const char *s = name;
    long pid = 0;
    size_t i = 0;
    for (size_t k = 0; k + 2 < len && k < 16 && s[k]; k++)
        if (s[k] == ':' && s[k + 1] == '/' && s[k + 2] == '/') {
            i = k + 3;
            break;
        }
    size_t start = i;
    while (i < len && s[i] >= '0' && s[i] <= '9' && pid < 0x7fffffffL / 10)
        pid = pid * 10 + (s[i++] - '0');
    return i > start && i < len && s[i] == ':' && pid > 0 ? (int)pid : 0;
}

#endif /* SHM_CONDUIT_OFI_REGIONS_H */
