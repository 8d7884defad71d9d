// SPDX-License-Identifier: BSD-3-Clause
//
// The process half of oshrun: start the PEs, watch them, and end the whole
// job when one fails. Everything here runs on the main thread; it sleeps in
// poll() on a signalfd (SIGCHLD, SIGINT, SIGTERM, SIGHUP) and on the
// self-pipe the PMIx upcalls write to.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oshrun.h"

// Time a PE gets between SIGTERM and SIGKILL once the job is ending.
#define OSR_GRACE_MS 1000

typedef struct osr_exit {
    int rank;
    pid_t pid;
    int wstatus;
    bool connected, finalized;
} osr_exit_t;

typedef struct osr_loop {
    osr_job_t *job;
    int nalive;
    bool ending;           // the job is being torn down
    bool killed;           // SIGKILL already sent
    int64_t kill_at;       // ms, when ending: escalate to SIGKILL
    int64_t timeout_at;    // ms, 0: no --timeout
    double timeout_s;
    int status;            // exit status once ending
    int late_status;       // first non-zero exit after shmem_finalize
    bool abort_seen;
    osr_exit_t *batch;     // PEs reaped in one wake-up
    osr_tag_t *tag;        // --tag-output, else NULL
} osr_loop_t;

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// An exit status must not wrap to 0 for a failure (e.g. abort status 256).
static int clamp_status(int s)
{
    if (s != 0 && (s & 0xff) == 0)
        return 1;
    return s & 0xff;
}

static void signal_all(osr_loop_t *L, int sig)
{
    for (int r = 0; r < L->job->npes; r++) {
        if (L->job->pes[r].alive)
            kill(L->job->pes[r].pid, sig);
    }
}

// First failure wins; later ones are consequences and stay quiet.
static void end_job(osr_loop_t *L, int status, int sig)
{
    if (L->ending)
        return;
    L->ending = true;
    L->status = status;
    L->kill_at = now_ms() + OSR_GRACE_MS;
    signal_all(L, sig);
}

// ---------------------------------------------------------------------------
// Starting PEs

// Descriptors open when oshrun started (its caller's), the only ones besides
// 0-2 a PE inherits. Everything oshrun opens itself stays behind: the PMIx
// server accepts each PE's connection before it forks the next, so PE r
// used to start with the server's ends of PEs 0..r-1's connections (r
// sockets it never uses, and a dead PE's connection kept open by its peers).
#define OSR_KEEP_MAX 64
static int osr_keep[OSR_KEEP_MAX];
static int osr_nkeep;

