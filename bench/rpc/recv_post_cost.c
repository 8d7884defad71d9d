/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one repost of a receive buffer costs on a provider: the time of one
 * fi_recvmsg (through the conduit, as the RPC receive pool posts it), best
 * of ROUNDS rounds of POSTS posts on a fresh endpoint. Multi-recv saves one
 * such post per request (rpc_rate prints reposts per request); compare it
 * with the time of one RPC (1 / rpc_rate's rate per client).
 *   recv_post_cost [PROVIDER]
 */
#include <stdio.h>
#include <time.h>

#include "conduit/conduit.h"
#include "core/env.h"

enum { ROUNDS = 20, POSTS = 256, BYTES = 1024 };

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    static char buf[POSTS][BYTES];
    static int ctx[POSTS];
    char err[256];
    if (shm_env_load(&shm_env_g, shm_env_from_process, err, sizeof(err)) != SHM_OK) {
        fprintf(stderr, "recv_post_cost: %s\n", err);
        return 1;
    }
    cdt_msg_cfg_t cfg = {.provider = argc > 1 ? argv[1] : "shm"};
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        cdt_msg_ep_t *ep;
        if (cdt_msg_open(&cfg, &ep) != SHM_OK) {
            fprintf(stderr, "recv_post_cost: no endpoint on provider %s\n", cfg.provider);
            return 1;
        }
        double t0 = now_ns();
        for (int i = 0; i < POSTS; i++)
            if (cdt_msg_post_recv(ep, buf[i], BYTES, 0, &ctx[i]) != SHM_OK) {
                fprintf(stderr, "recv_post_cost: post %d of %d failed\n", i, POSTS);
                return 1;
            }
        double per = (now_ns() - t0) / POSTS;
        best = per < best ? per : best;
        cdt_msg_close(ep);
    }
    printf("recv_post_cost: provider %s: %.0f ns per posted receive (best of %d x %d)\n",
           cfg.provider, best, ROUNDS, POSTS);
    return 0;
}
