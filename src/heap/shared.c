// SPDX-License-Identifier: BSD-3-Clause
/*
 * Same-host direct path, memory side: each PE's heap (and, see globals.c,
 * its data+BSS) lives in a memfd that the other PEs of its host map, so RMA
 * to them is a memcpy, AMOs are CPU atomics and shmem_ptr returns a usable
 * pointer.
 *
 * Nothing is named in /dev/shm: a memfd has no name, is not limited by the
 * size of /dev/shm (only by memory and swap) and vanishes with the last
 * process that maps it, killed or not. Its descriptor reaches the peers over
 * a Unix socket in the abstract namespace (no file either) with SCM_RIGHTS
 * (core/unixsock.c, shared with the RPC same-host transport);
 * pidfd_getfd or /proc/PID/fd would need ptrace rights that hardened hosts
 * refuse. Each PE listens before the init exchange and publishes a random
 * token through it; after the exchange (a fence: every peer listens) each PE
 * connects to each local peer, proves it is of the job with that token and
 * gets the peer's descriptors. A short-lived thread serves the requests, so
 * no PE waits on another that is itself waiting: no deadlock whatever the
 * order. It ends after the init barrier, once everyone has mapped ours.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "core/unixsock.h"
#include "heap/heap.h"
#include "runtime/rt.h"

shm_seg_peers_t shm_seg_peer_g[SHM_NSEGS];

#define DIRECT_KEY "shm.direct"
#define DIRECT_MAGIC 0x6f66736du /* "ofsm" */
#define DIRECT_IO_TIMEOUT_S 60   /* a peer slower than this is reached through the fabric */

/* What a PE publishes before the init exchange. */
typedef struct {
    uint8_t token[16]; /* a requester must know it: only the job's PEs read it */
    int32_t serving;   /* 0: this PE shares nothing (reach it through the fabric) */
    int32_t pad;
} direct_pub_t;

typedef struct {
    uint32_t magic;
    int32_t rank;
    uint8_t token[16];
} direct_req_t;

/* The answer; the descriptors of the segments with len > 0 ride along, in order. */
typedef struct {
    uint32_t magic;
    uint32_t nfds;
    uint64_t seg_len[SHM_NSEGS]; /* whole segment, to check the layouts agree */
    uint64_t lo[SHM_NSEGS], len[SHM_NSEGS];
} direct_hdr_t;

static shm_seg_share_t own[SHM_NSEGS] = {{.fd = -1}, {.fd = -1}};
static direct_pub_t own_pub;
static int listen_fd = -1, stop_fd[2] = {-1, -1};
static pthread_t serve_thread;
static int serving;
static int npeers;

void shm_heap_shared_add(int seg, const shm_seg_share_t *sh)
{
    own[seg] = *sh;
}

int shm_heap_shared_whole(void)
{
    for (int s = 0; s < SHM_NSEGS; s++)
        if (shm_seg_g[s].len != 0 &&
            (own[s].fd < 0 || own[s].lo != 0 || own[s].len != shm_seg_g[s].len))
            return 0;
    return 1;
}

/*
 * Under strict overcommit (vm.overcommit_memory=2) a page of a memfd that
 * cannot be committed is a SIGBUS at the store that touches it; a private
 * heap would have been refused at mmap instead. Refuse the same way.
 */
static shm_status_t heap_commit_check(size_t len)
{
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "re");
    int mode = 0;
    if (f) {
        if (fscanf(f, "%d", &mode) != 1)
            mode = 0;
        fclose(f);
    }
    if (mode != 2 || (f = fopen("/proc/meminfo", "re")) == NULL)
        return SHM_OK;
    unsigned long long limit = 0, committed = 0, v;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "CommitLimit: %llu kB", &v) == 1)
            limit = v * 1024;
        else if (sscanf(line, "Committed_AS: %llu kB", &v) == 1)
            committed = v * 1024;
    }
    fclose(f);
    unsigned long long avail = limit > committed ? limit - committed : 0;
    if (limit == 0 || len <= avail)
        return SHM_OK;
    shm_error("the symmetric heap (SHMEM_SYMMETRIC_SIZE=%zu bytes) is more than this host can "
              "still commit (%llu bytes; vm.overcommit_memory=2): lower SHMEM_SYMMETRIC_SIZE, or "
              "free memory",
              len, avail);
    return SHM_ERR_NOMEM;
}

