// SPDX-License-Identifier: BSD-3-Clause
//
// Programs that leave main without shmem_finalize, the way error paths do
// (`if (!buf) { perror(...); exit(1); }` on one PE). Argument:
//   barrier  PE 1 calls exit(3) while the other PEs wait in shmem_barrier_all;
//   wait     PE 1 returns 4 from main while the other PEs wait (wait_until)
//            for a value it would have sent;
//   ok       every PE returns 0 from main without shmem_finalize after some
//            traffic: the library finalizes them, the job succeeds.
// For barrier and wait the job must end (EXPECT_FAILURE) with PE 1's status,
// oshrun naming PE 1 "before shmem_finalize"; before the fix the exiting PE
// ran the collective finalize from its exit handler and the job hung. The
// exiting PE prints death_epoch_ms: expect_failure.sh then also checks that
// the job ended within DEATH_MAX_MS (2 s) of it, whatever the start-up took.
#include <time.h>

#include "pe_check.h"

static long flag;

static void say_death(const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "PE 1: %s death_epoch_ms=%lld\n", what,
            (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}
static long data[16];

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    shmem_init();
    pe_begin("conf_exit_early");
    shmem_barrier_all();

    if (strcmp(mode, "barrier") == 0) {
        if (pe_me_g == 1) {
            say_death("exit(3) without shmem_finalize");
            exit(3);
        }
        pe_step("barrier_all with PE 1 gone (the job must end)");
        shmem_barrier_all();
        fprintf(stderr, "PE %d: shmem_barrier_all returned although PE 1 left\n", pe_me_g);
        return 1;
    }
    if (strcmp(mode, "wait") == 0) {
        if (pe_me_g == 1) {
            say_death("return 4 from main without shmem_finalize");
            return 4;
        }
        pe_step("wait_until for a flag PE 1 never sets (the job must end)");
        shmem_long_wait_until(&flag, SHMEM_CMP_NE, 0);
        fprintf(stderr, "PE %d: wait_until returned although PE 1 left\n", pe_me_g);
        return 1;
    }

    // ok: data to the right, then leave main; the implicit finalize is
    // collective and completes the puts before anyone's process ends.
    long src[16];
    for (int i = 0; i < 16; i++)
        src[i] = pe_me_g * 100 + i;
    shmem_long_put_nbi(data, src, 16, pe_right());
    shmem_long_atomic_inc(&flag, pe_right());
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();
    for (int i = 0; i < 16; i++)
        PE_EXPECT_EQ(data[i], (long)(pe_left() * 100 + i), "data[%d] from the left PE", i);
    // No shmem_finalize: pe_end returns 0 (or 1 after a wrong value, and the
    // job then fails as it should).
    return pe_end();
}
