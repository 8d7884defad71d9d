// SPDX-License-Identifier: BSD-3-Clause
/*
 * fabcheck's fi_getinfo under a profile (FABCHECK_PROFILE): the profile's
 * entry comes first, with the contract of its man page, and the real
 * providers' entries after it; hints that do not admit a required bit get
 * no entry (today's ofishmem hints among them); naming a provider selects.
 *
 *   fc_getinfo        the checks
 *   fc_getinfo only   with FI_PROVIDER naming the profile: its entries only
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

static int failures;

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("FAIL: " __VA_ARGS__);                                      \
            printf("\n");                                                      \
            failures++;                                                        \
        }                                                                      \
    } while (0)

typedef struct {
    const char *key, *prov;
    uint64_t mr, mode;
    size_t inject, key_size;
    enum fi_av_type av;
} want_t;

#define BASIC (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
static const want_t wants[] = {
    {"verbs", "verbs;ofi_rxm", BASIC | FI_MR_LOCAL, 0, 16384, 4, FI_AV_UNSPEC},
    {"efa", "efa", BASIC | FI_MR_LOCAL, 0, 4096, 4, FI_AV_TABLE},
    {"cxi", "cxi", FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY, 0, 192, 8, FI_AV_UNSPEC},
    {"psm3", "psm3", 0, FI_CONTEXT, 64, 8, FI_AV_UNSPEC},
    {"opx", "opx", 0, FI_CONTEXT2 | FI_ASYNC_IOV, 16, 2, FI_AV_MAP},
    {"strict", "fabcheck_strict",
     FI_MR_LOCAL | FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_RAW,
     FI_CONTEXT2 | FI_ASYNC_IOV, 0, 24, FI_AV_MAP},
};

/* A correct program's hints: everything admitted. */
static struct fi_info *full_hints(void)
{
    struct fi_info *h = fi_allocinfo();
    h->caps = FI_RMA | FI_ATOMIC | FI_MSG | FI_READ | FI_WRITE | FI_REMOTE_READ |
              FI_REMOTE_WRITE | FI_SEND | FI_RECV | FI_MULTI_RECV | FI_SOURCE;
    h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_ASYNC_IOV;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                              FI_MR_ENDPOINT | FI_MR_RAW;
    return h;
}

/* The hints ofishmem's conduit asks with today (src/conduit/ofi/ofi_init.c). */
static struct fi_info *today_hints(int with_msg)
{
    struct fi_info *h = fi_allocinfo();
    h->caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_ATOMIC;
    if (with_msg)
        h->caps |= FI_MSG | FI_MULTI_RECV | FI_SOURCE;
    h->mode = 0;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    return h;
}

/* Entries of prov in the answer to h; *first: is the first entry prov's. */
static int count_prov(struct fi_info *h, const char *prov, int *first, int *others)
{
    struct fi_info *list = NULL;
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &list);
    fi_freeinfo(h);
    int n = 0;
    *first = 0;
    *others = 0;
    if (rc != 0)
        return 0;
    for (struct fi_info *i = list; i; i = i->next) {
        if (strcmp(i->fabric_attr->prov_name, prov) == 0) {
            n++;
            if (i == list)
                *first = 1;
        } else {
            (*others)++;
        }
    }
    fi_freeinfo(list);
    return n;
}