void osr_fds_note_inherited(void)
{
    for (int fd = 3; fd < 1024 && osr_nkeep < OSR_KEEP_MAX; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            osr_keep[osr_nkeep++] = fd;
}

// Async-signal-safe: closes every descriptor above 2 that is not kept.
static void child_close_fds(void)
{
    unsigned lo = 3;
    for (int i = 0; i < osr_nkeep; i++) {
        if ((unsigned)osr_keep[i] > lo)
            close_range(lo, (unsigned)osr_keep[i] - 1, 0);
        lo = (unsigned)osr_keep[i] + 1;
    }
    close_range(lo, ~0u, 0);
}

static void child_exec(const osr_job_t *job, const char *path, char **argv, char **env,
                       int rank, int devnull, pid_t parent, const cpu_set_t *bind,
                       const int *tagfd)
{
    struct sigaction sa;

    // Only async-signal-safe calls between fork and exec: PMIx threads exist.
    // Undo whatever PMIx may have set to SIG_IGN; keep what our caller set.
    memset(&sa, 0, sizeof(sa));
    for (int s = 1; s < NSIG; s++) {
        sa.sa_handler = sigismember(&job->orig_ign, s) ? SIG_IGN : SIG_DFL;
        sigaction(s, &sa, NULL);
    }
    // If oshrun is killed outright, its PEs must not outlive it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    if (rank != 0 && devnull >= 0)
        dup2(devnull, STDIN_FILENO);
    if (tagfd != NULL && (dup2(tagfd[0], STDOUT_FILENO) < 0 || dup2(tagfd[1], STDERR_FILENO) < 0))
        _exit(127);
    child_close_fds();
    if (bind != NULL && sched_setaffinity(0, sizeof(*bind), bind) != 0) {
        static const char bmsg[] = OSR_NAME ": --bind-to: cannot bind a PE\n";
        ssize_t ign = write(STDERR_FILENO, bmsg, sizeof(bmsg) - 1);
        (void)ign;
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &job->orig_mask, NULL);
    execve(path, argv, env);

    static const char msg[] = OSR_NAME ": exec failed for a PE\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)ignored;
    _exit(127);
}

static char **env_dup(char **env)
{
    size_t n = 0;
    char **copy;

    while (env[n] != NULL)
        n++;
    // PMIx_server_setup_fork grows this array with realloc and may free
    // entries it replaces, so every string is our own heap copy.
    copy = calloc(n + 1, sizeof(*copy));
    if (copy == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        copy[i] = strdup(env[i]);
        if (copy[i] == NULL) {
            for (size_t j = 0; j < i; j++)
                free(copy[j]);
            free(copy);
            return NULL;
        }
    }
    return copy;
}

static void env_free(char **env)
{
    if (env == NULL)
        return;
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

// --report-bindings: one line per PE, as Open MPI prints them.
static void report_binding(const osr_opts_t *o, int rank, const cpu_set_t *set)
{
    char list[256] = "";
    size_t n = 0;

    if (set == NULL) {
        fprintf(stderr, OSR_NAME ": PE %d not bound\n", rank);
        return;
    }
    for (int c = 0; c < CPU_SETSIZE && n + 8 < sizeof(list); c++) {
        if (CPU_ISSET(c, set))
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%d", n ? "," : "", c);
    }
    fprintf(stderr, OSR_NAME ": PE %d bound to %s: CPU %s\n", rank, osr_bind_name(o->bind), list);
}

static int spawn_all(osr_loop_t *L, const osr_opts_t *o, const char *path, char **base_env)
{
    osr_job_t *job = L->job;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t self = getpid();
    char **argv = o->prog_argv;
    cpu_set_t *bind = osr_bind_sets(o->bind, job->npes);
    int ret = 0;

    if (o->bind != OSR_BIND_NONE && bind == NULL) {
        fprintf(stderr, OSR_NAME ": --bind-to %s: cannot read this process's CPUs\n",
                osr_bind_name(o->bind));
        ret = -1;
    }

    for (int r = 0; r < job->npes && ret == 0; r++) {
        char **env = env_dup(base_env);

        if (env == NULL || osr_server_register_pe(job, r, &env) != 0) {
            env_free(env);
            ret = -1;
            break;
        }
        int tagfd[2] = {-1, -1};
        if (L->tag != NULL)
            osr_tag_fds(L->tag, r, &tagfd[0], &tagfd[1]);
        pid_t pid = fork();
        if (pid == 0)
            child_exec(job, path, argv, env, r, devnull, self, bind ? &bind[r] : NULL,
                       L->tag != NULL ? tagfd : NULL);
        if (L->tag != NULL)
            osr_tag_forked(L->tag, r);
        env_free(env);
        if (pid < 0) {
            osr_limits_fork_failed(r, errno, job->npes - r);
            ret = -1;
            break;
        }
        job->pes[r].pid = pid;
        job->pes[r].alive = true;
        osr_sweeper_add(pid);
        L->nalive++;
        if (job->debug)
            fprintf(stderr, OSR_NAME ": [debug] PE %d is pid %d\n", r, (int)pid);
        if (o->report_bindings)
            report_binding(o, r, bind ? &bind[r] : NULL);
    }
    if (devnull >= 0)
        close(devnull);
    free(bind);
    return ret;
}

// ---------------------------------------------------------------------------
// Reacting to events

static int rank_of(const osr_job_t *job, pid_t pid)
{
    for (int r = 0; r < job->npes; r++) {
        if (job->pes[r].pid == pid && job->pes[r].alive)
            return r;
    }
    return -1;
}

static void on_exit_pe(osr_loop_t *L, const osr_exit_t *e)
{
    int st = e->wstatus;

    if (L->ending)
        return;
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        fprintf(stderr, OSR_NAME ": PE %d (pid %d) was killed by signal %d (%s); ending the job\n",
                e->rank, (int)e->pid, sig, strsignal(sig));
        end_job(L, 128 + sig, SIGTERM);
        return;
    }
    int code = WEXITSTATUS(st);
    if (e->connected && !e->finalized) {
        fprintf(stderr,
                OSR_NAME ": PE %d (pid %d) exited with status %d before shmem_finalize; "
                         "ending the job\n",
                e->rank, (int)e->pid, code);
        // A clean-looking 0 must not hide that the job was cut short.
        end_job(L, code ? code : 1, SIGTERM);
    } else if (!e->connected && code != 0) {
        fprintf(stderr, OSR_NAME ": PE %d (pid %d) exited with status %d; ending the job\n",
                e->rank, (int)e->pid, code);
        end_job(L, code, SIGTERM);
    } else if (code != 0 && L->late_status == 0) {
        L->late_status = code;
    }
}

static void on_abort(osr_loop_t *L, int rank, int status, const char *msg)
{
    size_t len = strlen(msg);
    pid_t pid = rank >= 0 ? L->job->pes[rank].pid : 0;

    if (L->ending)
        return;
    while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
        len--;
    if (len > 0)
        fprintf(stderr, OSR_NAME ": PE %d (pid %d) aborted the job with status %d: %.*s\n", rank,
                (int)pid, status, (int)len, msg);
    end_job(L, clamp_status(status), SIGTERM);
}

static void on_signal(osr_loop_t *L, int sig)
{
    if (sig == SIGCHLD)
        return;
    if (L->ending) {
        // Asked twice: stop waiting for the grace period.
        signal_all(L, SIGKILL);
        L->killed = true;
        return;
    }
    fprintf(stderr, OSR_NAME ": received signal %d (%s); ending the job\n", sig, strsignal(sig));
    end_job(L, 128 + sig, sig);
}

// Reap every exited child into L->batch from index n; returns the new count.
static int reap(osr_loop_t *L, int n)
{
    int st;
    pid_t pid;

    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        int r = rank_of(L->job, pid);
        if (r < 0)
            continue;
        L->job->pes[r].alive = false;
        L->nalive--;
        // Also after a clean-looking exit: _exit(0) before shmem_finalize
        // leaves the regions too (a PE that finalized has removed its own).
        osr_sweep_pid(pid); // libfabric shm's region files (sweep.c)
        L->batch[n++] = (osr_exit_t){.rank = r, .pid = pid, .wstatus = st};
    }
    return n;
}

