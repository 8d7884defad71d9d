// SPDX-License-Identifier: BSD-3-Clause
/*
 * Progress: what makes other PEs' operations on this PE's memory complete.
 *
 * The providers here move remote puts, gets and atomics only while the
 * target calls into libfabric (PROVIDERS.md: "data progress: manual"). A PE
 * inside a library call drives its endpoint itself (cdt_progress). For a PE
 * that computes without calling the library, a progress thread drives it,
 * and sleeps in the kernel while nothing arrives, so that an idle PE costs
 * little or no CPU (the poller: ~1% of a core, progress_cost idle):
 *
 *  - Timed poller (poll mode; the default off shm: tcp;ofi_rxm, sockets;
 *    ofi_init.c progress_mode says why): the thread wakes
 *    periodically, drives progress unless the PE's own threads are polling
 *    already (app_polling), and sleeps again; the fabric's CQ has no wait
 *    object. The interval adapts, as the RPC layer's thread does
 *    (src/rpc/progress.c): with I = SHMEM_PROGRESS_INTERVAL, I/16 during
 *    the first 2 I after the last sign of traffic (the PE's own library
 *    calls, atomics by active message served, kicks, progress calls that
 *    served a peer), I/4 until 10 I, I until 1000 I, then 5 I (default:
 *    12.5 us for 0.4 ms, 50 us until 2 ms, 200 us until 0.2 s, then 1 ms). Over
 *    tcp;ofi_rxm a wait object on the CQ costs the PE's own polling (rxm
 *    1.17 puts its tcp CQs on an epoll set every progress call pays for:
 *    ~2.4 us of a put + quiet, bench/compare/run_inject.sh); a timed poller
 *    does not, and serves peers on other hosts, which kicks cannot. Where
 *    the provider hands out no wait object (sockets), same-host origins
 *    also kick it (below), which ends its sleep at once.
 *  - Wait mode (SHMEM_PROGRESS_THREAD=wait, on providers with a wait
 *    object: tcp;ofi_rxm): the thread sleeps in poll() on the default
 *    context's CQ fd (and the AM endpoint's), guarded by fi_trywait.
 *    Incoming data on the provider's sockets wakes it. An idle PE costs no
 *    CPU at all.
 *  - Kick mode (shm's default; it has no wait object: fi_cq_open with
 *    FI_WAIT_FD is -FI_ENOSYS, and every peer is on this host):
 *    the thread sleeps in poll() on a datagram socket of its own in the
 *    abstract Unix namespace (no file), and an origin that hands a
 *    same-host target work that the target must drive sends it one byte —
 *    a "kick" — at most once per kick interval I per target. A kicked
 *    thread polls for W = 4 I after the last kick it received, then a last
 *    time, then sleeps. Any operation issued at time t is seen: either it
 *    sent a kick (received after t, so the thread polls past t), or a kick
 *    went less than I before t, and the thread polls until at least
 *    t - I + W > t. Waiting origins re-kick the targets they wait on
 *    (cdt_ofi_kick_pending), so multi-step protocols keep going. A timed
 *    poller that takes kicks polls every I/4 for 10 I after each: the same
 *    argument holds.
 *
 * The thread takes no lock of ours; the domain is FI_THREAD_SAFE when it
 * runs (the thread drives the default endpoint beside the PE's own calls).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "conduit/conduit.h"
#include "conduit/ofi/ofi.h"
#include "core/log.h"
#include "runtime/rt.h"

#define PROGRESS_SLEEP_MS 1000 /* a sleeping thread looks once a second anyway */
#define KICK_WINDOW_FACTOR 4
/* The PE's own threads poll in a wait loop: they drive the endpoint
 * themselves, so the progress thread stands back (two pollers on one
 * endpoint only fight for its lock and for the cores: measured, put latency
 * over tcp;ofi_rxm tripled). A counter, not a clock: every idle poll
 * stores its thread's poll count; the progress thread, checking at most
 * every STAND_BACK_MS, sees whether it moved since its last look. */
#define STAND_BACK_MS 1

