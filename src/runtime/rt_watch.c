// SPDX-License-Identifier: BSD-3-Clause
/*
 * The runtime's watchdog: a thread of its own (not the fabric's progress
 * thread) that ends this PE, with a line saying why, when
 *  - a fatal path's deadline passes (shm_rt_end_within, shm_rt_abort): a
 *    PMIx_Abort stuck on a cut channel or a stopped launcher must not keep
 *    a failed PE alive, and the launcher sees a PE that exits;
 *  - the launcher went away: the PE's parent (oshrun, slurmstepd, Open
 *    MPI's daemon: the local PMIx server) exited (a pidfd: at once), or has
 *    been stopped (SIGSTOP) for SHMEM_LAUNCHER_TIMEOUT;
 *  - the PMIx server cannot be reached: the PMIx connection gets TCP
 *    keepalive and a user timeout of SHMEM_LAUNCHER_TIMEOUT, so the kernel
 *    closes it when nothing comes back for that long (sent data or probes
 *    unacknowledged: the network is down), which PMIx reports as a lost
 *    connection (rt_pmix.c's event handler); should PMIx not, the closed
 *    socket is seen here.
 * The thread sleeps in poll() (a wake-up a second, more with a short
 * timeout); it blocks every signal, so signals go to the program's threads.
 * Its lines are written with one write(2) and only when stderr would not
 * block (a stopped reader of a full pipe must not hold the exit back).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "runtime/pidfd.h"
#include "runtime/rt.h"
#include "runtime/rt_watch.h"

#define RTW_TICK_MS 1000

static pthread_t rtw_thread;
static int rtw_up;
static int rtw_wake = -1;  /* eventfd: a deadline was armed, or stop */
static int rtw_pidfd = -1; /* the parent's; -1: getppid() is compared instead */
static pid_t rtw_ppid;     /* 0: the parent is not watched */
static char rtw_pname[32]; /* its command name, for the message */
static int rtw_sock = -1;  /* the connection to the PMIx server, -1: not found */
static struct sockaddr_storage rtw_server;
static int rtw_pdeath;     /* the parent-death signal cleared at start, restored at stop */
static char rtw_host[64];
static atomic_int rtw_stop;
static atomic_int rtw_timeout_s; /* SHMEM_LAUNCHER_TIMEOUT; 0: no stop/reachability checks */
static atomic_int rtw_sock_checks = 1;
static atomic_int rtw_exiting;
static atomic_int rtw_aborting; /* shm_rt_abort runs: the launcher's end is expected */
static atomic_int rtw_abort_status;

/* Deadlines, earliest first; under rtw_lock (armed on fatal paths only). */
static pthread_mutex_t rtw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int64_t end_ns;  /* 0: none */
    int status;
    const char *why; /* said when it passes; NULL: nothing */
    int64_t ack_ns;  /* PMIx_Abort not acknowledged by then: leave */
    int ack_ms;
} rtw_dl;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int shm_rt_exit_claim(void)
{
    return atomic_exchange(&rtw_exiting, 1) == 0;
}

/* One line on stderr, "[PE n host:pid] <tag>FILE:LINE: ...", if it can be
 * written without blocking. No stdio, no malloc. */
static void rtw_vsay(const char *tag, const char *file, int line, const char *fmt, va_list ap)
{
    char msg[640];
    int n = snprintf(msg, sizeof msg, "[PE %d %s:%d] %s%s:%d: ", shm_rt_g.rank, rtw_host,
                     (int)getpid(), tag, file, line);
    if (n < 0 || (size_t)n >= sizeof msg)
        return;
    int m = vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
    if (m < 0)
        return;
    size_t len = (size_t)n + ((size_t)m < sizeof msg - (size_t)n - 1 ? (size_t)m
                                                                     : sizeof msg - (size_t)n - 2);
    msg[len++] = '\n';
    struct pollfd p = {.fd = STDERR_FILENO, .events = POLLOUT};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
        (void)!write(STDERR_FILENO, msg, len);
}

