// SPDX-License-Identifier: BSD-3-Clause
//
// big_heap MIB: every PE allocates MIB MiB of symmetric heap, writes all of
// it, and reads back its right neighbour's last MiB with shmem_getmem. Used
// by devshm.sh in a private mount namespace whose /dev/shm is smaller than
// that: the job must run (the heap is a memfd, not a /dev/shm file) or stop
// at shmem_init with one message; a SIGBUS is a failure.
#include "pe_check.h"

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    const size_t len = mib << 20;
    shmem_init();
    pe_begin("big_heap");
    pe_step("shmem_malloc(%zu MiB)", mib);
    unsigned char *h = shmem_malloc(len);
    PE_EXPECT(h != NULL, "shmem_malloc(%zu MiB) returned NULL", mib);
    if (h == NULL)
        shmem_global_exit(1);
    pe_step("writing %zu MiB", mib);
    for (size_t i = 0; i < len; i += 4096)
        memset(h + i, (int)((i >> 12) + pe_me_g) & 0xff, 4096);
    shmem_barrier_all();
    pe_step("reading the neighbour's last MiB");
    unsigned char *buf = malloc(1 << 20);
    shmem_getmem(buf, h + len - (1 << 20), 1 << 20, pe_right());
    long bad = 0;
    for (size_t i = 0; i < (1 << 20); i++)
        bad += buf[i] != (unsigned char)((((len - (1 << 20) + i) >> 12) + pe_right()) & 0xff);
    PE_EXPECT_EQ(bad, 0L, "bytes of PE %d's last MiB that differ", pe_right());
    free(buf);
    shmem_barrier_all();
    shmem_free(h);
    shmem_finalize();
    return pe_end();
}
