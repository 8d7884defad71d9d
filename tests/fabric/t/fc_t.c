// SPDX-License-Identifier: BSD-3-Clause
/* Helpers of fabcheck's own tests (fc_t.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fc_t.h"

const char *t_prog = "fc_rules";
static int t_role_g = -1;

const char *t_role_name(void)
{
    return t_role_g == 0 ? "origin" : t_role_g == 1 ? "target" : "main";
}

void t_die(void)
{
    exit(3); /* exit, not _exit: the library's registry goes with atexit */
}

void t_send(t_ctx_t *t, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(t->sock, c, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            fprintf(stderr, "%s[%s]: the other process is gone (write)\n", t_prog,
                    t_role_name());
            t_die();
        }
        c += w;
        n -= (size_t)w;
    }
}

void t_recv(t_ctx_t *t, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(t->sock, c, n);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            fprintf(stderr, "%s[%s]: the other process is gone (read)\n", t_prog,
                    t_role_name());
            t_die();
        }
        c += r;
        n -= (size_t)r;
    }
}

struct fi_info *t_hints(void)
{
    struct fi_info *h = fi_allocinfo();
    h->caps = FI_RMA | FI_ATOMIC | FI_MSG | FI_TAGGED | FI_READ | FI_WRITE | FI_REMOTE_READ |
              FI_REMOTE_WRITE | FI_SEND | FI_RECV | FI_MULTI_RECV | FI_SOURCE;
    h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_ASYNC_IOV;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                              FI_MR_ENDPOINT | FI_MR_RAW;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    const char *prov = getenv("FC_T_PROV");
    const char *profile = getenv("FABCHECK_PROFILE");
    if (prov && *prov)
        h->fabric_attr->prov_name = strdup(prov);
    else if (profile == NULL || *profile == '\0' || strcmp(profile, "none") == 0)
        h->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    return h;
}

void *t_ctx(t_ctx_t *t)
{
    if (t->ctx_again && t->nctx > 0)
        return &t->ctx[t->nctx - 1]; /* a retried post: the operation never started */
    if (t->nctx == T_NCTX) {
        fprintf(stderr, "%s[%s]: out of contexts\n", t_prog, t_role_name());
        t_die();
    }
    return &t->ctx[t->nctx++];
}

int t_open(t_ctx_t *t, const t_opts_t *o)
{
    static const t_opts_t none;
    if (o == NULL)
        o = &none;
    t_role_g = t->role;
    struct fi_info *h = t_hints(), *list = NULL;
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &list);
    fi_freeinfo(h);
    if (rc != 0)
        return rc;
    t->info = fi_dupinfo(list);
    fi_freeinfo(list);
    t->info->next = NULL;
    t->mr_mode = (uint64_t)t->info->domain_attr->mr_mode;
    t->mode = t->info->mode;
    /* An authorization key where the provider takes one: a job's. */
    size_t ks = t->info->domain_attr->auth_key_size;
    if (ks && ks <= sizeof(t->auth) && !o->no_auth) {
        memset(t->auth, o->auth_byte ? o->auth_byte : 0x42, ks);
        t->auth_len = ks;
        t->info->domain_attr->auth_key = malloc(ks);
        memcpy(t->info->domain_attr->auth_key, t->auth, ks);
    } else {
        t->info->domain_attr->auth_key_size = 0;
        t->info->ep_attr->auth_key_size = 0;
    }
    if ((rc = fi_fabric(t->info->fabric_attr, &t->fab, NULL)) != 0)
        return rc;
    if ((rc = fi_domain(t->fab, t->info, &t->dom, NULL)) != 0)
        return rc;
    struct fi_av_attr aa = {.type = FI_AV_UNSPEC};
    struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
    struct fi_cntr_attr na = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    struct fi_cntr_attr wa = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC};
    T_CHECK(fi_av_open(t->dom, &aa, &t->av, NULL));
    T_CHECK(fi_cq_open(t->dom, &ca, &t->cq, NULL));
    T_CHECK(fi_cntr_open(t->dom, &wa, &t->wcntr, NULL)); /* fi_cntr_wait on it */
    T_CHECK(fi_cntr_open(t->dom, &na, &t->rcntr, NULL)); /* polled */
    T_CHECK(fi_endpoint(t->dom, t->info, &t->ep, NULL));
    T_CHECK(fi_ep_bind(t->ep, &t->av->fid, 0));
    T_CHECK(fi_ep_bind(t->ep, &t->cq->fid,
                       FI_TRANSMIT | FI_RECV | (o->selective ? FI_SELECTIVE_COMPLETION : 0)));
    T_CHECK(fi_ep_bind(t->ep, &t->wcntr->fid, FI_WRITE));
    T_CHECK(fi_ep_bind(t->ep, &t->rcntr->fid, FI_READ));
    if (!o->no_enable)
        T_CHECK(fi_enable(t->ep));
    return 0;
}