int main(int argc, char **argv)
{
    const char *key = getenv("FABCHECK_PROFILE");
    const want_t *w = NULL;
    for (size_t i = 0; key && i < sizeof(wants) / sizeof(wants[0]); i++)
        if (strcmp(wants[i].key, key) == 0)
            w = &wants[i];
    if (w == NULL) {
        fprintf(stderr, "fc_getinfo: set FABCHECK_PROFILE to a profile\n");
        return 2;
    }
    int first, others, n;
    if (argc > 1 && strcmp(argv[1], "only") == 0) {
        n = count_prov(full_hints(), w->prov, &first, &others);
        EXPECT(n >= 1 && first && others == 0,
               "FI_PROVIDER=%s: %d entries of it, %d others (want only it)", w->prov, n, others);
        printf("%s: FI_PROVIDER=%s gives its entries only\n", failures ? "FAIL" : "ok", w->prov);
        return failures ? 1 : 0;
    }
    printf("profile provider %s\n", w->prov);

    struct fi_info *list = NULL, *h = full_hints();
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &list);
    fi_freeinfo(h);
    EXPECT(rc == 0 && list, "fi_getinfo with everything admitted: %s", fi_strerror(-rc));
    if (list) {
        struct fi_info *e = list;
        EXPECT(strcmp(e->fabric_attr->prov_name, w->prov) == 0, "first entry is %s, not %s",
               e->fabric_attr->prov_name, w->prov);
        EXPECT((uint64_t)e->domain_attr->mr_mode == w->mr, "mr_mode 0x%x, want 0x%llx",
               e->domain_attr->mr_mode, (unsigned long long)w->mr);
        EXPECT(e->mode == w->mode, "mode 0x%llx, want 0x%llx", (unsigned long long)e->mode,
               (unsigned long long)w->mode);
        EXPECT(e->tx_attr->inject_size == w->inject, "inject_size %zu, want %zu",
               e->tx_attr->inject_size, w->inject);
        EXPECT(e->domain_attr->mr_key_size == w->key_size, "mr_key_size %zu, want %zu",
               e->domain_attr->mr_key_size, w->key_size);
        EXPECT(e->domain_attr->av_type == w->av, "av_type %d, want %d", e->domain_attr->av_type,
               w->av);
        EXPECT(e->domain_attr->data_progress == FI_PROGRESS_MANUAL, "progress %d",
               e->domain_attr->data_progress);
        int tcp = 0;
        for (struct fi_info *i = e->next; i; i = i->next)
            tcp |= strcmp(i->fabric_attr->prov_name, "tcp;ofi_rxm") == 0;
        EXPECT(tcp, "no tcp;ofi_rxm entry after the profile's");
        printf("%s: mr_mode 0x%x mode 0x%llx inject %zu max_msg %zu tx %zu rx %zu iov %zu "
               "rma_iov %zu key %zu auth %zu\n",
               e->fabric_attr->prov_name, e->domain_attr->mr_mode, (unsigned long long)e->mode,
               e->tx_attr->inject_size, e->ep_attr->max_msg_size, e->tx_attr->size,
               e->rx_attr->size, e->tx_attr->iov_limit, e->tx_attr->rma_iov_limit,
               e->domain_attr->mr_key_size, e->domain_attr->auth_key_size);
        fi_freeinfo(list);
    }

    n = count_prov(today_hints(1), w->prov, &first, &others);
    EXPECT(n == 0, "today's ofishmem hints (messages) got %d %s entries", n, w->prov);
    n = count_prov(today_hints(0), w->prov, &first, &others);
    int psm3 = strcmp(w->key, "psm3") == 0; /* FI_CONTEXT only with FI_MSG/FI_TAGGED */
    EXPECT(psm3 ? n >= 1 : n == 0, "today's ofishmem hints (no messages) got %d %s entries", n,
           w->prov);

    h = full_hints();
    h->fabric_attr->prov_name = strdup(w->prov);
    n = count_prov(h, w->prov, &first, &others);
    EXPECT(n >= 1 && first && others == 0, "prov_name %s: %d of it, %d others", w->prov, n, others);
    h = full_hints();
    h->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    n = count_prov(h, w->prov, &first, &others);
    EXPECT(n == 0 && others >= 1, "prov_name tcp;ofi_rxm: %d %s entries", n, w->prov);

    printf("%s: fi_getinfo under %s\n", failures ? "FAIL" : "ok", w->key);
    return failures ? 1 : 0;
}
