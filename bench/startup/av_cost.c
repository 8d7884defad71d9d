// SPDX-License-Identifier: BSD-3-Clause
/*
 * av_cost: what one more peer costs in a libfabric address vector, for
 * docs/SCALING.md. Opens an RDM endpoint on a provider, then inserts N
 * peer addresses made from its own name (a TCP port counted up per entry
 * for sockaddr names; for shm a fresh name string) one at a time, as
 * cdt_connect does, and prints the resident-memory growth and the time per
 * insert. No peer is contacted: inserting does not connect.
 *
 *   av_cost [-p PROVIDER] [-n N] [-c COUNT]   (default tcp;ofi_rxm, 100000, N + 1)
 *
 * -c: the AV is opened for COUNT entries (what the library asks for: every
 * PE of the job) while only N are inserted (the peers a PE talks to); the
 * resident memory fi_av_open itself takes is printed too.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                   \
    do {                                                                              \
        int rc_ = (int)(call);                                                        \
        if (rc_) {                                                                    \
            fprintf(stderr, "%s: %d (%s)\n", #call, rc_, fi_strerror(-rc_));          \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char **argv)
{
    const char *prov = "tcp;ofi_rxm";
    long n = 100000;
    int c;
    long count = -1;
    while ((c = getopt(argc, argv, "p:n:c:")) != -1) {
        if (c == 'p')
            prov = optarg;
        else if (c == 'n')
            n = atol(optarg);
        else if (c == 'c')
            count = atol(optarg);
        else {
            fprintf(stderr, "usage: %s [-p PROVIDER] [-n N] [-c COUNT]\n", argv[0]);
            return 2;
        }
    }
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->caps = FI_RMA | FI_MSG;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup(prov);
    CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
    struct fid_fabric *fab;
    struct fid_domain *dom;
    struct fid_av *av;
    struct fid_ep *ep;
    CHECK(fi_fabric(info->fabric_attr, &fab, NULL));
    CHECK(fi_domain(fab, info, &dom, NULL));
    if (count < 0)
        count = n + 1;
    struct fi_av_attr attr = {.type = FI_AV_TABLE, .count = (size_t)count};
    long rss_open = rss_kb();
    double t_open = now();
    CHECK(fi_av_open(dom, &attr, &av, NULL));
    printf("fi_av_open for %ld entries: RSS +%ld kB, %.2f ms\n", count, rss_kb() - rss_open,
           (now() - t_open) * 1e3);
    CHECK(fi_endpoint(dom, info, &ep, NULL));
    CHECK(fi_ep_bind(ep, &av->fid, 0));
    struct fid_cq *cq;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT};
    CHECK(fi_cq_open(dom, &cqa, &cq, NULL));
    CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(ep));
    char name[200];
    size_t len = sizeof(name);
    CHECK(fi_getname(&ep->fid, name, &len));
    int is_in = info->addr_format == FI_SOCKADDR_IN && len >= sizeof(struct sockaddr_in);

    long rss0 = rss_kb();
    double t0 = now();
    long done = 0;
    for (long i = 0; i < n; i++) {
        char a[256];
        memcpy(a, name, len);
        if (is_in) {
            struct sockaddr_in *sin = (struct sockaddr_in *)a;
            uint32_t ip = ntohl(sin->sin_addr.s_addr);
            /* Distinct (address, port) pairs, all on 127/8: never contacted. */
            sin->sin_addr.s_addr = htonl((ip & 0xff000000u) | (uint32_t)(1 + i / 60000));
            sin->sin_port = htons((uint16_t)(1024 + i % 60000));
        } else {
            snprintf(a, sizeof(a), "%.200s-%ld", name, i); /* string names (shm) */
        }
        fi_addr_t fa;
        int rc = fi_av_insert(av, a, 1, &fa, 0, NULL);
        if (rc != 1) {
            fprintf(stderr, "fi_av_insert #%ld returned %d (%s)\n", i, rc,
                    rc < 0 ? fi_strerror(-rc) : "");
            break;
        }
        done++;
    }
    double t1 = now();
    long rss1 = rss_kb();
    printf("provider %s, addr_format %u, name %zu bytes: %ld inserts, RSS +%ld kB = %.1f B per entry, "
           "%.2f us per insert\n",
           info->fabric_attr->prov_name, info->addr_format, len, done, rss1 - rss0,
           done ? (double)(rss1 - rss0) * 1024.0 / (double)done : 0.0,
           done ? (t1 - t0) * 1e6 / (double)done : 0.0);
    fi_close(&ep->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&dom->fid);
    fi_close(&fab->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return done == n ? 0 : 1;
}