// One wake-up. Reap first, then read what the upcalls recorded: a PE that
// finalized or aborted has its record in place before it can exit, so this
// order never mistakes a clean exit for a failure.
static void process(osr_loop_t *L)
{
    osr_job_t *job = L->job;
    int n = reap(L, 0);
    bool aborted = false;
    int arank = -1, astatus = 0;
    char *amsg = NULL;

    pthread_mutex_lock(&job->lock);
    for (int i = 0; i < n; i++) {
        L->batch[i].connected = job->shared.pe[L->batch[i].rank].connected;
        L->batch[i].finalized = job->shared.pe[L->batch[i].rank].finalized;
        if (L->batch[i].connected && !L->batch[i].finalized)
            job->pmix_unclean = true;
    }
    if (job->shared.aborted && !L->abort_seen) {
        L->abort_seen = aborted = true;
        arank = job->shared.abort_rank;
        astatus = job->shared.abort_status;
        amsg = job->shared.abort_msg;
        job->shared.abort_msg = NULL;
    }
    pthread_mutex_unlock(&job->lock);

    // A crash elsewhere is the likelier root cause of an abort (a survivor's
    // put to a dead PE fails and it aborts), and the abort may arrive before
    // the dead PE is reaped: give the crash a moment to show up.
    if (aborted) {
        for (int tries = 0; tries < 25; tries++) {
            bool crash = false;
            for (int i = 0; i < n; i++)
                crash |= WIFSIGNALED(L->batch[i].wstatus) && L->batch[i].rank != arank;
            if (crash)
                break;
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
            int old_n = n;
            n = reap(L, n);
            pthread_mutex_lock(&job->lock);
            for (int i = old_n; i < n; i++) {
                L->batch[i].connected = job->shared.pe[L->batch[i].rank].connected;
                L->batch[i].finalized = job->shared.pe[L->batch[i].rank].finalized;
                if (L->batch[i].connected && !L->batch[i].finalized)
                    job->pmix_unclean = true;
            }
            pthread_mutex_unlock(&job->lock);
        }
        for (int i = 0; i < n; i++) {
            if (WIFSIGNALED(L->batch[i].wstatus) && L->batch[i].rank != arank)
                on_exit_pe(L, &L->batch[i]);
        }
        on_abort(L, arank, astatus, amsg ? amsg : "");
        free(amsg);
    }
    for (int i = 0; i < n; i++)
        on_exit_pe(L, &L->batch[i]);
}

static void drain(int fd)
{
    char buf[64];

    while (read(fd, buf, sizeof(buf)) > 0)
        ;
}

