/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pidfd_open(2) by number (glibc 2.36 has no wrapper on every target), for
 * the PE's watch of its launcher (rt_watch.c) and oshrun's sweeper
 * (tools/oshrun/sweep.c). -1 with errno ENOSYS where the kernel has none.
 */
#ifndef OFISHMEM_RT_PIDFD_H
#define OFISHMEM_RT_PIDFD_H

#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline int shm_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

#endif
