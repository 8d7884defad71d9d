// SPDX-License-Identifier: BSD-3-Clause
//
// Connections on demand (issue 16), on connection-oriented providers
// (tcp;ofi_rxm). Each PE counts the TCP connections it holds to other PEs:
//   after shmem_init:      none opened (lazy; the left neighbour's ring put
//                          may already have been accepted), or one to every
//                          other PE (ARGS eager, with SHMEM_OFI_EAGER_CONNECT=1);
//   after a ring exchange (a put to the right neighbour, a wait for the
//                          left one's): two, and the one this PE opened goes
//                          to its right neighbour;
//   after an all-to-all in which every PE makes first contact with every
//                          PE it has not talked to, all at once (puts, gets
//                          and fetch-adds issued together, so that both ends
//                          of most pairs connect at the same moment): one
//                          per other PE, not two, and every value right.
// The all-to-all runs again on a fresh context (an endpoint of its own, which
// connects to every peer anew, also on demand).
//
// How a socket is told to be an rxm connection: a connection this PE opened
// ends at another PE's listening port; one it accepted starts at its own.
// Sockets are read from /proc/self/fd and /proc/net/tcp{,6} at each
// checkpoint; the listening ports of all PEs are exchanged (fcollect) only at
// the end, after the counting, so that the exchange cannot add connections.
#include "pe_check.h"
#include "pe_sockets.h"

#include <dirent.h>

#define MAXPES 64
#define MAXSOCK 512
#define MAXLISTEN 8
#define ROUNDS 1

typedef struct {
    int n;
    unsigned lport[MAXSOCK], rport[MAXSOCK];
} socks_t;


// This process's TCP sockets in state st (0x01 established, 0x0A listening).
static void tcp_sockets(unsigned st, socks_t *out)
{
    static unsigned long ino[4096];
    int nino = own_socket_inodes(ino, 4096);
    out->n = 0;
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (int f = 0; f < 2; f++) {
        FILE *fp = fopen(files[f], "r");
        if (fp == NULL)
            continue;
        char line[512];
        if (fgets(line, sizeof line, fp) == NULL) { // header
            fclose(fp);
            continue;
        }
        while (fgets(line, sizeof line, fp)) {
            char laddr[64], raddr[64];
            unsigned lport, rport, state;
            unsigned long inode;
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %63[0-9A-Fa-f]:%x %x %*s %*s %*s %*u %*u %lu",
                       laddr, &lport, raddr, &rport, &state, &inode) != 6)
                continue;
            if (state != st)
                continue;
            for (int i = 0; i < nino; i++)
                if (ino[i] == inode && out->n < MAXSOCK) {
                    out->lport[out->n] = lport;
                    out->rport[out->n] = rport;
                    out->n++;
                    break;
                }
        }
        fclose(fp);
    }
}

static unsigned listen_ports[MAXPES * MAXLISTEN]; // symmetric (fcollect target)
static unsigned my_listen[MAXLISTEN];
static long psync[SHMEM_COLLECT_SYNC_SIZE];

// PE whose listening port is port, or -1.
static int pe_listening_on(unsigned port)
{
    for (int p = 0; p < pe_npes_g; p++)
        for (int k = 0; k < MAXLISTEN; k++)
            if (listen_ports[p * MAXLISTEN + k] == port)
                return p;
    return -1;
}

typedef struct {
    int opened, accepted;
    int opened_to[MAXSOCK];
} conns_t;

static conns_t classify(const socks_t *s)
{
    conns_t c = {0};
    for (int i = 0; i < s->n; i++) {
        int to = pe_listening_on(s->rport[i]);
        if (to >= 0 && to != pe_me_g)
            c.opened_to[c.opened++] = to;
        else if (pe_listening_on(s->lport[i]) == pe_me_g)
            c.accepted++;
    }
    return c;
}

static long ring_in = -1;
static long ring_token;
static long a2a_in[MAXPES];
static long a2a_word[MAXPES];
static long counter;

