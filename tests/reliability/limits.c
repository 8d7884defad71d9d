// SPDX-License-Identifier: BSD-3-Clause
//
// limits MODE: a job that runs into a limit set low by limits.sh (issue 28
// item 3); the script checks the message names the limit and what is needed.
//   run      a put, a get and a fetch-add to every PE, a barrier; passes
//   nofile   after a barrier, every PE opens /dev/null until no descriptor
//            is left, then talks to every PE: a connection-based fabric
//            (tcp;ofi_rxm) needs a descriptor per new peer
#include <errno.h>
#include <fcntl.h>

#include "pe_check.h"

static void talk_to_all(long *x)
{
    for (int i = 1; i <= pe_npes_g; i++) {
        int pe = (pe_me_g + i) % pe_npes_g;
        pe_step("put, get and fetch-add to PE %d", pe);
        shmem_long_p(&x[pe_me_g], pe_me_g + 1, pe);
        shmem_quiet();
        PE_EXPECT_EQ(shmem_long_g(&x[pe_me_g], pe), (long)pe_me_g + 1, "get back from PE %d", pe);
        (void)shmem_long_atomic_fetch_add(&x[pe_npes_g], 1, pe);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "run";
    shmem_init();
    pe_begin("limits");
    long *x = shmem_calloc((size_t)pe_npes_g + 1, sizeof(long));
    shmem_barrier_all();
    if (strcmp(mode, "nofile") == 0) {
        int n = 0;
        while (open("/dev/null", O_RDONLY) >= 0)
            n++;
        fprintf(stderr, "PE %d: opened %d descriptors, until %s\n", pe_me_g, n, strerror(errno));
    } else if (strcmp(mode, "run") != 0) {
        fprintf(stderr, "limits: unknown mode '%s'\n", mode);
        return 2;
    }
    talk_to_all(x);
    pe_step("barrier");
    shmem_barrier_all();
    PE_EXPECT_EQ(shmem_long_atomic_fetch(&x[pe_npes_g], pe_me_g), (long)pe_npes_g,
                 "fetch-adds received");
    shmem_free(x);
    shmem_finalize();
    return pe_end();
}
