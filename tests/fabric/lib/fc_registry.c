// SPDX-License-Identifier: BSD-3-Clause
/*
 * The registry: each process's MRs in a small shared-memory table,
 * /dev/shm/fabcheck-<pid>, that peers on this host map read-only. An
 * origin looks the target's registration up on every RMA and atomic, checks
 * the profile's rules against it and translates (key, address) to the real
 * provider's own. One writer (the owner, under fc_g.lock); readers in other
 * processes take a consistent copy under a sequence counter.
 *
 * The file goes at exit, at a violation's abort, and at the next start of
 * any fabcheck process once its owner is dead (a SIGKILLed process leaves
 * it behind until then).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fc.h"

#define REG_DIR "/dev/shm"
#define REG_PREFIX "fabcheck-"
#define REG_MAGIC 0xfabc4e91u
#define REG_VERSION 1u
#define REG_SLOTS 16384u
#define REG_HASH 32768u /* a power of two, twice the slots */
#define REG_TOMB UINT32_MAX

typedef struct {
    uint32_t magic, version;
    uint32_t pid, pad;
    uint64_t nonce;
    uint64_t gen; /* odd while the owner writes */
    uint32_t hi;  /* slots used so far (scan bound) */
    uint32_t pad2;
    uint32_t hash[REG_HASH]; /* slot + 1; 0 empty; REG_TOMB removed */
    fc_regent_t slot[REG_SLOTS];
} reg_file_t;

static reg_file_t *own;
static pid_t own_pid;
static char own_path[64];
static uint32_t free_head = UINT32_MAX; /* free slots, linked through .pad */
static uint32_t tombs;

typedef struct {
    uint32_t pid;
    uint64_t nonce;
    const reg_file_t *map;
} peer_map_t;

#define PEER_MAPS 64
static peer_map_t peers[PEER_MAPS];
static unsigned peer_next;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static uint32_t bucket(uint32_t dom_id, uint64_t key)
{
    return (uint32_t)mix(key ^ ((uint64_t)dom_id << 40) ^ dom_id) & (REG_HASH - 1);
}

static void path_of(pid_t pid, char *buf, size_t len)
{
    snprintf(buf, len, REG_DIR "/" REG_PREFIX "%d", (int)pid);
}

static void remove_own(void)
{
    if (own && own_pid == getpid())
        unlink(own_path);
}

static void child_after_fork(void)
{
    /* The parent's table stays the parent's; the child makes its own when
     * it registers memory. */
    own = NULL;
    free_head = UINT32_MAX;
    tombs = 0;
}

static void sweep_dead(void)
{
    DIR *d = opendir(REG_DIR);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, REG_PREFIX, strlen(REG_PREFIX)) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + strlen(REG_PREFIX), &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == -1 && errno == ESRCH) {
            char p[64];
            path_of((pid_t)pid, p, sizeof(p));
            unlink(p);
        }
    }
    closedir(d);
}

void fc_reg_sweep(void)
{
    remove_own();
    sweep_dead();
}

