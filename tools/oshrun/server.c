// SPDX-License-Identifier: BSD-3-Clause
//
// The PMIx server half of oshrun: rendezvous directory, server init, job and
// PE registration, and the upcalls the PMIx library makes on its own thread.
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/rt.h"

#include "oshrun.h"

// The upcalls have no user pointer, so they reach the job through this.
static osr_job_t *osr_job_g;

// ---------------------------------------------------------------------------
// Rendezvous directory

static void tmpdir_sweep(const char *base);

// The pid namespace we run in: a directory named by an oshrun of another one
// says nothing about processes we can see.
static unsigned long long pidns_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

// $TMPDIR/oshrun.<pid namespace>.<pid>.XXXXXX: the owner's identity is in
// the name, so a later oshrun can remove what a killed one left behind.
int osr_tmpdir_create(osr_job_t *job)
{
    const char *base = getenv("TMPDIR");
    char *path = NULL;

    if (base == NULL || base[0] == '\0' || access(base, W_OK | X_OK) != 0)
        base = "/tmp";
    tmpdir_sweep(base);
    if (asprintf(&path, "%s/oshrun.%llu.%d.XXXXXX", base, pidns_id(), (int)getpid()) < 0)
        return -1;
    if (mkdtemp(path) == NULL) {
        fprintf(stderr, OSR_NAME ": cannot create a temporary directory under %s: %s\n", base,
                strerror(errno));
        free(path);
        return -1;
    }
    job->tmpdir = path;
    osr_sweeper_tmpdir(path); // removed by the sweeper if oshrun is killed
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    // Keep going on errors: remove as much as we can.
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

// Removes the rendezvous directories of earlier oshrun processes that no
// longer exist: ours (same user), made in this pid namespace, whose pid is
// gone. A live process with a reused pid keeps its directory (a leak, never
// a removal of a live job's files).
static void tmpdir_sweep(const char *base)
{
    DIR *d = opendir(base);
    if (d == NULL)
        return;
    unsigned long long ns = pidns_id();
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        unsigned long long dns;
        int pid, n = 0;
        if (sscanf(de->d_name, "oshrun.%llu.%d.%n", &dns, &pid, &n) != 2 || n == 0 ||
            dns != ns || pid <= 0 || pid == (int)getpid())
            continue;
        if (kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        char *path = NULL;
        struct stat st;
        if (asprintf(&path, "%s/%s", base, de->d_name) < 0)
            continue;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid())
            nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        free(path);
    }
    closedir(d);
}

