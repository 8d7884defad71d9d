// SPDX-License-Identifier: BSD-3-Clause
//
// oshrun: single-host launcher for ofishmem. It is a small PMIx server that
// forks N PEs of one program, serves their modex, and ends the whole job when
// one of them fails.
//
// Threads: the main thread owns every PE's process state (pid, liveness, exit
// status). PMIx upcalls run on the PMIx progress thread; they only record
// what happened in osr_job_t.shared (under .lock) and write one byte to the
// self-pipe so the main thread wakes up.
#ifndef OSHRUN_H
#define OSHRUN_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include <pmix.h>
#include <pmix_server.h>

#define OSR_NAME "oshrun"

// Who starts the PEs: oshrun itself, or another launcher it execs.
typedef enum osr_launcher {
    OSR_LAUNCHER_BUILTIN,
    OSR_LAUNCHER_SRUN,   // srun --mpi=pmix (Slurm)
    OSR_LAUNCHER_MPIRUN, // mpirun --oversubscribe (Open MPI)
} osr_launcher_t;

// --bind-to: what each PE is bound to (compat.c).
typedef enum osr_bind {
    OSR_BIND_NONE,
    OSR_BIND_HWTHREAD,
    OSR_BIND_CORE,
    OSR_BIND_SOCKET,
} osr_bind_t;

// Command-line options.
typedef struct osr_opts {
    int npes;
    double timeout_s;    // 0: no timeout
    int64_t start_ms;    // CLOCK_MONOTONIC at main(): --timeout counts from the launch
    char **exports;      // -x VAR[=VAL] items, NULL-terminated (points into argv)
    int nexports;
    char **prog_argv;    // program and its arguments (points into argv)
    bool debug;          // OSHRUN_DEBUG set: trace upcalls to stderr
    osr_launcher_t launcher;
    char **launcher_args; // --launcher-arg items, passed to srun/mpirun as they are
    int nlauncher_args;
    bool showme;         // with --launcher: print the command instead of running it
    // Other launchers' options (compat.c).
    int per_host;        // -N / --npernode / --map-by ppr:N:node; 0: not given
    osr_bind_t bind;     // --bind-to
    bool report_bindings;
    bool tag_output;     // --tag-output: PE output lines tagged [1,RANK]<stdout>: (tag.c)
    const char *wdir;    // --wdir: the PEs' working directory
    int nmca;            // --mca K V settings (Open MPI's: ignored unless mpirun runs)
    char **compat_args;  // the words of all of these, as given (for mpirun)
    int ncompat_args;
    // Host lists (hosts.c).
    const char *host_list; // --host / -H / -hosts, as given
    const char *host_file; // --hostfile / --machinefile / -f
    int host_slots;        // slots they name (-n when -n is not given)
    char remote_host[256]; // the first host named that is not this one ("": none)
} osr_opts_t;

// What the PMIx thread tells the main thread about one PE.
typedef struct osr_pe_shared {
    bool connected;
    bool finalized;
} osr_pe_shared_t;

// Main-thread view of one PE.
typedef struct osr_pe {
    pid_t pid;           // 0: not started
    bool alive;
} osr_pe_t;

typedef struct osr_job {
    int npes;
    osr_pe_t *pes;
    char nspace[PMIX_MAX_NSLEN + 1];
    char *tmpdir;        // private rendezvous dir, removed on exit
    bool registered;     // the nspace is known to the PMIx server
    bool pmix_unclean;   // a PE was lost after connecting, before finalizing
    bool pmix_left_running; // server not finalized: leave with _exit()
    bool debug;
    sigset_t orig_mask;  // the caller's signal mask, restored in the PEs
    sigset_t orig_ign;   // signals ignored when oshrun started; stay so in PEs
    sigset_t handled;    // signals the main thread reads from its signalfd
    int wake_fd[2];      // self-pipe: PMIx thread -> main thread

    pthread_mutex_t lock;
    struct {
        osr_pe_shared_t *pe;     // npes entries
        bool aborted;            // first PMIx_Abort seen
        int abort_rank;
        int abort_status;
        char *abort_msg;
    } shared;
} osr_job_t;

