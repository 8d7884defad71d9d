// SPDX-License-Identifier: BSD-3-Clause
/* shmem_init / shmem_finalize and the library's state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/init.h"
#include "core/rma.h"
#include "core/team.h"
#include "runtime/rt.h"

shm_state_t shm_state_g;
struct shm_ctx shm_ctx_default_g;

#define SHM_INTERNAL_WORDS 64 /* barrier flags: one per dissemination round */

/* shm_bad_pe, shm_bad_addr, shm_not_running: core/check.c. */

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* auto: yield when the PE's waiting threads may hold a core someone else
 * needs -- more PEs than cores on this host, or SHMEM_THREAD_MULTIPLE (the
 * program's own threads; a thread waiting on a shared context's counter waits
 * for the other threads' operations, which need a core to be issued). */
static int yield_wanted(const char *mode, int local_pes, int thread_level)
{
    if (strcmp(mode, "on") == 0 || strcmp(mode, "1") == 0)
        return 1;
    if (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0)
        return 0;
    if (strcmp(mode, "auto") != 0)
        shm_fatal("SHMEM_YIELD='%s' is not valid: expected on, off or auto", mode);
    return local_pes > online_cores() || thread_level == SHMEM_THREAD_MULTIPLE;
}

/* SHMEM_PROGRESS_THREAD: on, off, or auto (on when there are peers to serve). */
static int progress_wanted(const char *mode, int npes)
{
    if (strcmp(mode, "poll") == 0)
        return CDT_PROGRESS_POLL;
    if (strcmp(mode, "wait") == 0)
        return CDT_PROGRESS_WAIT;
    if (strcmp(mode, "on") == 0 || strcmp(mode, "1") == 0 || strcmp(mode, "yes") == 0)
        return CDT_PROGRESS_AUTO;
    if (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0 || strcmp(mode, "no") == 0)
        return CDT_PROGRESS_OFF;
    if (strcmp(mode, "auto") != 0)
        shm_fatal("SHMEM_PROGRESS_THREAD='%s' is not valid: expected auto, on, off, poll or wait",
                  mode);
    return npes > 1 ? CDT_PROGRESS_AUTO : CDT_PROGRESS_OFF;
}

/*
 * Settings that must be the same on every PE: the heap's size (collective
 * allocations land at the same offsets) and SHMEM_DIRECT (it decides how heap
 * AMOs are done, job-wide; mixed, they would tear). Published before the
 * init exchange, checked against PE 0's after it: a clear error, not a hang
 * or a wrong sum. The PE whose settings differ from PE 0's reports; a PE that
 * agrees but would map a differing same-host peer's heap waits for that
 * report to end the job, so the job ends with one message, not several.
 */
#define JOB_SETTINGS_KEY "shm.job"
typedef struct job_settings {
    uint64_t symmetric_size;
    int32_t direct;
    int32_t globals; /* SHMEM_DIRECT_GLOBALS: how AMOs on globals are done, job-wide */
    int32_t fabric;  /* fabric_needed() said yes (SHMEM_FABRIC, SHMEM_DIRECT_NOMAP, ...) */
    int32_t whole;   /* not compared: this PE's heap and globals can be mapped whole */
} job_settings_t;

/* SHMEM_FABRIC (see fabric_needed): why this job opens a fabric, or NULL. */
static const char *fabric_why;
static char fabric_why_buf[160];

static job_settings_t job_settings_mine(void)
{
    job_settings_t s = {.symmetric_size = shm_env_g.SYMMETRIC_SIZE,
                        .direct = shm_env_g.DIRECT ? 1 : 0,
                        .globals = shm_env_g.DIRECT_GLOBALS ? 1 : 0,
                        .fabric = fabric_why != NULL,
                        .whole = shm_rt_g.size == 1 || shm_heap_shared_whole()};
    return s;
}

static int job_settings_equal(const job_settings_t *a, const job_settings_t *b)
{
    return a->symmetric_size == b->symmetric_size && a->direct == b->direct &&
           a->globals == b->globals && a->fabric == b->fabric;
}

static job_settings_t job_settings_of(int pe)
{
    job_settings_t s;
    if (shm_rt_get(pe, JOB_SETTINGS_KEY, &s, sizeof(s)) != SHM_OK)
        shm_fatal("cannot read PE %d's job settings from the launcher (PMIx)", pe);
    return s;
}

/* Before mapping the same-host heaps: every local peer agrees with PE 0?
 * Returns the first local PE whose memory cannot be mapped whole, or -1. */
static int job_settings_wait_local(const job_settings_t *pe0, const job_settings_t *mine)
{
    int not_whole = mine->whole ? -1 : shm_state_g.me;
    for (int i = 0; i < shm_rt_g.local_size; i++) {
        int pe = shm_rt_g.local_peers[i];
        if (pe == shm_state_g.me)
            continue;
        job_settings_t s = pe == 0 ? *pe0 : job_settings_of(pe);
        if (!s.whole && (not_whole < 0 || pe < not_whole))
            not_whole = pe;
        if (pe == 0 || job_settings_equal(&s, pe0))
            continue;
        /* PE pe reports it and ends the job; give it ample time. */
        for (int ms = 0; ms < 30000; ms += 10)
            usleep(10000);
        shm_fatal("PE %d's SHMEM_DIRECT, SHMEM_DIRECT_GLOBALS, SHMEM_SYMMETRIC_SIZE, "
                  "SHMEM_FABRIC or SHMEM_DIRECT_NOMAP differs from PE 0's and it did not end "
                  "the job",
                  pe);
    }
    return not_whole;
}

static job_settings_t job_settings_check(void)
{
    job_settings_t mine = job_settings_mine();
    if (shm_state_g.me == 0)
        return mine;
    job_settings_t pe0 = job_settings_of(0);
    if (mine.symmetric_size != pe0.symmetric_size)
        shm_fatal("SHMEM_SYMMETRIC_SIZE is %llu bytes on PE %d but %llu on PE 0: it must be "
                  "the same on every PE",
                  (unsigned long long)mine.symmetric_size, shm_state_g.me,
                  (unsigned long long)pe0.symmetric_size);
    if (mine.direct != pe0.direct)
        shm_fatal("SHMEM_DIRECT is %d on PE %d but %d on PE 0: it must be the same on every PE",
                  mine.direct, shm_state_g.me, pe0.direct);
    if (mine.globals != pe0.globals)
        shm_fatal("SHMEM_DIRECT_GLOBALS is %d on PE %d but %d on PE 0: it must be the same on "
                  "every PE",
                  mine.globals, shm_state_g.me, pe0.globals);
    if (mine.fabric != pe0.fabric)
        shm_fatal("PE %d opens %s fabric (%s) but PE 0 %s: SHMEM_FABRIC and SHMEM_DIRECT_NOMAP "
                  "must be the same on every PE",
                  shm_state_g.me, mine.fabric ? "a" : "no", fabric_why_buf,
                  pe0.fabric ? "does" : "does not");
    return pe0;
}

/*
 * SHMEM_FABRIC=auto: a job whose PEs all run on one host, each mapping the
 * others' heap and globals (SHMEM_DIRECT and SHMEM_DIRECT_GLOBALS on, no
 * PE in SHMEM_DIRECT_NOMAP), or a job of one PE, moves every byte by copy
 * and every atomic by CPU atomics: it opens no fabric, and does not even
 * load libfabric (~0.2 s a process here: docs/SCALING.md). Decided from
 * what every PE sees alike (host count and the settings checked job-wide:
 * job_settings_check); whether every PE's memory can be mapped whole comes
 * with the exchange (fabric_after_none). Returns why a fabric is needed,
 * or NULL.
 */
static const char *fabric_needed(void)
{
    const char *mode = shm_env_g.FABRIC;
    const char *why = NULL;
    if (strcmp(mode, "always") == 0)
        why = "SHMEM_FABRIC=always";
    else if (strcmp(mode, "auto") != 0)
        shm_fatal("SHMEM_FABRIC='%s' is not valid: expected auto or always", mode);
    else if (shm_rt_g.nnodes > 1)
        why = "PEs on more than one host";
    else if (!shm_env_g.DIRECT)
        why = "SHMEM_DIRECT=0";
    else if (!shm_env_g.DIRECT_GLOBALS)
        why = "SHMEM_DIRECT_GLOBALS=0";
    else if (shm_env_g.DIRECT_NOMAP && *shm_env_g.DIRECT_NOMAP)
        why = "SHMEM_DIRECT_NOMAP is set";
    snprintf(fabric_why_buf, sizeof(fabric_why_buf), "%s",
             why ? why
                 : (shm_rt_g.size == 1 ? "one PE" : "all PEs on one host, each mapping the "
                                                    "others' heap and globals"));
    return why;
}

static int init_depth;

/* cdt_init + the segments + the default context. */
/* A limit near its end when the fabric or a thread could not be had: what
 * to raise (the provider said only "Too many open files" or EAGAIN). */
static const char *limits_hint(char *buf, size_t len)
{
    if (shm_rt_hint_nofile(buf, len, "this PE", shm_rt_g.size, 0) == 0)
        shm_rt_hint_nproc(buf, len, 0);
    return buf;
}

/* libfabric's shm provider keeps its regions in /dev/shm: a host that has
 * too little says so once, up front, not by a PE's SIGBUS later. */
static void devshm_check(const cdt_config_t *cfg)
{
    const char *prov = cfg->provider && *cfg->provider ? cfg->provider
                                                        : shm_env_from_process("FI_PROVIDER");
    int shm = prov && *prov ? strncmp(prov, "shm", 3) == 0 : cfg->nnodes <= 1;
    char msg[640];
    if (!shm || cfg->no_fabric || shm_rt_g.local_rank != 0 ||
        shm_rt_hint_devshm(msg, sizeof msg, shm_rt_g.local_size) == 0)
        return;
    SHM_WARN(INIT, "%s", msg);
}

static void fabric_open(const cdt_config_t *cfg, unsigned ctx_flags)
{
    shm_status_t st;
    char hint[640];
    devshm_check(cfg);
    if ((st = cdt_init(cfg)) != SHM_OK)
        shm_fatal("network initialisation failed: %s%s", shm_status_str(st),
                  limits_hint(hint, sizeof hint));
    for (int s = 0; s < SHM_NSEGS; s++)
        if ((st = cdt_seg_expose(s, (void *)shm_seg_g[s].base, shm_seg_g[s].len)) != SHM_OK)
            shm_fatal("cannot register %s segment: %s", s == SHM_SEG_HEAP ? "heap" : "data",
                      shm_status_str(st));
    if ((st = cdt_ctx_init(&shm_ctx_default_g.cdt, ctx_flags)) != SHM_OK)
        shm_fatal("default context: %s%s", shm_status_str(st), limits_hint(hint, sizeof hint));
}

/*
 * The job went without a fabric, but PE pe's memory cannot be mapped whole
 * by its peers (its globals could not be moved onto shared memory, or only
 * part of them): every PE learnt it from the same exchange, so every PE
 * opens the fabric now and exchanges the addresses in a second fence.
 */
static void fabric_after_none(cdt_config_t *cfg, unsigned ctx_flags, int pe)
{
    snprintf(fabric_why_buf, sizeof(fabric_why_buf),
             "PE %d's heap or globals cannot be mapped whole by the other PEs", pe);
    fabric_why = fabric_why_buf;
    SHM_INFO(INIT, "opening the fabric after all: %s", fabric_why);
    cdt_ctx_fini(&shm_ctx_default_g.cdt);
    cdt_fini();
    cfg->no_fabric = 0;
    fabric_open(cfg, ctx_flags);
    shm_status_t st = cdt_connect();
    if (st != SHM_OK)
        shm_fatal("address exchange failed: %s", shm_status_str(st));
}

/* No fabric: every other PE's heap and globals must be mapped here, whole. */
static void no_fabric_check_mapped(void)
{
    for (int i = 0; i < shm_rt_g.local_size; i++) {
        int pe = shm_rt_g.local_peers[i];
        for (int s = 0; s < SHM_NSEGS && pe != shm_state_g.me; s++) {
            const shm_seg_peers_t *p = &shm_seg_peer_g[s];
            if (shm_seg_g[s].len == 0 ||
                (p->base && p->base[pe] && p->lo == 0 && p->len == shm_seg_g[s].len))
                continue;
            shm_fatal("PE %d's %s could not be mapped here (see the warning above) and this "
                      "job opened no fabric to reach it (SHMEM_FABRIC=auto); run with "
                      "SHMEM_FABRIC=always",
                      pe, s == SHM_SEG_HEAP ? "heap" : "globals (data+BSS)");
        }
    }
}

/*
 * Where start-up time goes: each phase's wall time, logged under
 * SHMEM_LOG_LEVEL=init=debug once init (or finalize) is done. Marks are
 * taken always (clock_gettime is a vDSO call); only the log is optional.
 */
#define INIT_MAX_PHASES 16
static struct {
    const char *name[INIT_MAX_PHASES];
    double t[INIT_MAX_PHASES];
    int n;
    double t0;
} init_clock;

static double init_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void init_clock_start(void)
{
    init_clock.n = 0;
    init_clock.t0 = init_now();
}

static void init_phase(const char *name)
{
    if (init_clock.n < INIT_MAX_PHASES) {
        init_clock.name[init_clock.n] = name;
        init_clock.t[init_clock.n++] = init_now();
    }
}

/* Seconds from exec to now (process start from /proc, 10 ms resolution). */
static double init_since_exec(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    char buf[1024];
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long start = 0;
    /* After ")": state is field 3, starttime field 22. */
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    long hz = sysconf(_SC_CLK_TCK);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 - (double)start / (double)(hz > 0 ? hz : 100);
}

static void init_clock_log(const char *what)
{
    if (shm_log_level_g[SHM_LOG_INIT] < SHM_LVL_DEBUG)
        return;
    char line[768];
    size_t off = 0;
    double prev = init_clock.t0;
    for (int i = 0; i < init_clock.n && off < sizeof(line); i++) {
        off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %.1f", i ? ", " : "",
                                init_clock.name[i], (init_clock.t[i] - prev) * 1e3);
        prev = init_clock.t[i];
    }
    double total = (prev - init_clock.t0) * 1e3;
    if (strcmp(what, "init") == 0)
        SHM_DEBUG(INIT, "init %.1f ms (process started %.0f ms before it returned): %s ms", total,
                  init_since_exec() * 1e3, line);
    else
        SHM_DEBUG(INIT, "%s %.1f ms: %s ms", what, total, line);
}