void osr_rmtree(const char *path)
{
    // FTW_PHYS: never follow a link out of our private directory.
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

void osr_tmpdir_remove(osr_job_t *job)
{
    if (job->tmpdir == NULL)
        return;
    osr_rmtree(job->tmpdir);
    if (access(job->tmpdir, F_OK) == 0 && job->debug)
        fprintf(stderr, OSR_NAME ": could not remove %s\n", job->tmpdir);
    free(job->tmpdir);
    job->tmpdir = NULL;
}

// ---------------------------------------------------------------------------
// Upcalls (PMIx progress thread). They record and wake the main thread; the
// main thread decides what to do.

static void wake_main(osr_job_t *job)
{
    char c = 1;
    // A full pipe already holds a wake-up, so EAGAIN is fine.
    while (write(job->wake_fd[1], &c, 1) < 0 && errno == EINTR)
        ;
}

// Returns the rank if proc belongs to our job, else -1.
static int my_rank(const osr_job_t *job, const pmix_proc_t *proc)
{
    if (proc == NULL || strncmp(proc->nspace, job->nspace, PMIX_MAX_NSLEN) != 0)
        return -1;
    if (proc->rank >= (pmix_rank_t)job->npes)
        return -1;
    return (int)proc->rank;
}

static pmix_status_t up_connected(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    osr_job_t *job = osr_job_g;
    int r = my_rank(job, proc);

    if (job->debug)
        fprintf(stderr, OSR_NAME ": [debug] client_connected rank %d\n", r);
    if (r >= 0) {
        pthread_mutex_lock(&job->lock);
        job->shared.pe[r].connected = true;
        pthread_mutex_unlock(&job->lock);
        wake_main(job);
    }
    // PMIx 4.2 passes no callback here; OPERATION_SUCCEEDED means "done".
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    osr_job_t *job = osr_job_g;
    int r = my_rank(job, proc);

    if (job->debug)
        fprintf(stderr, OSR_NAME ": [debug] client_finalized rank %d\n", r);
    if (r >= 0) {
        // Recorded before the client is released, so it is visible to the
        // main thread before the process can exit.
        pthread_mutex_lock(&job->lock);
        job->shared.pe[r].finalized = true;
        pthread_mutex_unlock(&job->lock);
        wake_main(job);
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    osr_job_t *job = osr_job_g;
    int r = my_rank(job, proc);

    if (job->debug)
        fprintf(stderr, OSR_NAME ": [debug] abort rank %d status %d msg '%s'\n", r, status,
                msg ? msg : "");
    // procs is ignored: an OpenSHMEM abort always ends the whole job.
    pthread_mutex_lock(&job->lock);
    if (!job->shared.aborted) {
        job->shared.aborted = true;
        job->shared.abort_rank = r;
        job->shared.abort_status = status;
        job->shared.abort_msg = strdup(msg ? msg : "");
    }
    pthread_mutex_unlock(&job->lock);
    // Ack first so the client returns from PMIx_Abort, then let the main
    // thread end the job.
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    wake_main(job);
    return PMIX_SUCCESS;
}

static void free_blob(void *cbdata)
{
    free(cbdata);
}

// All PEs are on this host, so the data collected here is already the
// complete job's data: hand it straight back. We return our own copy so no
// assumption about who owns `data` after the upcall returns is needed.
static pmix_status_t up_fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t info[], size_t ninfo, char *data,
                                 size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    osr_job_t *job = osr_job_g;
    char *copy = NULL;

    if (job->debug)
        fprintf(stderr, OSR_NAME ": [debug] fence_nb nprocs %zu ndata %zu\n", nprocs, ndata);
    if (ndata > 0) {
        copy = malloc(ndata);
        if (copy == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(copy, data, ndata);
    }
    // PMIx thread-shifts the completion itself, so calling it here is safe.
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, copy ? free_blob : NULL, copy);
    return PMIX_SUCCESS;
}

// Only asked for data PMIx does not hold locally. Every PE is local, so there
// is no other server to ask.
static pmix_status_t up_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    if (osr_job_g->debug)
        fprintf(stderr, OSR_NAME ": [debug] direct_modex rank %u\n", proc ? proc->rank : 0);
    return PMIX_ERR_NOT_FOUND;
}

static pmix_server_module_t osr_module = {
    .client_connected = up_connected,
    .client_finalized = up_finalized,
    .abort = up_abort,
    .fence_nb = up_fence_nb,
    .direct_modex = up_direct_modex,
};

// ---------------------------------------------------------------------------
// Setup helpers (main thread)

// Waits for a PMIx op callback.
typedef struct osr_sync {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
} osr_sync_t;

#define OSR_SYNC_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0}

