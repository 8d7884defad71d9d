// SPDX-License-Identifier: BSD-3-Clause
/*
 * The same-host transport of data services (sq.c): when a client and a
 * server share a host, requests and responses go through a pair of
 * shared-memory rings (sq_ring.h) instead of the provider, and bulk
 * transfers are process_vm_readv/writev into the client.
 *
 * A listening instance offers it in its address ("/sq=HOST.NAME", after
 * max_req): HOST names this boot of this machine, NAME an abstract Unix
 * socket. A client whose HOST matches connects there and hands the server a
 * sealed memfd holding both rings (SCM_RIGHTS, core/unixsock.c); the server
 * answers with the memfd of its doorbell page. Nothing is named in the
 * filesystem or /dev/shm: the memory goes with the last process mapping it.
 * The socket stays open and says when the other end dies: the server's
 * listener thread watches its clients' sockets (no syscall in progress),
 * a waiting client polls its server's now and then.
 *
 * The provider endpoint stays open beside it (bulk descriptors, remote
 * peers, messages too large for a ring, and the fallback when
 * process_vm_readv is refused). SHMEM_RPC_SAME_HOST=0 turns it all off.
 */
#ifndef SHM_RPC_SQ_H
#define SHM_RPC_SQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rpc/sq_ring.h"

struct orpc;
struct orpc_peer;
typedef struct rpc_sq rpc_sq_t;
typedef struct rpc_sq_conn rpc_sq_conn_t;

/* A sleeper's doorbell: the futex word a producer bumps when sleeping is set. */
typedef struct {
    _Alignas(64) uint32_t sleeping;
    uint32_t seq;
    uint8_t pad_[56];
} sq_bell_t;

struct rpc_sq_conn {
    int idx;                /* slot (server) or -1 (client) */
    int state;              /* server slots: SQ_FREE..SQ_CLOSING (atomic) */
    int dead;               /* the other end is gone (atomic) */
    int sock;
    pid_t pid;              /* the other end, for process_vm_* */
    int pidfd;              /* the other end's pidfd (-1: none): says when it has exited */
    int no_pvm;             /* process_vm_* refused: bulk through the provider (client
                             * side: the server said so when it connected us) */
    uint64_t probe;         /* client: the word the server reads to tell */
    struct orpc_peer *peer; /* the peer it carries messages of */
    void *map;
    size_t map_len;
    void *bell_map;         /* client: the server's doorbell page */
    sq_end_t tx, rx;
    sq_bell_t *tx_bell;     /* the consumer of tx sleeps on this */
    sq_bell_t *rx_bell;     /* we sleep on this (server: the instance's) */
    uint64_t next_check_ns; /* client: next liveness check */
};

/* Opens the transport of an instance (server: listener thread). Not
 * available (off, or no memfd/socket here) is not an error: r->sq stays NULL. */
void rpc_sq_open(struct orpc *r);
void rpc_sq_close(struct orpc *r);
/* Appends "/sq=HOST.NAME" to a listening instance's address. */
int rpc_sq_addr_opt(struct orpc *r, char *buf, size_t len);
/* addr offers same-host queues on this host, and they are on here. */
int rpc_sq_addr_local(const char *addr);
/* Client: connects to the server of addr when it is on this host; NULL: use the provider. */
rpc_sq_conn_t *rpc_sq_connect(struct orpc *r, const char *addr, size_t srv_max_req);
/* Client: closes a connection (the server reclaims its side). */
void rpc_sq_disconnect(struct orpc *r, rpc_sq_conn_t *c);

/* Sends a message (hdr then pay): 0, 1 (ring full for now), -1 (too large for
 * the ring: use the provider), -2 (the other end is gone). */
int rpc_sq_send(rpc_sq_conn_t *c, const void *hdr, size_t hl, const void *pay, size_t len);
/* Delivers the messages waiting in every connection's ring (rpc_sq_msg). */
int rpc_sq_poll(struct orpc *r);
/* Client: notices servers that died (rate-limited; a syscall per connection). */
void rpc_sq_check(struct orpc *r);
/* Sleeps up to ns or until a message comes (c: the connection waited on, or
 * NULL: any, server side). */
void rpc_sq_sleep(struct orpc *r, rpc_sq_conn_t *c, long ns);

/* Copies between our buffer and the client's memory: ORPC_OK, ORPC_ENOSYS
 * (not allowed here: use the provider), ORPC_EPEER, ORPC_EFABRIC. */
int rpc_sq_bulk(rpc_sq_conn_t *c, int is_get, void *local, uint64_t remote, size_t len);
/* The same for n pairs of pieces (local[i] and remote[i] of equal lengths),
 * in as few process_vm_* calls as the kernel allows; the arrays are used up. */
struct iovec;
int rpc_sq_bulkv(rpc_sq_conn_t *c, int is_get, struct iovec *local, struct iovec *remote, int n);

/* Client: the server copies this connection's bulk data itself
 * (process_vm_*), so exposures sent over it need no provider registration. */
static inline int rpc_sq_copies(const rpc_sq_conn_t *c)
{
    return c != NULL && !c->no_pvm && !__atomic_load_n(&c->dead, __ATOMIC_RELAXED);
}

/* Connections live now (the stats' samehost_live). */
int rpc_sq_nconns(const struct orpc *r);

/* Provided by the RPC core: a message from a connection, and a lost connection. */
void rpc_sq_msg(struct orpc *r, rpc_sq_conn_t *c, const void *msg, size_t len);
void rpc_sq_lost(struct orpc *r, rpc_sq_conn_t *c);

#endif /* SHM_RPC_SQ_H */
