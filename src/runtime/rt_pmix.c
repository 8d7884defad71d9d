// SPDX-License-Identifier: BSD-3-Clause
/* PMIx client side of the runtime. */
#include "runtime/rt.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

shm_rt_info_t shm_rt_g;

static pmix_proc_t rt_me;
static int rt_pmix_up;

/* Singleton store: a job of one PE keeps its own puts. */
typedef struct rt_kv {
    struct rt_kv *next;
    char key[64];
    size_t len;
    unsigned char val[];
} rt_kv_t;
static rt_kv_t *rt_local_kv;

static int get_u32(const pmix_proc_t *proc, const char *key, uint32_t *out_p)
{
    pmix_value_t *val = NULL;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_Get(proc, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || val == NULL)
        return -1;
    int ok = 0;
    switch (val->type) {
    case PMIX_UINT32: *out_p = val->data.uint32; break;
    case PMIX_UINT16: *out_p = val->data.uint16; break;
    case PMIX_INT: *out_p = (uint32_t)val->data.integer; break;
    case PMIX_UINT: *out_p = val->data.uint; break;
    case PMIX_PROC_RANK: *out_p = val->data.rank; break;
    default: ok = -1;
    }
    PMIX_VALUE_RELEASE(val);
    return ok;
}

static shm_status_t parse_peers(const char *s, int *out, int max, int *n_p)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || n >= max)
            return SHM_ERR_RUNTIME;
        out[n++] = (int)v;
        s = (*end == ',') ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return SHM_ERR_RUNTIME;
    }
    *n_p = n;
    return SHM_OK;
}

static shm_status_t init_singleton(void)
{
    shm_rt_g.rank = 0;
    shm_rt_g.size = 1;
    shm_rt_g.local_rank = 0;
    shm_rt_g.local_size = 1;
    shm_rt_g.nnodes = 1;
    shm_rt_g.singleton = 1;
    shm_rt_g.local_peers = calloc(1, sizeof(int));
    shm_rt_g.node_of = calloc(1, sizeof(int));
    snprintf(shm_rt_g.nspace, sizeof(shm_rt_g.nspace), "singleton.%d", (int)getpid());
    return (shm_rt_g.local_peers && shm_rt_g.node_of) ? SHM_OK : SHM_ERR_NOMEM;
}

/* Node of every PE: from PMIX_NODEID where given, else from local peers. */
static void fill_nodes(void)
{
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_NSPACE(p.nspace, rt_me.nspace);
    int max = -1, all_known = 1;
    for (int r = 0; r < shm_rt_g.size; r++) {
        uint32_t nid;
        p.rank = (pmix_rank_t)r;
        if (get_u32(&p, PMIX_NODEID, &nid) == 0) {
            shm_rt_g.node_of[r] = (int)nid;
            if ((int)nid > max)
                max = (int)nid;
        } else {
            all_known = 0;
            break;
        }
    }
    if (!all_known) {
        /* Only our own host is known: peers here are node 0, the rest node 1. */
        for (int r = 0; r < shm_rt_g.size; r++)
            shm_rt_g.node_of[r] = 1;
        for (int i = 0; i < shm_rt_g.local_size; i++)
            shm_rt_g.node_of[shm_rt_g.local_peers[i]] = 0;
        max = shm_rt_g.local_size == shm_rt_g.size ? 0 : 1;
    }
    shm_rt_g.nnodes = max + 1;
}