static void read_signals(osr_loop_t *L, int sfd)
{
    struct signalfd_siginfo si;

    while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        on_signal(L, (int)si.ssi_signo);
}

static int next_wait_ms(const osr_loop_t *L)
{
    int64_t due = INT64_MAX, now = now_ms();

    if (L->ending && !L->killed)
        due = L->kill_at;
    else if (!L->ending && L->timeout_at)
        due = L->timeout_at;
    if (due == INT64_MAX)
        return -1;
    return due <= now ? 0 : (int)(due - now > INT_MAX ? INT_MAX : due - now);
}

static void check_deadlines(osr_loop_t *L)
{
    int64_t now = now_ms();

    if (!L->ending && L->timeout_at && now >= L->timeout_at) {
        fprintf(stderr, OSR_NAME ": job timed out after %g s; ending the job\n", L->timeout_s);
        end_job(L, 124, SIGTERM);
    }
    if (L->ending && !L->killed && now >= L->kill_at) {
        signal_all(L, SIGKILL);
        L->killed = true;
    }
}

// ---------------------------------------------------------------------------

// Resolves prog like execvp would, so "not found" is reported once, up front.
static char *find_prog(const char *prog, int *err)
{
    const char *path = getenv("PATH");
    char *full = NULL;

    *err = ENOENT;
    if (strchr(prog, '/') != NULL) {
        if (access(prog, X_OK) == 0)
            return strdup(prog);
        *err = errno;
        return NULL;
    }
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p = strchr(p, ':') + 1) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        struct stat sb;

        if (asprintf(&full, "%.*s/%s", (int)len, len ? p : ".", prog) < 0)
            return NULL;
        if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (access(full, X_OK) == 0)
                return full;
            *err = EACCES;
        }
        free(full);
        full = NULL;
        if (end == NULL)
            break;
    }
    return NULL;
}

int osr_job_run(osr_job_t *job, const osr_opts_t *opts, char **base_env)
{
    osr_loop_t L = {.job = job, .timeout_s = opts->timeout_s};
    int sfd = -1, err = 0;
    char *path = NULL;

    path = find_prog(opts->prog_argv[0], &err);
    if (path == NULL) {
        fprintf(stderr, OSR_NAME ": cannot run '%s': %s\n", opts->prog_argv[0],
                strerror(err ? err : ENOENT));
        return err == EACCES ? 126 : 127;
    }
    L.batch = calloc((size_t)job->npes, sizeof(*L.batch));
    sfd = signalfd(-1, &job->handled, SFD_NONBLOCK | SFD_CLOEXEC);
    if (L.batch == NULL || sfd < 0) {
        fprintf(stderr, OSR_NAME ": setup failed: %s\n", strerror(errno));
        L.status = 1;
        goto out;
    }

    if (opts->tag_output && (L.tag = osr_tag_new(job->npes)) == NULL) {
        L.status = 1;
        goto out;
    }
    if (opts->timeout_s > 0)
        L.timeout_at = opts->start_ms + (int64_t)(opts->timeout_s * 1000.0 + 0.5); /* from launch */
    if (spawn_all(&L, opts, path, base_env) != 0)
        end_job(&L, 1, SIGTERM);
    if (L.tag != NULL && osr_tag_start(L.tag) != 0) {
        fprintf(stderr, OSR_NAME ": --tag-output: cannot start its thread\n");
        end_job(&L, 1, SIGTERM);
    }

    while (L.nalive > 0) {
        struct pollfd pfd[2] = {
            {.fd = sfd, .events = POLLIN},
            {.fd = job->wake_fd[0], .events = POLLIN},
        };
        int rc = poll(pfd, 2, next_wait_ms(&L));

        if (rc < 0 && errno != EINTR) {
            fprintf(stderr, OSR_NAME ": poll failed: %s\n", strerror(errno));
            end_job(&L, 1, SIGKILL);
            L.killed = true;
        }
        if (rc > 0 && (pfd[0].revents & POLLIN))
            read_signals(&L, sfd);
        if (rc > 0 && (pfd[1].revents & POLLIN))
            drain(job->wake_fd[0]);
        process(&L);
        check_deadlines(&L);
    }
    if (!L.ending)
        L.status = L.late_status;

out:
    osr_tag_free(L.tag); // the PEs' last lines, before oshrun's own words
    if (sfd >= 0)
        close(sfd);
    free(L.batch);
    free(path);
    return L.status;
}