shm_status_t shm_heap_shared_create(void *addr, size_t len)
{
    shm_status_t st = heap_commit_check(len);
    if (st != SHM_OK)
        return st;
    int fd = memfd_create("ofishmem-heap", MFD_CLOEXEC);
    if (fd < 0) {
        SHM_WARN(HEAP, "memfd_create: %s; same-host direct path off for this PE (the other PEs "
                 "reach it through the fabric; SHMEM_DIRECT=0 turns it off everywhere)",
                 strerror(errno));
        return SHM_ERR_NOSYS;
    }
    /* ftruncate only sets the size: pages are allocated when first touched. */
    if (ftruncate(fd, (off_t)len) != 0 ||
        mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        SHM_WARN(HEAP, "cannot size or map a memfd of %zu bytes for the heap: %s; same-host "
                 "direct path off for this PE",
                 len, strerror(errno));
        close(fd);
        return SHM_ERR_NOSYS;
    }
    own[SHM_SEG_HEAP] = (shm_seg_share_t){.fd = fd, .lo = 0, .len = len};
    return SHM_OK;
}

/* "\0ofishmem.<hash of nspace>.<rank>": abstract, so nothing in the filesystem. */
static socklen_t sock_name(struct sockaddr_un *sa, const char *nspace, int rank)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a: namespaces may be long */
    for (const char *p = nspace; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return shm_unix_abstract(sa, "ofishmem.%016" PRIx64 ".%d", h, rank);
}

/* One request: same user, right token, then our descriptors. */
static void serve_one(int c)
{
    direct_req_t req;
    shm_unix_timeouts(c, DIRECT_IO_TIMEOUT_S);
    if (!shm_unix_peer_same_user(c, NULL))
        return;
    if (recv(c, &req, sizeof(req), MSG_WAITALL) != (ssize_t)sizeof(req) ||
        req.magic != DIRECT_MAGIC || memcmp(req.token, own_pub.token, sizeof(req.token)) != 0)
        return;
    direct_hdr_t h = {.magic = DIRECT_MAGIC};
    int fds[SHM_NSEGS];
    for (int s = 0; s < SHM_NSEGS; s++) {
        h.seg_len[s] = shm_seg_g[s].len;
        if (own[s].fd < 0)
            continue;
        h.lo[s] = own[s].lo;
        h.len[s] = own[s].len;
        fds[h.nfds++] = own[s].fd;
    }
    if (shm_unix_send_fds(c, &h, sizeof(h), fds, (int)h.nfds) != 0)
        SHM_DEBUG(HEAP, "PE %d asked for our memory and left: %s", req.rank, strerror(errno));
}

static void *serve_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = listen_fd, .events = POLLIN},
                              {.fd = stop_fd[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        serve_one(c);
        close(c);
    }
    return NULL;
}

static void serve_stop(void)
{
    if (serving) {
        char b = 1;
        if (write(stop_fd[1], &b, 1) == 1)
            pthread_join(serve_thread, NULL);
        serving = 0;
    }
    for (int k = 0; k < 2; k++)
        if (stop_fd[k] >= 0) {
            close(stop_fd[k]);
            stop_fd[k] = -1;
        }
    if (listen_fd >= 0) {
        close(listen_fd);
        listen_fd = -1;
    }
}