/* libinfinipath's crash-signal handlers (it comes with libfabric) are taken
 * back where libfabric is loaded: conduit/ofi/ofi_dl.c. */

/*
 * A program that returns from main (or calls exit) without shmem_finalize.
 * With status 0 it is finalized here, collectively, as if it had called it.
 * Any other status is a failure, often on one PE only (an error path calling
 * exit(1)): the collective finalize would then wait for PEs that are in a
 * barrier or waiting for data this PE will never send, and the job would
 * hang. So the PE leaves unfinalized, and the launcher, seeing a PE gone
 * before shmem_finalize, ends the job with its status (oshrun does; Slurm and
 * mpirun end a job whose task fails). Without on_exit (not glibc) the status
 * is unknown and every exit finalizes.
 */
static void at_exit_finalize(int status, void *arg)
{
    (void)arg;
    if (shm_state_g.run_state != SHM_STATE_RUNNING)
        return;
    if (status != 0) {
        SHM_INFO(INIT, "exit status %d before shmem_finalize: leaving without the collective "
                       "finalize (the launcher ends the job)",
                 status);
        return;
    }
    init_depth = 1;
    shm_core_finalize();
}

#if !defined(__GLIBC__)
static void at_exit_finalize_nostatus(void)
{
    at_exit_finalize(0, NULL);
}
#endif

