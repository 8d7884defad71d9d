// SPDX-License-Identifier: BSD-3-Clause
//
// A page of the data+BSS segment that is not private and writable when
// shmem_init runs (here: made read-only by the program, as RELRO makes the
// first page of a segment when it does not end on a page boundary) must not
// be moved onto shared memory: it stays read-only, it is not mapped by the
// peers (shmem_ptr NULL), and gets of it go through the fabric and return
// its bytes. The rest of the globals keep the direct path (the largest run
// of writable pages), and every global keeps its value across shmem_init.
#include <sys/mman.h>

#include "pe_check.h"

#define PG 4096

static char before[3 * PG] __attribute__((aligned(PG)));
static char guarded[PG] __attribute__((aligned(PG)));
static char after[3 * PG] __attribute__((aligned(PG)));
static long init_data[4] = {11, 22, 33, 44};

int main(void)
{
    for (int i = 0; i < PG; i++)
        guarded[i] = (char)(i % 13 + 1);
    before[5] = 5;
    after[7] = 7;
    if (mprotect(guarded, PG, PROT_READ) != 0) {
        perror("mprotect");
        return 1;
    }
    shmem_init();
    pe_begin("globals_edge");
    const int right = pe_right();
    PE_EXPECT(before[5] == 5 && after[7] == 7 && init_data[3] == 44 &&
                  guarded[PG - 1] == 1 + (PG - 1) % 13,
              "globals changed across shmem_init");
    if (right != pe_me_g) {
        PE_EXPECT(shmem_ptr(guarded, right) == NULL,
                  "a read-only page of the data segment is mapped by the peers");
        const char *direct = getenv("SHMEM_DIRECT");
        int mapped = (shmem_ptr(before, right) != NULL) + (shmem_ptr(after, right) != NULL);
        if (!(direct && strcmp(direct, "0") == 0))
            PE_EXPECT(mapped >= 1, "neither side of the read-only page is on the direct path");
        else
            PE_EXPECT(mapped == 0, "globals are mapped with SHMEM_DIRECT=0");
    }
    pe_step("get from the read-only page of PE %d", right);
    char buf[PG];
    shmem_getmem(buf, guarded, PG, right);
    long bad = 0;
    for (int i = 0; i < PG; i++)
        bad += buf[i] != (char)(i % 13 + 1);
    PE_EXPECT_EQ(bad, 0L, "bytes of PE %d's read-only page that differ", right);
    pe_step("puts on both sides of it");
    shmem_putmem(before + PG, "left", 5, right);
    shmem_putmem(after + PG, "right", 6, right);
    shmem_long_p(&init_data[1], 100 + pe_me_g, right);
    shmem_barrier_all();
    PE_EXPECT(strcmp(before + PG, "left") == 0, "put before the read-only page: '%s'", before + PG);
    PE_EXPECT(strcmp(after + PG, "right") == 0, "put after the read-only page: '%s'", after + PG);
    PE_EXPECT_EQ(init_data[1], 100L + pe_left(), ".data word put by PE %d", pe_left());
    shmem_barrier_all();
    shmem_finalize();
    return pe_end();
}