__attribute__((format(printf, 3, 4))) static void rtw_say(const char *tag, int line,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rtw_vsay(tag, "rt_watch.c", line, fmt, ap);
    va_end(ap);
}

#define RTW_SAY(tag, ...) rtw_say(tag, __LINE__, __VA_ARGS__)

static __attribute__((noreturn)) void rtw_exit(int status)
{
    _exit(status);
}

/* Another thread claimed the exit (it writes its line and _exit()s): give
 * it a moment, then leave anyway (its write may be the one that blocks). */
static __attribute__((noreturn)) void rtw_exit_after_other(int status)
{
    struct timespec ts = {.tv_sec = 1};
    nanosleep(&ts, NULL);
    _exit(status);
}

/* The parent's state letter from /proc/PID/stat ('T': stopped), 0 if unknown. */
static char parent_state(void)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)rtw_ppid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
    return p && p[1] == ' ' ? p[2] : 0;
}

static void say_not_acked(int status, int ms)
{
    if (shm_log_level_g[SHM_LOG_RT] >= SHM_LVL_WARN)
        RTW_SAY("rt/warn ",
                "the launcher did not acknowledge this PE's abort within %d ms (its PMIx server "
                "is stopped or cannot be reached); exiting with status %d so that it sees the "
                "PE gone",
                ms, status);
}

static void check_deadlines(int64_t now)
{
    pthread_mutex_lock(&rtw_lock);
    int ack = rtw_dl.ack_ns && now >= rtw_dl.ack_ns;
    int end = rtw_dl.end_ns && now >= rtw_dl.end_ns;
    int status = rtw_dl.status, ack_ms = rtw_dl.ack_ms;
    const char *why = rtw_dl.why;
    pthread_mutex_unlock(&rtw_lock);
    if (!ack && !end)
        return;
    if (!shm_rt_exit_claim())
        rtw_exit_after_other(status);
    if (ack)
        say_not_acked(status, ack_ms);
    else if (why != NULL && shm_log_level_g[SHM_LOG_RT] >= SHM_LVL_WARN)
        RTW_SAY("rt/warn ", "%s; exiting with status %d", why, status);
    rtw_exit(status);
}

/* While this PE aborts, the launcher ending (or closing its connections)
 * is what was asked for: the PE goes, without a line of its own. */
static void exit_if_aborting(void)
{
    if (!atomic_load(&rtw_aborting))
        return;
    int status = atomic_load(&rtw_abort_status);
    pthread_mutex_lock(&rtw_lock);
    int pending = rtw_dl.ack_ns != 0; /* the launcher never took the abort */
    int64_t since = rtw_dl.ack_ns - (int64_t)rtw_dl.ack_ms * 1000000;
    pthread_mutex_unlock(&rtw_lock);
    if (pending && shm_rt_exit_claim())
        say_not_acked(status, (int)((now_ns() - since) / 1000000));
    rtw_exit(status);
}

static void launcher_gone(const char *how)
{
    exit_if_aborting();
    if (!shm_rt_exit_claim())
        rtw_exit_after_other(RT_LAUNCHER_LOST_STATUS);
    RTW_SAY("", "the launcher went away: its process %s (pid %d, this PE's parent) %s; ending "
                "this PE",
            rtw_pname, (int)rtw_ppid, how);
    rtw_exit(RT_LAUNCHER_LOST_STATUS);
}

void shm_rt_watch_gone(const char *file, int line, const char *fmt, ...)
{
    exit_if_aborting();
    if (!shm_rt_exit_claim())
        for (;;) /* another thread is ending this PE, with its own line */
            pause();
    va_list ap;
    va_start(ap, fmt);
    rtw_vsay("", file, line, fmt, ap);
    va_end(ap);
    rtw_exit(RT_LAUNCHER_LOST_STATUS);
}

static void check_socket(void);

