// SPDX-License-Identifier: BSD-3-Clause
//
// --tag-output (Open MPI's option): every line a PE writes to its stdout or
// stderr leaves oshrun's stdout or stderr as "[1,RANK]<stdout>:LINE" (or
// <stderr>), so that the output of a job tells which PE wrote what. Each PE
// writes into two pipes; one forwarder thread reads them all and writes
// whole lines (a line longer than the buffer goes out in pieces, each
// tagged; a last line without a newline gets one). Nothing is dropped: the
// forwarder runs until every pipe is closed, and oshrun waits for it, a
// bounded time, once its PEs are gone (a process a PE started in the
// background may keep a pipe open).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oshrun.h"

#define TAG_BUF 8192
#define TAG_DRAIN_MS 2000 // how long oshrun waits for output after its PEs are gone

typedef struct tag_stream {
    int rfd; // read end (-1: closed)
    int wfd; // write end, for the PE (-1: handed over)
    size_t len;
    char buf[TAG_BUF];
} tag_stream_t;

struct osr_tag {
    int npes;
    tag_stream_t *s; // 2 per PE: [2r] stdout, [2r+1] stderr
    pthread_t thread;
    bool started;
    int done; // the forwarder saw every pipe close (atomic)
};

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; // EPIPE (SIGPIPE is blocked) or worse: nobody reads
        p += w;
        n -= (size_t)w;
    }
}

// One tagged line out: prefix, the n bytes, a newline.
static void emit(int rank, int err, const char *p, size_t n)
{
    char out[TAG_BUF + 64];
    int k = snprintf(out, 64, "[1,%d]<%s>:", rank, err ? "stderr" : "stdout");
    memcpy(out + k, p, n);
    out[k + (int)n] = '\n';
    write_all(err ? STDERR_FILENO : STDOUT_FILENO, out, (size_t)k + n + 1);
}

// Sends the complete lines of s; the rest too at EOF, or when it fills the
// whole buffer (a line longer than the buffer goes out in pieces).
static void emit_lines(tag_stream_t *s, int rank, int err, bool eof)
{
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++) {
        if (s->buf[i] == '\n') {
            emit(rank, err, s->buf + start, i - start);
            start = i + 1;
        }
    }
    if ((eof || (start == 0 && s->len == TAG_BUF)) && start < s->len) {
        emit(rank, err, s->buf + start, s->len - start);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

static void *forward(void *arg)
{
    osr_tag_t *t = arg;
    int n = 2 * t->npes;
    struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
    int *idx = calloc((size_t)n, sizeof(*idx));

    if (pfd == NULL || idx == NULL) {
        fprintf(stderr, OSR_NAME ": --tag-output: out of memory; PE output is lost\n");
        free(pfd);
        free(idx);
        __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
        return NULL;
    }
    for (;;) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (t->s[i].rfd >= 0) {
                pfd[m] = (struct pollfd){.fd = t->s[i].rfd, .events = POLLIN};
                idx[m++] = i;
            }
        }
        if (m == 0)
            break;
        if (poll(pfd, (nfds_t)m, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int j = 0; j < m; j++) {
            if (!(pfd[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            tag_stream_t *s = &t->s[idx[j]];
            int rank = idx[j] / 2, err = idx[j] % 2;
            ssize_t r = read(s->rfd, s->buf + s->len, TAG_BUF - s->len);
            if (r < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (r <= 0) { // EOF: the PE (and all it started) closed it
                emit_lines(s, rank, err, true);
                close(s->rfd);
                s->rfd = -1;
                continue;
            }
            s->len += (size_t)r;
            emit_lines(s, rank, err, false);
        }
    }
    free(pfd);
    free(idx);
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

osr_tag_t *osr_tag_new(int npes)
{
    osr_tag_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->npes = npes;
    t->s = calloc(2 * (size_t)npes, sizeof(*t->s));
    if (t->s == NULL) {
        free(t);
        return NULL;
    }
    for (int i = 0; i < 2 * npes; i++)
        t->s[i].rfd = t->s[i].wfd = -1;
    for (int i = 0; i < 2 * npes; i++) {
        int p[2];
        // Both ends close at exec; the PE gets its write end by dup2 (which
        // clears the flag on the copy), no other PE sees it.
        if (pipe2(p, O_CLOEXEC) != 0) {
            fprintf(stderr, OSR_NAME ": --tag-output: pipe: %s\n", strerror(errno));
            osr_tag_free(t);
            return NULL;
        }
        t->s[i].rfd = p[0];
        t->s[i].wfd = p[1];
    }
    return t;
}

void osr_tag_fds(const osr_tag_t *t, int rank, int *out_fd, int *err_fd)
{
    *out_fd = t->s[2 * rank].wfd;
    *err_fd = t->s[2 * rank + 1].wfd;
}

void osr_tag_forked(osr_tag_t *t, int rank)
{
    for (int k = 0; k < 2; k++) {
        tag_stream_t *s = &t->s[2 * rank + k];
        if (s->wfd >= 0)
            close(s->wfd);
        s->wfd = -1;
    }
}

int osr_tag_start(osr_tag_t *t)
{
    // Write ends of PEs that never started: their streams end now.
    for (int r = 0; r < t->npes; r++)
        osr_tag_forked(t, r);
    if (pthread_create(&t->thread, NULL, forward, t) != 0)
        return -1;
    t->started = true;
    return 0;
}

void osr_tag_free(osr_tag_t *t)
{
    if (t == NULL)
        return;
    if (t->started) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        for (int waited = 0;
             !__atomic_load_n(&t->done, __ATOMIC_ACQUIRE) && waited < TAG_DRAIN_MS; waited += 10)
            nanosleep(&ts, NULL);
        if (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
            // A background process still holds a pipe: leave the thread to it.
            fprintf(stderr, OSR_NAME ": --tag-output: a process the PEs started still holds "
                            "their output open; not waiting for it\n");
            return;
        }
        pthread_join(t->thread, NULL);
    }
    for (int i = 0; i < 2 * t->npes; i++) {
        if (t->s[i].rfd >= 0)
            close(t->s[i].rfd);
        if (t->s[i].wfd >= 0)
            close(t->s[i].wfd);
    }
    free(t->s);
    free(t);
}