// main.c: option helpers shared with compat.c.
const char *osr_opt_value(int argc, char **argv, int *i, const char *name, bool *missing);
const char *osr_opt_any(int argc, char **argv, int *i, const char *const *names, size_t n,
                        bool *missing);
#define OSR_OPT_ANY(argc, argv, i, names, missing)                                          \
    osr_opt_any(argc, argv, i, names, sizeof(names) / sizeof(names[0]), missing)
void osr_keep_words(osr_opts_t *o, char **argv, int first, int last);
int osr_usage_error(const char *fmt, const char *arg);
bool osr_valid_var_name(const char *s, size_t len);

#define OSR_EXIT_USAGE 2

// hosts.c: host lists and hostfiles (this host only, unless mpirun runs).
int osr_hosts_opt(int argc, char **argv, int *i, osr_opts_t *o);
int osr_hosts_finish(osr_opts_t *o);

// compat.c: Open MPI's and Slurm's spellings of launcher options.
int osr_compat_opt(int argc, char **argv, int *i, osr_opts_t *o);
int osr_compat_finish(osr_opts_t *o);
const char *osr_bind_name(osr_bind_t b);
cpu_set_t *osr_bind_sets(osr_bind_t b, int npes);

// server.c: PMIx server side.
int osr_tmpdir_create(osr_job_t *job);
void osr_tmpdir_remove(osr_job_t *job);
void osr_rmtree(const char *path); // a directory and all in it, links not followed
int osr_server_init(osr_job_t *job);
int osr_server_register_job(osr_job_t *job);
int osr_server_register_pe(osr_job_t *job, int rank, char ***envp);
void osr_server_fini(osr_job_t *job);

// limits.c: open files and processes a job needs, checked before it starts
// (0: go on, else oshrun's exit status); a fork that failed, said with the
// limit behind it (left: PEs not started yet).
int osr_limits_check(const osr_opts_t *o);
void osr_limits_fork_failed(int rank, int err, int left);

// passthru.c: --launcher=srun|mpirun. Execs the launcher; returns only on
// failure (or after --showme), with oshrun's exit status.
const char *osr_launcher_name(osr_launcher_t l);
int osr_launcher_parse(const char *s, osr_launcher_t *out_p);
int osr_passthru_exec(const osr_opts_t *o);

// job.c: processes and the event loop. Returns oshrun's exit status.
int osr_job_run(osr_job_t *job, const osr_opts_t *opts, char **base_env);

// /dev/shm files of the PEs (sweep.c): swept when a PE is reaped, and by a
// sweeper process if oshrun itself is killed, which then also removes the
// job's temp dir. Start it before any thread.
void osr_sweep_pid(pid_t pid);
// At the start of main: remember the descriptors oshrun inherited (job.c).
void osr_fds_note_inherited(void);
void osr_sweeper_start(void);
void osr_sweeper_add(pid_t pid);
void osr_sweeper_tmpdir(const char *path);
void osr_sweeper_done(void);

// --tag-output (tag.c): pipes for every PE's stdout and stderr, and a thread
// that forwards their lines tagged with the PE's rank.
typedef struct osr_tag osr_tag_t;
osr_tag_t *osr_tag_new(int npes);                               // NULL: failed (said why)
void osr_tag_fds(const osr_tag_t *t, int rank, int *out_fd, int *err_fd); // the PE's ends
void osr_tag_forked(osr_tag_t *t, int rank);                    // parent: PE rank started
int osr_tag_start(osr_tag_t *t);                                // after every PE started
void osr_tag_free(osr_tag_t *t); // waits (bounded) for the PEs' last lines

#endif
