// SPDX-License-Identifier: BSD-3-Clause
/*
 * Unix sockets in the abstract namespace (no file anywhere) and descriptor
 * passing with SCM_RIGHTS: how same-host processes hand each other memfds.
 * Used by the SHMEM heap's direct path (heap/shared.c) and by the RPC
 * same-host transport (rpc/sq.c).
 */
#ifndef SHM_CORE_UNIXSOCK_H
#define SHM_CORE_UNIXSOCK_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* Fills an abstract address "\0<printf of fmt>"; returns its length (0 if too long). */
socklen_t shm_unix_abstract(struct sockaddr_un *sa, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Send and receive timeouts of a socket, in seconds. */
void shm_unix_timeouts(int fd, int seconds);

/* Is the process at the other end of fd of our effective user? Its pid (as
 * this process's pid namespace sees it) goes to *pid_p. */
int shm_unix_peer_same_user(int fd, pid_t *pid_p);

/* Sends len bytes and nfds descriptors in one message; 0 or -1 (errno). */
int shm_unix_send_fds(int fd, const void *buf, size_t len, const int *fds, int nfds);

/*
 * Receives exactly len bytes and up to maxfds descriptors (close-on-exec).
 * Returns the number of descriptors received (*fds), or -1 with errno
 * (EPROTO: short message or descriptors cut; ECONNRESET: the peer closed);
 * on error no descriptor stays open.
 */
int shm_unix_recv_fds(int fd, void *buf, size_t len, int *fds, int maxfds);

#endif /* SHM_CORE_UNIXSOCK_H */