static unsigned app_polls_g;
unsigned cdt_ofi_app_waiting_g;
/* Its own cache line: written on every operation, read by the thread. */
unsigned cdt_ofi_app_ops_g __attribute__((aligned(64)));

/*
 * A thread of the PE polls: it moved its poll count since the last look,
 * or it is inside a wait on its own operations right now. The second is
 * what keeps the thread back during a quiet: woken by each completion's
 * wait-object signal, the thread used to find the count unmoved (the PE's
 * thread was blocked on the endpoint lock the progress thread held, so it
 * could not poll), took the lock again, and the two traded it with a
 * futex per turn: over tcp;ofi_rxm an inject + read-back quiet cost ~12
 * futex calls per put+quiet (strace -c, osu_put_lat 8 B), one
 * delivery-complete write ~1.5. The same during a burst of puts: each
 * signal woke the thread, which took the lock from the issuing thread
 * (osu_put_mr: 2.8 futex calls per put); so issuing counts as polling.
 */
static int app_polling(void)
{
    static unsigned seen; /* the progress thread's alone */
    unsigned now = __atomic_load_n(&app_polls_g, __ATOMIC_RELAXED) +
                   __atomic_load_n(&cdt_ofi_app_ops_g, __ATOMIC_RELAXED);
    int active = now != seen || __atomic_load_n(&cdt_ofi_app_waiting_g, __ATOMIC_RELAXED) != 0;
    seen = now;
    return active;
}

static struct {
    int kick_fd;     /* ours: bound, the thread sleeps on it (kick mode) */
    int send_fd;     /* unbound, to kick others */
    int stop_fd[2];  /* a pipe that ends the thread's sleep (wait-object mode) */
    struct fid_cq *am_cq;
    struct fid_fabric *am_fabric;
} prog_g = {.kick_fd = -1, .send_fd = -1, .stop_fd = {-1, -1}};

void cdt_progress(void)
{
    cdt_ctx_t *d = cdt_ofi_g.dflt;
    /* Successful operations leave no entry (selective completion): an
     * entry here is an error, reported at once (ofi_fault.c), or a strided
     * transfer's message, which ofi_strided.c reads and serves. */
    if (d && cdt_ofi_xf_on())
        cdt_ofi_xf_progress();
    else if (d && shm_unlikely(fi_cq_read(d->cq, NULL, 0) == -FI_EAVAIL))
        cdt_ofi_report_cq_error(d, "operation");
    if (shm_unlikely(cdt_ofi_amo_g.am_on))
        cdt_ofi_amo_am_progress(); /* atomics by active message: serve and collect */
}

/*
 * Between two polls of a wait that found nothing. Yields the core where this
 * host has more PEs than cores (SHMEM_YIELD=auto): measured, a waiter that
 * also yields when the PEs have a core each only adds latency (a yield hands
 * a loaded machine's core to another program for a whole time slice: 8-byte
 * fetch-add 1.6 us -> 2-100 us, shm through libfabric). Tells the progress
 * thread that this PE is polling (app_polling).
 */
void cdt_ofi_idle_pause(void)
{
    static __thread unsigned polls;
    if (cdt_ofi_fast_g.yield)
        sched_yield();
    __atomic_store_n(&app_polls_g, ++polls, __ATOMIC_RELAXED);
}

/*
 * The pause of a wait on operations this context issued. Besides
 * cdt_ofi_idle_pause: when the context handed work to a same-host target
 * that must do it in its progress (kick_mask) and the wait has lasted
 * longer than an answer from a target that polls by itself takes, yield
 * the core. The target's progress thread, woken by our kick, is likely
 * queued on this very core (the kernel puts a woken thread on its waker's
 * CPU); spinning here keeps it off for a whole time slice where the cores
 * are all busy (2 PEs on 2 cores: the target computes on the other one).
 * After 1 us, about twice what a fetch-add to a polling target takes on the
 * shm provider (0.45 us): a fetch-add to a computing target took 8.3 us
 * after 4 us of spinning, 5.1 us after 1 us (sockets unchanged, 44 us;
 * bench/osu/osu_busy_amo, bench/results/speed-2026-11-29b).
 */