static int reg_create(void)
{
    static int hooks;
    own_pid = getpid();
    path_of(own_pid, own_path, sizeof(own_path));
    int fd = open(own_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Our pid's earlier owner is gone (it is us now): stale. */
        unlink(own_path);
        fd = open(own_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        fprintf(stderr, "fabcheck: cannot create %s: %s\n", own_path, strerror(errno));
        return -1;
    }
    if (ftruncate(fd, sizeof(reg_file_t)) != 0) {
        fprintf(stderr, "fabcheck: cannot size %s: %s\n", own_path, strerror(errno));
        close(fd);
        unlink(own_path);
        return -1;
    }
    void *m = mmap(NULL, sizeof(reg_file_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        unlink(own_path);
        return -1;
    }
    own = m;
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
        nonce = mix((uint64_t)time(NULL) ^ ((uint64_t)own_pid << 32) ^ (uintptr_t)m);
    own->nonce = nonce | 1;
    own->pid = (uint32_t)own_pid;
    own->version = REG_VERSION;
    __atomic_store_n(&own->magic, REG_MAGIC, __ATOMIC_RELEASE);
    free_head = UINT32_MAX;
    tombs = 0;
    if (!hooks) {
        hooks = 1;
        atexit(remove_own);
        pthread_atfork(NULL, NULL, child_after_fork);
    }
    return 0;
}

int fc_reg_open(void)
{
    if (own && own_pid == getpid())
        return 0;
    sweep_dead();
    return reg_create();
}

uint64_t fc_reg_nonce(void)
{
    return fc_reg_open() == 0 ? own->nonce : 0;
}

uint32_t fc_reg_pid(void)
{
    return (uint32_t)getpid();
}

static void write_begin(void)
{
    __atomic_add_fetch(&own->gen, 1, __ATOMIC_ACQ_REL);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void write_end(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_add_fetch(&own->gen, 1, __ATOMIC_ACQ_REL);
}

static void hash_put(uint32_t slot)
{
    const fc_regent_t *e = &own->slot[slot];
    for (uint32_t b = bucket(e->dom_id, e->key);; b = (b + 1) & (REG_HASH - 1)) {
        uint32_t v = own->hash[b];
        if (v == 0 || v == REG_TOMB) {
            if (v == REG_TOMB)
                tombs--;
            own->hash[b] = slot + 1;
            return;
        }
    }
}

static void hash_rebuild(void)
{
    memset(own->hash, 0, sizeof(own->hash));
    tombs = 0;
    for (uint32_t s = 0; s < own->hi; s++)
        if (own->slot[s].state != FC_REG_FREE)
            hash_put(s);
}

int fc_reg_add(const fc_regent_t *e)
{
    if (fc_reg_open() != 0)
        return -1;
    uint32_t s;
    if (free_head != UINT32_MAX) {
        s = free_head;
        free_head = own->slot[s].pad;
    } else if (own->hi < REG_SLOTS) {
        s = own->hi;
    } else {
        return -1;
    }
    write_begin();
    own->slot[s] = *e;
    own->slot[s].pad = 0;
    if (s == own->hi)
        own->hi = s + 1;
    hash_put(s);
    write_end();
    return (int)s;
}

void fc_reg_update(uint32_t slot, const fc_regent_t *e)
{
    if (own == NULL || own_pid != getpid())
        return;
    write_begin();
    own->slot[slot] = *e; /* the key and domain do not change */
    write_end();
}

void fc_reg_remove(uint32_t slot)
{
    if (own == NULL || own_pid != getpid() || slot >= own->hi)
        return;
    write_begin();
    const fc_regent_t *e = &own->slot[slot];
    for (uint32_t b = bucket(e->dom_id, e->key);; b = (b + 1) & (REG_HASH - 1)) {
        uint32_t v = own->hash[b];
        if (v == 0)
            break;
        if (v == slot + 1) {
            own->hash[b] = REG_TOMB;
            tombs++;
            break;
        }
    }
    memset(&own->slot[slot], 0, sizeof(own->slot[slot]));
    own->slot[slot].pad = free_head;
    free_head = slot;
    if (tombs > REG_HASH / 4)
        hash_rebuild();
    write_end();
}

static int find(const reg_file_t *r, uint32_t dom_id, uint64_t key, int by_req, fc_regent_t *out)
{
    if (by_req) {
        for (uint32_t s = 0; s < r->hi && s < REG_SLOTS; s++) {
            const fc_regent_t *e = &r->slot[s];
            if (e->state != FC_REG_FREE && e->dom_id == dom_id && e->req_key == key) {
                *out = *e;
                return 0;
            }
        }
        return -FI_ENOENT;
    }
    for (uint32_t b = bucket(dom_id, key), n = 0; n < REG_HASH; b = (b + 1) & (REG_HASH - 1), n++) {
        uint32_t v = r->hash[b];
        if (v == 0)
            break;
        if (v == REG_TOMB || v > REG_SLOTS)
            continue;
        const fc_regent_t *e = &r->slot[v - 1];
        if (e->state != FC_REG_FREE && e->dom_id == dom_id && e->key == key) {
            *out = *e;
            return 0;
        }
    }
    return -FI_ENOENT;
}

int fc_reg_key_used(uint32_t dom_id, uint64_t key)
{
    fc_regent_t e;
    return own && own_pid == getpid() && find(own, dom_id, key, 0, &e) == 0;
}

static const reg_file_t *peer_map(uint32_t pid, uint64_t nonce)
{
    if (own && own_pid == getpid() && pid == (uint32_t)own_pid)
        return own->nonce == nonce ? own : NULL;
    for (unsigned i = 0; i < PEER_MAPS; i++)
        if (peers[i].map && peers[i].pid == pid && peers[i].nonce == nonce)
            return peers[i].map;
    char p[64];
    path_of((pid_t)pid, p, sizeof(p));
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(reg_file_t))
        m = mmap(NULL, sizeof(reg_file_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    const reg_file_t *r = m;
    if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != REG_MAGIC || r->nonce != nonce) {
        munmap(m, sizeof(reg_file_t)); /* another process of that pid */
        return NULL;
    }
    peer_map_t *slot = &peers[peer_next++ % PEER_MAPS];
    if (slot->map)
        munmap((void *)slot->map, sizeof(reg_file_t));
    *slot = (peer_map_t){.pid = pid, .nonce = nonce, .map = r};
    return r;
}

int fc_reg_lookup(uint32_t pid, uint64_t nonce, uint32_t dom_id, uint64_t key, int by_req,
                  fc_regent_t *out)
{
    const reg_file_t *r = peer_map(pid, nonce);
    if (r == NULL)
        return -FI_EHOSTDOWN;
    for (;;) {
        uint64_t g1 = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
        if (g1 & 1) {
            sched_yield();
            continue;
        }
        int rc = find(r, dom_id, key, by_req, out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&r->gen, __ATOMIC_ACQUIRE) == g1)
            return rc;
    }
}
