// SPDX-License-Identifier: BSD-3-Clause
/* Abstract Unix sockets and SCM_RIGHTS descriptor passing (see unixsock.h). */
#define _GNU_SOURCE
#include "core/unixsock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define UNIX_MAX_FDS 8

socklen_t shm_unix_abstract(struct sockaddr_un *sa, const char *fmt, ...)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(sa->sun_path) - 1)
        return 0;
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

void shm_unix_timeouts(int fd, int seconds)
{
    struct timeval tv = {.tv_sec = seconds};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int shm_unix_peer_same_user(int fd, pid_t *pid_p)
{
    struct ucred cred;
    socklen_t cl = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cred.uid != geteuid())
        return 0;
    if (pid_p)
        *pid_p = cred.pid;
    return 1;
}

int shm_unix_send_fds(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(UNIX_MAX_FDS * sizeof(int))];
    } cm;
    if (nfds < 0 || nfds > UNIX_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    memset(&cm, 0, sizeof(cm));
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        msg.msg_control = cm.buf;
        msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *ch = CMSG_FIRSTHDR(&msg);
        ch->cmsg_level = SOL_SOCKET;
        ch->cmsg_type = SCM_RIGHTS;
        ch->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(ch), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n == (ssize_t)len)
        return 0;
    if (n >= 0)
        errno = EPROTO;
    return -1;
}

int shm_unix_recv_fds(int fd, void *buf, size_t len, int *fds, int maxfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(UNIX_MAX_FDS * sizeof(int))];
    } cm;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                         .msg_controllen = sizeof(cm.buf)};
    ssize_t n = recvmsg(fd, &msg, MSG_WAITALL | MSG_CMSG_CLOEXEC);
    int got = 0, extra = 0;
    for (struct cmsghdr *ch = CMSG_FIRSTHDR(&msg); n >= 0 && ch; ch = CMSG_NXTHDR(&msg, ch)) {
        if (ch->cmsg_level != SOL_SOCKET || ch->cmsg_type != SCM_RIGHTS)
            continue;
        int k = (int)((ch->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int tmp[UNIX_MAX_FDS];
        k = k < UNIX_MAX_FDS ? k : UNIX_MAX_FDS; /* the control buffer holds no more */
        memcpy(tmp, CMSG_DATA(ch), (size_t)k * sizeof(int));
        for (int i = 0; i < k; i++) {
            if (got < maxfds)
                fds[got++] = tmp[i];
            else {
                close(tmp[i]);
                extra = 1;
            }
        }
    }
    if (n == (ssize_t)len && !extra && !(msg.msg_flags & MSG_CTRUNC))
        return got;
    for (int i = 0; i < got; i++)
        close(fds[i]);
    errno = n < 0 ? errno : n == 0 ? ECONNRESET : EPROTO;
    return -1;
}