#define KICK_YIELD_NS 1000u

void cdt_ofi_wait_pause(cdt_ctx_t *ctx, uint64_t *t0)
{
    if (__atomic_load_n(&ctx->kick_mask, __ATOMIC_RELAXED) != 0 && !cdt_ofi_fast_g.yield) {
        uint64_t now = cdt_ofi_now_ns();
        if (*t0 == 0)
            *t0 = now;
        else if (now - *t0 > KICK_YIELD_NS)
            sched_yield();
    }
    cdt_ofi_idle_pause();
}

void cdt_poll_idle(void)
{
    cdt_progress();
    cdt_ofi_idle_pause();
}

/* ---- kicks ------------------------------------------------------------ */

/* "\0ofishmem-progress-<nspace>-<rank>": abstract, gone with the process. */
static socklen_t kick_addr(struct sockaddr_un *sa, int rank)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "ofishmem-progress-%s-%d",
                     shm_rt_g.nspace, rank);
    if (n < 0 || (size_t)n >= sizeof(sa->sun_path) - 1)
        n = (int)sizeof(sa->sun_path) - 2;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

void cdt_ofi_kick_slow(int pe, uint64_t now)
{
    __atomic_store_n(&cdt_ofi_fast_g.kick_last[pe], now, __ATOMIC_RELAXED);
    struct sockaddr_un sa;
    socklen_t len = kick_addr(&sa, pe);
    /* A full queue means the target has kicks to read already. */
    (void)sendto(prog_g.send_fd, "k", 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
                 len);
}

void cdt_ofi_kick_pending(cdt_ctx_t *ctx)
{
    static __thread unsigned calls;
    uint64_t mask = __atomic_load_n(&ctx->kick_mask, __ATOMIC_RELAXED);
    /* Every 16th turn of a wait loop: kicks are rate-limited anyway. */
    if (mask == 0 || cdt_ofi_fast_g.kick_idx == NULL || (++calls & 15) != 0)
        return;
    for (int i = 0; i < shm_rt_g.local_size; i++) {
        int pe = shm_rt_g.local_peers[i];
        unsigned li = cdt_ofi_fast_g.kick_idx[pe];
        if (li != 0 && (mask & (1ull << (li % 64))))
            cdt_ofi_issued(ctx, pe);
    }
    /* Everything this context issued is complete: nobody is owed a kick. */
    if (__atomic_load_n(&ctx->put_done, __ATOMIC_RELAXED) ==
            __atomic_load_n(&ctx->put_issued, __ATOMIC_RELAXED) &&
        __atomic_load_n(&ctx->get_done, __ATOMIC_RELAXED) ==
            __atomic_load_n(&ctx->get_issued, __ATOMIC_RELAXED))
        __atomic_store_n(&ctx->kick_mask, 0, __ATOMIC_RELAXED);
}

