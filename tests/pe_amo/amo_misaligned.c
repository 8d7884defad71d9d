// SPDX-License-Identifier: BSD-3-Clause
//
// With SHMEM_DEBUG=1, an AMO on a misaligned target ends the job with a
// message naming the function, the PE and the address (checked by
// expect_failure.sh). PE 0 targets PE 1; the other PEs wait.
#include "amo_check.h"

int main(void)
{
    shmem_init();
    pe_begin("amo_misaligned");
    char *buf = shmem_calloc(4, sizeof(long));
    if (pe_me_g == 0)
        shmem_long_atomic_add((long *)(buf + 4), 1, 1);
    shmem_barrier_all();
    pe_fail("the misaligned AMO was not reported");
    shmem_finalize();
    return pe_end();
}
