// SPDX-License-Identifier: BSD-3-Clause
//
// Options other launchers take, so that a job script written for Open MPI's
// mpirun/oshrun runs unchanged: -N / --npernode / --map-by ppr:N:node (PEs
// per host), --bind-to, --oversubscribe, --allow-run-as-root, --mca K V,
// --wdir; and MPICH's (Hydra's) -ppn, -genv/-env VAR VAL, -genvall. oshrun runs on one host; what has a meaning there is done (PEs per
// host, binding, working directory), what has none is accepted (mapping
// policies, oversubscription: PEs always yield when they outnumber cores),
// and Open MPI's MCA settings are named once as ignored. With
// --launcher=mpirun the words go to mpirun as they are; with srun they are
// translated (passthru.c).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oshrun.h"

static const char *const bind_names[] = {
    [OSR_BIND_NONE] = "none", [OSR_BIND_HWTHREAD] = "hwthread",
    [OSR_BIND_CORE] = "core", [OSR_BIND_SOCKET] = "socket",
};

const char *osr_bind_name(osr_bind_t b)
{
    return bind_names[b];
}

// "core", "core:overload-allowed" ... : the part before ':' names the unit.
static int parse_bind(const char *v, osr_bind_t *out)
{
    size_t len = strcspn(v, ":");

    for (size_t k = 0; k < sizeof(bind_names) / sizeof(bind_names[0]); k++) {
        if (strlen(bind_names[k]) == len && strncmp(v, bind_names[k], len) == 0) {
            *out = (osr_bind_t)k;
            return 0;
        }
    }
    if (len == 7 && strncmp(v, "package", 7) == 0) {
        *out = OSR_BIND_SOCKET;
        return 0;
    }
    return -1;
}

static int parse_count(const char *v, int *out)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || n < 1 || n > 65535)
        return -1;
    *out = (int)n;
    return 0;
}

// --map-by: ppr:N:node sets the PEs per host; the other policies only order
// ranks over hosts, sockets or cores, which on one host is rank order.
static int parse_map_by(const char *v, osr_opts_t *o)
{
    static const char *const policies[] = {"slot", "core", "hwthread", "socket", "package",
                                           "numa", "node", "l3cache", "board", "seq"};
    size_t len = strcspn(v, ":");

    if (strncmp(v, "ppr:", 4) == 0) {
        char num[16];
        const char *unit = strchr(v + 4, ':');
        size_t nlen = unit ? (size_t)(unit - (v + 4)) : 0;

        if (unit == NULL || nlen == 0 || nlen >= sizeof(num) || strncmp(unit + 1, "node", 4) != 0 ||
            (unit[5] != '\0' && unit[5] != ':'))
            return -1;
        memcpy(num, v + 4, nlen);
        num[nlen] = '\0';
        return parse_count(num, &o->per_host);
    }
    for (size_t k = 0; k < sizeof(policies) / sizeof(policies[0]); k++) {
        if (strlen(policies[k]) == len && strncmp(v, policies[k], len) == 0)
            return 0;
    }
    return -1;
}

// The value of option --name or -name (Open MPI takes both spellings).
static const char *either_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    const char *v = osr_opt_value(argc, argv, i, name, missing);
    if (v == NULL && !*missing)
        v = osr_opt_value(argc, argv, i, name + 1, missing);
    return v;
}

