// SPDX-License-Identifier: BSD-3-Clause
// Test helper: the inodes of this process's sockets, from /proc/self/fd
// (pe_coll.coll_sockets, pe.connect_demand count the fabric's connections).
#ifndef PE_SOCKETS_H
#define PE_SOCKETS_H
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

static int own_socket_inodes(unsigned long *ino, int max)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return 0;
    struct dirent *e;
    char path[300], link[64];
    while ((e = readdir(d)) != NULL && n < max) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        unsigned long v;
        if (sscanf(link, "socket:[%lu]", &v) == 1)
            ino[n++] = v;
    }
    closedir(d);
    return n;
}
#endif
