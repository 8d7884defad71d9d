// SPDX-License-Identifier: BSD-3-Clause
//
// oshrun --launcher=srun|mpirun: hand the job to Slurm or Open MPI. Both
// run a PMIx server the library talks to, so the program is the same; only
// the command line differs. oshrun's options are translated and the
// launcher replaces this process (exec), so its exit status is the job's.
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oshrun.h"

const char *osr_launcher_name(osr_launcher_t l)
{
    switch (l) {
    case OSR_LAUNCHER_SRUN: return "srun";
    case OSR_LAUNCHER_MPIRUN: return "mpirun";
    default: return "oshrun";
    }
}

int osr_launcher_parse(const char *s, osr_launcher_t *out_p)
{
    if (strcmp(s, "oshrun") == 0 || strcmp(s, "builtin") == 0)
        *out_p = OSR_LAUNCHER_BUILTIN;
    else if (strcmp(s, "srun") == 0 || strcmp(s, "slurm") == 0)
        *out_p = OSR_LAUNCHER_SRUN;
    else if (strcmp(s, "mpirun") == 0 || strcmp(s, "openmpi") == 0)
        *out_p = OSR_LAUNCHER_MPIRUN;
    else
        return -1;
    return 0;
}

typedef struct osr_argv {
    char **v;
    size_t n, cap;
} osr_argv_t;

static int argv_add(osr_argv_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int argv_add(osr_argv_t *a, const char *fmt, ...)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 32;
        char **v = realloc(a->v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&a->v[a->n], fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    a->v[++a->n] = NULL;
    return 0;
}

// Slurm takes a time limit as [minutes:]seconds and enforces it on its own
// schedule (slurmctld checks about every 30 s); Open MPI's --timeout takes
// whole seconds. Both are rounded up so a job never gets less than asked.
static long ceil_seconds(double t)
{
    long s = (long)t;
    return (double)s < t ? s + 1 : s;
}

// -x VAR=VAL is set in our own environment, which both launchers pass to
// the processes they start on this host; srun passes it to every host
// (--export=ALL is its default), mpirun needs "-x VAR" for remote hosts.
static int apply_exports(const osr_opts_t *o, osr_argv_t *a)
{
    for (int k = 0; k < o->nexports; k++) {
        const char *x = o->exports[k], *eq = strchr(x, '=');
        char name[256];
        size_t len = eq ? (size_t)(eq - x) : strlen(x);

        if (len >= sizeof(name)) {
            fprintf(stderr, OSR_NAME ": variable name too long in '-x %s'\n", x);
            return -1;
        }
        memcpy(name, x, len);
        name[len] = '\0';
        if (eq != NULL && setenv(name, eq + 1, 1) != 0)
            return -1;
        if (o->launcher == OSR_LAUNCHER_MPIRUN && getenv(name) != NULL &&
            (argv_add(a, "-x") || argv_add(a, "%s", name)))
            return -1;
    }
    return 0;
}

// --host h1:2,h2 as srun's --nodelist=h1,h2 (Slurm counts tasks per node itself).
static int add_nodelist(osr_argv_t *a, const char *list)
{
    char *names = malloc(strlen(list) + 1), *out = names;
    int rc;

    if (names == NULL)
        return -1;
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        size_t keep = colon && memchr(colon + 1, ':', len - (size_t)(colon + 1 - p)) == NULL
                          ? (size_t)(colon - p) : len;
        if (out != names)
            *out++ = ',';
        memcpy(out, p, keep);
        out += keep;
        p += len + (p[len] == ',');
    }
    *out = '\0';
    rc = argv_add(a, "--nodelist=%s", names);
    free(names);
    return rc;
}

int osr_passthru_exec(const osr_opts_t *o)
{
    osr_argv_t a = {0};
    const char *exe = osr_launcher_name(o->launcher);
    int rc = 0;

    if (o->launcher == OSR_LAUNCHER_SRUN) {
        rc |= argv_add(&a, "srun");
        rc |= argv_add(&a, "--mpi=pmix");
        rc |= argv_add(&a, "--ntasks=%d", o->npes);
        if (o->per_host > 0)
            rc |= argv_add(&a, "--ntasks-per-node=%d", o->per_host);
        if (o->bind != OSR_BIND_NONE || o->report_bindings)
            rc |= argv_add(&a, "--cpu-bind=%s%s", o->report_bindings ? "verbose," : "",
                           o->bind == OSR_BIND_HWTHREAD ? "threads"
                           : o->bind == OSR_BIND_CORE   ? "cores"
                           : o->bind == OSR_BIND_SOCKET ? "sockets"
                                                        : "none");
        if (o->wdir != NULL)
            rc |= argv_add(&a, "--chdir=%s", o->wdir);
        if (o->host_list != NULL)
            rc |= add_nodelist(&a, o->host_list);
        if (o->timeout_s > 0) {
            long s = ceil_seconds(o->timeout_s);
            rc |= argv_add(&a, "--time=%ld:%02ld", s / 60, s % 60);
        }
    } else {
        rc |= argv_add(&a, "mpirun");
        rc |= argv_add(&a, "--oversubscribe");
        rc |= argv_add(&a, "-np");
        rc |= argv_add(&a, "%d", o->npes);
        if (o->timeout_s > 0) {
            rc |= argv_add(&a, "--timeout");
            rc |= argv_add(&a, "%ld", ceil_seconds(o->timeout_s));
        }
        // Open MPI's own options, as the user gave them.
        for (int k = 0; k < o->ncompat_args; k++)
            rc |= argv_add(&a, "%s", o->compat_args[k]);
    }
    if (rc != 0 || apply_exports(o, &a) != 0)
        goto fail;
    for (int k = 0; k < o->nlauncher_args; k++)
        if (argv_add(&a, "%s", o->launcher_args[k]) != 0)
            goto fail;
    for (char **p = o->prog_argv; *p != NULL; p++)
        if (argv_add(&a, "%s", *p) != 0)
            goto fail;

    if (o->showme || o->debug) {
        FILE *f = o->showme ? stdout : stderr;
        for (size_t i = 0; i < a.n; i++)
            fprintf(f, "%s%s", i ? " " : "", a.v[i]);
        fputc('\n', f);
        fflush(f);
        if (o->showme)
            return 0;
    }
    execvp(exe, a.v);
    int err = errno;
    fprintf(stderr, OSR_NAME ": cannot run '%s' for --launcher=%s: %s%s\n", exe, exe,
            strerror(err),
            err == ENOENT ? (o->launcher == OSR_LAUNCHER_SRUN
                                 ? " (is Slurm installed and srun in PATH?)"
                                 : " (is Open MPI installed and mpirun in PATH?)")
                          : "");
    return err == ENOENT ? 127 : 126;

fail:
    fprintf(stderr, OSR_NAME ": cannot build the %s command line: %s\n", exe, strerror(errno));
    return 1;
}
