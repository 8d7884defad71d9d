/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ofishmem_rpc.h
 * Data services on ofishmem: remote procedure calls with one-sided bulk
 * transfers, on the same libfabric RMA engine that carries shmem_put.
 *
 * The pattern is Mercury's and Nessie's. A server opens an instance with
 * `listen` set, registers handlers by name and publishes its address (a
 * printable string). A client opens an instance, looks the server up from
 * that string and calls handlers; arguments and results are opaque bytes.
 * Large data does not travel in the request: the client exposes a buffer as
 * a bulk descriptor, puts the descriptor into the arguments, and the server
 * pulls (orpc_bulk_get) or pushes (orpc_bulk_put) any part of it with RMA
 * before it responds.
 *
 * Clients are ordinary processes (no launcher, no PMIx) and may also be
 * SHMEM PEs: then symmetric-heap memory is exposed without a new
 * registration. Every request carries the service's auth key; every bulk
 * descriptor carries a deadline and a tag the server checks.
 *
 * Threads: an instance is driven by whoever calls orpc_progress / orpc_wait
 * (handlers run there), or by its own progress thread (option
 * `progress_thread`); handlers registered with ORPC_HANDLER_QUEUED are
 * instead handed to the application through orpc_run_queued.
 *
 * Same host: a client on the server's host (its address ends with
 * "/sq=HOST.NAME") sends calls and gets responses through shared-memory
 * queues, and the server's bulk transfers are process_vm_readv/writev,
 * instead of the provider; SHMEM_RPC_SAME_HOST=0 on either side turns that
 * off (docs/DATA_SERVICES.md).
 *
 * Configuration comes from SHMEM_RPC_* environment variables (docs/ENV.md);
 * the fields of orpc_opts_t override them.
 *
 * Provider notes (libfabric 1.17): on tcp;ofi_rxm a client must drive
 * progress (orpc_wait/orpc_test/orpc_progress, or the progress thread, option
 * `progress_thread`) for a server's pulls and pushes to move. A client
 * instance opens its endpoint without rxm's shared receive context (the
 * library sets FI_OFI_RXM_USE_SRX=0 unless the environment says otherwise:
 * an endpoint then costs ~3 ms instead of ~280 ms). A server's resident memory there grows by ~6.5 kB per client
 * that comes and goes until rxm's 12 MiB receive-buffer pool is all
 * resident (~2000 clients), then stays flat; FI_OFI_RXM_MSG_RX_SIZE=16
 * (receive buffers rxm posts per connection, default 128) slows that 5x.
 *
 * Sizes: arguments and results of any size up to SHMEM_RPC_MAX_ARG (1 GiB)
 * travel the same way for handler and caller. Up to the eager limits
 * (SHMEM_RPC_MAX_REQ for arguments, as the server advertises it in its
 * address ".../max_req=N"; SHMEM_RPC_MAX_RESP for results) they are copied
 * into the messages. Above them the library moves the bytes with its own
 * bulk transfer (two-phase): the client exposes the arguments and the
 * server pulls them before the handler runs (holding at most
 * SHMEM_RPC_ARG_MEM bytes of them at once, else ORPC_EBUSY); the client
 * exposes a result buffer larger than SHMEM_RPC_MAX_RESP and the server
 * pushes a large result into it before it answers. Both exposures follow
 * the deadline rule of bulk descriptors (ttl = the call's timeout). A result
 * larger than the eager limit for a call whose out_cap is within it is
 * answered ORPC_ERANGE. A message that exceeds a server's receive buffer
 * anyway lands whole in address space reserved behind it
 * (SHMEM_RPC_RECV_OVERFLOW) and is refused. Only one larger than buffer +
 * overflow is cut by the provider, which shm (libfabric 1.17) does not
 * survive: its receiver then spins forever.
 */
#ifndef OFISHMEM_RPC_H
#define OFISHMEM_RPC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ORPC_API __attribute__((visibility("default")))
#else
#define ORPC_API
#endif

/** Version of the wire format (requests, responses, contiguous bulk
 *  descriptors; scatter-gather and strided descriptors are version 2). */
#define ORPC_WIRE_VERSION 1

/** Return codes: ORPC_OK or a negative ORPC_E*. Handlers' own statuses
 * travel unchanged, so keep them >= 0 or use these codes. */
#define ORPC_OK 0
#define ORPC_EINVAL (-1)    /**< invalid argument */
#define ORPC_ENOMEM (-2)    /**< out of memory */
#define ORPC_EFABRIC (-3)   /**< network failure */
#define ORPC_ETIMEDOUT (-4) /**< no response within the call's timeout */
#define ORPC_EAGAIN (-5)    /**< not complete yet (orpc_test) */
#define ORPC_ENOENT (-6)    /**< no handler with that id on the server */
#define ORPC_EAUTH (-7)     /**< auth key or descriptor tag wrong */
#define ORPC_EPROTO (-8)    /**< malformed message */
#define ORPC_ERANGE (-9)    /**< outside a bulk descriptor, or too large */
#define ORPC_EPERM (-10)    /**< bulk access not granted, or not the owner */
#define ORPC_EEXPIRED (-11) /**< bulk descriptor past its deadline */
#define ORPC_EBUSY (-12)    /**< server out of request slots */
#define ORPC_EPEER (-13)    /**< peer unreachable or gone */
#define ORPC_EADDR (-14)    /**< not an address string of ours */
#define ORPC_ENOSYS (-15)   /**< not supported here */

/** Text for an ORPC_* code. */
ORPC_API const char *orpc_strerror(int rc);

typedef struct orpc orpc_t;           /**< an endpoint: server, client or both */
typedef struct orpc_peer orpc_peer_t; /**< a server looked up by a client */
typedef struct orpc_req orpc_req_t;   /**< a client's call in flight */
typedef struct orpc_call orpc_call_t; /**< a request being served */
typedef struct orpc_bulk orpc_bulk_t; /**< a client buffer exposed for bulk access */

/** Options of orpc_open. orpc_opts_init fills "from the environment". */
typedef struct {
    int listen;                /**< serve requests (needs an auth key) */
    const char *provider;      /**< NULL: SHMEM_RPC_PROVIDER, the PE's, FI_PROVIDER, "shm" */
    const char *auth_key_file; /**< listen: write the new key here, mode 0600 (NULL:
                                    SHMEM_RPC_AUTH_FILE; with neither, SHMEM_RPC_AUTH_KEY
                                    or a file in /tmp, see orpc_auth_file) */
    int progress_thread;       /**< -1: SHMEM_RPC_PROGRESS_THREAD */
    int multi_recv;            /**< -1: SHMEM_RPC_MULTI_RECV (0: one buffer per request) */
    int mr_cache;              /**< -1: SHMEM_RPC_MR_CACHE */
    int contexts;              /**< listen: service contexts, 1..16 (0: SHMEM_RPC_CONTEXTS) */
} orpc_opts_t;

/** Sets every option to "from the environment". */
ORPC_API void orpc_opts_init(orpc_opts_t *opts);

/**
 * Opens an instance. A listening one opens its endpoint at once; a client
 * opens it at its first orpc_lookup, on the server's provider.
 * @param opts NULL: all from the environment.
 */
ORPC_API int orpc_open(const orpc_opts_t *opts, orpc_t **rpc_p);
/** Closes an instance: says goodbye to servers, waits out bulk deadlines. */
ORPC_API int orpc_close(orpc_t *rpc);

/**
 * The instance's address, e.g. "orpc://shm/66695f..." or
 * "orpc://tcp,ofi_rxm/0200.../max_req=65536": printable, no shell quoting
 * needed. A server's address ends with its request limit.
 * A server with several contexts appends "/ctx=NAME1[.Q1],NAME2[.Q2],..."
 * (the other contexts' endpoint names and same-host queue sets).
 * @param len at least ORPC_ADDR_STRLEN.
 */
ORPC_API int orpc_addr(orpc_t *rpc, char *buf, size_t len);
#define ORPC_ADDR_STRLEN 4096

/** Path of the auth key file this server wrote ("" when the key came from the env). */
ORPC_API const char *orpc_auth_file(orpc_t *rpc);

/** Stable 64-bit id of a handler name (FNV-1a). */
ORPC_API uint64_t orpc_id(const char *name);

/**
 * A handler. `in` stays valid until orpc_respond. It must call
 * orpc_respond exactly once, before returning or later (from the thread
 * that drives the instance).
 */
typedef void (*orpc_handler_t)(orpc_call_t *call, const void *in, size_t in_len, void *arg);

/** Handler flag: hand calls to the application (orpc_run_queued). */
#define ORPC_HANDLER_QUEUED 0x1

/** Registers a handler under orpc_id(name); *id_p gets the id (may be NULL). */
ORPC_API int orpc_register(orpc_t *rpc, const char *name, orpc_handler_t fn, void *arg,
                           unsigned flags, uint64_t *id_p);

/**
 * Answers a call with a status and out_len bytes (any size up to
 * SHMEM_RPC_MAX_ARG; above the eager limit the result is pushed into the
 * caller's buffer before this returns, cut to its out_cap).
 */
ORPC_API int orpc_respond(orpc_call_t *call, int status, const void *out, size_t out_len);

/** The instance a call arrived on. */
ORPC_API orpc_t *orpc_call_rpc(orpc_call_t *call);

/**
 * Looks a server up.
 * @param addr its address string.
 * @param auth its key as hex, "@PATH" to read it from a file, or NULL for
 *             SHMEM_RPC_AUTH_KEY / SHMEM_RPC_AUTH_FILE.
 */
ORPC_API int orpc_lookup(orpc_t *rpc, const char *addr, const char *auth, orpc_peer_t **peer_p);
/** Forgets a server (tells it, so it frees what it keeps for us). */
ORPC_API int orpc_peer_release(orpc_peer_t *peer);

/**
 * Starts a call. `in` must stay valid until the call completes when
 * in_len is above 1 KiB (smaller arguments are copied). The response's
 * payload lands in out (at most out_cap bytes). Above the eager limits the
 * server pulls `in` and pushes into `out` (see "Sizes" above): after a
 * timeout they stay registered until twice the timeout, and the server may
 * read `in` until then.
 * @param timeout_ms < 0: SHMEM_RPC_TIMEOUT.
 */
ORPC_API int orpc_icall(orpc_t *rpc, orpc_peer_t *peer, uint64_t id, const void *in,
                        size_t in_len, void *out, size_t out_cap, int timeout_ms,
                        orpc_req_t **req_p);
/**
 * Waits for a call: returns the server's status (or ORPC_ETIMEDOUT,
 * ORPC_EPEER...); *out_len_p gets the payload's full length (may exceed
 * out_cap: then it was cut). The request handle is gone afterwards.
 */
ORPC_API int orpc_wait(orpc_req_t *req, size_t *out_len_p);
/** Like orpc_wait without waiting: ORPC_EAGAIN while the call is in flight. */
ORPC_API int orpc_test(orpc_req_t *req, size_t *out_len_p);
/**
 * Gives up on a call in flight: the handle is gone, a late answer is
 * dropped. Its exposures (and descriptors the application encoded before)
 * follow the deadline rule: kept registered until twice the timeout.
 */
ORPC_API int orpc_cancel(orpc_req_t *req);
/**
 * A one-way call: the handler runs (its orpc_respond sends nothing) and no
 * answer comes back. Returns once `in` may be reused; arguments are limited
 * to the eager limit (SHMEM_RPC_MAX_REQ of the server), else ORPC_ERANGE.
 */
ORPC_API int orpc_send(orpc_t *rpc, orpc_peer_t *peer, uint64_t id, const void *in,
                       size_t in_len);
/** orpc_icall + orpc_wait. */
ORPC_API int orpc_call(orpc_t *rpc, orpc_peer_t *peer, uint64_t id, const void *in,
                       size_t in_len, void *out, size_t out_cap, size_t *out_len_p,
                       int timeout_ms);

/**
 * Drives the network and runs ready handlers, for up to timeout_ms
 * (0: once, no waiting). Returns how many events it handled, or an error.
 */
ORPC_API int orpc_progress(orpc_t *rpc, int timeout_ms);
/** Runs up to max queued handlers (ORPC_HANDLER_QUEUED), waiting up to timeout_ms. */
ORPC_API int orpc_run_queued(orpc_t *rpc, int max, int timeout_ms);

/* ------------------------------------------------------ service contexts */

/**
 * A server opened with opts.contexts = N > 1 (or SHMEM_RPC_CONTEXTS=N) has N
 * service contexts behind its one address: each its own endpoint and
 * completion queue, its own receive buffers, its own same-host queue set,
 * lock and (option progress_thread) progress thread, so N threads serve at
 * once. Handlers registered on the instance serve every context; a handler
 * runs on the thread that drives its context. orpc_progress and
 * orpc_run_queued on the instance drive every context in turn;
 * orpc_progress_context drives one (one application thread per context).
 * orpc_stats sums the contexts. A client spreads its calls over a server's
 * contexts round robin, or by key (orpc_peer_key).
 */
/** Number of service contexts of an instance (1 for a client). */
ORPC_API int orpc_contexts(orpc_t *rpc);
/** orpc_progress for context ctx (0..orpc_contexts-1) only. */
ORPC_API int orpc_progress_context(orpc_t *rpc, int ctx, int timeout_ms);
/** The context (0..N-1) a call arrived on, for its handler. */
ORPC_API int orpc_call_context(orpc_call_t *call);
/** Number of contexts of a server looked up (1 for a one-context server). */
ORPC_API int orpc_peer_contexts(orpc_peer_t *peer);
/**
 * The peer handle of the context that calls with this key go to: the same
 * key always names the same context (a hash of the key modulo their number),
 * so calls made through it keep their order per key. Usable with every call
 * and bulk function; valid as long as `peer` is (never released itself).
 * Calls through `peer` itself go round robin.
 */
ORPC_API orpc_peer_t *orpc_peer_key(orpc_peer_t *peer, uint64_t key);
/**
 * Joins the addresses of n servers that share one auth key (e.g. every PE
 * of a SHMEM job, each a server with its contexts) into one address naming
 * all their contexts (at most 64): a client that looks it up spreads its
 * calls over every context of every server as over one server's. The
 * request limit is the smallest of theirs. All on one provider, else
 * ORPC_EADDR; ORPC_ERANGE when buf (ORPC_ADDR_STRLEN is enough) is short.
 */
ORPC_API int orpc_addr_join(const char *const *addrs, int n, char *buf, size_t len);
/** orpc_call through orpc_peer_key(peer, key). */
ORPC_API int orpc_call_key(orpc_t *rpc, orpc_peer_t *peer, uint64_t key, uint64_t id,
                           const void *in, size_t in_len, void *out, size_t out_cap,
                           size_t *out_len_p, int timeout_ms);

/* ------------------------------------------------------ collective calls */

/*
 * A collective call goes to every member of a service and gathers their
 * results into one response (CaRT's collective RPC). The members are the
 * contexts a looked-up address names, in its order (a joined address:
 * every context of every server; orpc_peer_contexts says how many, at most
 * 64). The caller sends one request to a root member; each member forwards
 * it to its children in a k-ary tree over the members, runs the handler,
 * combines its children's results with its own, and answers its parent.
 *
 * How results combine is named where the handler is registered: gathered
 * (orpc_register, or op ORPC_COLL_GATHER: one record per member in member
 * order, read with orpc_coll_next), or reduced (arrays of little-endian
 * int64 summed, or their minimum or maximum, element by element, every
 * member answering the same length; or a combine callback of the server,
 * which must be associative and commutative: the tree decides the order).
 *
 * Failures: a member whose handler answers a negative status, that is not
 * reached, or that does not answer by the call's deadline ends the call
 * with that status (ORPC_EPEER, ORPC_ETIMEDOUT...) and the caller learns
 * which member (opts.failed; the lowest when several). Each level of the
 * tree gives its children 1/4 less time than it got, so a member's silence
 * is reported by its parent before the caller's own deadline. Every hop
 * is an ordinary request: the auth key is checked at each. Arguments and
 * results travel eagerly: arguments plus the address within the members'
 * request limit, each member's combined result within SHMEM_RPC_MAX_RESP
 * (else ORPC_ERANGE).
 */
/** Combination of results (orpc_register_coll). */
#define ORPC_COLL_GATHER 0  /**< records of every member, in member order */
#define ORPC_COLL_SUM_I64 1 /**< int64 arrays summed element by element */
#define ORPC_COLL_MIN_I64 2
#define ORPC_COLL_MAX_I64 3
#define ORPC_COLL_COMBINE 4 /**< the registration's combine callback */
/** Most members of a collective call. */
#define ORPC_COLL_MAX 64

/**
 * A server's combine of a reduction: folds in (in_len bytes, a member's or
 * a subtree's result) into acc (*acc_len bytes, room for acc_cap). Returns
 * 0, or a negative ORPC_E* status that ends the call.
 */
typedef int (*orpc_combine_t)(void *acc, size_t *acc_len, size_t acc_cap, const void *in,
                              size_t in_len, void *arg);

/**
 * orpc_register, naming how results of collective calls to this handler
 * combine (op ORPC_COLL_*; combine and combine_arg for ORPC_COLL_COMBINE).
 * Every member of a service must register it alike.
 */
ORPC_API int orpc_register_coll(orpc_t *rpc, const char *name, orpc_handler_t fn, void *arg,
                                unsigned flags, int op, orpc_combine_t combine,
                                void *combine_arg, uint64_t *id_p);

/** Options of orpc_call_all; orpc_coll_opts_init sets the defaults. */
typedef struct {
    int root;    /**< member that takes the caller's request (default 0) */
    int fanout;  /**< children per member (default 4; 1: a chain; members-1: flat) */
    int failed;  /**< out: the member whose failure ended the call, -1: none */
    int members; /**< out: members of the call */
} orpc_coll_opts_t;
ORPC_API void orpc_coll_opts_init(orpc_coll_opts_t *opts);

/**
 * Calls handler id on every member of peer's service and waits for the
 * combined result (out, as orpc_call). Returns ORPC_OK or the first
 * failure (see above; opts->failed names the member).
 * @param opts NULL: defaults, and no report of the failed member.
 */
ORPC_API int orpc_call_all(orpc_t *rpc, orpc_peer_t *peer, uint64_t id, const void *in,
                           size_t in_len, void *out, size_t out_cap, size_t *out_len_p,
                           int timeout_ms, orpc_coll_opts_t *opts);

/**
 * Reads the next record of a gathered result: returns 1 and sets member,
 * its status (>= 0) and its bytes, with *pos (start at 0) past it; 0 at the
 * end; ORPC_EPROTO when out is not a whole gathered result.
 */
ORPC_API int orpc_coll_next(const void *out, size_t out_len, size_t *pos, int *member,
                            int *status, const void **data, size_t *len);

/** A handler's member number in a collective call (0..members-1), or -1. */
ORPC_API int orpc_call_member(orpc_call_t *call);
/** The members of a collective call (1 and more), or 0 for an ordinary call. */
ORPC_API int orpc_call_members(orpc_call_t *call);

/* ------------------------------------------------------------------ bulk */

#define ORPC_BULK_READ 0x1  /**< the server may pull (orpc_bulk_get) */
#define ORPC_BULK_WRITE 0x2 /**< the server may push (orpc_bulk_put) */
#define ORPC_BULK_RW 0x3
/** Bytes of an encoded bulk descriptor inside arguments. */
#define ORPC_BULK_DESC_SIZE 128

/**
 * Exposes [buf, buf+len) to the servers this instance calls. Symmetric-heap
 * memory of a PE needs no registration; other memory goes through the
 * registration cache (SHMEM_RPC_MR_CACHE).
 * @param ttl_ms how long a server may use it (< 0: SHMEM_RPC_BULK_TTL): the
 *        server refuses it after start + ttl, and the client keeps the
 *        registration until start + 2 x ttl if a call carrying it failed.
 */
ORPC_API int orpc_bulk_expose(orpc_t *rpc, void *buf, size_t len, unsigned access, int ttl_ms,
                              orpc_bulk_t **bulk_p);
/** Writes the descriptor (orpc_bulk_encoded_size bytes: ORPC_BULK_DESC_SIZE
 *  for orpc_bulk_expose) for calls to peer. */
ORPC_API int orpc_bulk_encode(orpc_bulk_t *bulk, orpc_peer_t *peer, void *out);

/*
 * Scatter-gather and strided descriptors. One descriptor covers the logical
 * concatenation of its pieces (segments in list order; rows top to bottom),
 * and every transfer addresses a byte range [off, off+len) of that whole,
 * crossing piece edges freely. The checks are those of a contiguous
 * descriptor (tag over every byte, owner, access, deadline, range).
 * Encoded size: ORPC_BULK_DESC_SIZE + 32 bytes per segment (a list) or + 32
 * bytes (strided), at most ORPC_BULK_WIRE_MAX; orpc_bulk_encoded_size says.
 * A server decodes them with orpc_bulk_decode_n (orpc_bulk_decode reads
 * ORPC_BULK_DESC_SIZE bytes only, and refuses a longer one with ORPC_ERANGE).
 */
/** One piece of a list: len bytes at base (len 0 allowed). */
typedef struct {
    void *base;
    size_t len;
} orpc_seg_t;
/** Most segments in one descriptor (more: ORPC_ERANGE). */
#define ORPC_BULK_SEG_MAX 64
/** Largest encoded descriptor: a list of ORPC_BULK_SEG_MAX segments. */
#define ORPC_BULK_WIRE_MAX (ORPC_BULK_DESC_SIZE + 32 * ORPC_BULK_SEG_MAX)
/**
 * Exposes the concatenation of nseg segments (1..ORPC_BULK_SEG_MAX).
 * Segments may be empty; they may not wrap the address space. Each is
 * registered on its own through the registration cache, except segments
 * lying close together (their span at most 1/8 larger than their sum),
 * which share one registration over the span (the bytes between them are
 * then registered too, at the provider level; the library's checks keep
 * every transfer inside the segments).
 */
ORPC_API int orpc_bulk_expose_sg(orpc_t *rpc, const orpc_seg_t *segs, size_t nseg,
                                 unsigned access, int ttl_ms, orpc_bulk_t **bulk_p);
/**
 * Exposes a block of a 2-D array: rows of row_bytes each, the first at base,
 * the next pitch bytes after the previous (pitch >= row_bytes when rows > 1).
 * Logical length rows x row_bytes. One registration covers the span (the
 * bytes between rows too, at the provider level; the library's checks keep
 * every transfer inside the rows).
 */
ORPC_API int orpc_bulk_expose_strided(orpc_t *rpc, void *base, size_t rows, size_t row_bytes,
                                      size_t pitch, unsigned access, int ttl_ms,
                                      orpc_bulk_t **bulk_p);
/** Bytes orpc_bulk_encode writes for bulk (0 for NULL). */
ORPC_API size_t orpc_bulk_encoded_size(const orpc_bulk_t *bulk);
/**
 * Server: bytes of the descriptor starting at wire, read from its first 16
 * bytes (avail of them readable); 0 when it is not a descriptor or claims
 * more than ORPC_BULK_SEG_MAX segments. Lets arguments carry one in the
 * middle (skip this many bytes after it).
 */
ORPC_API size_t orpc_bulk_wire_size(const void *wire, size_t avail);
/**
 * Releases the buffer. After every call carrying it got its response this
 * is immediate; if one failed without a response it waits (driving
 * progress) until the client deadline, so the buffer is safe to reuse
 * when it returns.
 */
ORPC_API int orpc_bulk_release(orpc_bulk_t *bulk);
/**
 * Drops cached registrations overlapping [buf, buf+len) (before freeing it).
 * ORPC_EAGAIN: part of the range is still exposed (an exposure not yet
 * released, or one kept until its client deadline), registered or not.
 */
ORPC_API int orpc_mr_cache_evict(orpc_t *rpc, const void *buf, size_t len);

/** A bulk descriptor as a server sees it, after checks (orpc_bulk_decode). */
typedef struct {
    uint64_t addr;       /**< client's address of the first byte (for logs) */
    uint64_t len;        /**< bytes exposed */
    uint64_t key;        /**< registration key */
    uint64_t rbase;      /**< remote address of the first byte for RMA */
    uint64_t deadline;   /**< server's deadline, CLOCK_MONOTONIC ns */
    unsigned access;     /**< ORPC_BULK_READ / ORPC_BULK_WRITE */
    unsigned owner_len;
    unsigned char owner[64]; /**< owner's raw address */
    /* Scatter-gather (orpc_bulk_decode_n): len above is the logical length. */
    unsigned kind;       /**< ORPC_BULK_CONTIG, ORPC_BULK_LIST, ORPC_BULK_STRIDED */
    unsigned nseg;       /**< LIST: segments used in seg[] */
    uint64_t rows, row_bytes, pitch; /**< STRIDED: the shape (addr/key/rbase: first row) */
    struct {
        uint64_t addr, len, key, rbase;
    } seg[ORPC_BULK_SEG_MAX]; /**< LIST: each segment as addr/len/key/rbase above */
} orpc_bulk_desc_t;
#define ORPC_BULK_CONTIG 0
#define ORPC_BULK_LIST 1
#define ORPC_BULK_STRIDED 2

/**
 * Decodes and checks a descriptor from a request: tag (made with the
 * service's key), owner (must be the caller), access bits, range. Refusals
 * are counted in the stats.
 */
ORPC_API int orpc_bulk_decode(orpc_call_t *call, const void *wire, orpc_bulk_desc_t *desc);
/**
 * The same for a descriptor of any kind, of at most avail bytes at wire
 * (fewer than it needs: ORPC_ERANGE; more than ORPC_BULK_SEG_MAX segments:
 * ORPC_ERANGE; a shape that disagrees with its length: ORPC_EPROTO).
 */
ORPC_API int orpc_bulk_decode_n(orpc_call_t *call, const void *wire, size_t avail,
                                orpc_bulk_desc_t *desc);
/**
 * Pulls [off, off+len) of the descriptor into dst; blocking. Refused
 * (ORPC_ERANGE/ORPC_EPERM/ORPC_EEXPIRED) unless inside the descriptor,
 * allowed by its access bits and before its deadline.
 */
ORPC_API int orpc_bulk_get(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                           void *dst, size_t len);
/** Pushes src to [off, off+len) of the descriptor; blocking. */
ORPC_API int orpc_bulk_put(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                           const void *src, size_t len);
/** Non-blocking forms: many may be in flight; orpc_bulk_wait completes them. */
ORPC_API int orpc_bulk_iget(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                            void *dst, size_t len);
ORPC_API int orpc_bulk_iput(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                            const void *src, size_t len);
/**
 * List forms: transfer [off, off + total of the local segments) of the
 * descriptor between it and nlocal local segments, in order (a remote list
 * to a local list). Checked like the forms above; many may be in flight.
 */
ORPC_API int orpc_bulk_getv(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                            const orpc_seg_t *dst, size_t ndst);
ORPC_API int orpc_bulk_putv(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                            const orpc_seg_t *src, size_t nsrc);
ORPC_API int orpc_bulk_igetv(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                             const orpc_seg_t *dst, size_t ndst);
ORPC_API int orpc_bulk_iputv(orpc_call_t *call, const orpc_bulk_desc_t *desc, size_t off,
                             const orpc_seg_t *src, size_t nsrc);
/** Waits for every transfer the call issued; returns the first error. */
ORPC_API int orpc_bulk_wait(orpc_call_t *call);
/**
 * Like orpc_bulk_wait without waiting: ORPC_EAGAIN while transfers are in
 * flight. Lets a server keep many calls' transfers going and answer each
 * when its data is in (drive orpc_progress meanwhile).
 */
ORPC_API int orpc_bulk_test(orpc_call_t *call);

/* ----------------------------------------------------------------- stats */

/** Counters of an instance (server and client sides). */
typedef struct {
    uint64_t requests;       /**< requests accepted for dispatch */
    uint64_t responses;      /**< responses sent */
    uint64_t calls;          /**< client calls completed with a response */
    uint64_t rejected_auth;  /**< requests without the right key (dropped) */
    uint64_t malformed;      /**< undecodable requests (dropped or answered EPROTO) */
    uint64_t oversized;      /**< requests above SHMEM_RPC_MAX_REQ (answered ORPC_ERANGE) */
    uint64_t truncated;      /**< messages the provider cut (larger than buffer + overflow) */
    uint64_t no_handler;     /**< requests for an unknown id (answered ENOENT) */
    uint64_t busy;           /**< requests refused for lack of slots */
    uint64_t copied;         /**< requests copied out of the last receive buffer */
    uint64_t reposts;        /**< receive buffers posted again */
    uint64_t bulk_refused;   /**< bulk descriptors or transfers refused by checks */
    uint64_t bulk_errors;    /**< transfers that failed in the network */
    uint64_t bulk_bytes;     /**< bytes pulled and pushed */
    uint64_t late_responses; /**< responses for calls that had timed out */
    uint64_t peers_live;     /**< peers known now */
    uint64_t peers_reclaimed;/**< peers forgotten (goodbye, idle, failure) */
    uint64_t calls_live;     /**< requests being served now */
    uint64_t mr_cache_hits;
    uint64_t mr_cache_misses;
    uint64_t mr_live;        /**< registrations held now (cache included) */
    uint64_t samehost_live;  /**< same-host connections now (shared-memory queues) */
} orpc_stats_t;

/** Counters of an instance (with service contexts: their sums). */
ORPC_API int orpc_stats(orpc_t *rpc, orpc_stats_t *stats);
/** orpc_stats of service context ctx only. */
ORPC_API int orpc_context_stats(orpc_t *rpc, int ctx, orpc_stats_t *stats);

/* ------------------------------------------------ argument encode/decode */

/** Writer of little-endian fixed-size fields; err is set on overflow. */
typedef struct {
    unsigned char *p;
    size_t cap, pos;
    int err;
} orpc_enc_t;

/** Reader of the same; err is set on a short buffer (values read as 0). */
typedef struct {
    const unsigned char *p;
    size_t len, pos;
    int err;
} orpc_dec_t;

static inline void orpc_enc_init(orpc_enc_t *e, void *buf, size_t cap)
{
    e->p = (unsigned char *)buf;
    e->cap = cap;
    e->pos = 0;
    e->err = 0;
}

static inline void orpc_enc_uint(orpc_enc_t *e, uint64_t v, unsigned bytes)
{
    if (e->err || e->cap - e->pos < bytes) {
        e->err = 1;
        return;
    }
    for (unsigned i = 0; i < bytes; i++)
        e->p[e->pos++] = (unsigned char)(v >> (8 * i));
}

static inline void orpc_enc_u8(orpc_enc_t *e, uint8_t v) { orpc_enc_uint(e, v, 1); }
static inline void orpc_enc_u16(orpc_enc_t *e, uint16_t v) { orpc_enc_uint(e, v, 2); }
static inline void orpc_enc_u32(orpc_enc_t *e, uint32_t v) { orpc_enc_uint(e, v, 4); }
static inline void orpc_enc_u64(orpc_enc_t *e, uint64_t v) { orpc_enc_uint(e, v, 8); }
static inline void orpc_enc_i64(orpc_enc_t *e, int64_t v) { orpc_enc_uint(e, (uint64_t)v, 8); }

static inline void orpc_enc_bytes(orpc_enc_t *e, const void *src, size_t n)
{
    if (e->err || e->cap - e->pos < n) {
        e->err = 1;
        return;
    }
    if (n)
        memcpy(e->p + e->pos, src, n);
    e->pos += n;
}

/** Reserves n bytes and returns where they are (NULL on overflow). */
static inline void *orpc_enc_reserve(orpc_enc_t *e, size_t n)
{
    if (e->err || e->cap - e->pos < n) {
        e->err = 1;
        return NULL;
    }
    void *r = e->p + e->pos;
    e->pos += n;
    return r;
}

static inline void orpc_dec_init(orpc_dec_t *d, const void *buf, size_t len)
{
    d->p = (const unsigned char *)buf;
    d->len = len;
    d->pos = 0;
    d->err = 0;
}

static inline uint64_t orpc_dec_uint(orpc_dec_t *d, unsigned bytes)
{
    if (d->err || d->len - d->pos < bytes) {
        d->err = 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)d->p[d->pos++] << (8 * i);
    return v;
}

static inline uint8_t orpc_dec_u8(orpc_dec_t *d) { return (uint8_t)orpc_dec_uint(d, 1); }
static inline uint16_t orpc_dec_u16(orpc_dec_t *d) { return (uint16_t)orpc_dec_uint(d, 2); }
static inline uint32_t orpc_dec_u32(orpc_dec_t *d) { return (uint32_t)orpc_dec_uint(d, 4); }
static inline uint64_t orpc_dec_u64(orpc_dec_t *d) { return orpc_dec_uint(d, 8); }
static inline int64_t orpc_dec_i64(orpc_dec_t *d) { return (int64_t)orpc_dec_uint(d, 8); }

/** Returns a pointer to the next n bytes (NULL and err set if short). */
static inline const void *orpc_dec_bytes(orpc_dec_t *d, size_t n)
{
    if (d->err || d->len - d->pos < n) {
        d->err = 1;
        return NULL;
    }
    const void *r = d->p + d->pos;
    d->pos += n;
    return r;
}

#ifdef __cplusplus
}
#endif

#endif /* OFISHMEM_RPC_H */