static void *rtw_main(void *arg)
{
    (void)arg;
    int64_t last = now_ns(), stopped_since = 0;
    for (;;) {
        int64_t now = now_ns();
        int tick = RTW_TICK_MS, t = atomic_load(&rtw_timeout_s);
        if (t > 0 && t * 250 < tick)
            tick = t * 250 > 100 ? t * 250 : 100;
        pthread_mutex_lock(&rtw_lock);
        int64_t due = rtw_dl.end_ns;
        if (rtw_dl.ack_ns && (!due || rtw_dl.ack_ns < due))
            due = rtw_dl.ack_ns;
        pthread_mutex_unlock(&rtw_lock);
        if (due) {
            int64_t ms = (due - now) / 1000000 + 1;
            if (ms < tick)
                tick = ms > 0 ? (int)ms : 0;
        }
        struct pollfd p[2] = {{.fd = rtw_wake, .events = POLLIN},
                              {.fd = rtw_pidfd, .events = POLLIN}};
        int rc = poll(p, rtw_pidfd >= 0 ? 2 : 1, tick);
        if (rc > 0 && (p[0].revents & POLLIN)) {
            uint64_t v;
            (void)!read(rtw_wake, &v, sizeof v);
        }
        if (atomic_load(&rtw_stop))
            return NULL;
        now = now_ns();
        check_deadlines(now);
        if (rtw_ppid > 0 && ((rc > 0 && rtw_pidfd >= 0 && (p[1].revents & (POLLIN | POLLHUP))) ||
                             getppid() != rtw_ppid))
            launcher_gone("exited or was killed");
        t = atomic_load(&rtw_timeout_s);
        /* A turn much later than asked: this PE itself was stopped (the
         * whole job was: ^Z), so a stop seen before it does not count. */
        if (now - last > 3 * (int64_t)tick * 1000000 + 1000000000)
            stopped_since = 0;
        last = now;
        if (t > 0 && rtw_ppid > 0) {
            if (parent_state() != 'T')
                stopped_since = 0;
            else if (stopped_since == 0)
                stopped_since = now;
            else if (now - stopped_since >= (int64_t)t * 1000000000) {
                char how[96];
                snprintf(how, sizeof how, "has been stopped for %d s (SHMEM_LAUNCHER_TIMEOUT)",
                         t);
                launcher_gone(how);
            }
        }
        check_socket();
    }
}

/* ---- the PMIx server connection ------------------------------------------ */

/* The server's address from PMIX_SERVER_URI*: "<nspace>;tcp4://IP:PORT" or
 * "...;tcp6://[IP]:PORT". */
static int server_addr(struct sockaddr_storage *ss)
{
    static const char *const vars[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4",
                                       "PMIX_SERVER_URI3",  "PMIX_SERVER_URI21",
                                       "PMIX_SERVER_URI2",  "PMIX_SERVER_URI"};
    const char *uri = NULL;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && uri == NULL; i++)
        uri = shm_env_from_process(vars[i]);
    const char *s = uri ? strstr(uri, "://") : NULL;
    if (s == NULL)
        return -1;
    int v6 = s - uri >= 4 && strncmp(s - 4, "tcp6", 4) == 0;
    s += 3;
    char ip[64];
    const char *colon;
    if (v6) {
        const char *close = strchr(s, ']');
        if (*s != '[' || close == NULL || (size_t)(close - s - 1) >= sizeof ip)
            return -1;
        memcpy(ip, s + 1, (size_t)(close - s - 1));
        ip[close - s - 1] = '\0';
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL || (size_t)(colon - s) >= sizeof ip)
            return -1;
        memcpy(ip, s, (size_t)(colon - s));
        ip[colon - s] = '\0';
    }
    if (*colon != ':')
        return -1;
    int port = atoi(colon + 1);
    memset(ss, 0, sizeof *ss);
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        return inet_pton(AF_INET6, ip, &a->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, ip, &a->sin_addr) == 1 ? 0 : -1;
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
}

/* PMIx does not say which descriptor is its server connection: the socket
 * whose peer is the server's address. */
