// SPDX-License-Identifier: BSD-3-Clause
//
// oshrun entry point: command line, environment for the PEs, and the order
// in which the PMIx server and the job are brought up and torn down.
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oshrun.h"

#ifndef OFISHMEM_VERSION
#define OFISHMEM_VERSION "unknown"
#endif

// PMIX_LOCAL_RANK is a uint16.
#define OSR_MAX_PES 65535

extern char **environ;

// The PMIx server discovers this host's topology (hwloc) at start to share
// it with the PEs. hwloc's I/O plugins (PCI, OpenCL, GL with X11, libxml2
// with ICU) add nothing the PEs use and ~50 ms of library loading: keep
// them out, unless the user chose hwloc's plugins or components. Set after
// the PEs' environment is built, so it is oshrun's alone.
static void osr_trim_hwloc(void)
{
    if (getenv("HWLOC_PLUGINS_BLACKLIST") == NULL && getenv("HWLOC_COMPONENTS") == NULL &&
        getenv("HWLOC_XMLFILE") == NULL)
        setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,"
               "hwloc_rsmi,hwloc_levelzero,hwloc_xml_libxml", 0);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " OSR_NAME " -n N [--timeout S] [-x VAR[=VAL]]... [--] prog [args...]\n"
            "       " OSR_NAME " --launcher=srun|mpirun -n N [options] [--] prog [args...]\n"
            "\n"
            "Start N processing elements (PEs) of prog on this host and serve their\n"
            "PMIx bootstrap. The whole job ends when one PE fails. With --launcher,\n"
            "hand the job to Slurm (srun --mpi=pmix) or Open MPI (mpirun) instead.\n"
            "\n"
            "  -n, -np, -c N     number of PEs (1..%d)\n"
            "  --timeout S        end the job after S seconds (exit status 124)\n"
            "  -x VAR[=VAL]       export VAR to the PEs (with VAL, or oshrun's value)\n"
            "  --launcher L       oshrun (default), srun or mpirun\n"
            "  --launcher-arg A   with --launcher: pass A to srun/mpirun (repeatable)\n"
            "  --showme           with --launcher: print the command, do not run it\n"
            "  -N, --npernode N   PEs per host (one host: -n may be left out)\n"
            "  --bind-to U        bind each PE to a none|hwthread|core|socket (round robin)\n"
            "  --wdir DIR         the PEs' working directory\n"
            "  --tag-output       each line a PE prints as [1,RANK]<stdout>:LINE (<stderr>)\n"
            "  --host H[:n],..., --hostfile F\n"
            "                     hosts (this one only; -n defaults to their slots)\n"
            "  --map-by P, --oversubscribe, --allow-run-as-root, --report-bindings,\n"
            "  --mca K V          Open MPI's options, accepted so its job scripts run\n"
            "                     (--map-by ppr:N:node = -N N; --mca is ignored)\n"
            "  -h, --help         show this help\n"
            "  -V, --version      show the version\n"
            "\n"
            "Exit status: 0 if all PEs finished; else the first failing PE's status\n"
            "(128+signal if it was killed), the status given to shmem_global_exit,\n"
            "124 on timeout, 128+signal if oshrun was interrupted.\n"
            "Set OSHRUN_DEBUG=1 to trace PMIx server activity.\n",
            OSR_MAX_PES);
}

int osr_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, OSR_NAME ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry '" OSR_NAME " --help' for more information.\n");
    return OSR_EXIT_USAGE;
}

