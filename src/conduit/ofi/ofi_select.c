// SPDX-License-Identifier: BSD-3-Clause
/*
 * Provider choice: what the conduit asks libfabric for, and which of the
 * providers that answer it takes.
 *
 * The request admits every memory-registration and mode bit a current
 * provider may ask for and the conduit honours (CDT_OFI_MR_MODES,
 * CDT_OFI_MODES: docs/PROVIDERS.md says how each is met); a provider keeps
 * set only those it needs, so asking costs nothing where it needs none.
 *
 * Without SHMEM_OFI_PROVIDER or FI_PROVIDER, the providers are taken in
 * libfabric's own order, hardware (NIC) providers first, then shm (on one
 * host only), tcp, sockets; udp and net only when named (ofi_caps.c's class
 * table). No provider is a default by name.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "conduit/ofi/ofi.h"
#include "core/env.h"
#include "core/log.h"
#include "runtime/rt.h"

#define OFI_API FI_VERSION(1, 17)

/* Optional capability sets, tried richest first. */
enum { HINT_ATOMIC = 0x1, HINT_MSG = 0x2 };

static struct fi_info *make_hints(const cdt_config_t *cfg, const char *prov, int want,
                                  enum fi_progress progress)
{
    struct fi_info *h = fi_allocinfo();
    if (h == NULL)
        return NULL;
    h->caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    if (want & HINT_ATOMIC)
        h->caps |= FI_ATOMIC;
    /* Messages let data services (src/rpc) share this domain and its heap MR. */
    if (want & HINT_MSG)
        h->caps |= FI_MSG | FI_MULTI_RECV | FI_SOURCE;
    h->mode = CDT_OFI_MODES;
    h->ep_attr->type = FI_EP_RDM;
    /* shm copies through the kernel only with VIRT_ADDR; others keep what they need. */
    h->domain_attr->mr_mode = CDT_OFI_MR_MODES;
    h->domain_attr->threading = cfg->thread_safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
    h->domain_attr->data_progress = progress;
    h->domain_attr->control_progress = progress;
    /* No ordering asked: asking shm for it turns its fast path off. */
    h->tx_attr->msg_order = 0;
    h->rx_attr->msg_order = 0;
    if (prov && *prov)
        h->fabric_attr->prov_name = strdup(prov);
    if (cfg->domain && *cfg->domain)
        h->domain_attr->name = strdup(cfg->domain);
    return h;
}

/* The richest answer prov gives: manual progress first, then whatever it has. */
static int getinfo_prov(const cdt_config_t *cfg, const char *prov, struct fi_info **info_p)
{
    static const int tries[] = {HINT_ATOMIC | HINT_MSG, HINT_ATOMIC, HINT_MSG, 0};
    static const enum fi_progress progress[] = {FI_PROGRESS_MANUAL, FI_PROGRESS_UNSPEC};
    int rc = -FI_ENODATA;
    for (size_t p = 0; p < 2 && rc != 0; p++)
        for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]) && rc != 0; t++) {
            struct fi_info *h = make_hints(cfg, prov, tries[t], progress[p]);
            if (h == NULL)
                return -FI_ENOMEM;
            rc = fi_getinfo(OFI_API, NULL, NULL, 0, h, info_p);
            fi_freeinfo(h);
        }
    return rc;
}

int cdt_ofi_candidates(int nnodes, cdt_ofi_cand_t *c, int max, int *best_p)
{
    cdt_config_t cfg = {.nnodes = nnodes};
    struct fi_info *h = make_hints(&cfg, NULL, 0, FI_PROGRESS_UNSPEC), *info = NULL;
    int n = 0;
    *best_p = -1;
    if (h == NULL)
        return 0;
    if (fi_getinfo(OFI_API, NULL, NULL, 0, h, &info) != 0)
        info = NULL;
    fi_freeinfo(h);
    for (struct fi_info *i = info; i != NULL && n < max; i = i->next) {
        const char *name = i->fabric_attr->prov_name;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp(c[k].name, name) == 0;
        if (seen || name == NULL)
            continue;
        const cdt_ofi_class_row_t *cl = cdt_ofi_prov_class(name);
        cdt_ofi_cand_t *e = &c[n++];
        snprintf(e->name, sizeof(e->name), "%s", name);
        e->klass = cl->klass;
        e->usable = cl->klass != CDT_OFI_CLASS_AVOID;
        e->why = cl->why;
        if (cl->klass == CDT_OFI_CLASS_HOST && nnodes > 1) {
            e->usable = 0;
            e->why = "same host only: the job spans hosts";
        }
    }
    fi_freeinfo(info);
    int order[CDT_OFI_MAX_CANDS];
    if (cdt_ofi_candidates_order(c, n, order) > 0)
        *best_p = order[0];
    return n;
}