static int kicks_drain(void)
{
    char buf[64];
    int got = 0;
    while (recv(prog_g.kick_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
        got = 1;
    return got;
}

/* Opens our kick socket and the table of same-host peers to kick. */
static shm_status_t kicks_open(void)
{
    int n = cdt_ofi_g.cfg.size;
    prog_g.kick_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    prog_g.send_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (prog_g.kick_fd < 0 || prog_g.send_fd < 0)
        goto fail;
    struct sockaddr_un sa;
    socklen_t len = kick_addr(&sa, cdt_ofi_g.cfg.rank);
    if (bind(prog_g.kick_fd, (struct sockaddr *)&sa, len) != 0)
        goto fail;
    cdt_ofi_fast_g.kick_last = calloc((size_t)n, sizeof(uint64_t));
    uint16_t *idx = calloc((size_t)n, sizeof(uint16_t));
    if (cdt_ofi_fast_g.kick_last == NULL || idx == NULL) {
        free(idx);
        goto fail;
    }
    for (int i = 0; i < shm_rt_g.local_size; i++) {
        int pe = shm_rt_g.local_peers[i];
        if (pe != cdt_ofi_g.cfg.rank && pe >= 0 && pe < n)
            idx[pe] = (uint16_t)(1 + i % 0xfffe);
    }
    long us = cdt_ofi_g.cfg.progress_interval_us > 0 ? cdt_ofi_g.cfg.progress_interval_us : 100;
    cdt_ofi_fast_g.kick_ns = (uint64_t)us * 1000u;
    cdt_ofi_fast_g.kick_idx = idx; /* last: turns kicks on */
    return SHM_OK;
fail:
    SHM_WARN(OFI, "progress thread: cannot open its wake-up socket (%s)", strerror(errno));
    return SHM_ERR_NOSYS;
}

static void kicks_close(void)
{
    uint16_t *idx = cdt_ofi_fast_g.kick_idx;
    cdt_ofi_fast_g.kick_idx = NULL;
    free(idx);
    free(cdt_ofi_fast_g.kick_last);
    cdt_ofi_fast_g.kick_last = NULL;
    if (prog_g.kick_fd >= 0)
        close(prog_g.kick_fd);
    if (prog_g.send_fd >= 0)
        close(prog_g.send_fd);
    prog_g.kick_fd = prog_g.send_fd = -1;
}

/* ---- the thread --------------------------------------------------------- */

/* Set by the thread that stops the progress thread (finalize). */
static int progress_stopping(void)
{
    return __atomic_load_n(&cdt_ofi_g.progress_stop, __ATOMIC_ACQUIRE);
}

static void kick_mode_loop(void)
{
    uint64_t window = cdt_ofi_fast_g.kick_ns * KICK_WINDOW_FACTOR;
    while (!progress_stopping()) {
        struct pollfd p = {.fd = prog_g.kick_fd, .events = POLLIN};
        int r = poll(&p, 1, PROGRESS_SLEEP_MS);
        if (progress_stopping())
            break;
        if (r <= 0) {
            cdt_progress();
            continue;
        }
        kicks_drain();
        uint64_t until = cdt_ofi_now_ns() + window;
        while (!progress_stopping() && cdt_ofi_now_ns() < until) {
            if (app_polling()) {
                /* Wake on the next kick, or look again soon. */
                struct pollfd q = {.fd = prog_g.kick_fd, .events = POLLIN};
                poll(&q, 1, STAND_BACK_MS);
            } else {
                sched_yield(); /* the PE's own thread comes first */
                cdt_progress();
            }
            if (kicks_drain())
                until = cdt_ofi_now_ns() + window;
        }
        if (!app_polling())
            cdt_progress();
    }
}

static void wait_mode_loop(void)
{
    struct fid *fids[1] = {&cdt_ofi_g.dflt->cq->fid};
    struct fid *am_fids[1] = {prog_g.am_cq ? &prog_g.am_cq->fid : NULL};
    struct pollfd p[3];
    int np = 0;
    p[np++] = (struct pollfd){.fd = prog_g.stop_fd[0], .events = POLLIN};
    int fd = -1;
    if (fi_control(&cdt_ofi_g.dflt->cq->fid, FI_GETWAIT, &fd) == 0)
        p[np++] = (struct pollfd){.fd = fd, .events = POLLIN};
    if (prog_g.am_cq && fi_control(&prog_g.am_cq->fid, FI_GETWAIT, &fd) == 0)
        p[np++] = (struct pollfd){.fd = fd, .events = POLLIN};
    while (!progress_stopping()) {
        if (app_polling()) {
            poll(p, 1, STAND_BACK_MS); /* only the stop pipe: the CQ fd may stay readable */
            continue;
        }
        cdt_progress();
        if (prog_g.am_cq)
            fi_cq_read(prog_g.am_cq, NULL, 0);
        /* trywait says whether sleeping is safe: nothing is left to drive. */
        if (fi_trywait(cdt_ofi_g.fabric, fids, 1) != FI_SUCCESS)
            continue;
        if (prog_g.am_cq && fi_trywait(prog_g.am_fabric, am_fids, 1) != FI_SUCCESS)
            continue;
        poll(p, (nfds_t)np, PROGRESS_SLEEP_MS);
    }
}

/*
 * The poller's sleep after `quiet` ns without a sign of traffic (I:
 * interval). Right after work (2 I) it looks every I/16: a peer that waits
 * for each answer before its next operation (a fetch-add loop against a
 * computing PE) finds the poller looking again about when its next
 * operation arrives; at I/4 it waited half of that on average, 2-5x the
 * time the same operation takes against a PE that polls by itself
 * (bench/osu/osu_busy_amo).
 */
#define POLL_HOT_DIV 16
static uint64_t poll_sleep_ns(uint64_t quiet, uint64_t i)
{
    return quiet < 2 * i    ? i / POLL_HOT_DIV
           : quiet < 10 * i ? i / 4
           : quiet < 1000 * i ? i
                              : 5 * i;
}

/*
 * Whether a progress call of the poller did work, from how long it took:
 * the providers say nothing when they serve a peer's read or write (no CQ
 * entry, no counter: rxm has no FI_RMA_EVENT), but serving one costs
 * socket calls that an idle call does not make. A call that took more than
 * twice the quickest of the last 256, plus POLL_WORK_NS, counts as work. A
 * preemption inside a call (a loaded machine) passes for work too: the
 * poller then stays at its short interval a little longer, nothing worse.
 * Measured over tcp;ofi_rxm (progress_cost serve, 2 PEs, loopback): without
 * it the poller backed off to 1 ms while a peer streamed puts and fetching
 * atomics at it (fetch 2.3 ms, a third of the operations of wait mode).
 */
#define POLL_WORK_NS 5000u
static int progress_worked(uint64_t took)
{
    static uint64_t floor_ns = UINT64_MAX, win_min = UINT64_MAX;
    static unsigned n;
    if (took < win_min)
        win_min = took;
    if (++n % 256 == 0 || floor_ns == UINT64_MAX) {
        floor_ns = win_min;
        win_min = UINT64_MAX;
    }
    return took > 2 * floor_ns + POLL_WORK_NS;
}

static void poll_mode_loop(void)
{
    uint64_t ival = (uint64_t)cdt_ofi_g.cfg.progress_interval_us * 1000u;
    /* A kick or the stop byte ends a sleep at once. */
    struct pollfd p = {.fd = prog_g.kick_fd >= 0 ? prog_g.kick_fd : prog_g.stop_fd[0],
                       .events = POLLIN};
    uint64_t last = cdt_ofi_now_ns(); /* the last sign of traffic */
    unsigned am_seen = __atomic_load_n(&cdt_ofi_am_events_g, __ATOMIC_RELAXED);
    int probe = 0; /* the last call was slow: look again soon */
    /* The kernel may stretch a sleep by the thread's timer slack (50 us by
     * default), longer than the shortest sleep: an eighth of it. */
    uint64_t slack = ival / POLL_HOT_DIV / 8;
    (void)prctl(PR_SET_TIMERSLACK, (unsigned long)(slack > 1000 ? slack : 1000), 0, 0, 0);
    while (!progress_stopping()) {
        uint64_t now = cdt_ofi_now_ns();
        if (app_polling()) {
            /* It drives the endpoint itself; once it stops, a peer it was
             * talking to is served at the short interval. Looking again
             * every STAND_BACK_MS, as the other modes do, not every I/4:
             * 20 times fewer wake-ups beside a busy PE, and as few chances
             * to drive the endpoint beside it when it is descheduled for a
             * moment (see ofi_init.c progress_mode). */
            last = now;
            poll(&p, 1, STAND_BACK_MS);
            if (prog_g.kick_fd >= 0)
                kicks_drain();
            continue;
        }
        cdt_progress();
        uint64_t took = cdt_ofi_now_ns() - now;
        unsigned am = __atomic_load_n(&cdt_ofi_am_events_g, __ATOMIC_RELAXED);
        int slow = progress_worked(took);
        /* A slow call is work only if the next one, soon, is slow too: a
         * peer at work keeps the poller busy; a lone slow call (a
         * preemption, cold caches after a sleep) costs one short sleep.
         * Once at work (hot), one slow call keeps it there: a peer that
         * waits for each answer sends one operation per look. */
        int hot = now - last < 2 * ival;
        if (am != am_seen || (slow && (probe || hot)))
            last = now;
        am_seen = am;
        probe = slow && !probe && !hot;
        uint64_t ns = probe ? ival / 4 : poll_sleep_ns(now - last, ival);
        struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                              .tv_nsec = (long)(ns % 1000000000u)};
        if (ppoll(&p, 1, &ts, NULL) > 0 && prog_g.kick_fd >= 0 && kicks_drain())
            last = cdt_ofi_now_ns();
    }
}

static void *progress_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the PE's own thread's */
    if (cdt_ofi_g.prog_mode == OFI_PROG_POLL)
        poll_mode_loop();
    else if (cdt_ofi_g.prog_mode == OFI_PROG_KICK)
        kick_mode_loop();
    else
        wait_mode_loop();
    return NULL;
}