/* 1.6: init calls nest; the library ends with the matching last finalize (init_depth). */

void shm_core_init(int requested)
{
    if (shm_state_g.run_state == SHM_STATE_RUNNING) {
        init_depth++;
        return;
    }
    if (shm_state_g.run_state == SHM_STATE_FINALIZED)
        shm_fatal("shmem_init called after shmem_finalize: the library cannot be restarted");

    init_clock_start();
    shm_status_t st = shm_rt_init();
    if (st != SHM_OK)
        shm_fatal("cannot reach the launcher (PMIx): %s", shm_status_str(st));
    shm_log_set_identity(shm_rt_g.rank);
    init_phase(shm_rt_g.singleton ? "runtime (singleton)" : "runtime connect");

    char err[256];
    if (shm_env_load(&shm_env_g, shm_env_from_process, err, sizeof(err)) != SHM_OK)
        shm_fatal("%s", err);
    if (shm_log_configure(shm_env_g.LOG_LEVEL) != SHM_OK)
        shm_fatal("SHMEM_LOG_LEVEL='%s' is not valid: expected error|warn|info|debug|trace, "
                  "optionally with sub=level pairs",
                  shm_env_g.LOG_LEVEL);
    if (shm_env_g.LAUNCHER_TIMEOUT < 0 || shm_env_g.LAUNCHER_TIMEOUT > 1000000)
        shm_fatal("SHMEM_LAUNCHER_TIMEOUT=%ld is not valid: expected seconds 0..1000000 (0: no limit)",
                  (long)shm_env_g.LAUNCHER_TIMEOUT);
    shm_rt_watch_timeout((int)shm_env_g.LAUNCHER_TIMEOUT);

    shm_state_g.me = shm_rt_g.rank;
    shm_state_g.npes = shm_rt_g.size;
    shm_state_g.thread_level = requested;
    shm_state_g.debug = shm_env_g.DEBUG;

    int direct = shm_env_g.DIRECT && shm_rt_g.local_size > 1;
    /* SHMEM_SYMMETRIC_SIZE is what the program may allocate (the spec's heap is
     * "at least as large"): the library's own symmetric words and the team
     * workspaces come on top, each block aligned to 64. */
    size_t own = SHM_INTERNAL_WORDS * sizeof(uint64_t) + 64 +
                 shm_team_heap_bytes(shm_rt_g.size) + 64;
    if (shm_env_g.SYMMETRIC_SIZE > SIZE_MAX / 2)
        shm_fatal("SHMEM_SYMMETRIC_SIZE=%zu bytes is more than this machine can address",
                  shm_env_g.SYMMETRIC_SIZE);
    if ((st = shm_heap_init(shm_env_g.SYMMETRIC_SIZE + own, direct ? shm_rt_g.nspace : NULL,
                            shm_rt_g.rank)) == SHM_ERR_NOMEM)
        shm_rt_abort(1, ""); /* the heap said what is short, and what to do */
    else if (st != SHM_OK)
        shm_fatal("symmetric heap: %s", shm_status_str(st));
    init_phase("heap set-up");

    fabric_why = fabric_needed();
    int progress = progress_wanted(shm_env_g.PROGRESS_THREAD, shm_rt_g.size);
    /* The progress thread drives the default endpoint beside the PE's own calls. */
    int thread_safe = requested == SHMEM_THREAD_MULTIPLE || progress;
    cdt_config_t cfg = {
        .rank = shm_rt_g.rank,
        .size = shm_rt_g.size,
        .local_size = shm_rt_g.local_size,
        .nnodes = shm_rt_g.nnodes,
        .provider = shm_env_g.OFI_PROVIDER,
        .domain = shm_env_g.OFI_DOMAIN,
        .thread_safe = thread_safe,
        .inject_size = shm_env_g.INJECT_SIZE,
        .quiet_flush = shm_env_g.QUIET_FLUSH,
        .bounce_size = shm_env_g.BOUNCE_SIZE,
        .bounce_buffers = shm_env_g.BOUNCE_BUFFERS,
        .fragment_size = shm_env_g.FRAGMENT_SIZE,
        .progress_thread = progress,
        .progress_interval_us = shm_env_g.PROGRESS_INTERVAL,
        .fabric_timeout_s = shm_env_g.FABRIC_TIMEOUT,
        .yield = yield_wanted(shm_env_g.YIELD, shm_rt_g.local_size, requested),
        .eager_connect = shm_env_g.OFI_EAGER_CONNECT,
        .no_fabric = fabric_why == NULL,
    };
    unsigned ctx_flags = requested == SHMEM_THREAD_MULTIPLE ? CDT_CTX_SHARED : 0;
    fabric_open(&cfg, ctx_flags);
    init_phase(cfg.no_fabric ? "no fabric" : "fabric open");
    shm_ctx_default_g.is_default = 1;
    job_settings_t js = job_settings_mine();
    if (shm_rt_put(JOB_SETTINGS_KEY, &js, sizeof(js)) != SHM_OK)
        shm_fatal("cannot publish this PE's job settings to the launcher (PMIx)");
    if ((st = cdt_connect()) != SHM_OK)
        shm_fatal("address exchange failed: %s", shm_status_str(st));
    init_phase("exchange");
    job_settings_t pe0 = job_settings_check();
    int not_whole = direct ? job_settings_wait_local(&pe0, &js) : -1;
    if (cfg.no_fabric && not_whole >= 0) {
        fabric_after_none(&cfg, ctx_flags, not_whole);
        init_phase("fabric open after all");
    }
    SHM_INFO(INIT, "%s fabric: %s", fabric_why ? "opened a" : "no", fabric_why_buf);
    /* The exchange was a fence: every local PE's heap object exists now. */
    if (direct && (st = shm_heap_shared_map_peers(shm_rt_g.nspace, shm_rt_g.rank, shm_rt_g.size,
                                                  shm_rt_g.local_peers,
                                                  shm_rt_g.local_size)) != SHM_OK)
        shm_fatal("same-host heap mapping: %s", shm_status_str(st));
    if (cfg.no_fabric)
        no_fabric_check_mapped();
    if ((st = cdt_progress_thread_start()) != SHM_OK) {
        char hint[512];
        shm_fatal("cannot start the progress thread%s", limits_hint(hint, sizeof hint));
    }
    init_phase("settings check+peer heaps");

    /* First allocation, same on every PE: the library's own symmetric words. */
    shm_state_g.barrier_psync = shm_heap_alloc(SHM_INTERNAL_WORDS * sizeof(uint64_t), 0);
    if (shm_state_g.barrier_psync == NULL)
        shm_fatal("symmetric heap too small for the library's own use");
    /* Zero already (a heap this init mapped); not cleared, for the reason
     * shm_team_init gives: a peer may already have written into it. */
    shm_state_g.barrier_epoch = 0;
    shm_team_init(); /* predefined teams and the team workspace pool (same on every PE) */
    init_phase("teams");

    shm_state_g.run_state = SHM_STATE_RUNNING;
    init_depth = 1;
    if (shm_state_g.me == 0 && (shm_env_g.VERSION || shm_env_g.INFO))
        printf("ofishmem %s (OpenSHMEM %d.%d), %d PEs, provider %s%s%s%s\n",
               OFISHMEM_VERSION_STRING, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION,
               shm_state_g.npes, cdt_provider_name(), fabric_why ? "" : " (no fabric: ",
               fabric_why ? "" : fabric_why_buf, fabric_why ? "" : ")");
    if (shm_state_g.me == 0 && shm_env_g.INFO) {
        shm_env_print(stdout, &shm_env_g, 0);
        printf("ofishmem fabric: %s (%s; SHMEM_FABRIC=%s)\n",
               fabric_why ? "opened" : "none, libfabric not loaded", fabric_why_buf,
               shm_env_g.FABRIC);
        cdt_info_print(stdout);
        fflush(stdout);
    }
    static int registered;
#if defined(__GLIBC__)
    if (!registered && on_exit(at_exit_finalize, NULL) == 0)
        registered = 1;
#else
    if (!registered && atexit(at_exit_finalize_nostatus) == 0)
        registered = 1;
#endif
    /* Every PE's memory is registered and every address known before anyone returns. */
    if ((st = shm_rt_barrier()) != SHM_OK)
        shm_fatal("init barrier failed: %s", shm_status_str(st));
    init_phase("barrier");
    if (cdt_wireup()) {
        shm_coll_barrier_world(); /* every pair's connection is up before anyone returns */
        init_phase("wire-up");
    }
    /* Everyone on this host has mapped our memory: stop serving it. */
    shm_heap_shared_done();
    init_clock_log("init");
}