int main(int argc, char **argv)
{
    int eager = argc > 1 && strcmp(argv[1], "eager") == 0;
    shmem_init();
    pe_begin("connect_demand");
    const int me = pe_me_g, n = pe_npes_g;
    if (n > MAXPES || n < 3) {
        pe_fail("needs 3 to %d PEs, got %d", MAXPES, n);
        shmem_global_exit(1);
    }
    socks_t after_init, after_ring, after_a2a, lis;
    tcp_sockets(0x01, &after_init);
    // Sockets after init that are not accepted connections (the launcher's,
    // and with eager wire-up the connections this PE opened): a bound for
    // the settling below.
    tcp_sockets(0x0A, &lis);
    int base = 0;
    for (int i = 0; i < after_init.n; i++) {
        int accepted = 0;
        for (int k = 0; k < lis.n; k++)
            accepted |= after_init.lport[i] == lis.lport[k];
        base += !accepted;
    }
    const int settled = eager ? after_init.n : base + n - 1;

    pe_step("ring: waiting for PE %d's put", pe_left());
    shmem_long_p(&ring_in, me, pe_right());
    shmem_quiet();
    shmem_long_wait_until(&ring_in, SHMEM_CMP_EQ, pe_left());
    tcp_sockets(0x01, &after_ring);
    // Nobody goes on before everyone has counted: a token twice round the
    // ring (a barrier would open connections of its own).
    for (long lap = 1; lap <= 2; lap++) {
        pe_step("ring token, lap %ld", lap);
        if (me != 0)
            shmem_long_wait_until(&ring_token, SHMEM_CMP_EQ, lap);
        shmem_long_p(&ring_token, lap, pe_right());
        shmem_quiet();
        if (me == 0)
            shmem_long_wait_until(&ring_token, SHMEM_CMP_EQ, lap);
    }

    // Every PE contacts every other at once, on the default context and on
    // ROUNDS fresh contexts.
    long *back = calloc((size_t)n, sizeof(long));
    for (int round = 0; round <= ROUNDS; round++) {
        shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
        if (round > 0 && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
            pe_fail("shmem_ctx_create failed in round %d", round);
            break;
        }
        pe_step("all-to-all round %d", round);
        long tag = (long)round * 1000 + me;
        for (int k = 1; k < n; k++) {
            int p = (me + k) % n;
            shmem_ctx_long_put_nbi(ctx, &a2a_in[me], &tag, 1, p);
            shmem_ctx_long_get_nbi(ctx, &back[p], &a2a_word[me], 1, p);
            shmem_ctx_long_atomic_add(ctx, &counter, 1, p);
        }
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        for (int p = 0; p < n; p++) {
            if (p == me)
                continue;
            PE_EXPECT_EQ(a2a_in[p], (long)round * 1000 + p,
                         "round %d: value PE %d put into a2a_in[%d]", round, p, p);
            PE_EXPECT_EQ(back[p], (long)(round > 0 ? (round - 1) * 1000 + p : 0),
                         "round %d: a2a_word[%d] read back from PE %d", round, me, p);
        }
        PE_EXPECT_EQ(counter, (long)(round + 1) * (n - 1), "round %d: fetch-adds received",
                     round);
        if (round == 0) {
            // A first contact both ends made at once leaves the losing
            // request's socket until rxm reads the reject (its connection
            // events are read every few ms, only while the PE progresses):
            // allow up to 10 s to settle. 8 PEs on 2 cores at load 25-40
            // progress seldom; 2 s was a timing assumption.
            struct timespec ts0, ts1;
            clock_gettime(CLOCK_MONOTONIC, &ts0);
            for (int t = 0; t < 500; t++) {
                tcp_sockets(0x01, &after_a2a);
                if (after_a2a.n <= settled)
                    break;
                shmem_long_test(&counter, SHMEM_CMP_EQ, -1); // progress
                pe_usleep(20000);
            }
            clock_gettime(CLOCK_MONOTONIC, &ts1);
            if (after_a2a.n > settled)
                printf("PE %d: %d TCP sockets after %.1f s of settling, expected at most %d\n",
                       me, after_a2a.n,
                       (double)(ts1.tv_sec - ts0.tv_sec) + (ts1.tv_nsec - ts0.tv_nsec) * 1e-9,
                       settled);
            shmem_barrier_all(); /* nobody's next round before everyone counted */
        }
        // The word the next round's gets read back.
        for (int p = 0; p < n; p++)
            if (p != me)
                shmem_long_p(&a2a_word[me], (long)round * 1000 + p, p);
        shmem_barrier_all();
        if (ctx != SHMEM_CTX_DEFAULT)
            shmem_ctx_destroy(ctx);
    }
    free(back);

    // Listening ports last: the fcollect itself goes over the connections.
    tcp_sockets(0x0A, &lis);
    for (int i = 0; i < lis.n && i < MAXLISTEN; i++)
        my_listen[i] = lis.lport[i];
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    shmem_fcollect32(listen_ports, my_listen, MAXLISTEN, 0, 0, n, psync);
    PE_EXPECT(lis.n >= 1, "no listening TCP socket found: is the provider tcp;ofi_rxm?");

    conns_t ci = classify(&after_init), cr = classify(&after_ring), ca = classify(&after_a2a);
    // A left neighbour's ring put may arrive before this PE counts.
    if (eager)
        PE_EXPECT_EQ(ci.opened + ci.accepted, n - 1,
                     "connections to other PEs after shmem_init (%d opened, %d accepted)",
                     ci.opened, ci.accepted);
    else
        PE_EXPECT(ci.opened == 0 && ci.accepted <= 1,
                  "after shmem_init: %d connections opened (expected 0), %d accepted (expected "
                  "at most 1, from PE %d's ring put)",
                  ci.opened, ci.accepted, pe_left());
    if (!eager) {
        PE_EXPECT_EQ(cr.opened, 1, "connections opened after the ring exchange");
        PE_EXPECT_EQ(cr.accepted, 1, "connections accepted after the ring exchange");
        PE_EXPECT(cr.opened < 1 || cr.opened_to[0] == pe_right(),
                  "after the ring exchange the connection this PE opened goes to PE %d, not "
                  "PE %d",
                  cr.opened_to[0], pe_right());
    }
    PE_EXPECT_EQ(ca.opened + ca.accepted, n - 1,
                 "connections to other PEs after the all-to-all (%d opened, %d accepted)",
                 ca.opened, ca.accepted);
    for (int i = 0; i < ca.opened; i++)
        for (int j = 0; j < i; j++)
            PE_EXPECT(ca.opened_to[i] != ca.opened_to[j],
                      "two connections opened to PE %d after the all-to-all", ca.opened_to[i]);
    if (me == 0)
        printf("PE 0: connections after init %d, after the ring %d (%d opened), after the "
               "all-to-all %d\n",
               ci.opened + ci.accepted, cr.opened + cr.accepted, cr.opened,
               ca.opened + ca.accepted);
    shmem_finalize();
    return pe_end();
}
