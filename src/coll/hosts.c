// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hosts of the job and of each team (layout: coll/hosts.h).
 *
 * The node of every world PE comes from the launcher once, at init
 * (shm_rt_node_map: the PMIx node map, K look-ups), and is checked against
 * the PEs the launcher says share this host: the node-aware algorithms
 * need every member to see the same hosts, or they wait for messages
 * nobody sends. SHMEM_COLL_HOSTS replaces it for tests: PEs of one machine
 * then play several hosts (they still reach each other's memory directly).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "runtime/rt.h"

static int *node_of_g; /* host of each world PE, 0..nnodes_g-1; NULL: one host */
static int nnodes_g = 1;

int shm_coll_nhosts(void)
{
    return nnodes_g;
}

/* SHMEM_COLL_HOSTS: "block:S1,S2,..." (hosts of S1, S2, ... PEs in PE order,
 * the list repeated until every PE has a host) or "cyclic:K" (PE p on host
 * p mod K). */
static void hosts_from_pattern(const char *pat, int npes)
{
    const char *var = "SHMEM_COLL_HOSTS";
    long sizes[256];
    int ns = 0;
    int cyclic = strncmp(pat, "cyclic:", 7) == 0;
    if (!cyclic && strncmp(pat, "block:", 6) != 0)
        shm_fatal("%s='%s': expected block:S1,S2,... or cyclic:K", var, pat);
    const char *p = pat + (cyclic ? 7 : 6);
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1 << 20 || ns == 256 || (*end && *end != ','))
            shm_fatal("%s='%s': expected positive counts separated by commas", var, pat);
        sizes[ns++] = v;
        p = *end ? end + 1 : end;
    }
    if (ns == 0 || (cyclic && ns != 1))
        shm_fatal("%s='%s': expected block:S1,S2,... or cyclic:K", var, pat);
    node_of_g = malloc((size_t)npes * sizeof(int));
    if (node_of_g == NULL)
        shm_fatal("out of memory for the node map (%d PEs)", npes);
    int host = 0;
    for (int pe = 0, left = (int)sizes[0], i = 0; pe < npes; pe++) {
        if (cyclic) {
            node_of_g[pe] = pe % (int)sizes[0];
            continue;
        }
        if (left == 0) {
            i = (i + 1) % ns;
            left = (int)sizes[i];
            host++;
        }
        node_of_g[pe] = host;
        left--;
    }
    nnodes_g = cyclic ? (sizes[0] < npes ? (int)sizes[0] : npes) : host + 1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Node ids as the launcher gives them (PMIX_NODEID may be any number) to 0..K-1. */
static int compact_ids(int *ids, int n)
{
    int *sorted = malloc((size_t)n * sizeof(int));
    if (sorted == NULL)
        shm_fatal("out of memory for the node map (%d PEs)", n);
    memcpy(sorted, ids, (size_t)n * sizeof(int));
    qsort(sorted, (size_t)n, sizeof(int), cmp_int);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[k++] = sorted[i];
    for (int i = 0; i < n; i++) {
        int *at = bsearch(&ids[i], sorted, (size_t)k, sizeof(int), cmp_int);
        ids[i] = (int)(at - sorted);
    }
    free(sorted);
    return k;
}

void shm_coll_hosts_init(void)
{
    int npes = shm_state_g.npes, me = shm_state_g.me;
    const char *pat = shm_env_g.COLL_HOSTS;
    nnodes_g = 1;
    if (pat && *pat) {
        hosts_from_pattern(pat, npes);
        SHM_INFO(COLL, "SHMEM_COLL_HOSTS=%s: the collectives see %d hosts", pat, nnodes_g);
        return;
    }
    if (shm_rt_g.nnodes <= 1 || npes == 1)
        return;
    node_of_g = malloc((size_t)npes * sizeof(int));
    if (node_of_g == NULL)
        shm_fatal("out of memory for the node map (%d PEs)", npes);
    if (shm_rt_node_map(node_of_g) != 0) {
        if (me == 0)
            SHM_WARN(COLL, "the launcher gives no node of each PE: collectives ignore hosts");
        free(node_of_g);
        node_of_g = NULL;
        return;
    }
    nnodes_g = compact_ids(node_of_g, npes);
    /* The map must place exactly this host's PEs with this PE. */
    int mine = 0, mynode = node_of_g[me];
    for (int pe = 0; pe < npes; pe++)
        mine += node_of_g[pe] == mynode;
    int agree = mine == shm_rt_g.local_size;
    for (int i = 0; i < shm_rt_g.local_size && agree; i++)
        agree = node_of_g[shm_rt_g.local_peers[i]] == mynode;
    if (!agree)
        shm_fatal("the launcher's node map puts %d PEs on this PE's host but says %d share it: "
                  "the collectives cannot tell hosts apart",
                  mine, shm_rt_g.local_size);
}

