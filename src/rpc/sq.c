// SPDX-License-Identifier: BSD-3-Clause
/*
 * Same-host transport of data services: connection set-up (memfd over an
 * abstract Unix socket), the server's listener thread, liveness, doorbells
 * and process_vm_* bulk. See sq.h for the design, sq_ring.h for the rings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "core/unixsock.h"
#include "rpc/rpc.h"
#include "rpc/sq.h"

#define SQ_MAGIC 0x3151534fu /* "OSQ1" */
#define SQ_VERSION 2 /* 2: the hello carries a probe word, the reply whether it was read */
#define SQ_MAX_CONNS 256
#define SQ_HDR_PAGE 4096
#define SQ_MIN_RING (64u << 10)
#define SQ_MAX_RING (64u << 20)
#define SQ_IO_TIMEOUT_S 5
#define SQ_WATCH_MS 100        /* the listener thread looks at closing slots this often */
#define SQ_CHECK_NS 1000000ull /* a waiting client polls its server's socket this often */
#define SQ_OPT "/sq="
#define SQ_GRAVE_NS 2000000000ull /* a lost peer's exit is awaited this long */

enum { SQ_FREE = 0, SQ_NEW, SQ_LIVE, SQ_CLOSING };

/* First page of a connection's memfd (made by the client). */
typedef struct {
    uint32_t magic, version;
    uint64_t req_cap, resp_cap;
    uint8_t pad_[40];
    sq_ring_ctl_t req_ctl;  /* consumer: server */
    sq_ring_ctl_t resp_ctl; /* consumer: client */
    sq_bell_t client_bell;
} sq_shm_hdr_t;

typedef struct {
    uint32_t magic, version;
    uint64_t req_cap, resp_cap, map_len;
    uint64_t probe_addr, probe_val; /* a word of the client's memory and what it holds */
} sq_hello_t;

#define SQ_REPLY_PVM 1u /* the server read the probe word: it copies bulk data itself */

typedef struct {
    uint32_t magic;
    int32_t status; /* 0, or an errno */
    uint32_t flags; /* SQ_REPLY_* */
    uint32_t pad_;
} sq_reply_t;

/* A peer whose connection ended: once its process has exited, what the
 * provider left of it in the filesystem is removed (a killed process
 * cannot). Its pidfd makes sure that it is that process, not a new one. */
typedef struct {
    int pidfd;
    pid_t pid;
    uint64_t until;
} sq_grave_t;

struct rpc_sq {
    int listen;
    const char *prov;       /* the instance's provider name (graves: its files) */
    sq_grave_t graves[SQ_MAX_CONNS]; /* server: the thread's; client: progress's */
    int ngraves;
    char name[17];
    int lfd, stop[2];
    pthread_t thr;
    int thr_on;
    int bell_fd;
    sq_bell_t *bell;        /* server: the page every client rings */
    rpc_sq_conn_t *slots;   /* server: SQ_MAX_CONNS, shared with the thread */
    rpc_sq_conn_t *active[SQ_MAX_CONNS];
    int nactive;
    uint32_t gen, seen_gen; /* the thread bumps gen when a slot becomes SQ_NEW */
};

/* ------------------------------------------------------------ host id */

static char host_id_g[17];
static pthread_once_t host_once_g = PTHREAD_ONCE_INIT;

