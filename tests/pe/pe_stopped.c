// SPDX-License-Identifier: BSD-3-Clause
//
// A peer that stops answering must not hang the PEs that wait on it: PE 1
// stops itself (SIGSTOP: alive, holding its connections, answering nothing)
// after a barrier; PE 0 then does a fetching atomic and a get on PE 1's heap
// through the fabric. With SHMEM_FABRIC_TIMEOUT=S the wait must end the job
// after S seconds with one message naming the operation, PE 1 and its host.
// Registered with EXPECT_FAILURE (SHMEM_DIRECT=0: the fabric path).
#include <time.h>

#include "pe_check.h"

int main(void)
{
    shmem_init();
    pe_begin("pe_stopped");
    long *x = shmem_calloc(1, sizeof(long));
    shmem_barrier_all(); // everybody is up, connections made
    if (pe_me_g == 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(stderr, "PE 1: raising SIGSTOP at %lld ms\n",
                (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        raise(SIGSTOP);
    }
    if (pe_me_g == 0) {
        pe_usleep(300000);
        pe_step("fetching atomic and get on stopped PE 1");
        long v = shmem_long_atomic_fetch_add(x, 1, 1);
        long g = 0;
        shmem_long_get(&g, x, 1, 1);
        fprintf(stderr, "PE 0: operations on a stopped PE returned (%ld, %ld)\n", v, g);
        return 1;
    }
    pe_step("barrier with PE 1 stopped");
    shmem_barrier_all();
    return 1;
}
