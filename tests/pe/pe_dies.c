// SPDX-License-Identifier: BSD-3-Clause
//
// A PE that dies must end the job: PE 1 kills itself with SIGKILL right after
// initialization while every other PE sits in shmem_barrier_all. The test is
// registered with EXPECT_FAILURE: oshrun must exit non-zero, say
// "PE 1 (pid ...) ... ending the job" on stderr, and do it within 5 s.
#include <time.h>

#include "pe_check.h"

int main(void)
{
    shmem_init();
    pe_begin("pe_dies");
    shmem_barrier_all(); // everybody is up
    if (pe_me_g == 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(stderr, "PE 1: raising SIGKILL death_epoch_ms=%lld\n",
                (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        raise(SIGKILL);
    }
    pe_step("barrier_all with PE 1 dead (oshrun must end the job)");
    shmem_barrier_all();
    // Not reached when the launcher does its job.
    fprintf(stderr, "PE %d: shmem_barrier_all returned although PE 1 is dead\n", pe_me_g);
    return 1;
}