static int find_server_sock(void)
{
    struct sockaddr_storage want;
    if (server_addr(&want) != 0)
        return -1;
    rtw_server = want;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int found = -1;
    struct dirent *de;
    while (found < 0 && (de = readdir(d)) != NULL) {
        int fd = atoi(de->d_name);
        struct stat st;
        struct sockaddr_storage peer;
        socklen_t len = sizeof peer;
        if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd == dirfd(d) ||
            fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
            getpeername(fd, (struct sockaddr *)&peer, &len) != 0)
            continue;
        if (same_addr(&peer, &want))
            found = fd;
    }
    closedir(d);
    return found;
}

/* PMIx closes its connection when it breaks, and does not reconnect; under
 * oshrun it has no event to say so (no event support in oshrun's server).
 * So: the descriptor no longer a TCP socket to the server, or one the
 * kernel closed (the keepalive's user timeout), is a lost launcher. */
static void check_socket(void)
{
    if (rtw_sock < 0 || !atomic_load(&rtw_sock_checks))
        return;
    struct tcp_info ti;
    struct sockaddr_storage peer;
    socklen_t len = sizeof ti, plen = sizeof peer;
    if (getsockopt(rtw_sock, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
        (ti.tcpi_state == TCP_ESTABLISHED || ti.tcpi_state == TCP_SYN_SENT) &&
        getpeername(rtw_sock, (struct sockaddr *)&peer, &plen) == 0 &&
        same_addr(&peer, &rtw_server))
        return;
    if (!atomic_load(&rtw_sock_checks)) /* finalizing meanwhile: PMIx closed it */
        return;
    exit_if_aborting();
    if (!shm_rt_exit_claim())
        rtw_exit_after_other(RT_LAUNCHER_LOST_STATUS);
    int t = atomic_load(&rtw_timeout_s);
    if (t > 0)
        RTW_SAY("", "the launcher went away: the connection to its PMIx server broke (closed by "
                    "the server, or nothing came back for %d s: SHMEM_LAUNCHER_TIMEOUT); ending "
                    "this PE",
                t);
    else
        RTW_SAY("", "the launcher went away: the connection to its PMIx server broke; ending "
                    "this PE");
    rtw_exit(RT_LAUNCHER_LOST_STATUS);
}

static void sock_limits(int fd, int timeout_s)
{
    int one = 1, idle = timeout_s / 3 > 0 ? timeout_s / 3 : 1;
    int intvl = idle / 2 > 0 ? idle / 2 : 1, cnt = timeout_s / intvl + 1;
    unsigned ut = (unsigned)timeout_s * 1000u;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof ut) != 0)
        SHM_DEBUG(RT, "cannot set keepalive on the PMIx connection (fd %d): %s", fd,
                  strerror(errno));
}

/* ---- start, stop, deadlines ------------------------------------------------ */

int shm_rt_watch_start(void)
{
    if (gethostname(rtw_host, sizeof rtw_host - 1) != 0)
        snprintf(rtw_host, sizeof rtw_host, "?");
    atomic_store(&rtw_stop, 0);
    atomic_store(&rtw_exiting, 0);
    rtw_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (rtw_wake < 0)
        return -1;
    /* The parent is the launcher's local process; pid 1 (or a subreaper)
     * would mean it is gone already or the PE was started detached. */
    rtw_ppid = getppid();
    if (rtw_ppid > 1) {
        rtw_pidfd = shm_pidfd_open(rtw_ppid);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/comm", (int)rtw_ppid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, rtw_pname, sizeof rtw_pname - 1) : -1;
        if (fd >= 0)
            close(fd);
        rtw_pname[n > 0 ? n : 0] = '\0';
        if (n > 0 && rtw_pname[n - 1] == '\n')
            rtw_pname[n - 1] = '\0';
        if (rtw_pname[0] == '\0')
            snprintf(rtw_pname, sizeof rtw_pname, "?");
        if (getppid() != rtw_ppid) { /* it died while we looked */
            if (rtw_pidfd >= 0)
                close(rtw_pidfd);
            rtw_pidfd = -1;
        }
    } else {
        rtw_ppid = 0;
    }
    rtw_sock = find_server_sock();
    /* All signals blocked in the thread: they stay the program's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&rtw_thread, NULL, rtw_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        if (rtw_pidfd >= 0)
            close(rtw_pidfd);
        close(rtw_wake);
        rtw_pidfd = rtw_wake = -1;
        errno = rc;
        return -1;
    }
    rtw_up = 1;
    /* oshrun starts its PEs with PR_SET_PDEATHSIG = SIGKILL: they die with
     * it, silently. While the watchdog watches the parent, it says so
     * instead (and exits as fast); the signal is back after shm_rt_fini. */
    int sig = 0;
    if (rtw_pidfd >= 0 && prctl(PR_GET_PDEATHSIG, &sig) == 0 && sig != 0 &&
        prctl(PR_SET_PDEATHSIG, 0) == 0)
        rtw_pdeath = sig;
    SHM_DEBUG(RT, "watchdog: parent %s (pid %d, %s), PMIx server connection %s", rtw_pname,
              (int)rtw_ppid, rtw_pidfd >= 0 ? "pidfd" : "getppid", rtw_sock >= 0 ? "found" : "not found");
    return 0;
}

