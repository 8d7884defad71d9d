// SPDX-License-Identifier: BSD-3-Clause
//
// What a job may leave in /dev/shm, and who removes it.
//
// The library itself names nothing there: heaps and globals are memfds
// (src/heap/shared.c). libfabric's shm provider keeps a region file
// /dev/shm/<pid>:<ep>:<dom> per endpoint and removes it when the endpoint is
// closed; a PE killed before that leaves it behind. oshrun removes the files
// named after a PE's pid when it reaps that PE (osr_sweep_pid). If oshrun
// itself is SIGKILLed, its PEs die with it (PR_SET_PDEATHSIG) and nobody
// reaps them: a sweeper process, forked before anything else starts, is told
// every PE's pid through a pipe and holds a pidfd for each. When the pipe
// ends without oshrun's "done" (oshrun died), it waits for those PEs to be
// gone and sweeps their files and oshrun's temp dir (the PMIx rendezvous
// and the server's data store: nothing uses them once oshrun is dead), then
// exits. Only files of our own PEs' pids are touched, and only after the
// pidfd says that very process has exited.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conduit/ofi/ofi_regions.h"
#include "runtime/pidfd.h"

#include "oshrun.h"

#define SWEEP_DONE (-1)
#define SWEEP_TMPDIR (-2) // then its length (int32) and the path
#define SWEEP_WAIT_MS 10000 // longest wait for the PEs after oshrun died

static pid_t sweeper_pid = -1;
static int sweeper_fd = -1;

void osr_sweep_pid(pid_t pid)
{
    cdt_ofi_regions_unlink(pid);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sweeper_main(int rfd)
{
    pid_t *pids = NULL;
    int *fds = NULL;
    size_t n = 0, cap = 0;
    int32_t v;
    char tmpdir[1024] = "";
    for (;;) {
        ssize_t r = read(rfd, &v, sizeof(v));
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof(v))
            break; // oshrun is gone without a word
        if (v == SWEEP_DONE)
            _exit(0); // it swept after every PE itself
        if (v == SWEEP_TMPDIR) {
            int32_t len;
            if (read(rfd, &len, sizeof(len)) != (ssize_t)sizeof(len) || len <= 0 ||
                len >= (int32_t)sizeof(tmpdir) || read(rfd, tmpdir, (size_t)len) != len)
                break;
            tmpdir[len] = '\0';
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            pid_t *np = realloc(pids, cap * sizeof(*pids));
            int *nf = realloc(fds, cap * sizeof(*fds));
            if (np == NULL || nf == NULL)
                _exit(1);
            pids = np;
            fds = nf;
        }
        pids[n] = (pid_t)v;
        fds[n] = shm_pidfd_open((pid_t)v); // -1: already gone (and swept) or no pidfd
        n++;
    }
    // oshrun died: its PEs get SIGKILL from the kernel. Wait for them.
    int64_t until = mono_ms() + SWEEP_WAIT_MS;
    for (size_t i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        int64_t left = until - mono_ms();
        if (left > 0 && poll(&p, 1, (int)left) == 1)
            osr_sweep_pid(pids[i]);
        close(fds[i]);
    }
    if (tmpdir[0] != '\0')
        osr_rmtree(tmpdir);
    _exit(0);
}

void osr_sweeper_start(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        // Still single-threaded (no PMIx thread yet). Keep no terminal or
        // pipe of our caller open, and outlive the signals that end the job.
        close(p[1]);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        sweeper_main(p[0]);
    }
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return;
    }
    sweeper_pid = pid;
    sweeper_fd = p[1];
}

void osr_sweeper_add(pid_t pid)
{
    int32_t v = (int32_t)pid;
    if (sweeper_fd >= 0 && write(sweeper_fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
        close(sweeper_fd);
        sweeper_fd = -1;
    }
}

// One write (a path is shorter than PIPE_BUF): the sweeper reads it whole.
void osr_sweeper_tmpdir(const char *path)
{
    size_t len = strlen(path);
    char msg[2 * sizeof(int32_t) + 1024];
    int32_t head[2] = {SWEEP_TMPDIR, (int32_t)len};
    if (sweeper_fd < 0 || len == 0 || len >= 1024)
        return;
    memcpy(msg, head, sizeof(head));
    memcpy(msg + sizeof(head), path, len);
    if (write(sweeper_fd, msg, sizeof(head) + len) != (ssize_t)(sizeof(head) + len)) {
        close(sweeper_fd);
        sweeper_fd = -1;
    }
}

void osr_sweeper_done(void)
{
    if (sweeper_fd >= 0) {
        int32_t v = SWEEP_DONE;
        if (write(sweeper_fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
            kill(sweeper_pid, SIGKILL);
        close(sweeper_fd);
        sweeper_fd = -1;
    }
    if (sweeper_pid > 0) {
        // So that nothing of the job outlives oshrun (it may have been
        // reaped already by the job loop's waitpid(-1): ECHILD).
        while (waitpid(sweeper_pid, NULL, 0) < 0 && errno == EINTR)
            ;
        sweeper_pid = -1;
    }
}
