// SPDX-License-Identifier: BSD-3-Clause
/* PMIx client side of the runtime. */
#include "runtime/rt.h"

#include <errno.h>
#include <pmix.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "runtime/rt_watch.h"

shm_rt_info_t shm_rt_g;

static pmix_proc_t rt_me;
static int rt_pmix_up;

/* Death of a peer, reported by the launcher's PMIx server (Slurm, Open MPI).
 * Set before we finalize or abort ourselves: later events are expected. */
static atomic_int rt_leaving;
static size_t rt_evhdlr_ref;
static int rt_evhdlr_up;
static pmix_status_t rt_evhdlr_err = PMIX_SUCCESS;
static char rt_host[64];
#define RT_PEER_LOST_STATUS 1
static int rt_watch_up;

/* A PMIx call that cannot reach the server: the launcher went away (the
 * connection broke: see rt_watch.c). One line and exit, as the watchdog
 * would a moment later; other errors are the caller's to report. */
static void rt_check_lost(const char *what, pmix_status_t rc)
{
    if (rc == PMIX_ERR_UNREACH || rc == PMIX_ERR_LOST_CONNECTION || rc == PMIX_ERR_COMM_FAILURE)
        shm_rt_watch_gone("rt_pmix.c", __LINE__,
                          "the launcher went away: %s: %s (its PMIx server cannot be reached); "
                          "ending this PE",
                          what, PMIx_Error_string(rc));
}

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
    snprintf(shm_rt_g.nspace, sizeof(shm_rt_g.nspace), "singleton.%d", (int)getpid());
    return shm_rt_g.local_peers ? SHM_OK : SHM_ERR_NOMEM;
}

/* Node of every PE from the job's node and process maps (PMIx_Resolve_*):
 * Open MPI 4.1 gives PMIX_NODEID for the PEs of this host only. Nodes are
 * numbered in the order of the node list, the same on every PE. */
static int *rt_node_of; /* while counting nodes: node of every PE */

static int resolve_nodes(int *max_p)
{
    char *nodes = NULL;
    if (PMIx_Resolve_nodes(rt_me.nspace, &nodes) != PMIX_SUCCESS || nodes == NULL)
        return -1;
    int nid = 0, placed = 0, rc = 0;
    for (int r = 0; r < shm_rt_g.size; r++)
        rt_node_of[r] = -1;
    char *save = NULL;
    for (char *node = strtok_r(nodes, ",", &save); node && rc == 0;
         node = strtok_r(NULL, ",", &save)) {
        pmix_proc_t *procs = NULL;
        size_t nprocs = 0;
        if (PMIx_Resolve_peers(node, rt_me.nspace, &procs, &nprocs) != PMIX_SUCCESS) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < nprocs; i++) {
            int r = (int)procs[i].rank;
            if (r < 0 || r >= shm_rt_g.size || rt_node_of[r] != -1) {
                rc = -1;
                break;
            }
            rt_node_of[r] = nid;
            placed++;
        }
        if (procs)
            PMIX_PROC_FREE(procs, nprocs);
        nid += nprocs > 0; /* a listed host without PEs of ours gets no number */
    }
    free(nodes);
    if (rc != 0 || placed != shm_rt_g.size)
        return -1;
    int max = -1;
    for (int r = 0; r < shm_rt_g.size; r++)
        if (rt_node_of[r] > max)
            max = rt_node_of[r];
    *max_p = max;
    return 0;
}

/*
 * Node index of pe, for fault paths only (slow): its place in the node map
 * (the same order on every PE), else PMIX_NODEID; -1 when neither is known.
 */