static void sync_done(pmix_status_t status, void *cbdata)
{
    osr_sync_t *s = cbdata;

    pthread_mutex_lock(&s->lock);
    s->status = status;
    s->done = true;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static pmix_status_t sync_wait(osr_sync_t *s)
{
    pthread_mutex_lock(&s->lock);
    while (!s->done)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
    return s->status;
}

int osr_server_init(osr_job_t *job)
{
    pmix_info_t *info;
    size_t n = 0, ninfo = 8;
    bool no = false, yes = true;
    pmix_status_t rc;

    osr_job_g = job;
    PMIX_INFO_CREATE(info, ninfo);
    if (info == NULL)
        return -1;
    PMIx_Info_load(&info[n++], PMIX_SERVER_TMPDIR, job->tmpdir, PMIX_STRING);
    PMIx_Info_load(&info[n++], PMIX_SYSTEM_TMPDIR, job->tmpdir, PMIX_STRING);
    PMIx_Info_load(&info[n++], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
    PMIx_Info_load(&info[n++], PMIX_SERVER_SESSION_SUPPORT, &no, PMIX_BOOL);
    PMIx_Info_load(&info[n++], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    PMIx_Info_load(&info[n++], PMIX_SERVER_REMOTE_CONNECTIONS, &no, PMIX_BOOL);
    // PMIx 4 clients reach the server over TCP; keep that on loopback.
    PMIx_Info_load(&info[n++], PMIX_TCP_IF_INCLUDE, "lo", PMIX_STRING);
    PMIx_Info_load(&info[n++], PMIX_TCP_DISABLE_IPV6, &yes, PMIX_BOOL);
    rc = PMIx_server_init(&osr_module, info, n);
    PMIX_INFO_FREE(info, ninfo);
    if (rc != PMIX_SUCCESS) {
        char hint[512];
        shm_rt_hint_nofile(hint, sizeof hint, "oshrun", job->npes, 0);
        fprintf(stderr, OSR_NAME ": PMIx_server_init failed: %s%s\n", PMIx_Error_string(rc), hint);
        return -1;
    }
    return 0;
}

void osr_server_fini(osr_job_t *job)
{
    osr_sync_t s = OSR_SYNC_INIT;

    // PMIx 4.2.2 crashes in PMIx_server_finalize (or hangs in
    // deregister_nspace) about one time in five after a client was lost
    // while a fence was pending. After such a job we leave the server as it
    // is; main() then exits with _exit() and the kernel closes its socket.
    // Everything else it created lies in our tmpdir, which we remove.
    if (job->pmix_unclean) {
        job->pmix_left_running = true;
        return;
    }
    if (job->registered) {
        PMIx_server_deregister_nspace(job->nspace, sync_done, &s);
        sync_wait(&s);
    }
    PMIx_server_finalize();
}

static int load_u32(pmix_info_t *i, const char *key, uint32_t v)
{
    return PMIx_Info_load(i, key, &v, PMIX_UINT32) == PMIX_SUCCESS ? 0 : -1;
}

// Per-PE data: PMIX_PROC_DATA holds an array whose first entry is the rank.
static int fill_proc_data(pmix_info_t *slot, int rank, const char *host)
{
    enum { NPROC_KEYS = 7 };
    pmix_data_array_t *arr;
    pmix_info_t *pi;
    pmix_rank_t r = (pmix_rank_t)rank;
    uint16_t lr = (uint16_t)rank;

    PMIX_DATA_ARRAY_CREATE(arr, NPROC_KEYS, PMIX_INFO);
    if (arr == NULL)
        return -1;
    pi = arr->array;
    PMIx_Info_load(&pi[0], PMIX_RANK, &r, PMIX_PROC_RANK);
    PMIx_Info_load(&pi[1], PMIX_GLOBAL_RANK, &r, PMIX_PROC_RANK);
    PMIx_Info_load(&pi[2], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
    PMIx_Info_load(&pi[3], PMIX_NODE_RANK, &lr, PMIX_UINT16);
    load_u32(&pi[4], PMIX_APPNUM, 0);
    PMIx_Info_load(&pi[5], PMIX_HOSTNAME, host, PMIX_STRING);
    load_u32(&pi[6], PMIX_NODEID, 0);
    // Hand the array over without a copy; PMIX_INFO_FREE releases it.
    PMIX_LOAD_KEY(slot->key, PMIX_PROC_DATA);
    slot->value.type = PMIX_DATA_ARRAY;
    slot->value.data.darray = arr;
    return 0;
}

// "0,1,...,n-1"
static char *rank_list(int n)
{
    size_t cap = (size_t)n * 7 + 1, len = 0;
    char *s = malloc(cap);

    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int r = 0; r < n; r++)
        len += (size_t)snprintf(s + len, cap - len, r ? ",%d" : "%d", r);
    return s;
}

int osr_server_register_job(osr_job_t *job)
{
    enum { NJOB_KEYS = 15 };
    char host[256] = "localhost";
    char *peers = NULL, *node_regex = NULL, *proc_regex = NULL;
    pmix_info_t *info = NULL;
    size_t n = 0, ninfo = NJOB_KEYS + (size_t)job->npes;
    uint32_t npes = (uint32_t)job->npes;
    pmix_rank_t zero = 0;
    pmix_status_t rc;
    osr_sync_t s = OSR_SYNC_INIT;
    int ret = -1;

    if (gethostname(host, sizeof(host) - 1) != 0)
        strcpy(host, "localhost");
    host[sizeof(host) - 1] = '\0';
    peers = rank_list(job->npes);
    if (peers == NULL)
        goto out_free;
    // PMIx 4.2 keeps "0-3" verbatim ("raw:0-3") and then miscounts the local
    // procs, so hand it the explicit list.
    rc = PMIx_generate_regex(host, &node_regex);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_generate_ppn(peers, &proc_regex);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, OSR_NAME ": cannot build the PMIx node map: %s\n",
                PMIx_Error_string(rc));
        goto out_free;
    }
    if (job->debug)
        fprintf(stderr, OSR_NAME ": [debug] node map '%s', proc map '%s'\n", node_regex,
                proc_regex);

    PMIX_INFO_CREATE(info, ninfo);
    if (info == NULL)
        goto out_free;
    load_u32(&info[n++], PMIX_JOB_SIZE, npes);
    load_u32(&info[n++], PMIX_UNIV_SIZE, npes);
    load_u32(&info[n++], PMIX_MAX_PROCS, npes);
    load_u32(&info[n++], PMIX_LOCAL_SIZE, npes);
    load_u32(&info[n++], PMIX_NODE_SIZE, npes);
    load_u32(&info[n++], PMIX_APP_SIZE, npes);
    load_u32(&info[n++], PMIX_NUM_NODES, 1);
    load_u32(&info[n++], PMIX_JOB_NUM_APPS, 1);
    load_u32(&info[n++], PMIX_NODEID, 0);
    PMIx_Info_load(&info[n++], PMIX_NPROC_OFFSET, &zero, PMIX_PROC_RANK);
    PMIx_Info_load(&info[n++], PMIX_LOCALLDR, &zero, PMIX_PROC_RANK);
    PMIx_Info_load(&info[n++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIx_Info_load(&info[n++], PMIX_JOBID, job->nspace, PMIX_STRING);
    PMIx_Info_load(&info[n++], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
    PMIx_Info_load(&info[n++], PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
    for (int r = 0; r < job->npes; r++) {
        if (fill_proc_data(&info[n++], r, host) != 0)
            goto out_free;
    }

    rc = PMIx_server_register_nspace(job->nspace, job->npes, info, n, sync_done, &s);
    if (rc == PMIX_SUCCESS)
        rc = sync_wait(&s);
    else if (rc == PMIX_OPERATION_SUCCEEDED)
        rc = PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, OSR_NAME ": PMIx_server_register_nspace failed: %s\n",
                PMIx_Error_string(rc));
        goto out_free;
    }
    job->registered = true;
    ret = 0;

out_free:
    if (info != NULL)
        PMIX_INFO_FREE(info, ninfo);
    free(node_regex);
    free(proc_regex);
    free(peers);
    return ret;
}

// The server thread can block for ever on its data store's lock, held by
// a PE that died half-way through PMIx_Init: then oshrun would not even
// read its signals. A registration is bounded; the sync object outlives a
// wait that gave up (the callback may still come).
#define OSR_REGISTER_WAIT_S 20

static pmix_status_t sync_wait_bounded(osr_sync_t *s, int seconds)
{
    struct timespec until;
    int rc = 0;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&s->lock);
    while (!s->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->cond, &s->lock, &until);
    pmix_status_t st = s->done ? s->status : PMIX_ERR_TIMEOUT;
    pthread_mutex_unlock(&s->lock);
    return st;
}

int osr_server_register_pe(osr_job_t *job, int rank, char ***envp)
{
    pmix_proc_t proc;
    osr_sync_t *s = malloc(sizeof(*s));
    pmix_status_t rc;

    if (s == NULL)
        return -1;
    *s = (osr_sync_t)OSR_SYNC_INIT;
    PMIX_LOAD_PROCID(&proc, job->nspace, (pmix_rank_t)rank);
    rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL, sync_done, s);
    if (rc == PMIX_SUCCESS)
        rc = sync_wait_bounded(s, OSR_REGISTER_WAIT_S);
    else if (rc == PMIX_OPERATION_SUCCEEDED)
        rc = PMIX_SUCCESS;
    if (rc == PMIX_ERR_TIMEOUT) {
        fprintf(stderr,
                OSR_NAME ": the PMIx server did not register PE %d within %d s (its data store "
                         "stays locked: a PE that died while joining?); ending the job\n",
                rank, OSR_REGISTER_WAIT_S);
        job->pmix_unclean = true; // leave the stuck server alone: _exit at the end
        return -1;                // s stays: the callback may still come
    }
    free(s);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, OSR_NAME ": PMIx_server_register_client(%d) failed: %s\n", rank,
                PMIx_Error_string(rc));
        return -1;
    }
    rc = PMIx_server_setup_fork(&proc, envp);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, OSR_NAME ": PMIx_server_setup_fork(%d) failed: %s\n", rank,
                PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}
