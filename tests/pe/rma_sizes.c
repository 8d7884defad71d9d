// SPDX-License-Identifier: BSD-3-Clause
//
// putmem / getmem / putmem_nbi / getmem_nbi for sizes around every engine
// boundary (inject, bounce, fragment), at unaligned source and destination
// offsets. Every byte is checked, and so are the guard bytes just before and
// after the destination range. Puts go to the right neighbour, gets come from
// the left one; sources and destinations on the initiator are private memory.
// argv[1] == "globals": the symmetric source and destination are static
// arrays (.bss) instead of heap blocks (and, with the same-host direct path
// on, it is checked that they are mapped: shmem_ptr).
#include "pe_check.h"

#define GUARD 64          // guard bytes on each side of a destination range
#define GUARD_BYTE 0xEE   // what guard bytes (and the rest of the target) hold
#define TAG_SRC 1

static const size_t sizes[] = {
    0,     1,     7,         8,                 63,                    64,
    65,    4095,  4096,      4097,              65535,                 65536 + 3,
    (1u << 20) + 5,          (4u << 20) + 1,
};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ ((4u << 20) + 1)
#define BUFSZ (MAXSZ + 8 + 2 * GUARD)

enum op { OP_PUT, OP_PUT_NBI, OP_GET, OP_GET_NBI, NOPS };
static const char *op_name[NOPS] = {"putmem", "putmem_nbi", "getmem", "getmem_nbi"};

// Offset pairs: small sizes try all 8 source and all 8 destination offsets
// (paired so that each pair differs), large sizes a few.
static void offsets(size_t size, int k, int *soff, int *doff)
{
    static const int big[3][2] = {{0, 0}, {3, 5}, {7, 1}};
    if (size <= 65536 + 3) {
        *soff = k;
        *doff = (k * 3 + 1) & 7;
    } else {
        *soff = big[k][0];
        *doff = big[k][1];
    }
}

// Checks dst[GUARD+doff .. +size) against the source pattern of `src_pe`
// starting at `soff`, and GUARD bytes on each side.
static void check_range(const uint8_t *dst, size_t size, int soff, int doff, int src_pe,
                        const char *what)
{
    char w[200];
    const uint8_t *d = dst + GUARD + doff;
    snprintf(w, sizeof w, "%s data", what);
    pe_check_fill(d, size, src_pe, TAG_SRC, (uint64_t)soff, w);
    snprintf(w, sizeof w, "%s guard before destination", what);
    pe_check_byte(d - GUARD, GUARD, GUARD_BYTE, w);
    snprintf(w, sizeof w, "%s guard after destination", what);
    pe_check_byte(d + size, GUARD, GUARD_BYTE, w);
}

static uint8_t g_src[BUFSZ], g_dst[BUFSZ];

int main(int argc, char **argv)
{
    const int globals = argc > 1 && strcmp(argv[1], "globals") == 0;
    shmem_init();
    pe_begin(globals ? "rma_sizes(globals)" : "rma_sizes");
    const int right = pe_right(), left = pe_left();

    uint8_t *sym_src = globals ? g_src : shmem_malloc(BUFSZ);
    uint8_t *sym_dst = globals ? g_dst : shmem_malloc(BUFSZ);
    const char *direct = getenv("SHMEM_DIRECT"), *dglob = getenv("SHMEM_DIRECT_GLOBALS");
    if (globals && right != pe_me_g && !(direct && strcmp(direct, "0") == 0) &&
        !(dglob && strcmp(dglob, "0") == 0))
        PE_EXPECT(shmem_ptr(g_dst + BUFSZ - 1, right) != NULL,
                  "the direct path is on but PE %d's globals are not mapped here", right);
    uint8_t *loc_src = malloc(BUFSZ);
    uint8_t *loc_dst = malloc(BUFSZ);
    if (!sym_src || !sym_dst || !loc_src || !loc_dst) {
        pe_fail("allocation of 2 x %u bytes failed (sym_src %p sym_dst %p)", (unsigned)BUFSZ,
                (void *)sym_src, (void *)sym_dst);
        shmem_global_exit(1);
    }
    // Same pattern in the symmetric source (read by gets) and the private
    // source (used by puts): byte i of either is pattern(me, TAG_SRC, i).
    pe_fill(sym_src, BUFSZ, pe_me_g, TAG_SRC, 0);
    pe_fill(loc_src, BUFSZ, pe_me_g, TAG_SRC, 0);
    shmem_barrier_all();

    for (size_t si = 0; si < NSIZES; si++) {
        const size_t size = sizes[si];
        const int ncases = size <= 65536 + 3 ? 8 : 3;
        for (int k = 0; k < ncases; k++) {
            int soff, doff;
            offsets(size, k, &soff, &doff);
            for (int op = 0; op < NOPS; op++) {
                char what[160];
                const int is_put = op == OP_PUT || op == OP_PUT_NBI;
                snprintf(what, sizeof what, "%s size %zu src_off %d dst_off %d, data of PE %d",
                         op_name[op], size, soff, doff, left);
                pe_step("%s", what);
                const size_t span = GUARD + doff + size + GUARD;
                if (is_put) {
                    memset(sym_dst, GUARD_BYTE, span);
                    shmem_barrier_all(); // neighbour's target is ready
                    if (op == OP_PUT) {
                        shmem_putmem(sym_dst + GUARD + doff, loc_src + soff, size, right);
                    } else {
                        shmem_putmem_nbi(sym_dst + GUARD + doff, loc_src + soff, size, right);
                        shmem_quiet();
                    }
                    // The source may be reused once the call (or quiet) returns.
                    memset(loc_src + soff, 0, size);
                    shmem_barrier_all();
                    check_range(sym_dst, size, soff, doff, left, what);
                    pe_fill(loc_src + soff, size, pe_me_g, TAG_SRC, (uint64_t)soff);
                } else {
                    memset(loc_dst, GUARD_BYTE, span);
                    if (op == OP_GET) {
                        shmem_getmem(loc_dst + GUARD + doff, sym_src + soff, size, left);
                    } else {
                        shmem_getmem_nbi(loc_dst + GUARD + doff, sym_src + soff, size, left);
                        shmem_quiet();
                    }
                    check_range(loc_dst, size, soff, doff, left, what);
                }
            }
        }
    }

    pe_step("final barrier");
    shmem_barrier_all();
    // The symmetric source must not have been written by anyone.
    pe_check_fill(sym_src, BUFSZ, pe_me_g, TAG_SRC, 0, "symmetric get source untouched");
    if (!globals) {
        shmem_free(sym_dst);
        shmem_free(sym_src);
    }
    free(loc_src);
    free(loc_dst);
    shmem_finalize();
    return pe_end();
}