int shm_rt_node_of(int pe)
{
    if (pe < 0 || pe >= shm_rt_g.size)
        return -1;
    if (shm_rt_g.nnodes <= 1 || !rt_pmix_up)
        return 0;
    int node = -1;
    char *nodes = NULL;
    if (PMIx_Resolve_nodes(rt_me.nspace, &nodes) == PMIX_SUCCESS && nodes != NULL) {
        int nid = 0;
        char *save = NULL;
        for (char *n = strtok_r(nodes, ",", &save); n && node < 0; n = strtok_r(NULL, ",", &save)) {
            pmix_proc_t *procs = NULL;
            size_t nprocs = 0;
            if (PMIx_Resolve_peers(n, rt_me.nspace, &procs, &nprocs) != PMIX_SUCCESS)
                break;
            for (size_t i = 0; i < nprocs; i++)
                if ((int)procs[i].rank == pe)
                    node = nid;
            if (procs)
                PMIX_PROC_FREE(procs, nprocs);
            nid += nprocs > 0;
        }
        free(nodes);
    }
    if (node < 0) {
        pmix_proc_t p;
        uint32_t nid;
        PMIX_PROC_CONSTRUCT(&p);
        PMIX_LOAD_NSPACE(p.nspace, rt_me.nspace);
        p.rank = (pmix_rank_t)pe;
        if (get_u32(&p, PMIX_NODEID, &nid) == 0)
            node = (int)nid;
    }
    return node;
}

int shm_rt_node_map(int *node_of)
{
    int max = -1, rc = 0;
    if (shm_rt_g.nnodes <= 1 || !rt_pmix_up) {
        memset(node_of, 0, (size_t)shm_rt_g.size * sizeof(int));
        return 0;
    }
    rt_node_of = node_of;
    if (resolve_nodes(&max) != 0) {
        pmix_proc_t p;
        uint32_t nid;
        PMIX_PROC_CONSTRUCT(&p);
        PMIX_LOAD_NSPACE(p.nspace, rt_me.nspace);
        for (int r = 0; r < shm_rt_g.size && rc == 0; r++) {
            p.rank = (pmix_rank_t)r;
            rc = get_u32(&p, PMIX_NODEID, &nid);
            node_of[r] = (int)nid;
        }
    }
    rt_node_of = NULL;
    return rc;
}

/*
 * How many hosts the job spans. Every PE on this host: one, nothing to ask.
 * Else PMIX_NUM_NODES, one job-level value. Else (a launcher that gives
 * neither) the node of every PE: from PMIX_NODEID where given, else from the
 * node map, else from local peers -- N lookups, so only as a last resort.
 */
static void fill_nodes(const pmix_proc_t *wild)
{
    uint32_t nn = 0;
    if (shm_rt_g.local_size == shm_rt_g.size) {
        shm_rt_g.nnodes = 1;
        return;
    }
    if (get_u32(wild, PMIX_NUM_NODES, &nn) == 0 && nn > 1) {
        shm_rt_g.nnodes = (int)nn;
        return;
    }
    rt_node_of = calloc((size_t)shm_rt_g.size, sizeof(int));
    if (rt_node_of == NULL) {
        shm_rt_g.nnodes = 2; /* more than one, which is all that is known */
        return;
    }
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_NSPACE(p.nspace, rt_me.nspace);
    int max = -1, all_known = 1;
    for (int r = 0; r < shm_rt_g.size; r++) {
        uint32_t nid;
        p.rank = (pmix_rank_t)r;
        if (get_u32(&p, PMIX_NODEID, &nid) == 0) {
            rt_node_of[r] = (int)nid;
            if ((int)nid > max)
                max = (int)nid;
        } else {
            all_known = 0;
            break;
        }
    }
    if (!all_known && resolve_nodes(&max) == 0)
        all_known = 1;
    if (!all_known) {
        /* Only our own host is known: peers here are node 0, the rest node 1. */
        for (int r = 0; r < shm_rt_g.size; r++)
            rt_node_of[r] = 1;
        for (int i = 0; i < shm_rt_g.local_size; i++)
            rt_node_of[shm_rt_g.local_peers[i]] = 0;
        max = 1;
    }
    shm_rt_g.nnodes = max + 1;
    free(rt_node_of);
    rt_node_of = NULL;
}

/* Events that mean the job cannot complete: a peer aborted, died or was
 * killed, a node went down, or we lost our PMIx server. */