shm_status_t cdt_progress_thread_start(void)
{
    int mode = cdt_ofi_g.prog_mode;
    if (mode == OFI_PROG_NONE || cdt_ofi_g.dflt == NULL)
        return SHM_OK;
    __atomic_store_n(&cdt_ofi_g.progress_stop, 0, __ATOMIC_RELEASE);
    if (mode == OFI_PROG_WAIT)
        prog_g.am_cq = cdt_ofi_amo_am_wait_cq(&prog_g.am_fabric);
    /* Kicks: shm's only wake-up; a poller's where the provider has no wait
     * object (sockets) and this host has other PEs to kick it. */
    int kicks = mode == OFI_PROG_KICK ||
                (mode == OFI_PROG_POLL && !cdt_ofi_g.prov_wait && shm_rt_g.local_size > 1);
    if (kicks && kicks_open() != SHM_OK) {
        kicks_close();
        if (mode == OFI_PROG_KICK)
            return SHM_ERR_NOSYS;
    }
    if (prog_g.kick_fd < 0 && pipe2(prog_g.stop_fd, O_CLOEXEC) != 0)
        return SHM_ERR_NOSYS;
    if (mode == OFI_PROG_POLL && cdt_ofi_g.cfg.progress_interval_us <= 0)
        cdt_ofi_g.cfg.progress_interval_us = 200;
    if (pthread_create(&cdt_ofi_g.progress_tid, NULL, progress_main, NULL) != 0) {
        kicks_close();
        return SHM_ERR_NOMEM;
    }
    cdt_ofi_g.progress_running = 1;
    SHM_INFO(OFI, "progress thread: %s", cdt_ofi_progress_describe());
    return SHM_OK;
}

