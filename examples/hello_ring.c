// SPDX-License-Identifier: BSD-3-Clause
/*
 * The demo job: every PE writes a block of numbers into its right
 * neighbour's symmetric buffer, then each PE checks what it received and
 * PE 0 gathers the verdicts. Output a user can check: one line per PE and
 * a final "ring OK".
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    long *inbox = shmem_malloc(N * sizeof(long));
    long out[N];
    for (int i = 0; i < N; i++)
        out[i] = (long)me * 1000000 + i;

    shmem_long_put(inbox, out, N, right);
    shmem_barrier_all();

    long bad = 0;
    for (int i = 0; i < N; i++)
        if (inbox[i] != (long)left * 1000000 + i)
            bad++;
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += inbox[i];
    printf("PE %d of %d: received %d longs from PE %d, checksum %ld, %s\n", me, npes, N, left,
           sum, bad ? "MISMATCH" : "ok");
    fflush(stdout);

    /* Each PE reports its verdict to PE 0 with a one-element put. */
    long verdict = bad ? 0 : 1;
    long *verdicts = shmem_calloc((size_t)npes, sizeof(long));
    shmem_long_put(&verdicts[me], &verdict, 1, 0);
    shmem_barrier_all();
    int rc = 0;
    if (me == 0) {
        long good = 0;
        for (int i = 0; i < npes; i++)
            good += verdicts[i];
        printf("ring %s: %ld of %d PEs received the right data\n", good == npes ? "OK" : "FAILED",
               good, npes);
        rc = good == npes ? 0 : 1;
    }
    shmem_free(verdicts);
    shmem_free(inbox);
    shmem_finalize();
    return rc;
}