shm_status_t shm_heap_shared_serve(const char *nspace, int rank)
{
    int have = 0;
    for (int s = 0; s < SHM_NSEGS; s++)
        have |= own[s].fd >= 0;
    const char *why = "nothing to share";
    struct sockaddr_un sa;
    socklen_t sl = sock_name(&sa, nspace, rank);
    if (!have)
        goto publish;
    why = "getrandom";
    if (getrandom(own_pub.token, sizeof(own_pub.token), 0) != (ssize_t)sizeof(own_pub.token))
        goto fail;
    why = "socket";
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0)
        goto fail;
    why = "bind";
    if (bind(listen_fd, (struct sockaddr *)&sa, sl) != 0)
        goto fail;
    why = "listen";
    if (listen(listen_fd, SOMAXCONN) != 0 || pipe2(stop_fd, O_CLOEXEC) != 0)
        goto fail;
    /* The server thread takes no signal: they stay the program's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&serve_thread, NULL, serve_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    why = "pthread_create";
    if (rc != 0) {
        errno = rc;
        goto fail;
    }
    serving = 1;
    own_pub.serving = 1;
    goto publish;
fail:
    SHM_WARN(HEAP, "cannot offer this PE's memory to the PEs of its host (%s: %s); they reach it "
             "through the fabric",
             why, strerror(errno));
    serve_stop();
publish:
    if (shm_rt_put(DIRECT_KEY, &own_pub, sizeof(own_pub)) != SHM_OK)
        return SHM_ERR_RUNTIME;
    return SHM_OK;
}

/*
 * Is rank `me` in list (SHMEM_DIRECT_NOMAP: "1,3-5")? Stops the job with a
 * message naming the variable when the list is malformed.
 */
static int nomap_listed(const char *list, int me)
{
    const char *p = list;
    int hit = 0;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            goto bad;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                goto bad;
        }
        if (me >= a && me <= b)
            hit = 1;
        if (*end == ',' && end[1] != '\0')
            end++;
        else if (*end != '\0')
            goto bad;
        p = end;
    }
    return hit;
bad:
    shm_fatal("SHMEM_DIRECT_NOMAP='%s' is not valid: expected PE numbers and ranges a-b "
              "separated by commas, e.g. '1,3-5'",
              list);
}