void cdt_progress_thread_stop(void)
{
    if (!cdt_ofi_g.progress_running)
        return;
    __atomic_store_n(&cdt_ofi_g.progress_stop, 1, __ATOMIC_RELEASE);
    if (prog_g.kick_fd >= 0) {
        struct sockaddr_un sa;
        socklen_t len = kick_addr(&sa, cdt_ofi_g.cfg.rank);
        (void)sendto(prog_g.send_fd, "s", 1, MSG_DONTWAIT, (struct sockaddr *)&sa, len);
    }
    if (prog_g.stop_fd[1] >= 0)
        (void)write(prog_g.stop_fd[1], "s", 1);
    pthread_join(cdt_ofi_g.progress_tid, NULL);
    cdt_ofi_g.progress_running = 0;
    kicks_close();
    for (int i = 0; i < 2; i++) {
        if (prog_g.stop_fd[i] >= 0)
            close(prog_g.stop_fd[i]);
        prog_g.stop_fd[i] = -1;
    }
    prog_g.am_cq = NULL;
}

const char *cdt_ofi_progress_describe(void)
{
    if (!cdt_ofi_g.progress_running)
        return "off";
    switch (cdt_ofi_g.prog_mode) {
    case OFI_PROG_POLL:
        return prog_g.kick_fd >= 0 ? "on (timed poller, woken early by same-host peers)"
                                   : "on (timed poller)";
    case OFI_PROG_WAIT:
        return "on (sleeps on the provider's wait object)";
    default:
        return "on (sleeps until a same-host peer wakes it)";
    }
}