/* This boot of this machine: a hash of the kernel's boot id. */
static void host_id_init(void)
{
    char buf[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (f) {
        if (fgets(buf, sizeof(buf), f) == NULL)
            buf[0] = '\0';
        fclose(f);
    }
    if (buf[0] == '\0')
        return; /* unknown: never matches */
    uint64_t h = 1469598103934665603ull;
    for (const char *p = buf; *p && *p != '\n'; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    snprintf(host_id_g, sizeof(host_id_g), "%016" PRIx64, h);
}

static const char *host_id(void)
{
    pthread_once(&host_once_g, host_id_init);
    return host_id_g;
}

static uint64_t ring_cap_for(size_t max_msg)
{
    uint64_t need = 2 * ((uint64_t)max_msg + RPC_HDR_MAX + 32), cap = SQ_MIN_RING;
    while (cap < need && cap < SQ_MAX_RING)
        cap *= 2;
    return cap;
}

static int cap_ok(uint64_t cap)
{
    return cap >= SQ_MIN_RING && cap <= SQ_MAX_RING && (cap & (cap - 1)) == 0;
}

static void conn_setup(rpc_sq_conn_t *c, int server)
{
    sq_shm_hdr_t *h = c->map;
    uint8_t *req = (uint8_t *)c->map + SQ_HDR_PAGE;
    uint64_t req_cap = h->req_cap, resp_cap = h->resp_cap;
    uint8_t *resp = req + req_cap;
    if (server) {
        sq_end_init(&c->rx, req, req_cap, &h->req_ctl);
        sq_end_init(&c->tx, resp, resp_cap, &h->resp_ctl);
        c->tx_bell = &h->client_bell;
    } else {
        sq_end_init(&c->tx, req, req_cap, &h->req_ctl);
        sq_end_init(&c->rx, resp, resp_cap, &h->resp_ctl);
        c->rx_bell = &h->client_bell;
    }
}

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

static void grave_add(rpc_sq_t *s, rpc_sq_conn_t *c)
{
    if (c->pidfd < 0)
        return;
    if (s->ngraves < SQ_MAX_CONNS)
        s->graves[s->ngraves++] = (sq_grave_t){c->pidfd, c->pid, rpc_now_ns() + SQ_GRAVE_NS};
    else
        close(c->pidfd);
    c->pidfd = -1;
}

/* Sweeps the peers that have exited; forgets those still alive past their time. */
static void graves_check(rpc_sq_t *s, int wait_ms)
{
    uint64_t now = rpc_now_ns();
    for (int i = 0; i < s->ngraves; i++) {
        sq_grave_t *g = &s->graves[i];
        struct pollfd p = {.fd = g->pidfd, .events = POLLIN};
        int gone = poll(&p, 1, wait_ms) > 0;
        if (gone) {
            SHM_DEBUG(RPC, "same-host peer pid %d exited: sweeping what it left", (int)g->pid);
            cdt_msg_sweep_dead_on(s->prov, g->pid); /* (no endpoint needed) */
        }
        if (gone || now > g->until) {
            close(g->pidfd);
            s->graves[i--] = s->graves[--s->ngraves];
        }
    }
}

/* -------------------------------------------------------------- server */

static void sq_refuse(int c, int status)
{
    sq_reply_t rep = {.magic = SQ_MAGIC, .status = status};
    shm_unix_send_fds(c, &rep, sizeof(rep), NULL, 0);
}

/* A client connects: check it, map its rings, give it a slot and our doorbell. */
static void sq_accept(rpc_sq_t *s)
{
    int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    shm_unix_timeouts(c, SQ_IO_TIMEOUT_S);
    pid_t pid;
    sq_hello_t hi;
    int fd = -1;
    void *map = MAP_FAILED;
    const char *why = "another user";
    if (!shm_unix_peer_same_user(c, &pid))
        goto refuse;
    why = "malformed hello";
    if (shm_unix_recv_fds(c, &hi, sizeof(hi), &fd, 1) != 1 || hi.magic != SQ_MAGIC ||
        hi.version != SQ_VERSION || !cap_ok(hi.req_cap) || !cap_ok(hi.resp_cap) ||
        hi.map_len != SQ_HDR_PAGE + hi.req_cap + hi.resp_cap)
        goto refuse;
    /* The client must not be able to shrink it under us (SIGBUS here). */
    struct stat sb;
    int seals = fcntl(fd, F_GET_SEALS);
    why = "memfd not sealed against shrinking";
    if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != hi.map_len || seals < 0 ||
        !(seals & F_SEAL_SHRINK))
        goto refuse;
    why = "mmap";
    map = mmap(NULL, hi.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        goto refuse;
    const sq_shm_hdr_t *sh = map;
    why = "rings disagree with the hello";
    if (sh->magic != SQ_MAGIC || sh->req_cap != hi.req_cap || sh->resp_cap != hi.resp_cap)
        goto refuse;
    rpc_sq_conn_t *slot = NULL;
    for (int i = 0; i < SQ_MAX_CONNS && slot == NULL; i++)
        if (__atomic_load_n(&s->slots[i].state, __ATOMIC_ACQUIRE) == SQ_FREE)
            slot = &s->slots[i];
    why = "all connection slots in use";
    if (slot == NULL)
        goto refuse;
    /* Can we copy from the client (Yama, seccomp, user namespaces)? Asked once:
     * the client registers its bulk buffers with the provider only if not. */
    uint64_t probe = 0;
    struct iovec pl = {.iov_base = &probe, .iov_len = sizeof(probe)};
    struct iovec pr = {.iov_base = (void *)(uintptr_t)hi.probe_addr, .iov_len = sizeof(probe)};
    int pvm = process_vm_readv(pid, &pl, 1, &pr, 1, 0) == (ssize_t)sizeof(probe) &&
              probe == hi.probe_val;
    if (!pvm)
        SHM_INFO(RPC, "process_vm_readv from same-host client pid %d refused (%s): its bulk "
                 "transfers go through the provider", (int)pid, strerror(errno));
    sq_reply_t rep = {.magic = SQ_MAGIC, .flags = pvm ? SQ_REPLY_PVM : 0};
    why = "reply";
    if (shm_unix_send_fds(c, &rep, sizeof(rep), &s->bell_fd, 1) != 0)
        goto refuse;
    close(fd);
    int idx = slot->idx;
    memset(slot, 0, sizeof(*slot));
    slot->idx = idx;
    slot->sock = c;
    slot->pid = pid;
    slot->pidfd = pidfd_of(pid);
    slot->no_pvm = !pvm;
    slot->map = map;
    slot->map_len = hi.map_len;
    slot->rx_bell = s->bell;
    conn_setup(slot, 1);
    __atomic_store_n(&slot->state, SQ_NEW, __ATOMIC_RELEASE);
    __atomic_add_fetch(&s->gen, 1, __ATOMIC_RELEASE);
    SHM_DEBUG(RPC, "same-host client pid %d connected (slot %d)", (int)pid, idx);
    return;
refuse:
    SHM_DEBUG(RPC, "same-host connection refused: %s", why);
    sq_refuse(c, EPROTO);
    if (map != MAP_FAILED)
        munmap(map, hi.map_len);
    if (fd >= 0)
        close(fd);
    close(c);
}

/* The listener: accepts clients and watches their sockets, so that the
 * progress loop learns of a dead client from one flag, without a syscall. */
static void *sq_main(void *arg)
{
    rpc_sq_t *s = arg;
    struct pollfd *pf = calloc(SQ_MAX_CONNS + 2, sizeof(*pf));
    int *who = calloc(SQ_MAX_CONNS, sizeof(*who));
    if (pf == NULL || who == NULL) {
        free(pf);
        free(who);
        return NULL;
    }
    for (;;) {
        int n = 0;
        pf[n++] = (struct pollfd){.fd = s->stop[0], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        for (int i = 0; i < SQ_MAX_CONNS; i++) {
            rpc_sq_conn_t *c = &s->slots[i];
            int st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
            if (st == SQ_CLOSING) {
                close(c->sock);
                c->sock = -1;
                grave_add(s, c);
                __atomic_store_n(&c->state, SQ_FREE, __ATOMIC_RELEASE);
            } else if ((st == SQ_NEW || st == SQ_LIVE) && !__atomic_load_n(&c->dead, __ATOMIC_RELAXED)) {
                who[n - 2] = i;
                pf[n++] = (struct pollfd){.fd = c->sock, .events = POLLRDHUP};
            }
        }
        if (s->ngraves)
            graves_check(s, 0);
        int k = poll(pf, (nfds_t)n, SQ_WATCH_MS);
        if (k < 0 && errno != EINTR)
            break;
        if (k <= 0)
            continue;
        if (pf[0].revents)
            break;
        for (int j = 2; j < n; j++)
            if (pf[j].revents) {
                rpc_sq_conn_t *c = &s->slots[who[j - 2]];
                __atomic_store_n(&c->dead, 1, __ATOMIC_RELEASE);
                /* A server asleep on its doorbell reclaims the slot now. */
                __atomic_add_fetch(&s->bell->seq, 1, __ATOMIC_RELEASE);
                syscall(SYS_futex, &s->bell->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
            }
        if (pf[1].revents)
            sq_accept(s);
    }
    free(pf);
    free(who);
    return NULL;
}

static int sq_listen(rpc_sq_t *s)
{
    uint8_t rnd[8];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return -1;
    for (int i = 0; i < 8; i++)
        snprintf(s->name + 2 * i, 3, "%02x", rnd[i]);
    struct sockaddr_un sa;
    socklen_t sl = shm_unix_abstract(&sa, "orpc-sq.%s", s->name);
    s->bell_fd = memfd_create("orpc-sq-bell", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (s->bell_fd < 0 || ftruncate(s->bell_fd, SQ_HDR_PAGE) != 0 ||
        fcntl(s->bell_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return -1;
    s->bell = mmap(NULL, SQ_HDR_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, s->bell_fd, 0);
    if (s->bell == MAP_FAILED) {
        s->bell = NULL;
        return -1;
    }
    s->slots = calloc(SQ_MAX_CONNS, sizeof(*s->slots));
    if (s->slots == NULL)
        return -1;
    for (int i = 0; i < SQ_MAX_CONNS; i++) {
        s->slots[i].idx = i;
        s->slots[i].sock = -1;
    }
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || sl == 0 || bind(s->lfd, (struct sockaddr *)&sa, sl) != 0 ||
        listen(s->lfd, SOMAXCONN) != 0 || pipe2(s->stop, O_CLOEXEC) != 0)
        return -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thr, NULL, sq_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    s->thr_on = 1;
    return 0;
}

/* ----------------------------------------------------------- instances */

void rpc_sq_open(orpc_t *r)
{
    if (!shm_env_g.RPC_SAME_HOST || host_id()[0] == '\0')
        return;
    rpc_sq_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return;
    s->lfd = s->bell_fd = s->stop[0] = s->stop[1] = -1;
    s->listen = r->listen;
    s->prov = r->prov;
    /* Every request, call and control message has at most one send out. */
    r->sq_sent = calloc((size_t)(r->nreqs + r->ncalls + RPC_NCTL), sizeof(*r->sq_sent));
    if (r->sq_sent == NULL) {
        free(s);
        return;
    }
    r->sq = s;
    if (s->listen && sq_listen(s) != 0) {
        SHM_WARN(RPC, "same-host transport unavailable (%s): same-host clients go through "
                 "the provider", strerror(errno));
        rpc_sq_close(r);
    }
}

static void conn_unmap(rpc_sq_conn_t *c)
{
    if (c->map)
        munmap(c->map, c->map_len);
    if (c->bell_map)
        munmap(c->bell_map, SQ_HDR_PAGE);
    c->map = c->bell_map = NULL;
}

/* Everything a connection holds but its own memory (slots are not malloc'd). */
static void conn_release(rpc_sq_conn_t *c)
{
    conn_unmap(c);
    if (c->sock >= 0)
        close(c->sock);
    if (c->pidfd >= 0)
        close(c->pidfd);
}

void rpc_sq_close(orpc_t *r)
{
    rpc_sq_t *s = r->sq;
    if (s == NULL)
        return;
    if (s->thr_on) {
        char b = 1;
        if (write(s->stop[1], &b, 1) == 1)
            pthread_join(s->thr, NULL);
    }
    for (int i = 0; s->slots && i < SQ_MAX_CONNS; i++) {
        rpc_sq_conn_t *c = &s->slots[i];
        if (c->state != SQ_FREE) {
            conn_release(c);
        }
    }
    /* Servers that died while we talked to them: give them a moment to be gone. */
    if (s->ngraves)
        graves_check(s, 200);
    for (int i = 0; i < s->ngraves; i++)
        close(s->graves[i].pidfd);
    for (int i = 0; i < s->nactive; i++)
        if (s->active[i]->idx < 0) { /* ours, as a client */
            if (s->active[i]->pidfd >= 0)
                close(s->active[i]->pidfd);
            conn_unmap(s->active[i]);
            close(s->active[i]->sock);
            free(s->active[i]);
        }
    for (int k = 0; k < 2; k++)
        if (s->stop[k] >= 0)
            close(s->stop[k]);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->bell)
        munmap(s->bell, SQ_HDR_PAGE);
    if (s->bell_fd >= 0)
        close(s->bell_fd);
    free(s->slots);
    free(s);
    r->sq = NULL;
    free(r->sq_sent);
    r->sq_sent = NULL;
    r->sq_nsent = 0;
}

int rpc_sq_addr_opt(orpc_t *r, char *buf, size_t len)
{
    rpc_sq_t *s = r->sq;
    if (s == NULL || !s->listen)
        return ORPC_OK;
    size_t used = strlen(buf);
    int n = snprintf(buf + used, len - used, SQ_OPT "%s.%s", host_id(), s->name);
    if (n < 0 || (size_t)n >= len - used) {
        buf[used] = '\0';
        return ORPC_ERANGE;
    }
    return ORPC_OK;
}

/* ---------------------------------------------------------------- client */

int rpc_sq_addr_local(const char *addr)
{
    const char *o = strstr(addr, SQ_OPT);
    size_t hl = strlen(host_id());
    return shm_env_g.RPC_SAME_HOST && o && hl && strncmp(o + strlen(SQ_OPT), host_id(), hl) == 0 &&
           o[strlen(SQ_OPT) + hl] == '.';
}

rpc_sq_conn_t *rpc_sq_connect(orpc_t *r, const char *addr, size_t srv_max_req)
{
    rpc_sq_t *s = r->sq;
    if (s == NULL || strstr(addr, SQ_OPT) == NULL || s->nactive >= SQ_MAX_CONNS)
        return NULL;
    if (!rpc_sq_addr_local(addr)) {
        SHM_DEBUG(RPC, "server on another host: through the provider");
        return NULL;
    }
    const char *o = strstr(addr, SQ_OPT) + strlen(SQ_OPT) + strlen(host_id()) + 1;
    char name[17];
    if (strspn(o, "0123456789abcdef") != 16)
        return NULL;
    memcpy(name, o, 16);
    name[16] = '\0';

    rpc_sq_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->idx = -1;
    c->sock = -1;
    c->pidfd = -1;
    int fd = -1, bfd = -1;
    const char *why = "socket";
    struct sockaddr_un sa;
    socklen_t sl = shm_unix_abstract(&sa, "orpc-sq.%s", name);
    c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->sock < 0)
        goto fail;
    shm_unix_timeouts(c->sock, SQ_IO_TIMEOUT_S);
    why = "connect"; /* another network namespace, or the server is gone */
    if (connect(c->sock, (struct sockaddr *)&sa, sl) != 0)
        goto fail;
    why = "server of another user";
    if (!shm_unix_peer_same_user(c->sock, &c->pid))
        goto fail;
    uint64_t req_cap = ring_cap_for(srv_max_req ? srv_max_req : r->max_req);
    uint64_t resp_cap = ring_cap_for((size_t)r->resp_cap);
    c->map_len = SQ_HDR_PAGE + req_cap + resp_cap;
    why = "memfd";
    fd = memfd_create("orpc-sq", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_len) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        goto fail;
    c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (c->map == MAP_FAILED) {
        c->map = NULL;
        goto fail;
    }
    sq_shm_hdr_t *h = c->map;
    h->magic = SQ_MAGIC;
    h->version = SQ_VERSION;
    h->req_cap = req_cap;
    h->resp_cap = resp_cap;
    c->probe = ((uint64_t)getpid() << 32 | 0x5a5aa5a5u) ^ (uint64_t)(uintptr_t)c;
    sq_hello_t hi = {.magic = SQ_MAGIC, .version = SQ_VERSION, .req_cap = req_cap,
                     .resp_cap = resp_cap, .map_len = c->map_len,
                     .probe_addr = (uint64_t)(uintptr_t)&c->probe, .probe_val = c->probe};
    why = "hello";
    if (shm_unix_send_fds(c->sock, &hi, sizeof(hi), &fd, 1) != 0)
        goto fail;
    close(fd);
    fd = -1;
    sq_reply_t rep;
    why = "reply";
    int got = shm_unix_recv_fds(c->sock, &rep, sizeof(rep), &bfd, 1);
    if (got < 0 || rep.magic != SQ_MAGIC)
        goto fail;
    why = "refused by the server";
    if (rep.status != 0 || got != 1) {
        errno = rep.status ? rep.status : EPROTO;
        goto fail;
    }
    why = "doorbell";
    c->bell_map = mmap(NULL, SQ_HDR_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
    if (c->bell_map == MAP_FAILED) {
        c->bell_map = NULL;
        goto fail;
    }
    close(bfd);
    c->no_pvm = !(rep.flags & SQ_REPLY_PVM);
    conn_setup(c, 0);
    c->tx_bell = c->bell_map;
    c->pidfd = pidfd_of(c->pid);
    s->active[s->nactive++] = c;
    SHM_DEBUG(RPC, "same-host queues to server pid %d (bulk: %s)", (int)c->pid,
              c->no_pvm ? "through the provider" : "copied by the server");
    return c;
fail:
    SHM_DEBUG(RPC, "no same-host queues (%s: %s): through the provider", why, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (bfd >= 0)
        close(bfd);
    conn_release(c);
    free(c);
    return NULL;
}

static void active_remove(rpc_sq_t *s, rpc_sq_conn_t *c)
{
    for (int i = 0; i < s->nactive; i++)
        if (s->active[i] == c) {
            s->active[i] = s->active[--s->nactive];
            return;
        }
}

void rpc_sq_disconnect(orpc_t *r, rpc_sq_conn_t *c)
{
    if (r->sq)
        active_remove(r->sq, c);
    conn_release(c);
    free(c);
}

/* ------------------------------------------------------------- messages */

static void sq_wake(sq_bell_t *b)
{
    __atomic_add_fetch(&b->seq, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &b->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int rpc_sq_send(rpc_sq_conn_t *c, const void *hdr, size_t hl, const void *pay, size_t len)
{
    if (__atomic_load_n(&c->dead, __ATOMIC_RELAXED))
        return -2;
    int k = sq_push2(&c->tx, hdr, hl, pay, len);
    /* A doorbell syscall only when the consumer sleeps. The fence keeps the
     * load of `sleeping` after the ring's tail store (x86 may otherwise
     * read it first): the consumer stores `sleeping`, then reads the tail,
     * and without the fence both sides could read the old values, leaving
     * the consumer asleep until its timeout (up to 1 ms for a server). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (k == 0 && __atomic_load_n(&c->tx_bell->sleeping, __ATOMIC_RELAXED))
        sq_wake(c->tx_bell);
    return k;
}

/* A connection ends: the core forgets it, then its memory goes. */
static void conn_lose(orpc_t *r, rpc_sq_conn_t *c)
{
    rpc_sq_t *s = r->sq;
    active_remove(s, c);
    rpc_sq_lost(r, c);
    if (c->idx >= 0) {
        conn_unmap(c);
        __atomic_store_n(&c->state, SQ_CLOSING, __ATOMIC_RELEASE); /* the thread closes it */
    } else {
        if (!s->listen)
            grave_add(s, c); /* (a listening instance's graves are its thread's) */
        else if (c->pidfd >= 0)
            close(c->pidfd);
        conn_unmap(c);
        close(c->sock);
        free(c);
    }
}

static void sq_adopt(rpc_sq_t *s)
{
    s->seen_gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
    for (int i = 0; i < SQ_MAX_CONNS; i++) {
        rpc_sq_conn_t *c = &s->slots[i];
        int st = SQ_NEW;
        if (__atomic_compare_exchange_n(&c->state, &st, SQ_LIVE, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            s->active[s->nactive++] = c;
    }
}

int rpc_sq_poll(orpc_t *r)
{
    rpc_sq_t *s = r->sq;
    if (s->listen && __atomic_load_n(&s->gen, __ATOMIC_RELAXED) != s->seen_gen)
        sq_adopt(s);
    int n = 0;
    for (int i = 0; i < s->nactive; i++) {
        rpc_sq_conn_t *c = s->active[i];
        const void *m;
        size_t len;
        int k;
        while ((k = sq_peek(&c->rx, &m, &len)) > 0) {
            rpc_sq_msg(r, c, m, len);
            sq_release(&c->rx, len);
            if (++n >= 64)
                return n; /* the rest at the next poll: others wait too */
        }
        if (k < 0 || __atomic_load_n(&c->dead, __ATOMIC_ACQUIRE)) {
            if (k < 0)
                SHM_WARN(RPC, "same-host peer pid %d wrote garbage into its queue: dropped",
                         (int)c->pid);
            conn_lose(r, c);
            i--;
        }
    }
    return n;
}

void rpc_sq_check(orpc_t *r)
{
    rpc_sq_t *s = r->sq;
    if (s == NULL)
        return;
    if (s->ngraves && !s->listen)
        graves_check(s, 0);
    uint64_t now = rpc_now_ns();
    for (int i = 0; i < s->nactive; i++) {
        rpc_sq_conn_t *c = s->active[i];
        if (c->idx >= 0 || now < c->next_check_ns) /* a server's clients: its thread watches */
            continue;
        c->next_check_ns = now + SQ_CHECK_NS;
        struct pollfd p = {.fd = c->sock, .events = POLLRDHUP};
        if (poll(&p, 1, 0) > 0 && p.revents) {
            SHM_DEBUG(RPC, "same-host server pid %d is gone", (int)c->pid);
            __atomic_store_n(&c->dead, 1, __ATOMIC_RELEASE);
        }
    }
}

static int any_ready(rpc_sq_t *s)
{
    if (__atomic_load_n(&s->gen, __ATOMIC_RELAXED) != s->seen_gen)
        return 1;
    for (int i = 0; i < s->nactive; i++)
        if (!sq_empty(&s->active[i]->rx) || __atomic_load_n(&s->active[i]->dead, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

void rpc_sq_sleep(orpc_t *r, rpc_sq_conn_t *c, long ns)
{
    rpc_sq_t *s = r->sq;
    sq_bell_t *b = c ? c->rx_bell : s && s->listen ? s->bell : NULL;
    struct timespec ts = {0, ns};
    if (b == NULL) {
        nanosleep(&ts, NULL);
        return;
    }
    uint32_t seq = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);
    __atomic_store_n(&b->sleeping, 1, __ATOMIC_SEQ_CST);
    rpc_lock(r);
    int ready = c ? !sq_empty(&c->rx) : any_ready(s);
    rpc_unlock(r);
    if (!ready)
        syscall(SYS_futex, &b->seq, FUTEX_WAIT, seq, &ts, NULL, 0);
    __atomic_store_n(&b->sleeping, 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ bulk */

int rpc_sq_bulk(rpc_sq_conn_t *c, int is_get, void *local, uint64_t remote, size_t len)
{
    struct iovec li = {.iov_base = local, .iov_len = len};
    struct iovec ri = {.iov_base = (void *)(uintptr_t)remote, .iov_len = len};
    return rpc_sq_bulkv(c, is_get, &li, &ri, 1);
}

int rpc_sq_bulkv(rpc_sq_conn_t *c, int is_get, struct iovec *l, struct iovec *rm, int n)
{
    if (c->no_pvm)
        return ORPC_ENOSYS;
    /* Checked first: a dead client's pid may be reused by another process. */
    if (__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE))
        return ORPC_EPEER;
    int moved = 0;
    while (n > 0 && l->iov_len == 0) { /* pairs have equal lengths */
        l++, rm++, n--;
    }
    while (n > 0) {
        /* The kernel takes at most IOV_MAX (1024) of each; pairs match, so a
         * partial transfer stops inside one pair and both sides advance alike. */
        int k = n < 1024 ? n : 1024;
        ssize_t got = is_get ? process_vm_readv(c->pid, l, (unsigned long)k, rm, (unsigned long)k, 0)
                             : process_vm_writev(c->pid, l, (unsigned long)k, rm, (unsigned long)k, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EPERM || errno == ENOSYS)) {
            if (!moved) {
                SHM_INFO(RPC, "process_vm_%s refused (%s): bulk through the provider",
                         is_get ? "readv" : "writev", strerror(errno));
                c->no_pvm = 1;
                return ORPC_ENOSYS;
            }
            return ORPC_EFABRIC;
        }
        if (got < 0 && errno == ESRCH)
            return ORPC_EPEER;
        if (got <= 0)
            return ORPC_EFABRIC; /* EFAULT: not mapped in the client */
        moved = 1;
        size_t left = (size_t)got;
        while (n > 0 && left >= l->iov_len) {
            left -= l->iov_len;
            l++, rm++, n--;
        }
        if (n > 0 && left) {
            l->iov_base = (char *)l->iov_base + left;
            l->iov_len -= left;
            rm->iov_base = (char *)rm->iov_base + left;
            rm->iov_len -= left;
        }
        while (n > 0 && l->iov_len == 0) {
            l++, rm++, n--;
        }
    }
    return ORPC_OK;
}

int rpc_sq_nconns(const orpc_t *r)
{
    return r->sq ? r->sq->nactive : 0;
}
