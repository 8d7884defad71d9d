// SPDX-License-Identifier: BSD-3-Clause
//
// Host lists in a stranger's job script: Open MPI's --host/-H h1[:slots],...
// and --hostfile/--machinefile FILE ("host [slots=N] [max_slots=M]"), and
// MPICH's (Hydra's) -hosts h1[:n],... and -f FILE ("host[:n]"). oshrun starts
// PEs on this host only, so it takes a list whose hosts are all this one
// (localhost, 127.0.0.1, ::1, or this machine's name, short or full): the
// slots it names count the PEs when -n is not given, as with mpirun. A list
// that names another host is refused, naming it. With --launcher=mpirun the
// words go to mpirun as given; srun gets --nodelist for a --host list.
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oshrun.h"

static int hosts_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int hosts_error(const char *fmt, ...)
{
    char msg[1400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return osr_usage_error("%s", msg);
}

// Is name this host? By name only: no resolver (a job script's own
// hostname, localhost, or a loopback address).
static bool host_is_local(const char *name)
{
    static const char *const loopback[] = {"localhost", "localhost.localdomain", "127.0.0.1",
                                           "::1", "ip6-localhost"};
    char me[256];
    size_t mlen;

    for (size_t k = 0; k < sizeof(loopback) / sizeof(loopback[0]); k++)
        if (strcasecmp(name, loopback[k]) == 0)
            return true;
    if (gethostname(me, sizeof(me)) != 0)
        return false;
    me[sizeof(me) - 1] = '\0';
    if (strcasecmp(name, me) == 0)
        return true;
    // The short form of either name against the other ("node1" vs "node1.cluster").
    mlen = strcspn(me, ".");
    if (strcspn(name, ".") == mlen && strncasecmp(name, me, mlen) == 0 &&
        (name[mlen] == '\0' || me[mlen] == '\0'))
        return true;
    return false;
}

static int parse_slots(const char *v, int *out)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || n < 1 || n > 65535)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -1;
    *out = (int)n;
    return 0;
}

// One entry "host" or "host:N": its slots (dflt when not given) added to
// o->host_slots; a host that is not this one is remembered in o->remote_host.
static int add_entry(osr_opts_t *o, char *entry, int dflt, const char *where)
{
    char *colon = strrchr(entry, ':');
    int slots = dflt;

    // "::1" and other IPv6 literals hold colons: a count follows the last one only
    // when the part before it is not empty and the part after is a number.
    if (colon != NULL && colon != entry && strchr(entry, ':') == colon) {
        *colon = '\0';
        if (parse_slots(colon + 1, &slots) != 0) {
            return hosts_error("%s: invalid slot count '%s' for host '%s'", where,
                    colon + 1, entry);
        }
    }
    if (*entry == '\0') {
        return hosts_error("%s: empty host name", where);
    }
    if (!host_is_local(entry) && o->remote_host[0] == '\0')
        snprintf(o->remote_host, sizeof(o->remote_host), "%s", entry);
    o->host_slots += slots;
    return 0;
}

// --host h1[:n],h2... (one slot per host unless a count is given).
static int parse_host_list(osr_opts_t *o, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    int rc = 0;

    if (copy == NULL)
        return 1;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
         tok = strtok_r(NULL, ",", &save))
        rc = add_entry(o, tok, 1, "--host");
    free(copy);
    return rc;
}

// A hostfile: lines "host", "host:n" (MPICH), "host slots=n [max_slots=m]"
// (Open MPI); '#' starts a comment. A host without a count has one slot per
// CPU here, as Open MPI gives it.
static int parse_host_file(osr_opts_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024], where[1100];
    int lineno = 0, rc = 0, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

    if (f == NULL)
        return hosts_error("cannot read the hostfile '%s': %s", path, strerror(errno));
    if (ncpu < 1)
        ncpu = 1;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        char *save = NULL, *host, *word;
        int slots = ncpu;

        lineno++;
        line[strcspn(line, "#\n")] = '\0';
        snprintf(where, sizeof(where), "%s:%d", path, lineno);
        host = strtok_r(line, " \t\r", &save);
        if (host == NULL)
            continue;
        while (rc == 0 && (word = strtok_r(NULL, " \t\r", &save)) != NULL) {
            if (strncmp(word, "slots=", 6) == 0 || strncmp(word, "cpu=", 4) == 0) {
                if (parse_slots(strchr(word, '=') + 1, &slots) != 0) {
                    rc = hosts_error("%s: invalid '%s'", where, word);
                }
            } else if (strncmp(word, "max_slots=", 10) != 0 && strncmp(word, "max-slots=", 10) != 0) {
                rc = hosts_error("%s: unknown word '%s' (expected slots=N or max_slots=N)",
                        where, word);
            }
        }
        if (rc == 0)
            rc = add_entry(o, host, strchr(host, ':') ? 1 : slots, where);
    }
    fclose(f);
    if (rc == 0 && lineno > 0 && o->host_slots == 0) {
        rc = hosts_error("the hostfile '%s' names no host", path);
    }
    return rc;
}

int osr_hosts_opt(int argc, char **argv, int *i, osr_opts_t *o)
{
    static const char *const lists[] = {"--host", "-host", "-H", "--hosts", "-hosts"};
    static const char *const files[] = {"--hostfile", "-hostfile", "--machinefile",
                                        "-machinefile", "-f", "--default-hostfile"};
    int first = *i;
    bool missing;
    const char *v = OSR_OPT_ANY(argc, argv, i, lists, &missing);

    if (missing)
        return osr_usage_error("option '%s' needs a list of hosts", argv[*i]);
    if (v != NULL) {
        o->host_list = v;
    } else {
        v = OSR_OPT_ANY(argc, argv, i, files, &missing);
        if (missing)
            return osr_usage_error("option '%s' needs a file", argv[*i]);
        if (v == NULL)
            return -1;
        o->host_file = v;
    }
    osr_keep_words(o, argv, first, *i);
    return 0;
}

// After all options (--launcher may come after the hosts). Returns -1 to go
// on, else an exit status.
int osr_hosts_finish(osr_opts_t *o)
{
    int rc;

    if (o->host_list == NULL && o->host_file == NULL)
        return -1;
    if (o->launcher == OSR_LAUNCHER_MPIRUN)
        return -1; // mpirun reads them and maps the PEs over the hosts itself
    if (o->launcher == OSR_LAUNCHER_SRUN && o->host_file != NULL)
        return hosts_error("%s", "with --launcher=srun, Slurm allocates the hosts: give them "
                                 "with --launcher-arg=--nodelist=... instead of a hostfile");
    if (o->host_list != NULL && (rc = parse_host_list(o, o->host_list)) != 0)
        return rc;
    if (o->host_file != NULL && (rc = parse_host_file(o, o->host_file)) != 0)
        return rc;
    if (o->launcher == OSR_LAUNCHER_BUILTIN && o->remote_host[0] != '\0')
        return hosts_error("the host list names '%s', another host; oshrun starts PEs on this "
                           "host only (use --launcher=mpirun, which takes the same options, "
                           "or srun)",
                           o->remote_host);
    if (o->npes == 0)
        o->npes = o->host_slots; // mpirun's rule: one PE per slot
    return -1;
}
