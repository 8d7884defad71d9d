/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mercury's side of `call_cost -p "tcp;ofi_rxm"`: one thread drives a
 * Mercury 2.4.1 server class and a client class over ofi+tcp (loopback,
 * busy mode: NA_NO_BLOCK), and times an 8-byte echo shaped like hg_rate's
 * (a length-prefixed buffer each way) in the same stages:
 *   forward   client: HG_Forward
 *   serve     server: HG_Progress + HG_Trigger until the handler has responded
 *   wait      client: HG_Progress + HG_Trigger until the forward's callback ran
 * Medians of per-call times, median over rounds, ns (as call_cost). Built by
 * bench/rpc/compare_mercury.sh against the Mercury it builds (not by CMake:
 * Mercury is not a dependency of ofishmem):
 *   hg_call_cost [-n CALLS] [-r ROUNDS] [-i "ofi+tcp://127.0.0.1"]
 * Run it in a loopback-only network namespace like the rest (FI_TCP_IFACE=lo).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <mercury.h>
#include <mercury_proc.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* hg_rate's argument and result: a 32-bit length, then the bytes. */
static hg_return_t proc_iovec(hg_proc_t proc, void *arg)
{
    struct iovec *iov = arg;
    uint32_t len = (uint32_t)iov->iov_len;
    if (hg_proc_get_op(proc) == HG_FREE)
        return HG_SUCCESS;
    hg_return_t ret = hg_proc_uint32_t(proc, &len);
    if (ret != HG_SUCCESS)
        return ret;
    iov->iov_len = len;
    return len ? hg_proc_raw(proc, iov->iov_base, len) : HG_SUCCESS;
}

static char srv_buf[64];
static int responded;

static hg_return_t echo_cb(hg_handle_t h)
{
    char in_buf[64];
    struct iovec in = {.iov_base = in_buf, .iov_len = sizeof(in_buf)};
    if (HG_Get_input(h, &in) != HG_SUCCESS)
        return HG_OTHER_ERROR;
    memcpy(srv_buf, in_buf, in.iov_len);
    struct iovec out = {.iov_base = srv_buf, .iov_len = in.iov_len};
    HG_Free_input(h, &in);
    hg_return_t ret = HG_Respond(h, NULL, NULL, &out);
    HG_Destroy(h);
    responded = 1;
    return ret;
}

static int forwarded;
static hg_return_t forward_cb(const struct hg_cb_info *info)
{
    forwarded = info->ret == HG_SUCCESS ? 1 : -1;
    return HG_SUCCESS;
}

static void drive(hg_context_t *ctx)
{
    unsigned int n;
    HG_Progress(ctx, 0);
    HG_Trigger(ctx, 0, 16, &n);
}

enum { S_FORWARD, S_SERVE, S_WAIT, S_TOTAL, NSTAGE };
static const char *stage_name[NSTAGE] = {"forward (client)", "serve (server progress)",
                                         "wait (client)", "whole call, one thread"};