void shm_rt_watch_timeout(int seconds)
{
    atomic_store(&rtw_timeout_s, seconds > 0 ? seconds : 0);
    if (seconds > 0 && rtw_sock >= 0)
        sock_limits(rtw_sock, seconds);
    if (rtw_wake >= 0) {
        uint64_t one = 1;
        (void)!write(rtw_wake, &one, sizeof one);
    }
}

void shm_rt_watch_leaving(void)
{
    /* PMIx closes its socket in PMIx_Finalize: the number may be reused. */
    atomic_store(&rtw_sock_checks, 0);
}

void shm_rt_watch_stop(void)
{
    if (!rtw_up)
        return;
    atomic_store(&rtw_stop, 1);
    uint64_t one = 1;
    (void)!write(rtw_wake, &one, sizeof one);
    pthread_join(rtw_thread, NULL);
    rtw_up = 0;
    close(rtw_wake);
    rtw_wake = -1;
    if (rtw_pidfd >= 0)
        close(rtw_pidfd);
    rtw_pidfd = -1;
    rtw_sock = -1;
    if (rtw_pdeath) {
        prctl(PR_SET_PDEATHSIG, rtw_pdeath);
        if (getppid() != rtw_ppid) /* gone meanwhile: what the signal would have done */
            raise(rtw_pdeath);
        rtw_pdeath = 0;
    }
}

static void rtw_poke(void)
{
    uint64_t one = 1;
    (void)!write(rtw_wake, &one, sizeof one);
}

int shm_rt_end_within(unsigned ms, int status, const char *why)
{
    if (!rtw_up || rtw_wake < 0)
        return 0;
    int64_t at = now_ns() + (int64_t)ms * 1000000;
    pthread_mutex_lock(&rtw_lock);
    if (rtw_dl.end_ns == 0 || at < rtw_dl.end_ns) {
        rtw_dl.end_ns = at;
        rtw_dl.status = status;
        rtw_dl.why = why;
    }
    pthread_mutex_unlock(&rtw_lock);
    rtw_poke();
    return 1;
}

int shm_rt_watch_abort_begin(unsigned ack_ms, unsigned end_ms, int status)
{
    if (!rtw_up)
        return 0;
    int64_t now = now_ns();
    pthread_mutex_lock(&rtw_lock);
    rtw_dl.ack_ns = now + (int64_t)ack_ms * 1000000;
    rtw_dl.ack_ms = (int)ack_ms;
    int64_t at = now + (int64_t)end_ms * 1000000;
    if (rtw_dl.end_ns == 0 || at < rtw_dl.end_ns) {
        rtw_dl.end_ns = at;
        rtw_dl.why = NULL; /* the launcher was told; it ends the job */
    }
    rtw_dl.status = status;
    pthread_mutex_unlock(&rtw_lock);
    atomic_store(&rtw_abort_status, status);
    atomic_store(&rtw_aborting, 1);
    rtw_poke();
    return 1;
}

void shm_rt_watch_abort_acked(void)
{
    pthread_mutex_lock(&rtw_lock);
    rtw_dl.ack_ns = 0;
    pthread_mutex_unlock(&rtw_lock);
}