// Returns 0 when argv[*i] was one of these options (and advances *i past its
// value), -1 when it is not one, OSR_EXIT_USAGE after printing a usage error.
int osr_compat_opt(int argc, char **argv, int *i, osr_opts_t *o)
{
    static const char *const noop[] = {"--oversubscribe", "-oversubscribe", "--allow-run-as-root",
                                       "--report-bindings", "-report-bindings"};
    static const char *const per_host[] = {"-N", "--npernode", "-npernode", "-ppn"};
    static const char *const wdir[] = {"--wdir", "-wdir", "--wd"};
    static const char *const mca[] = {"--mca", "-mca", "--gmca", "-gmca", "--prtemca",
                                      "--pmixmca"};
    int first = *i;
    bool missing;
    const char *v;

    if (strcmp(argv[*i], "--tag-output") == 0 || strcmp(argv[*i], "-tag-output") == 0) {
        o->tag_output = true;
        osr_keep_words(o, argv, first, *i);
        return 0;
    }
    for (size_t k = 0; k < sizeof(noop) / sizeof(noop[0]); k++) {
        if (strcmp(argv[*i], noop[k]) == 0) {
            if (strstr(noop[k], "report-bindings") != NULL)
                o->report_bindings = true;
            osr_keep_words(o, argv, first, *i);
            return 0;
        }
    }
    v = OSR_OPT_ANY(argc, argv, i, per_host, &missing);
    if (missing)
        return osr_usage_error("option '%s' needs a number of PEs per host", argv[*i]);
    if (v != NULL) {
        if (parse_count(v, &o->per_host) != 0)
            return osr_usage_error("invalid number of PEs per host '%s'", v);
        o->compat_args[o->ncompat_args++] = "-N"; // mpirun's spelling of them all
        o->compat_args[o->ncompat_args++] = (char *)v;
        return 0;
    }
    v = either_value(argc, argv, i, "--map-by", &missing);
    if (missing)
        return osr_usage_error("option '%s' needs a mapping policy", argv[*i]);
    if (v != NULL) {
        if (parse_map_by(v, o) != 0)
            return osr_usage_error("unknown --map-by policy '%s' (expected slot, core, hwthread, "
                                   "socket, numa, node or ppr:N:node)", v);
        osr_keep_words(o, argv, first, *i);
        return 0;
    }
    v = either_value(argc, argv, i, "--bind-to", &missing);
    if (missing)
        return osr_usage_error("option '%s' needs none, hwthread, core or socket", argv[*i]);
    if (v != NULL) {
        if (parse_bind(v, &o->bind) != 0)
            return osr_usage_error("unknown --bind-to unit '%s' (expected none, hwthread, core "
                                   "or socket)", v);
        osr_keep_words(o, argv, first, *i);
        return 0;
    }
    v = OSR_OPT_ANY(argc, argv, i, wdir, &missing);
    if (missing)
        return osr_usage_error("option '%s' needs a directory", argv[*i]);
    if (v != NULL) {
        o->wdir = v;
        osr_keep_words(o, argv, first, *i);
        return 0;
    }
    // MPICH's (Hydra's) -genv VAR VAL / -env VAR VAL: as -x VAR=VAL.
    if (strcmp(argv[*i], "-genv") == 0 || strcmp(argv[*i], "-env") == 0) {
        char *entry;
        const char *name = *i + 1 < argc ? argv[*i + 1] : "";
        bool ok = osr_valid_var_name(name, strlen(name));

        if (*i + 2 >= argc || !ok)
            return osr_usage_error("option '%s' needs a variable name and a value", argv[*i]);
        if (asprintf(&entry, "%s=%s", name, argv[*i + 2]) < 0)
            return 1;
        o->exports[o->nexports++] = entry; // lives as long as the process
        *i += 2;
        return 0;
    }
    if (strcmp(argv[*i], "-genvall") == 0)
        return 0; // the PEs get oshrun's environment in any case
    for (size_t k = 0; k < sizeof(mca) / sizeof(mca[0]); k++) {
        if (strcmp(argv[*i], mca[k]) != 0)
            continue;
        if (*i + 2 >= argc)
            return osr_usage_error("option '%s' needs a name and a value", argv[*i]);
        *i += 2;
        osr_keep_words(o, argv, first, *i);
        o->nmca++;
        return 0;
    }
    return -1;
}

// After all options: -N against -n. Returns -1 to go on, else an exit status.
int osr_compat_finish(osr_opts_t *o)
{
    if (o->nmca > 0 && o->launcher != OSR_LAUNCHER_MPIRUN)
        fprintf(stderr, OSR_NAME ": ignoring %d --mca setting%s: Open MPI's, not ofishmem's "
                "(ofishmem's settings are SHMEM_* variables: SHMEM_INFO=1 lists them)\n",
                o->nmca, o->nmca > 1 ? "s" : "");
    if (o->per_host == 0)
        return -1;
    if (o->npes == 0 && o->launcher == OSR_LAUNCHER_BUILTIN)
        o->npes = o->per_host; // one host: all of them here
    else if (o->npes == 0)
        return osr_usage_error("%s", "with --launcher and -N (PEs per host), give -n (all PEs) too");
    else if (o->launcher == OSR_LAUNCHER_BUILTIN && o->npes > o->per_host) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "-n %d with %d PEs per host needs %d hosts; oshrun starts PEs on this host "
                 "only (use --launcher=srun or mpirun)",
                 o->npes, o->per_host, (o->npes + o->per_host - 1) / o->per_host);
        return osr_usage_error("%s", msg);
    }
    return -1;
}

// The CPU a topology file of cpu c names (its core or package id), -1 if
// the file is missing.
static int topo_id(int c, const char *file)
{
    char path[128];
    FILE *f;
    int id = -1;

    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", c, file);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%d", &id) != 1)
        id = -1;
    fclose(f);
    return id;
}

// Unit key of cpu c for the binding: itself, its core, or its package.
static long bind_key(osr_bind_t b, int c)
{
    int pkg = topo_id(c, "physical_package_id");

    switch (b) {
    case OSR_BIND_CORE: return (long)(pkg < 0 ? 0 : pkg) << 20 | (topo_id(c, "core_id") & 0xfffff);
    case OSR_BIND_SOCKET: return pkg < 0 ? 0 : pkg;
    default: return c;
    }
}

// The CPU sets for --bind-to: the units (hwthreads, cores, packages) of the
// CPUs oshrun may use, in order; PE r gets unit r mod the number of units.
cpu_set_t *osr_bind_sets(osr_bind_t b, int npes)
{
    cpu_set_t allowed, *units, *sets;
    long *keys;
    int nunits = 0;

    if (b == OSR_BIND_NONE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return NULL;
    units = calloc(CPU_SETSIZE, sizeof(*units));
    keys = calloc(CPU_SETSIZE, sizeof(*keys));
    sets = calloc((size_t)npes, sizeof(*sets));
    if (units == NULL || keys == NULL || sets == NULL)
        goto fail;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        int u;

        if (!CPU_ISSET(c, &allowed))
            continue;
        long key = bind_key(b, c);
        for (u = 0; u < nunits && keys[u] != key; u++)
            ;
        if (u == nunits) {
            keys[nunits++] = key;
            CPU_ZERO(&units[u]);
        }
        CPU_SET(c, &units[u]);
    }
    if (nunits == 0)
        goto fail;
    for (int r = 0; r < npes; r++)
        sets[r] = units[r % nunits];
    free(units);
    free(keys);
    return sets;

fail:
    free(units);
    free(keys);
    free(sets);
    return NULL;
}