/* Asks PE pe for its descriptors; fills h and fds (-1 where none). */
static const char *fetch_peer(const char *nspace, int me, int pe, const direct_pub_t *pub,
                              direct_hdr_t *h, int fds[SHM_NSEGS])
{
    struct sockaddr_un sa;
    socklen_t sl = sock_name(&sa, nspace, pe);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const char *why = "socket";
    if (c < 0)
        return why;
    shm_unix_timeouts(c, DIRECT_IO_TIMEOUT_S);
    direct_req_t req = {.magic = DIRECT_MAGIC, .rank = me};
    memcpy(req.token, pub->token, sizeof(req.token));
    why = "connect";
    if (connect(c, (struct sockaddr *)&sa, sl) != 0)
        goto out;
    why = "send";
    if (send(c, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
        goto out;
    why = "recvmsg";
    int got = shm_unix_recv_fds(c, h, sizeof(*h), fds, SHM_NSEGS);
    if (got < 0) {
        if (errno == ECONNRESET)
            why = "the peer closed the connection (not of this job?)";
        goto out;
    }
    int backed = 0;
    for (int s = 0; s < SHM_NSEGS; s++)
        backed += h->len[s] != 0;
    if (h->magic != DIRECT_MAGIC || (int)h->nfds != got || backed != got) {
        why = "a malformed answer";
        for (int i = 0; i < got; i++)
            close(fds[i]);
        errno = EPROTO;
        goto out;
    }
    /* Spread the descriptors over the segments they back. */
    int tmp[SHM_NSEGS], i = 0;
    memcpy(tmp, fds, sizeof(tmp));
    for (int s = 0; s < SHM_NSEGS; s++)
        fds[s] = h->len[s] ? tmp[i++] : -1;
    why = NULL;
out:;
    int e = errno;
    close(c);
    errno = e;
    return why;
}

shm_status_t shm_heap_shared_map_peers(const char *nspace, int me, int npes,
                                       const int *local_peers, int nlocal)
{
    npeers = npes;
    for (int s = 0; s < SHM_NSEGS; s++) {
        if (own[s].fd < 0)
            continue; /* a segment we could not share: we map nobody's either */
        shm_seg_peer_g[s].base = calloc((size_t)npes, sizeof(uintptr_t));
        if (shm_seg_peer_g[s].base == NULL)
            return SHM_ERR_NOMEM;
        shm_seg_peer_g[s].lo = own[s].lo;
        shm_seg_peer_g[s].len = own[s].len;
        shm_seg_peer_g[s].base[me] = shm_seg_g[s].base;
    }
    /* Testing the mix of paths: a listed PE maps no other PE's memory. */
    const char *nomap = shm_env_g.DIRECT_NOMAP;
    if (nomap && *nomap && nomap_listed(nomap, me)) {
        SHM_INFO(HEAP, "SHMEM_DIRECT_NOMAP: PE %d maps no other PE's memory", me);
        return SHM_OK;
    }
    for (int i = 0; i < nlocal; i++) {
        int pe = local_peers[i];
        direct_pub_t pub;
        if (pe == me || shm_rt_get(pe, DIRECT_KEY, &pub, sizeof(pub)) != SHM_OK || !pub.serving)
            continue; /* that PE said why, if it tried */
        direct_hdr_t h;
        int fds[SHM_NSEGS] = {-1, -1};
        const char *why = fetch_peer(nspace, me, pe, &pub, &h, fds);
        if (why) {
            SHM_WARN(HEAP, "cannot reach PE %d's memory on this host (%s: %s); using the fabric "
                     "for it",
                     pe, why, strerror(errno));
            continue;
        }
        for (int s = 0; s < SHM_NSEGS; s++) {
            if (fds[s] < 0)
                continue;
            shm_seg_peers_t *p = &shm_seg_peer_g[s];
            if (p->base == NULL || h.seg_len[s] != shm_seg_g[s].len || h.lo[s] != p->lo ||
                h.len[s] != p->len) {
                if (p->base)
                    SHM_WARN(HEAP, "PE %d's %s is laid out differently (%" PRIu64 " bytes, "
                             "shared part %" PRIu64 "+%" PRIu64 "; here %zu, %zu+%zu): a "
                             "different program? Using the fabric for it",
                             pe, s == SHM_SEG_HEAP ? "heap" : "data+BSS", h.seg_len[s], h.lo[s],
                             h.len[s], shm_seg_g[s].len, p->lo, p->len);
                close(fds[s]);
                continue;
            }
            void *m = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                           fds[s], 0);
            int e = errno;
            close(fds[s]);
            if (m == MAP_FAILED) {
                char hint[512] = "";
                if (e == ENOMEM) /* each PE maps its host's peers' heaps too */
                    shm_rt_hint_mapping(hint, sizeof hint, p->len);
                SHM_WARN(HEAP, "cannot map PE %d's %s (%zu bytes): %s%s; using the fabric for it",
                         pe, s == SHM_SEG_HEAP ? "heap" : "data+BSS", p->len, strerror(e), hint);
                continue;
            }
            p->base[pe] = (uintptr_t)m - p->lo;
        }
    }
    return SHM_OK;
}

void shm_heap_shared_done(void)
{
    serve_stop();
    /* The heap's memfd lives on in the mappings; the data one stays open for fork (globals.c). */
    if (own[SHM_SEG_HEAP].fd >= 0) {
        close(own[SHM_SEG_HEAP].fd);
        own[SHM_SEG_HEAP].fd = -1;
    }
}

void shm_heap_shared_fini(void)
{
    serve_stop();
    for (int s = 0; s < SHM_NSEGS; s++) {
        shm_seg_peers_t *p = &shm_seg_peer_g[s];
        if (p->base) {
            for (int pe = 0; pe < npeers; pe++)
                if (p->base[pe] && p->base[pe] != shm_seg_g[s].base)
                    munmap((void *)(p->base[pe] + p->lo), p->len);
            free(p->base);
        }
        *p = (shm_seg_peers_t){0};
    }
    if (own[SHM_SEG_HEAP].fd >= 0) {
        close(own[SHM_SEG_HEAP].fd);
        own[SHM_SEG_HEAP].fd = -1;
    }
    npeers = 0;
}