void shm_core_finalize(void)
{
    if (shm_state_g.run_state != SHM_STATE_RUNNING)
        return;
    if (--init_depth > 0) {
        /* An inner finalize still completes this PE's communication. */
        cdt_quiet(&shm_ctx_default_g.cdt);
        return;
    }
    init_clock_start();
    /* Every context's puts land (injected ones read back, ofi_rma.c) while
     * every peer is still here to answer: a context the program left
     * open is otherwise quieted only when it is closed, after the fence. */
    shm_ctx_quiet_all();
    shm_coll_barrier_world();
    /* The barrier's own last flags too, before this PE stops sending. */
    cdt_quiet(&shm_ctx_default_g.cdt);
    init_phase("barrier");
    shm_state_g.run_state = SHM_STATE_FINALIZED;
    /* Nobody may still target our memory when it goes: one more fence,
     * during which this PE keeps driving the fabric. Without a progress
     * thread a peer may still need us: a provider that moves data only in
     * the sender's progress (sockets) had not sent our last barrier flag
     * (the peer waited for it while we sat in the fence: 6 of 9 runs of
     * pe_barrier_sync on sockets hung so), and a peer still in the barrier
     * may need our answers (its liveness probe, atomics served here). */
    shm_rt_barrier_poll(cdt_poll_idle);
    init_phase("runtime fence");
    cdt_progress_thread_stop(); /* it polls the default context closed below */
    shm_team_fini();
    cdt_ctx_fini(&shm_ctx_default_g.cdt);
    cdt_fini();
    init_phase("fabric close");
    shm_heap_fini();
    init_phase("heap");
    init_clock_log("finalize");
    shm_rt_fini();
}

void shm_core_wait_progress(void)
{
    cdt_poll_idle();
}