/* A view of t: its ranks ranks[0..cnt), this PE at index me (or -1). */
static void view_init(shm_team_t *v, const shm_team_t *t, const int *ranks, int cnt, int me,
                      int *pes, int *fidx)
{
    memset(v, 0, sizeof(*v));
    for (int i = 0; i < cnt; i++) {
        pes[i] = shm_team_pe(t, ranks[i]);
        fidx[i] = shm_coll_idx(t, ranks[i]);
    }
    v->n = cnt;
    v->me = me;
    v->pes = pes;
    v->fidx = fidx;
    v->start = 0;
    v->stride = 1;
    v->slot = t->slot;
    v->flags = t->flags;
    v->flags_off = t->flags_off;
    v->sent = t->sent;
    v->sent_off = t->sent_off;
    v->seen = t->seen;
    v->scratch = t->scratch;
    v->scratch_off = t->scratch_off;
    v->scratch_half = t->scratch_half;
}

void shm_coll_hosts_free(shm_coll_hosts_t *h)
{
    if (h == NULL)
        return;
    free(h->start);
    free(h->memb);
    free(h->hof);
    free(h->vbuf);
    free(h);
}

shm_coll_hosts_t *shm_coll_hosts_make(const shm_team_t *t)
{
    int n = t->n;
    if (node_of_g == NULL || n < 3)
        return NULL;
    shm_coll_hosts_t *h = calloc(1, sizeof(*h));
    int *map = malloc((size_t)nnodes_g * sizeof(int));
    if (h == NULL || map == NULL || !(h->hof = malloc((size_t)n * sizeof(int))) ||
        !(h->memb = malloc((size_t)n * sizeof(int))))
        shm_fatal("out of memory for the hosts of a team of %d PEs", n);
    for (int i = 0; i < nnodes_g; i++)
        map[i] = -1;
    int k = 0;
    for (int r = 0; r < n; r++) {
        int nd = node_of_g[shm_team_pe(t, r)];
        if (map[nd] < 0)
            map[nd] = k++;
        h->hof[r] = map[nd];
    }
    free(map);
    h->k = k;
    if (k < 2 || k == n) /* one host, or one member per host: flat */
        goto flat;
    if (!(h->start = calloc((size_t)k + 1, sizeof(int))))
        shm_fatal("out of memory for the hosts of a team of %d PEs", n);
    for (int r = 0; r < n; r++)
        h->start[h->hof[r] + 1]++;
    h->pmin = n;
    for (int x = 0; x < k; x++) {
        int c = h->start[x + 1];
        h->pmin = c < h->pmin ? c : h->pmin;
        h->pmax = c > h->pmax ? c : h->pmax;
        h->start[x + 1] += h->start[x];
    }
    int *fill = malloc((size_t)k * sizeof(int));
    if (fill == NULL)
        shm_fatal("out of memory for the hosts of a team of %d PEs", n);
    memcpy(fill, h->start, (size_t)k * sizeof(int));
    for (int r = 0; r < n; r++)
        h->memb[fill[h->hof[r]]++] = r;
    free(fill);

    h->host = h->hof[t->me];
    int p = shm_coll_host_size(h, h->host);
    const int *mine = h->memb + h->start[h->host];
    for (int i = 0; i < p; i++)
        if (mine[i] == t->me)
            h->lme = i;
    /* The column: member lme of each host that has that many. */
    h->vbuf = malloc((size_t)(3 * p + 3 * k) * sizeof(int));
    if (h->vbuf == NULL)
        shm_fatal("out of memory for the hosts of a team of %d PEs", n);
    int *col = h->vbuf + 2 * p + 2 * k, ncol = 0, cme = -1;
    for (int x = 0; x < k; x++)
        if (shm_coll_host_size(h, x) > h->lme) {
            if (x == h->host)
                cme = ncol;
            col[ncol++] = h->memb[h->start[x] + h->lme];
        }
    view_init(&h->local, t, mine, p, h->lme, h->vbuf, h->vbuf + p);
    view_init(&h->column, t, col, ncol, cme, h->vbuf + 2 * p, h->vbuf + 2 * p + k);
    return h;
flat:
    shm_coll_hosts_free(h);
    return NULL;
}

/* ---- active sets ----
 * Kept per shape for the rest of the job: every member must decide alike,
 * so there is no cap that one PE could reach before another. Programs use
 * a handful of shapes; each costs O(n) ints. */

typedef struct {
    int start, stride, n;
    shm_coll_hosts_t *h;
} active_t;
static active_t *active;
static int nactive, cap_active;
static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;

shm_coll_hosts_t *shm_coll_hosts_active(const shm_team_t *t)
{
    if (node_of_g == NULL || t->n < 3)
        return NULL;
    pthread_mutex_lock(&active_lock);
    int i = 0;
    while (i < nactive &&
           !(active[i].start == t->start && active[i].stride == t->stride && active[i].n == t->n))
        i++;
    if (i == nactive) {
        if (nactive == cap_active) {
            cap_active = cap_active ? 2 * cap_active : 8;
            active = realloc(active, (size_t)cap_active * sizeof(*active));
            if (active == NULL)
                shm_fatal("out of memory for the hosts of active sets");
        }
        active[i] = (active_t){t->start, t->stride, t->n, shm_coll_hosts_make(t)};
        nactive++;
    }
    shm_coll_hosts_t *h = active[i].h;
    pthread_mutex_unlock(&active_lock);
    return h;
}

void shm_coll_hosts_fini(void)
{
    for (int i = 0; i < nactive; i++)
        shm_coll_hosts_free(active[i].h);
    free(active);
    active = NULL;
    nactive = cap_active = 0;
    free(node_of_g);
    node_of_g = NULL;
    nnodes_g = 1;
}