int cdt_ofi_candidates_order(const cdt_ofi_cand_t *c, int n, int *order)
{
    int k = 0;
    /* A stable pass per class keeps libfabric's order within each. */
    for (int cl = CDT_OFI_CLASS_HW; cl < CDT_OFI_CLASS_AVOID; cl++)
        for (int i = 0; i < n; i++)
            if (c[i].usable && c[i].klass == cl)
                order[k++] = i;
    return k;
}

void cdt_ofi_candidates_print(FILE *f, int nnodes, const char *chosen, const char *why)
{
    cdt_ofi_cand_t c[CDT_OFI_MAX_CANDS];
    int best;
    int n = cdt_ofi_candidates(nnodes, c, CDT_OFI_MAX_CANDS, &best);
    int order[CDT_OFI_MAX_CANDS];
    int k = cdt_ofi_candidates_order(c, n, order);
    fprintf(f, "  providers for a job on %s (libfabric's order, preferred first):\n",
            nnodes > 1 ? "several hosts" : "one host");
    for (int j = 0; j < k; j++)
        fprintf(f, "    %d. %-16s %s\n", j + 1, c[order[j]].name, c[order[j]].why);
    for (int i = 0; i < n; i++)
        if (!c[i].usable)
            fprintf(f, "    -  %-16s %s\n", c[i].name, c[i].why);
    if (n == 0)
        fprintf(f, "    (none: libfabric offers no RDM endpoint with RMA)\n");
    if (chosen)
        fprintf(f, "  chosen: %s (%s)\n", chosen, why);
}

/* The message for "nothing usable", with what would help. */
static void no_provider_error(const char *prov, int rc)
{
    struct statvfs sv;
    if (prov && strncmp(prov, "shm", 3) == 0 && statvfs("/dev/shm", &sv) == 0 &&
        (uint64_t)sv.f_bavail * sv.f_frsize < ((uint64_t)64 << 20)) {
        /* libfabric's shm keeps its regions there and offers nothing
         * when it is nearly full (seen with an 8 MiB /dev/shm). */
        shm_error("libfabric's shm provider is not available: /dev/shm has only %llu KiB "
                  "free (it keeps its regions there); give the host or container more "
                  "(e.g. docker --shm-size=1g) or use SHMEM_OFI_PROVIDER='tcp;ofi_rxm'",
                  (unsigned long long)sv.f_bavail * sv.f_frsize / 1024);
        return;
    }
    if (prov)
        shm_error("no libfabric provider '%s' with RDM endpoints and RMA (fi_getinfo: %s); "
                  "set SHMEM_OFI_PROVIDER to one that `fi_info` lists (osh_info shows the "
                  "candidates)",
                  prov, fi_strerror(-rc));
    else
        shm_error("no libfabric provider offers RDM endpoints with RMA for this job (%s); "
                  "`osh_info` lists what libfabric offers, SHMEM_OFI_PROVIDER names one",
                  fi_strerror(-rc));
}

/*
 * rxm's receive buffers, where the user set nothing. Its shared receive
 * context (the default endpoint's) posts FI_OFI_RXM_MSG_RX_SIZE buffers of
 * FI_OFI_RXM_BUFFER_SIZE, 4096 x 16 KiB when the size is unset: ~64 MB
 * touched per PE and ~0.3 s of CPU to open, which 64-128 PEs sharing a few
 * cores paid all at once (registration+endpoint 11 s mean at 64 PEs here).
 * That endpoint carries RMA and rxm's emulated atomics; the shared buffers
 * are reposted as they are consumed, so 128 serve every peer. 128 is also
 * rxm's own size for an endpoint without the shared context (contexts after
 * the default one, RPC clients): those are unchanged. rxm reads the value
 * once, when libfabric loads its providers (the first fi_getinfo of the
 * process), so it is set before any and holds for the whole process, an RPC
 * server's shared context included; other providers do not read it.
 */