static const pmix_status_t rt_fatal_events[] = {
    PMIX_ERR_PROC_ABORTED,     PMIX_ERR_PROC_ABORTING,    PMIX_ERR_PROC_TERM_WO_SYNC,
    PMIX_ERR_PROC_KILLED_BY_CMD, PMIX_ERR_EXIT_NONZERO_TERM, PMIX_ERR_NODE_DOWN,
    PMIX_ERR_LOST_CONNECTION,  PMIX_EVENT_PROC_TERMINATED, PMIX_PROC_TERMINATED,
};

/* Runs on PMIx's progress thread while the application thread may be
 * anywhere (inside malloc or stdio, holding their locks): format into a
 * stack buffer and write(2) it, then _exit. No stdio, no malloc, no locks. */
static void rt_on_fatal_event(size_t evhdlr_id, pmix_status_t status, const pmix_proc_t *source,
                              pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                              size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                              void *cbdata)
{
    (void)evhdlr_id;
    (void)results;
    (void)nresults;
    const pmix_proc_t *who = source;
    int exit_code = -1;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            info[i].value.type == PMIX_PROC && info[i].value.data.proc != NULL)
            who = info[i].value.data.proc;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
            exit_code = info[i].value.data.integer;
    }
    int lost_server = status == PMIX_ERR_LOST_CONNECTION;
    int same_job = who != NULL && PMIX_CHECK_NSPACE(who->nspace, rt_me.nspace);
    int is_me = same_job && who->rank == rt_me.rank;
    /* A normal exit (status 0) after shmem_finalize is no failure. */
    int benign = (status == PMIX_EVENT_PROC_TERMINATED || status == PMIX_PROC_TERMINATED) &&
                 exit_code <= 0;
    if (atomic_load(&rt_leaving) || benign || is_me || (!lost_server && !same_job)) {
        if (cbfunc) /* not ours to act on: let other handlers see it */
            cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
        return;
    }
    if (!shm_rt_exit_claim())
        for (;;) /* another thread is ending this PE, with its own line */
            pause();
    char msg[512];
    int n;
    if (lost_server)
        n = snprintf(msg, sizeof msg,
                     "[PE %d %s:%d] rt_pmix.c:%d: the launcher went away: lost the connection to "
                     "its PMIx server (%s); ending this PE\n",
                     shm_rt_g.rank, rt_host, (int)getpid(), __LINE__, PMIx_Error_string(status));
    else if (who->rank == PMIX_RANK_WILDCARD)
        n = snprintf(msg, sizeof msg,
                     "[PE %d %s:%d] rt_pmix.c: the launcher reports that the job is failing "
                     "(%s); ending this PE\n",
                     shm_rt_g.rank, rt_host, (int)getpid(), PMIx_Error_string(status));
    else {
        char code[32] = "";
        if (exit_code >= 0)
            snprintf(code, sizeof code, ", exit code %d", exit_code);
        n = snprintf(msg, sizeof msg,
                     "[PE %d %s:%d] rt_pmix.c: the launcher reports PE %u %s (%s%s); "
                     "ending this PE\n",
                     shm_rt_g.rank, rt_host, (int)getpid(), (unsigned)who->rank,
                     status == PMIX_ERR_PROC_ABORTED || status == PMIX_ERR_PROC_ABORTING
                         ? "aborted"
                         : "died",
                     PMIx_Error_string(status), code);
    }
    /* Not when stderr would block (a stopped reader of a full pipe). */
    struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
    if (n > 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT))
        (void)!write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(RT_PEER_LOST_STATUS);
}

static void rt_register_events(void)
{
    pmix_status_t rc = PMIx_Register_event_handler(
        (pmix_status_t *)rt_fatal_events, sizeof(rt_fatal_events) / sizeof(rt_fatal_events[0]),
        NULL, 0, rt_on_fatal_event, NULL, NULL);
    /* Blocking form: a non-negative return is the handler's reference. */
    if (rc < 0) {
        rt_evhdlr_err = rc; /* logged by rt_log_layout once logging is set up */
        return;
    }
    rt_evhdlr_ref = (size_t)rc;
    rt_evhdlr_up = 1;
}

