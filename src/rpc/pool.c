// SPDX-License-Identifier: BSD-3-Clause
/*
 * The receive pool of an instance: a few large FI_MULTI_RECV buffers (or one
 * buffer per request), each followed by an overflow area of address space.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "core/env.h"
#include "core/log.h"
#include "rpc/rpc.h"

static void rbuf_post(orpc_t *r, rpc_rbuf_t *b)
{
    if (cdt_msg_post_recv(r->ep, b->buf, b->len + r->rbuf_overflow, b->multi, b) == SHM_OK) {
        b->posted = 1;
        r->nposted++;
    }
}

void rpc_rbuf_maybe_repost(orpc_t *r, rpc_rbuf_t *b)
{
    if (!b->posted && b->refs == 0) {
        if (b->overflowed) {
            /* An oversized message wrote behind the buffer: give the pages back. */
            madvise(b->buf + b->len, r->rbuf_overflow, MADV_DONTNEED);
            b->overflowed = 0;
        }
        rbuf_post(r, b);
        r->st.reposts++;
    }
}

/* Did a message reach into the overflow area behind its buffer? */
void rpc_rbuf_note_end(rpc_rbuf_t *b, const void *msg, size_t len)
{
    const char *end = (const char *)msg + len;
    if (msg && (const char *)msg >= b->buf && end > b->buf + b->len)
        b->overflowed = 1;
}

int rpc_pool_init(orpc_t *r)
{
    size_t size;
    int n, multi = r->multi_recv;
    /* No posted buffer is longer than the provider's max_msg_size (fi_msg(3):
     * "valid transfers are from 0 bytes up to the endpoint's max_msg_size",
     * said of the length of a buffer to receive, multi-recv ones not
     * excepted). Where 4 messages do not fit one, one buffer per message. */
    size_t mmax = cdt_msg_max_size(r->ep) & ~(size_t)63;
    if (multi && mmax / 4 < r->msg_max) {
        SHM_INFO(RPC, "provider %s takes buffers of at most %zu bytes: one receive buffer per "
                      "message instead of multi-recv", r->prov, cdt_msg_max_size(r->ep));
        multi = r->multi_recv = 0;
    }
    long bufs = shm_env_g.RPC_RECV_BUFS > 0 ? shm_env_g.RPC_RECV_BUFS : 4;
    if (multi) {
        size = shm_env_g.RPC_RECV_BUF_SIZE;
        if (!r->listen)
            size /= 4;
        n = r->listen ? (int)bufs : 2;
        if (size < 4 * r->msg_max)
            size = 4 * r->msg_max;
    } else {
        size = r->msg_max;
        n = r->listen ? (int)(16 * bufs) : 16;
    }
    /*
     * Each buffer is posted with an overflow area of address space behind it
     * (untouched, so no memory): a message larger than the buffer is then
     * received whole and refused, where it would be cut otherwise, and shm
     * (1.17) spins forever in the receiver on a cut message it moves with
     * process_vm_readv. Requests of a well-behaved client never reach it:
     * multi-recv buffers are released while msg_max still fits before it.
     */
    size = (size + 4095) & ~(size_t)4095;
    if (size > mmax)
        size = mmax; /* at least msg_max: instance.c fit_msg_limits */
    size_t ovf = (shm_env_g.RPC_RECV_OVERFLOW + 4095) & ~(size_t)4095;
    /* A message larger than max_msg_size never comes: no overflow beyond it. */
    if (ovf > ((mmax - size) & ~(size_t)4095))
        ovf = (mmax - size) & ~(size_t)4095;
    r->rbufs = calloc((size_t)n, sizeof(*r->rbufs));
    if (r->rbufs == NULL)
        return ORPC_ENOMEM;
    for (;;) {
        r->rbuf_map_len = (size_t)n * (size + ovf);
        void *m = mmap(NULL, r->rbuf_map_len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
            r->rbuf_mem = m;
            break;
        }
        if (ovf == 0)
            return ORPC_ENOMEM;
        SHM_WARN(RPC, "no address space for %zu receive buffers with %zu bytes of overflow "
                 "each (SHMEM_RPC_RECV_OVERFLOW): none; oversized messages are cut", (size_t)n,
                 ovf);
        ovf = 0;
    }
    r->rbuf_overflow = ovf;
    r->nrbufs = n;
    if (multi && cdt_msg_set_min_multi_recv(r->ep, r->msg_max + ovf) != SHM_OK) {
        shm_error("FI_OPT_MIN_MULTI_RECV refused by provider %s", r->prov);
        return ORPC_EFABRIC;
    }
    for (int i = 0; i < n; i++) {
        rpc_rbuf_t *b = &r->rbufs[i];
        b->kind = RPC_OBJ_RBUF;
        b->buf = r->rbuf_mem + (size_t)i * (size + ovf);
        b->len = size;
        b->multi = multi;
        rbuf_post(r, b);
    }
    return r->nposted == n ? ORPC_OK : ORPC_EFABRIC;
}

void rpc_pool_fini(orpc_t *r)
{
    free(r->rbufs);
    r->rbufs = NULL;
    if (r->rbuf_mem)
        munmap(r->rbuf_mem, r->rbuf_map_len);
    r->rbuf_mem = NULL;
}