#define OFI_RXM_MSG_RX "128"

shm_status_t cdt_ofi_choose_provider(const cdt_config_t *cfg, struct fi_info **info_p)
{
    if (shm_env_from_process("FI_OFI_RXM_MSG_RX_SIZE") == NULL)
        setenv("FI_OFI_RXM_MSG_RX_SIZE", OFI_RXM_MSG_RX, 0);
    const char *prov = cfg->provider;
    const char *named_by = "SHMEM_OFI_PROVIDER";
    if (prov == NULL || *prov == '\0') {
        prov = shm_env_from_process("FI_PROVIDER");
        named_by = "FI_PROVIDER";
    }
    struct fi_info *info = NULL;
    int rc = -FI_ENODATA;
    if (prov != NULL && *prov != '\0') {
        rc = getinfo_prov(cfg, prov, &info);
        if (rc != 0 || info == NULL) {
            no_provider_error(prov, rc);
            return SHM_ERR_FABRIC;
        }
        snprintf(cdt_ofi_g.prov_why, sizeof(cdt_ofi_g.prov_why), "named by %s", named_by);
    } else {
        cdt_ofi_cand_t c[CDT_OFI_MAX_CANDS];
        int order[CDT_OFI_MAX_CANDS], best;
        int n = cdt_ofi_candidates(cfg->nnodes, c, CDT_OFI_MAX_CANDS, &best);
        int k = cdt_ofi_candidates_order(c, n, order);
        for (int j = 0; j < k && (rc != 0 || info == NULL); j++) {
            rc = getinfo_prov(cfg, c[order[j]].name, &info);
            if (rc == 0 && info != NULL)
                snprintf(cdt_ofi_g.prov_why, sizeof(cdt_ofi_g.prov_why), "%s; choice %d of %d",
                         c[order[j]].why, j + 1, k);
            else
                SHM_INFO(OFI, "provider %s offered but refused our request: %s",
                         c[order[j]].name, fi_strerror(-rc));
        }
        if (rc != 0 || info == NULL) {
            no_provider_error(NULL, rc);
            return SHM_ERR_FABRIC;
        }
    }
    *info_p = info;
    return SHM_OK;
}

/* ---- authorization keys (providers with the auth_job_uuid quirk) ---- */

#define AUTH_UUID_LEN 16

/* 16 bytes of two FNV-1a hashes of s (different offsets), as the key of
 * the endpoints opened with info and, where domain is set, of its domain. */
static shm_status_t set_uuid(struct fi_info *info, int domain, const char *s)
{
    uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    for (int j = 0; j < 2; j++)
        for (const char *p = s; *p; p++)
            h[j] = (h[j] ^ (uint8_t)*p) * 0x100000001b3ull;
    for (int d = 0; d <= domain; d++) {
        uint8_t *k = malloc(AUTH_UUID_LEN);
        if (k == NULL)
            return SHM_ERR_NOMEM;
        memcpy(k, h, AUTH_UUID_LEN);
        /* fi_freeinfo frees ours with the info. */
        uint8_t **key = d ? &info->domain_attr->auth_key : &info->ep_attr->auth_key;
        size_t *size = d ? &info->domain_attr->auth_key_size : &info->ep_attr->auth_key_size;
        free(*key);
        *key = k;
        *size = AUTH_UUID_LEN;
    }
    return SHM_OK;
}

shm_status_t cdt_ofi_job_auth_key(struct fi_info *info, int domain)
{
    /* The same on every PE of the job (its PMIx namespace), another for the
     * next job: two jobs sharing nodes never meet. */
    char s[300];
    snprintf(s, sizeof(s), "ofishmem-job:%s", shm_rt_g.nspace);
    return set_uuid(info, domain, s);
}

shm_status_t cdt_ofi_service_auth_key(struct fi_info *info, int domain)
{
    /* Data services: clients and servers of different jobs (or of none)
     * must meet, so one key for all of them; the RPC layer's own per-service
     * keys (orpc auth) keep strangers out. */
    return set_uuid(info, domain, "ofishmem-data-services");
}