/*
 * A launcher that serves PMIx (oshrun, Slurm's srun --mpi=pmix, Open MPI's
 * mpirun/prterun) gives each process it starts its namespace, its rank and
 * the server's address in the environment (PMIx_server_setup_fork). With
 * none of them, no server was set up for this process: PMIx_Init would only
 * spend 20-40 ms finding that out (and PMIx 4 would then make a one-process
 * job of its own), so the process is a singleton at once.
 */
static int rt_launched_by_pmix(void)
{
    static const char *const vars[] = {
        "PMIX_NAMESPACE",    "PMIX_RANK",         "PMIX_SERVER_URI41", "PMIX_SERVER_URI4",
        "PMIX_SERVER_URI3",  "PMIX_SERVER_URI21", "PMIX_SERVER_URI2",  "PMIX_SERVER_URI",
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = shm_env_from_process(vars[i]);
        if (v != NULL && *v != '\0')
            return 1;
    }
    return 0;
}

shm_status_t shm_rt_init(void)
{
    if (gethostname(rt_host, sizeof(rt_host) - 1) != 0)
        snprintf(rt_host, sizeof(rt_host), "?");
    if (!rt_launched_by_pmix())
        return init_singleton();
    pmix_status_t rc = PMIx_Init(&rt_me, NULL, 0);
    if (rc == PMIX_ERR_UNREACH || rc == PMIX_ERR_NOT_FOUND) {
        /* The variables name a server that is gone (a shell left from an
         * ended allocation): a job of one. */
        SHM_DEBUG(RT, "PMIx_Init: %s; running as a single PE", PMIx_Error_string(rc));
        return init_singleton();
    }
    if (rc != PMIX_SUCCESS) {
        /* Started by a launcher but cannot join it: never a silent job of
         * one PE (it ran as PE 0 of 1 beside its peers). A limit is the
         * usual cause: PMIx says only "out of resource" or "error". */
        char h1[512], h2[384];
        shm_rt_hint_nofile(h1, sizeof h1, "this PE", 0, 0);
        shm_rt_hint_nproc(h2, sizeof h2, 0);
        shm_fatal("cannot join the launcher's job: PMIx_Init: %s%s%s", PMIx_Error_string(rc), h1,
                  h1[0] ? "" : h2);
    }
    rt_pmix_up = 1;
    /* Before anything that may wait on the server: from here on a PE whose
     * launcher goes away, or whose fatal path stalls, still ends. */
    if (shm_rt_watch_start() == 0)
        rt_watch_up = 1;
    else
        SHM_DEBUG(RT, "cannot start the runtime's watchdog: %s", strerror(errno));

    pmix_proc_t wild;
    PMIX_PROC_CONSTRUCT(&wild);
    PMIX_LOAD_NSPACE(wild.nspace, rt_me.nspace);
    wild.rank = PMIX_RANK_WILDCARD;

    uint32_t size = 0, lsize = 0, lrank = 0;
    if (get_u32(&wild, PMIX_JOB_SIZE, &size) != 0 || size == 0) {
        /* PMIx 4 runs a launcher-less process as a singleton of its own. */
        SHM_DEBUG(RT, "no PMIX_JOB_SIZE; running as a single PE");
        shm_rt_watch_leaving();
        PMIx_Finalize(NULL, 0);
        shm_rt_watch_stop();
        rt_watch_up = 0;
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
    if (!shm_rt_g.local_peers)
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
    fill_nodes(&wild);
    atomic_store(&rt_leaving, 0);
    rt_register_events();
    return SHM_OK;
}

void shm_rt_fini(void)
{
    atomic_store(&rt_leaving, 1);
    if (rt_pmix_up && rt_evhdlr_up) {
        PMIx_Deregister_event_handler(rt_evhdlr_ref, NULL, NULL);
        rt_evhdlr_up = 0;
    }
    if (rt_pmix_up) {
        /* The watchdog runs through PMIx_Finalize: it waits for the server. */
        shm_rt_watch_leaving();
        PMIx_Finalize(NULL, 0);
        rt_pmix_up = 0;
    }
    shm_rt_watch_stop();
    rt_watch_up = 0;
    while (rt_local_kv) {
        rt_kv_t *n = rt_local_kv->next;
        free(rt_local_kv);
        rt_local_kv = n;
    }
    free(shm_rt_g.local_peers);
    shm_rt_g.local_peers = NULL;
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
        rt_check_lost("PMIx_Put", rc);
        shm_error("PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    return SHM_OK;
}

/* What the launcher told us about placement. Logged from the first
 * exchange because shm_rt_init runs before SHMEM_LOG_LEVEL is applied. */
static void rt_log_layout(void)
{
    static int done;
    if (done || shm_log_level_g[SHM_LOG_RT] < SHM_LVL_DEBUG)
        return;
    done = 1;
    char peers[256];
    size_t off = 0;
    for (int i = 0; i < shm_rt_g.local_size && off + 16 < sizeof(peers); i++)
        off += (size_t)snprintf(peers + off, sizeof(peers) - off, "%s%d", i ? "," : "",
                                shm_rt_g.local_peers[i]);
    SHM_DEBUG(RT, "nspace %s, PE %d of %d on host %s (%d host%s in the job), same-host PEs %s%s%s",
              shm_rt_g.nspace, shm_rt_g.rank, shm_rt_g.size, rt_host,
              shm_rt_g.nnodes, shm_rt_g.nnodes == 1 ? "" : "s", peers,
              rt_evhdlr_up ? ", peer-failure events on" : ", peer-failure events off: ",
              rt_evhdlr_up ? "" : rt_evhdlr_err ? PMIx_Error_string(rt_evhdlr_err) : "no launcher");
}

/*
 * A fence that failed because a participant left it (it aborted or died:
 * PMIX_ERR_PARTIAL_SUCCESS) means the launcher is ending the job and will
 * say why; a second message from every survivor would bury that one. Wait
 * for the launcher quietly, then report after all if it has not acted.
 */
static shm_status_t rt_fence_failed(const char *what, pmix_status_t rc)
{
    rt_check_lost(what, rc);
    if (rc == PMIX_ERR_PARTIAL_SUCCESS) {
        SHM_DEBUG(RT, "%s: a PE left the fence; waiting for the launcher to end the job", what);
        for (int ms = 0; ms < 10000; ms += 10)
            usleep(10000);
    }
    shm_error("%s: %s", what, PMIx_Error_string(rc));
    return SHM_ERR_RUNTIME;
}

shm_status_t shm_rt_exchange(int collect)
{
    rt_log_layout();
    if (!rt_pmix_up)
        return SHM_OK;
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        rt_check_lost("PMIx_Commit", rc);
        shm_error("PMIx_Commit: %s", PMIx_Error_string(rc));
        return SHM_ERR_RUNTIME;
    }
    pmix_info_t info;
    bool all = collect != 0;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &all, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return rt_fence_failed("PMIx_Fence (exchange)", rc);
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
        rt_check_lost("PMIx_Get", rc);
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
    if (rc != PMIX_SUCCESS)
        return rt_fence_failed("PMIx_Fence", rc);
    return SHM_OK;
}

static void rt_fence_done(pmix_status_t status, void *cbdata)
{
    pmix_status_t *st = cbdata;
    __atomic_store_n(st, status, __ATOMIC_RELEASE);
}

shm_status_t shm_rt_barrier_poll(void (*poll_fn)(void))
{
    if (!rt_pmix_up)
        return SHM_OK;
    /* PMIX_ERR_WOULD_BLOCK never comes back from the callback: "not yet". */
    pmix_status_t done = PMIX_ERR_WOULD_BLOCK;
    pmix_status_t rc = PMIx_Fence_nb(NULL, 0, NULL, 0, rt_fence_done, &done);
    if (rc == PMIX_OPERATION_SUCCEEDED) /* complete already; no callback */
        return SHM_OK;
    if (rc != PMIX_SUCCESS)
        return rt_fence_failed("PMIx_Fence_nb", rc);
    for (unsigned polls = 0;
         __atomic_load_n(&done, __ATOMIC_ACQUIRE) == PMIX_ERR_WOULD_BLOCK; polls++) {
        poll_fn();
        /* A fence takes milliseconds: poll without taking a core from the
         * PEs still on their way to it. */
        if (polls >= 64)
            usleep(50);
    }
    if (done != PMIX_SUCCESS)
        return rt_fence_failed("PMIx_Fence_nb", done);
    return SHM_OK;
}

/*
 * The launcher is told (PMIx_Abort) and ends the job; the watchdog bounds
 * the wait: PMIx_Abort blocks until the server acknowledges, for ever when
 * the channel is cut or the launcher stopped (issue 28: a PE that had
 * reported its fault sat in PMIx_Abort until an outside timeout). Without
 * a watchdog nothing would bound it: the PE exits at once instead, and the
 * launcher sees it gone.
 */
void shm_rt_abort(int status, const char *msg)
{
    static atomic_int once;
    if (atomic_exchange(&once, 1) != 0)
        for (;;) /* another thread is ending this PE, within the same bound */
            pause();
    atomic_store(&rt_leaving, 1);
    if (!rt_pmix_up || !rt_watch_up ||
        !shm_rt_watch_abort_begin(SHM_RT_ABORT_ACK_MS, SHM_RT_ABORT_END_MS, status)) {
        fflush(NULL);
        _exit(status);
    }
    fflush(NULL); /* may block on a stopped reader: the deadline holds */
    PMIx_Abort(status, msg ? msg : "", NULL, 0);
    shm_rt_watch_abort_acked();
    for (;;) /* the launcher ends us; if it does not, the watchdog does */
        pause();
}

/* Bounded PMIx_Get: the request outlives a waiter that gave up, and whoever
 * of the two comes second frees it. */
typedef struct rt_get_req {
    atomic_int state; /* 0 pending, 1 answered, 2 abandoned */
    pmix_status_t st;
    size_t len, got;
    unsigned char buf[];
} rt_get_req_t;

static void rt_get_done(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    rt_get_req_t *r = cbdata;
    r->st = status;
    if (status == PMIX_SUCCESS && kv != NULL && kv->type == PMIX_BYTE_OBJECT) {
        r->got = kv->data.bo.size;
        if (r->got == r->len)
            memcpy(r->buf, kv->data.bo.bytes, r->len);
    } else if (status == PMIX_SUCCESS) {
        r->st = PMIX_ERR_TYPE_MISMATCH;
    }
    int pending = 0;
    if (!atomic_compare_exchange_strong(&r->state, &pending, 1))
        free(r);
}

shm_status_t shm_rt_get_within(int pe, const char *key, void *buf, size_t len, unsigned ms)
{
    if (!rt_pmix_up)
        return shm_rt_get(pe, key, buf, len);
    rt_get_req_t *r = calloc(1, sizeof(*r) + len);
    if (r == NULL)
        return SHM_ERR_NOMEM;
    r->len = len;
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_NSPACE(p.nspace, rt_me.nspace);
    p.rank = (pmix_rank_t)pe;
    pmix_status_t rc = PMIx_Get_nb(&p, key, NULL, 0, rt_get_done, r);
    if (rc != PMIX_SUCCESS) {
        free(r);
        return SHM_ERR_RUNTIME;
    }
    for (unsigned waited = 0; atomic_load(&r->state) == 0 && waited < ms; waited++)
        usleep(1000);
    int pending = 0;
    if (atomic_compare_exchange_strong(&r->state, &pending, 2))
        return SHM_ERR_TIMEOUT; /* the callback frees it, if it ever comes */
    shm_status_t st = r->st != PMIX_SUCCESS ? SHM_ERR_RUNTIME
                      : r->got != len      ? SHM_ERR_PROTO
                                           : SHM_OK;
    if (st == SHM_OK)
        memcpy(buf, r->buf, len);
    free(r);
    return st;
}