int main(int argc, char **argv)
{
    int ncalls = 20000, rounds = 5;
    const char *info_str = "ofi+tcp://127.0.0.1";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            ncalls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            info_str = argv[++i];
        else {
            fprintf(stderr, "usage: %s [-n CALLS] [-r ROUNDS] [-i NA_INFO]\n", argv[0]);
            return 2;
        }
    }
    if (ncalls < 1 || rounds < 1 || rounds > 64)
        return 2;
    struct hg_init_info hii = HG_INIT_INFO_INITIALIZER;
    hii.na_init_info.progress_mode = NA_NO_BLOCK;
    hg_class_t *srv = HG_Init_opt2(info_str, 1, HG_VERSION(2, 4), &hii);
    hg_class_t *cli = HG_Init_opt2(info_str, 0, HG_VERSION(2, 4), &hii);
    if (srv == NULL || cli == NULL) {
        fprintf(stderr, "hg_call_cost: HG_Init_opt2(%s) failed\n", info_str);
        return 1;
    }
    hg_context_t *sctx = HG_Context_create(srv), *cctx = HG_Context_create(cli);
    hg_id_t id = HG_Register_name(srv, "cost.echo", proc_iovec, proc_iovec, echo_cb);
    if (HG_Register_name(cli, "cost.echo", proc_iovec, proc_iovec, NULL) != id)
        return 1;
    hg_addr_t self, target;
    char addr[256];
    hg_size_t alen = sizeof(addr);
    if (HG_Addr_self(srv, &self) != HG_SUCCESS ||
        HG_Addr_to_string(srv, addr, &alen, self) != HG_SUCCESS ||
        HG_Addr_lookup2(cli, addr, &target) != HG_SUCCESS) {
        fprintf(stderr, "hg_call_cost: no address\n");
        return 1;
    }
    hg_handle_t h;
    if (HG_Create(cctx, target, id, &h) != HG_SUCCESS)
        return 1;
    char in_buf[8] = "abcdefg";
    double *t[NSTAGE], v[NSTAGE][64];
    for (int s = 0; s < NSTAGE; s++)
        if ((t[s] = malloc((size_t)ncalls * sizeof(double))) == NULL)
            return 1;
    for (int k = 0; k < rounds; k++) {
        for (int i = -1000; i < ncalls; i++) {
            struct iovec in = {.iov_base = in_buf, .iov_len = sizeof(in_buf)};
            forwarded = responded = 0;
            uint64_t t0 = now_ns();
            if (HG_Forward(h, forward_cb, NULL, &in) != HG_SUCCESS) {
                fprintf(stderr, "hg_call_cost: HG_Forward failed\n");
                return 1;
            }
            uint64_t t1 = now_ns();
            /* Warming up (connection), the client is driven too. */
            while (!responded) {
                drive(sctx);
                if (i < 0)
                    drive(cctx);
            }
            uint64_t t2 = now_ns();
            while (!forwarded)
                drive(cctx);
            uint64_t t3 = now_ns();
            if (forwarded < 0) {
                fprintf(stderr, "hg_call_cost: call %d failed\n", i);
                return 1;
            }
            char out_buf[64];
            struct iovec out = {.iov_base = out_buf, .iov_len = sizeof(out_buf)};
            if (HG_Get_output(h, &out) != HG_SUCCESS || out.iov_len != sizeof(in_buf) ||
                memcmp(out_buf, in_buf, sizeof(in_buf)) != 0) {
                fprintf(stderr, "hg_call_cost: call %d: wrong answer\n", i);
                return 1;
            }
            HG_Free_output(h, &out);
            drive(sctx); /* idle now: the response's send completion, if any */
            drive(cctx);
            if (i < 0)
                continue;
            t[S_FORWARD][i] = (double)(t1 - t0);
            t[S_SERVE][i] = (double)(t2 - t1);
            t[S_WAIT][i] = (double)(t3 - t2);
            t[S_TOTAL][i] = (double)(t3 - t0);
        }
        for (int s = 0; s < NSTAGE; s++)
            v[s][k] = median(t[s], ncalls);
    }
    printf("# hg_call_cost: Mercury %s, 8-byte echo (hg_rate's shape), one thread drives server "
           "and client, busy, %d calls per round, median of %d rounds of per-call medians (ns)\n",
           info_str, ncalls, rounds);
    printf("%-28s %10s\n", "stage", "median");
    for (int s = 0; s < NSTAGE; s++)
        printf("%-28s %10.0f\n", stage_name[s], median(v[s], rounds));
    HG_Destroy(h);
    HG_Addr_free(cli, target);
    HG_Addr_free(srv, self);
    HG_Context_destroy(cctx);
    HG_Context_destroy(sctx);
    HG_Finalize(cli);
    HG_Finalize(srv);
    return 0;
}
