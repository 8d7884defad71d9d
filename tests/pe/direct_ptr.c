// SPDX-License-Identifier: BSD-3-Clause
//
// The same-host direct path: with it on (the default when PEs share a host),
// shmem_ptr gives a usable pointer into every other PE's heap, a store
// through it is seen by that PE, and puts/gets to it are plain copies; with
// SHMEM_DIRECT=0 (argv[1] == "off") shmem_ptr returns NULL for other PEs.
// Globals (.data/.bss) are reachable the same way (argv[1] == "noglobals":
// SHMEM_DIRECT_GLOBALS=0, heap only).
#include <string.h>

#include "pe_check.h"

static long global_word = 5;
static long global_words[64]; /* .bss */

int main(int argc, char **argv)
{
    int expect_direct = !(argc > 1 && strcmp(argv[1], "off") == 0);
    int expect_globals = expect_direct && !(argc > 1 && strcmp(argv[1], "noglobals") == 0);
    shmem_init();
    pe_begin("direct_ptr");
    int right = pe_right(), left = pe_left();

    long *words = shmem_calloc((size_t)pe_npes_g, sizeof(long));
    pe_step("shmem_ptr to PE %d", right);
    long *rp = shmem_ptr(words, right);
    if (expect_direct) {
        PE_EXPECT(rp != NULL, "shmem_ptr(heap, right neighbour) is NULL with the direct path on");
    } else {
        PE_EXPECT(rp == NULL, "shmem_ptr(heap, right neighbour) = %p with SHMEM_DIRECT=0",
                  (void *)rp);
    }
    PE_EXPECT(shmem_ptr(words, pe_me_g) == words, "shmem_ptr(heap, me) is not the address itself");
    long *gp = shmem_ptr(&global_word, right);
    if (expect_globals) {
        PE_EXPECT(gp != NULL, "shmem_ptr(global, right neighbour) is NULL with the direct path on");
        if (gp)
            PE_EXPECT_EQ(*gp, 5L, "the neighbour's initialised global read through shmem_ptr");
    } else {
        PE_EXPECT(gp == NULL || right == pe_me_g, "shmem_ptr to another PE's global is %p",
                  (void *)gp);
    }
    PE_EXPECT(shmem_ptr(&global_word, pe_me_g) == &global_word,
              "shmem_ptr(global, me) is not the address itself");

    pe_step("store through shmem_ptr");
    if (rp)
        rp[pe_me_g] = 1000 + pe_me_g; /* a plain store into the neighbour's heap */
    else
        shmem_long_p(&words[pe_me_g], 1000 + pe_me_g, right);
    long *gr = shmem_ptr(global_words, right);
    if (gr)
        gr[pe_me_g % 64] = 2000 + pe_me_g; /* a plain store into the neighbour's .bss */
    else
        shmem_long_p(&global_words[pe_me_g % 64], 2000 + pe_me_g, right);
    shmem_barrier_all();
    PE_EXPECT_EQ(words[left], 1000L + left, "word written by PE %d", left);
    PE_EXPECT_EQ(global_words[left % 64], 2000L + left, "global word written by PE %d", left);

    pe_step("get through the direct path");
    long v = shmem_long_g(&words[pe_me_g], right);
    PE_EXPECT_EQ(v, 1000L + pe_me_g, "g of my own word on PE %d", right);

    shmem_free(words);
    shmem_finalize();
    return pe_end();
}