// Matches "-n" style options with the value either in the same word after
// '=' or in the next word. Returns the value, or NULL if this is not `name`.
const char *osr_opt_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t len = strlen(name);
    const char *a = argv[*i];

    *missing = false;
    if (strncmp(a, name, len) != 0)
        return NULL;
    if (a[len] == '=')
        return a + len + 1;
    if (a[len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

// osr_opt_value for each of n spellings of one option, in turn.
const char *osr_opt_any(int argc, char **argv, int *i, const char *const *names, size_t n,
                        bool *missing)
{
    const char *v = NULL;

    *missing = false;
    for (size_t k = 0; k < n && v == NULL && !*missing; k++)
        v = osr_opt_value(argc, argv, i, names[k], missing);
    return v;
}

// Keeps the words argv[first..last] of another launcher's option for mpirun.
void osr_keep_words(osr_opts_t *o, char **argv, int first, int last)
{
    for (int k = first; k <= last; k++)
        o->compat_args[o->ncompat_args++] = argv[k];
}

bool osr_valid_var_name(const char *s, size_t len)
{
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    }
    return true;
}

// Returns -1 to go on, else the exit status to return at once.
static int parse_args(int argc, char **argv, osr_opts_t *o)
{
    static const char *np_names[] = {"-n", "-np", "--n", "--np", "-c"}; // -c: Open MPI's too
    int i;

    o->exports = calloc((size_t)argc, sizeof(char *));
    o->launcher_args = calloc((size_t)argc, sizeof(char *));
    o->compat_args = calloc(2 * (size_t)argc + 1, sizeof(char *));
    if (o->exports == NULL || o->launcher_args == NULL || o->compat_args == NULL)
        return 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        bool missing = false;

        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf(OSR_NAME " (ofishmem) %s, PMIx %s\n", OFISHMEM_VERSION, PMIx_Get_version());
            return 0;
        }
        v = OSR_OPT_ANY(argc, argv, &i, np_names, &missing);
        if (missing)
            return osr_usage_error("option '%s' needs a number of PEs", a);
        if (v != NULL) {
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (errno || end == v || *end != '\0' || n < 1 || n > OSR_MAX_PES)
                return osr_usage_error("invalid number of PEs '%s'", v);
            o->npes = (int)n;
            continue;
        }
        v = osr_opt_value(argc, argv, &i, "--timeout", &missing);
        if (v != NULL || missing) {
            if (missing)
                return osr_usage_error("option '%s' needs a number of seconds", a);
            char *end;
            errno = 0;
            double t = strtod(v, &end);
            if (errno || end == v || *end != '\0' || !(t > 0) || t > 1e7)
                return osr_usage_error("invalid timeout '%s'", v);
            o->timeout_s = t;
            continue;
        }
        v = osr_opt_value(argc, argv, &i, "--launcher", &missing);
        if (v != NULL || missing) {
            if (missing)
                return osr_usage_error("option '%s' needs oshrun, srun or mpirun", a);
            if (osr_launcher_parse(v, &o->launcher) != 0)
                return osr_usage_error("unknown launcher '%s' (expected oshrun, srun or mpirun)", v);
            continue;
        }
        v = osr_opt_value(argc, argv, &i, "--launcher-arg", &missing);
        if (v != NULL || missing) {
            if (missing)
                return osr_usage_error("option '%s' needs an argument for the launcher", a);
            o->launcher_args[o->nlauncher_args++] = (char *)v;
            continue;
        }
        if (strcmp(a, "--showme") == 0) {
            o->showme = true;
            continue;
        }
        if (strcmp(a, "-x") == 0) {
            if (i + 1 >= argc)
                return osr_usage_error("option '%s' needs VAR or VAR=VALUE", a);
            v = argv[++i];
            const char *eq = strchr(v, '=');
            if (!osr_valid_var_name(v, eq ? (size_t)(eq - v) : strlen(v)))
                return osr_usage_error("invalid variable name in '-x %s'", v);
            o->exports[o->nexports++] = argv[i];
            continue;
        }
        int rc = osr_compat_opt(argc, argv, &i, o);
        if (rc < 0)
            rc = osr_hosts_opt(argc, argv, &i, o);
        if (rc == 0)
            continue;
        if (rc > 0)
            return rc;
        return osr_usage_error("unknown option '%s'", a);
    }
    int rc = osr_hosts_finish(o);
    if (rc < 0)
        rc = osr_compat_finish(o);
    if (rc >= 0)
        return rc;
    if (o->npes == 0)
        return osr_usage_error("%s", "missing -n N (number of PEs)");
    if (i >= argc)
        return osr_usage_error("%s", "missing program to run");
    if (o->launcher == OSR_LAUNCHER_BUILTIN && (o->nlauncher_args > 0 || o->showme))
        return osr_usage_error("%s", "--launcher-arg and --showme need --launcher=srun or mpirun");
    if (o->wdir != NULL && o->launcher == OSR_LAUNCHER_BUILTIN && chdir(o->wdir) != 0) {
        fprintf(stderr, OSR_NAME ": cannot change to the working directory '%s': %s\n", o->wdir,
                strerror(errno));
        return 1;
    }
    o->prog_argv = &argv[i];
    return -1;
}

// oshrun's own PMIx client variables (if it runs under another launcher)
// must not leak to the PEs; PMIX_MCA_* are user settings and stay.
static bool is_stale_pmix_var(const char *e)
{
    return strncmp(e, "PMIX_", 5) == 0 && strncmp(e, "PMIX_MCA_", 9) != 0;
}

static int env_set(char ***envp, size_t *n, const char *name, size_t nlen, const char *entry)
{
    char **env = *envp;
    char *dup = strdup(entry);

    if (dup == NULL)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        if (strncmp(env[i], name, nlen) == 0 && env[i][nlen] == '=') {
            free(env[i]);
            env[i] = dup;
            return 0;
        }
    }
    env = realloc(env, (*n + 2) * sizeof(*env));
    if (env == NULL) {
        free(dup);
        return -1;
    }
    env[(*n)++] = dup;
    env[*n] = NULL;
    *envp = env;
    return 0;
}

