// SPDX-License-Identifier: BSD-3-Clause
//
// A 1 GiB static array must stay sparse when shmem_init moves the globals
// onto shared memory (the same-host direct path): VmRSS right after
// shmem_init stays far below it; after PE 1 puts 10 MiB into PE 0's array
// with shmem_putmem and PE 0 has read them, PE 0's VmRSS grew by about
// 10 MiB (not 1 GiB), and the bytes are there. With the direct path on, the array is mapped by the peers
// (shmem_ptr), so the put is a memcpy into the shared pages.
#include "pe_check.h"

#define BIG_BYTES (1ul << 30)
#define TOUCH (10ul << 20)
#define AT (512ul << 20)

static char big[BIG_BYTES];
static long marker = 12345; // .data next to it

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    const int expect_direct = !(argc > 1 && strcmp(argv[1], "off") == 0);
    shmem_init();
    pe_begin("globals_sparse");
    long rss0 = rss_kib();
    printf("PE %d: VmRSS after shmem_init %ld KiB\n", pe_me_g, rss0);
    PE_EXPECT(rss0 > 0 && rss0 < 200 * 1024, "VmRSS after shmem_init is %ld KiB with a 1 GiB "
              "static array: it was copied instead of left sparse?", rss0);
    PE_EXPECT_EQ(marker, 12345L, "an initialised global after shmem_init");
    if (pe_npes_g > 1) {
        void *p = shmem_ptr(big + AT, pe_me_g ^ 1);
        PE_EXPECT((p != NULL) == expect_direct, "shmem_ptr(1 GiB array, PE %d) = %p (direct %d)",
                  pe_me_g ^ 1, p, expect_direct);
    }
    shmem_barrier_all();
    if (pe_me_g == 1) {
        pe_step("putmem 10 MiB into PE 0's array");
        char *src = malloc(TOUCH);
        for (size_t i = 0; i < TOUCH; i++)
            src[i] = (char)(i % 251 + 1);
        shmem_putmem(big + AT, src, TOUCH, 0);
        shmem_quiet();
        free(src);
    }
    pe_step("barrier after the put");
    shmem_barrier_all();
    if (pe_me_g == 0) {
        long bad = 0;
        for (size_t i = 0; i < TOUCH; i++)
            bad += big[AT + i] != (char)(i % 251 + 1);
        // Read after the check: pages a peer wrote through its own mapping of
        // the shared memory count in this PE's VmRSS once this PE maps them.
        long rss1 = rss_kib();
        printf("PE 0: VmRSS after 10 MiB arrived and were read %ld KiB (+%ld)\n", rss1,
               rss1 - rss0);
        PE_EXPECT_EQ(bad, 0L, "bytes of the 10 MiB put that differ");
        PE_EXPECT(big[AT - 1] == 0 && big[AT + TOUCH] == 0, "bytes around the put were written");
        PE_EXPECT(rss1 - rss0 >= 9 * 1024 && rss1 - rss0 <= 60 * 1024,
                  "VmRSS grew by %ld KiB for 10 MiB put into the array", rss1 - rss0);
    }
    shmem_barrier_all();
    shmem_finalize();
    return pe_end();
}