shm_status_t shm_rt_init(void)
{
    pmix_status_t rc = PMIx_Init(&rt_me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        SHM_DEBUG(RT, "PMIx_Init: %s; running as a single PE", PMIx_Error_string(rc));
        return init_singleton();
    }
    rt_pmix_up = 1;

    pmix_proc_t wild;
    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_NSPACE(wild.nspace, rt_me.nspace);
    wild.rank = PMIX_RANK_WILDCARD;

    uint32_t size = 0, lsize = 0, lrank = 0;
    if (get_u32(&wild, PMIX_JOB_SIZE, &size) != 0 || size == 0) {
        /* PMIx 4 runs a launcher-less process as a singleton of its own. */
        SHM_DEBUG(RT, "no PMIX_JOB_SIZE; running as a single PE");
        PMIx_Finalize(NULL, 0);
        rt_pmix_up = 0;
        return init_singleton();
    }
    shm_rt_g.rank = (int)rt_me.rank;
    shm_rt_g.size = (int)size;
    snprintf(shm_rt_g.nspace, sizeof(shm_rt_g.nspace), "%s", rt_me.nspace);
    if (get_u32(&wild, PMIX_LOCAL_SIZE, &lsize) != 0)
        lsize = 1;
    if (get_u32(&rt_me, PMIX_LOCAL_RANK, &lrank) != 0)
        lrank = 0;
    shm_rt_g.local_rank = (int)lrank;
    shm_rt_g.local_peers = calloc(lsize ? lsize : 1, sizeof(int));
    shm_rt_g.node_of = calloc(size, sizeof(int));
    if (!shm_rt_g.local_peers || !shm_rt_g.node_of)
        return SHM_ERR_NOMEM;

    pmix_value_t *val = NULL;
    int npeers = 0;
    if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val) == PMIX_SUCCESS && val &&
        val->type == PMIX_STRING &&
        parse_peers(val->data.string, shm_rt_g.local_peers, (int)lsize, &npeers) == SHM_OK) {
        shm_rt_g.local_size = npeers;
    } else {
        shm_rt_g.local_peers[0] = shm_rt_g.rank;
        shm_rt_g.local_size = 1;
        shm_rt_g.local_rank = 0;
    }
    if (val)
        PMIX_VALUE_RELEASE(val);
    fill_nodes();
    SHM_DEBUG(RT, "nspace %s rank %d of %d, local %d of %d, %d node(s)", rt_me.nspace,
              shm_rt_g.rank, shm_rt_g.size, shm_rt_g.local_rank, shm_rt_g.local_size,
              shm_rt_g.nnodes);
    return SHM_OK;
}

void shm_rt_fini(void)
{
    if (rt_pmix_up) {
        PMIx_Finalize(NULL, 0);
        rt_pmix_up = 0;
    }
    while (rt_local_kv) {
        rt_kv_t *n = rt_local_kv->next;
        free(rt_local_kv);
        rt_local_kv = n;
    }
    free(shm_rt_g.local_peers);
    free(shm_rt_g.node_of);
    shm_rt_g.local_peers = shm_rt_g.node_of = NULL;
}

shm_status_t shm_rt_put(const char *key, const void *buf, size_t len)
{
    if (!rt_pmix_up) {
        rt_kv_t *kv = malloc(sizeof(*kv) + len);
        if (kv == NULL)
            return SHM_ERR_NOMEM;
        snprintf(kv->key, sizeof(kv->key), "%s", key);
        kv->len = len;
        memcpy(kv->val, buf, len);
        kv->next = rt_local_kv;
        rt_local_kv = kv;
        return SHM_OK;
    }
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)buf;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) {
        shm_error("PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    return SHM_OK;
}

shm_status_t shm_rt_exchange(void)
{
    if (!rt_pmix_up)
        return SHM_OK;
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        shm_error("PMIx_Commit: %s", PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        shm_error("PMIx_Fence (exchange): %s", PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    return SHM_OK;
}

shm_status_t shm_rt_get(int pe, const char *key, void *buf, size_t len)
{
    if (!rt_pmix_up) {
        for (rt_kv_t *kv = rt_local_kv; kv; kv = kv->next)
            if (pe == 0 && strcmp(kv->key, key) == 0 && kv->len == len) {
                memcpy(buf, kv->val, len);
                return SHM_OK;
            }
        return SHM_ERR_NOT_FOUND;
    }
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_NSPACE(p.nspace, rt_me.nspace);
    p.rank = (pmix_rank_t)pe;
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL) {
        shm_error("PMIx_Get(PE %d, %s): %s", pe, key, PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    shm_status_t st = SHM_OK;
    if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != len) {
        shm_error("PMIx_Get(PE %d, %s): unexpected value (type %d, %zu bytes, want %zu)", pe,
                  key, (int)val->type, val->type == PMIX_BYTE_OBJECT ? val->data.bo.size : 0,
                  len);
        st = SHM_ERR_PROTO;
    } else {
        memcpy(buf, val->data.bo.bytes, len);
    }
    PMIX_VALUE_RELEASE(val);
    return st;
}

shm_status_t shm_rt_barrier(void)
{
    if (!rt_pmix_up)
        return SHM_OK;
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        shm_error("PMIx_Fence: %s", PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    return SHM_OK;
}

void shm_rt_abort(int status, const char *msg)
{
    if (rt_pmix_up) {
        PMIx_Abort(status, msg ? msg : "", NULL, 0);
        /* The launcher kills us; if it does not within a moment, go anyway. */
        sleep(5);
    }
    fflush(NULL);
    _exit(status);
}