// The PEs' base environment: oshrun's, minus stale PMIx client variables,
// plus the -x settings. PMIx_server_setup_fork adds the rest per rank.
static char **build_env(const osr_opts_t *o)
{
    size_t n = 0, cap = 1;
    char **env;

    for (char **e = environ; *e != NULL; e++)
        cap++;
    env = calloc(cap, sizeof(*env));
    if (env == NULL)
        return NULL;
    for (char **e = environ; *e != NULL; e++) {
        if (is_stale_pmix_var(*e))
            continue;
        if ((env[n] = strdup(*e)) == NULL)
            goto fail;
        n++;
    }
    for (int k = 0; k < o->nexports; k++) {
        const char *x = o->exports[k], *eq = strchr(x, '=');
        char *entry = NULL;

        if (eq == NULL) {
            const char *val = getenv(x);
            if (val == NULL)
                continue;    // nothing to export
            if (asprintf(&entry, "%s=%s", x, val) < 0)
                goto fail;
        }
        int rc = env_set(&env, &n, x, eq ? (size_t)(eq - x) : strlen(x), entry ? entry : x);
        free(entry);
        if (rc != 0)
            goto fail;
    }
    return env;

fail:
    for (size_t i = 0; i < n; i++)
        free(env[i]);
    free(env);
    return NULL;
}

int main(int argc, char **argv)
{
    osr_opts_t opts = {0};
    osr_job_t job = {.wake_fd = {-1, -1}};
    char **base_env = NULL;
    sigset_t block;
    int status;

    struct timespec ts0;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    opts.start_ms = (int64_t)ts0.tv_sec * 1000 + ts0.tv_nsec / 1000000;
    osr_fds_note_inherited();
    status = parse_args(argc, argv, &opts);
    if (status >= 0)
        goto out_opts;
    opts.debug = getenv("OSHRUN_DEBUG") != NULL && strcmp(getenv("OSHRUN_DEBUG"), "0") != 0;
    if (opts.launcher != OSR_LAUNCHER_BUILTIN) {
        status = osr_passthru_exec(&opts);
        goto out_opts;
    }
    status = osr_limits_check(&opts);
    if (status != 0)
        goto out_opts;
    status = 1;

    // Block the signals we handle through a signalfd before PMIx starts any
    // thread, so every thread inherits the mask and none of them takes the
    // default action. SIGPIPE: a closed stderr must not kill the launcher.
    // A signal ignored by whoever started us (nohup, `cmd &` in a script)
    // stays ignored, here and in the PEs.
    sigemptyset(&job.orig_ign);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            sigaddset(&job.orig_ign, sig);
    }
    sigemptyset(&job.handled);
    sigaddset(&job.handled, SIGCHLD);
    sigaddset(&job.handled, SIGTERM);
    if (!sigismember(&job.orig_ign, SIGINT))
        sigaddset(&job.handled, SIGINT);
    if (!sigismember(&job.orig_ign, SIGHUP))
        sigaddset(&job.handled, SIGHUP);
    block = job.handled;
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &job.orig_mask);
    // Before PMIx starts threads: the sweeper is a plain copy of us.
    osr_sweeper_start();

    job.npes = opts.npes;
    job.debug = opts.debug;
    snprintf(job.nspace, sizeof(job.nspace), "oshrun.%d", (int)getpid());
    pthread_mutex_init(&job.lock, NULL);
    job.pes = calloc((size_t)job.npes, sizeof(*job.pes));
    job.shared.pe = calloc((size_t)job.npes, sizeof(*job.shared.pe));
    base_env = build_env(&opts);
    if (job.pes == NULL || job.shared.pe == NULL || base_env == NULL ||
        pipe2(job.wake_fd, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, OSR_NAME ": setup failed: %s\n", strerror(errno));
        goto out_job;
    }
    if (osr_tmpdir_create(&job) != 0)
        goto out_job;
    osr_trim_hwloc();
    if (osr_server_init(&job) != 0)
        goto out_tmpdir;
    if (osr_server_register_job(&job) != 0)
        goto out_server;

    status = osr_job_run(&job, &opts, base_env);

out_server:
    osr_server_fini(&job);
out_tmpdir:
    osr_tmpdir_remove(&job);
    osr_sweeper_done(); // every PE was reaped and swept: the sweeper may go
out_job:
    if (base_env != NULL) {
        for (size_t i = 0; base_env[i] != NULL; i++)
            free(base_env[i]);
        free(base_env);
    }
    for (int k = 0; k < 2; k++) {
        if (job.wake_fd[k] >= 0)
            close(job.wake_fd[k]);
    }
    if (job.pmix_left_running) {
        // PMIx threads still run: skip exit handlers and destructors.
        fflush(NULL);
        _exit(status);
    }
    free(job.shared.abort_msg);
    free(job.shared.pe);
    free(job.pes);
    pthread_mutex_destroy(&job.lock);
out_opts:
    free(opts.exports);
    free(opts.launcher_args);
    free(opts.compat_args);
    return status;
}