struct fid_mr *t_reg_buf(t_ctx_t *t, void *buf, size_t len, uint64_t access, int enable)
{
    struct fid_mr *mr = NULL;
    /* A requested key that fits the smallest mr_key_size (opx: 2 bytes). */
    static uint64_t next_key = 0x100;
    uint64_t key = next_key++;
    int rc;
    while ((rc = fi_mr_reg(t->dom, buf, len, access, 0, key, 0, &mr, NULL)) == -FI_ENOKEY)
        key = next_key++;
    T_CHECK(rc);
    if (enable && (t->mr_mode & FI_MR_ENDPOINT)) {
        T_CHECK(fi_mr_bind(mr, &t->ep->fid, 0));
        T_CHECK(fi_mr_enable(mr));
    }
    t->req_key = key;
    return mr;
}

int t_reg(t_ctx_t *t, size_t len, uint64_t access, int enable)
{
    t->len = len;
    t->buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->buf == MAP_FAILED)
        return -FI_ENOMEM;
    memset(t->buf, 0, len);
    t->mr = t_reg_buf(t, t->buf, len, access, enable);
    t->desc = fi_mr_desc(t->mr);
    return 0;
}

typedef struct {
    uint32_t namelen;
    uint32_t rawlen;
    uint64_t key, req_key, base, vaddr, len;
    uint8_t name[256];
    uint8_t raw[64];
} card_t;

int t_exchange(t_ctx_t *t)
{
    card_t mine = {0}, theirs;
    size_t nl = sizeof(mine.name);
    T_CHECK(fi_getname(&t->ep->fid, mine.name, &nl));
    mine.namelen = (uint32_t)nl;
    if (t->mr) {
        mine.key = fi_mr_key(t->mr);
        mine.req_key = t->req_key;
        mine.vaddr = (uint64_t)(uintptr_t)t->buf;
        mine.base = (t->mr_mode & FI_MR_VIRT_ADDR) ? mine.vaddr : 0;
        mine.len = t->len;
        if (t->mr_mode & FI_MR_RAW) {
            size_t ks = sizeof(mine.raw);
            uint64_t base = 0;
            T_CHECK(fi_mr_raw_attr(t->mr, &base, mine.raw, &ks, 0));
            mine.rawlen = (uint32_t)ks;
        }
    }
    t_send(t, &mine, sizeof(mine));
    t_recv(t, &theirs, sizeof(theirs));
    int n = fi_av_insert(t->av, theirs.name, 1, &t->peer, 0, NULL);
    if (n != 1) {
        fprintf(stderr, "%s[%s]: fi_av_insert returned %d\n", t_prog, t_role_name(), n);
        t_die();
    }
    t->rbase = theirs.base;
    t->rvaddr = theirs.vaddr;
    t->rreq_key = theirs.req_key;
    t->rlen = theirs.len;
    t->rkey = theirs.key;
    t->rrawlen = theirs.rawlen;
    memcpy(t->rraw, theirs.raw, sizeof(t->rraw));
    if ((t->mr_mode & FI_MR_RAW) && theirs.rawlen)
        T_CHECK(fi_mr_map_raw(t->dom, theirs.vaddr, theirs.raw, theirs.rawlen, &t->rkey, 0));
    return 0;
}

void t_progress(t_ctx_t *t)
{
    (void)fi_cq_read(t->cq, NULL, 0);
    (void)fi_cntr_read(t->wcntr);
}

int t_wait(t_ctx_t *t)
{
    struct fi_cq_data_entry e;
    time_t end = time(NULL) + 10;
    while (time(NULL) < end) {
        ssize_t n = fi_cq_read(t->cq, &e, 1);
        if (n == 1)
            return 0;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(t->cq, &err, 0) == 1)
                return err.err ? err.err : FI_EIO;
        }
    }
    return -1;
}

void t_recv_progress(t_ctx_t *t, void *p, size_t n)
{
    struct pollfd pf = {.fd = t->sock, .events = POLLIN};
    while (poll(&pf, 1, 0) == 0)
        t_progress(t);
    t_recv(t, p, n);
}

void t_serve(t_ctx_t *t)
{
    struct pollfd p = {.fd = t->sock, .events = POLLIN};
    for (;;) {
        t_progress(t);
        if (poll(&p, 1, 0) > 0) {
            char c;
            t_recv(t, &c, 1);
            return;
        }
    }
}

void t_done(t_ctx_t *t)
{
    char c = 'd';
    t_send(t, &c, 1);
}

void t_close(t_ctx_t *t)
{
    if (t->mr)
        fi_close(&t->mr->fid);
    if (t->ep)
        fi_close(&t->ep->fid);
    if (t->wcntr)
        fi_close(&t->wcntr->fid);
    if (t->rcntr)
        fi_close(&t->rcntr->fid);
    if (t->cq)
        fi_close(&t->cq->fid);
    if (t->av)
        fi_close(&t->av->fid);
    if (t->dom)
        fi_close(&t->dom->fid);
    if (t->fab)
        fi_close(&t->fab->fid);
    if (t->info)
        fi_freeinfo(t->info);
    if (t->buf)
        munmap(t->buf, t->len);
    int sock = t->sock, role = t->role;
    memset(t, 0, sizeof(*t));
    t->sock = sock;
    t->role = role;
}
