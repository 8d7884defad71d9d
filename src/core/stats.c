// SPDX-License-Identifier: BSD-3-Clause
/* SHMEM_STATS: the job-end report of a PE's collective traffic (see stats.h). */
#define _GNU_SOURCE
#include "core/stats.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coll/hosts.h"
#include "core/state.h"

shm_stats_t shm_stats_g = {.kind = -1};

static const char *const kind_names[] = {
#define SHM_STAT_NAME(id, name) name,
    SHM_STAT_KINDS(SHM_STAT_NAME)
#undef SHM_STAT_NAME
};

void shm_stats_init(void)
{
    const char *v = shm_env_g.STATS;
    memset(&shm_stats_g, 0, sizeof(shm_stats_g));
    shm_stats_g.kind = -1;
    shm_stats_g.on = v && *v && strcmp(v, "0") != 0;
}

/* Sockets this process holds (the descriptors that are sockets). */
static int sockets_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    char path[300], link[64];
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof(link) - 1);
        if (len > 0) {
            link[len] = '\0';
            n += strncmp(link, "socket:", 7) == 0;
        }
    }
    closedir(d);
    return n;
}

/* SHMEM_STATS's destination: stderr, or the file named (%p: the PE). */
static int report_fd(const char *v)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "stderr") == 0)
        return STDERR_FILENO;
    char name[4096];
    size_t o = 0;
    for (const char *p = v; *p && o + 16 < sizeof(name); p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(name + o, sizeof(name) - o, "%d", shm_state_g.me);
            p++;
        } else {
            name[o++] = *p;
        }
    }
    name[o] = '\0';
    int fd = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        SHM_WARN(INIT, "SHMEM_STATS=%s: cannot open '%s' for the report", v, name);
    return fd;
}

/*
 * One block per PE, written at once (PEs share stderr):
 *   stats PE 3 of 16: hosts 4, fabric peers 5, sockets 11
 *   stats PE 3 barrier: calls 1003 node 1003 puts 0 put_bytes 0 flags 2006 gets 0 get_bytes 0
 */
void shm_stats_report(void)
{
    if (!shm_stats_g.on)
        return;
    char buf[4096];
    size_t o = 0;
    o += (size_t)snprintf(buf + o, sizeof(buf) - o,
                          "stats PE %d of %d: hosts %d, fabric peers %d, sockets %d\n",
                          shm_state_g.me, shm_state_g.npes, shm_coll_nhosts(),
                          cdt_no_fabric() ? 0 : cdt_peers_met(), sockets_open());
    for (int k = 0; k < SHM_STAT_NKINDS && o < sizeof(buf); k++) {
        const shm_stat_coll_t *c = &shm_stats_g.coll[k];
        if (c->calls == 0 && c->puts + c->flags + c->gets == 0)
            continue;
        o += (size_t)snprintf(buf + o, sizeof(buf) - o,
                              "stats PE %d %s: calls %llu node %llu puts %llu put_bytes %llu "
                              "flags %llu gets %llu get_bytes %llu\n",
                              shm_state_g.me, kind_names[k], (unsigned long long)c->calls,
                              (unsigned long long)c->node, (unsigned long long)c->puts,
                              (unsigned long long)c->put_bytes, (unsigned long long)c->flags,
                              (unsigned long long)c->gets, (unsigned long long)c->get_bytes);
    }
    if (o > sizeof(buf))
        o = sizeof(buf);
    int fd = report_fd(shm_env_g.STATS);
    if (fd < 0)
        return;
    ssize_t w = write(fd, buf, o);
    (void)w;
    if (fd != STDERR_FILENO)
        close(fd);
}
