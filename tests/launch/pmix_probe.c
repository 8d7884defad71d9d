// SPDX-License-Identifier: BSD-3-Clause
//
// A plain PMIx client used to test oshrun. Usage: pmix_probe MODE [PIDDIR]
//   ok             init, check job info, modex exchange, barrier, finalize
//   signal         rank 1 kills itself with SIGKILL after init
//   segv           rank 1 raises SIGSEGV after init (no core file)
//   exit3          rank 1 exits 3 after init, before finalize
//   hang           rank 1 sleeps forever; the others block in a fence
//   idle           every rank sleeps forever after init
//   abort          rank 1 calls PMIx_Abort(7, "bye")
//   abort_silent   rank 1 calls PMIx_Abort(5, "")
//   nofinal_exit0  rank 1 _exit(0) after init, before finalize
//   final_exit5    all finish normally, then rank 1 exits 5 after finalize
//   singleton      report what PMIx_Init does without a launcher
// If PIDDIR is given, each rank writes its pid to PIDDIR/pid.<rank> so the
// test can check that nothing is left running.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

static pmix_proc_t me;

#define FAIL(...)                                                                  \
    do {                                                                           \
        fprintf(stderr, "pmix_probe[%u]: ", me.rank);                              \
        fprintf(stderr, __VA_ARGS__);                                              \
        fprintf(stderr, "\n");                                                     \
        exit(10);                                                                  \
    } while (0)

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Failure modes: rank 1 fails only once every rank has recorded its pid, so
// the test knows every process it has to see gone.
static void wait_for_pids(const char *dir, unsigned size)
{
    char path[4096];

    if (dir == NULL)
        return;
    for (int tries = 0; tries < 1000; tries++) {
        unsigned n = 0;
        for (unsigned r = 0; r < size; r++) {
            snprintf(path, sizeof(path), "%s/pid.%u", dir, r);
            n += access(path, F_OK) == 0;
        }
        if (n == size)
            return;
        usleep(10000);
    }
}

static void write_pid(const char *dir, unsigned rank)
{
    char path[4096];
    FILE *f;

    if (dir == NULL)
        return;
    char final[4096];

    // Write then rename, so a reader never sees a half-written file.
    snprintf(path, sizeof(path), "%s/.pid.%u", dir, rank);
    snprintf(final, sizeof(final), "%s/pid.%u", dir, rank);
    f = fopen(path, "w");
    if (f == NULL)
        FAIL("cannot write %s", path);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    if (rename(path, final) != 0)
        FAIL("cannot rename %s", path);
}

static uint32_t get_u32(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    uint32_t out = 0;

    if (rc != PMIX_SUCCESS)
        FAIL("PMIx_Get(%s) failed: %s", key, PMIx_Error_string(rc));
    switch (v->type) {
    case PMIX_UINT32: out = v->data.uint32; break;
    case PMIX_UINT16: out = v->data.uint16; break;
    case PMIX_PROC_RANK: out = v->data.rank; break;
    default: FAIL("PMIx_Get(%s): unexpected type %d", key, v->type);
    }
    PMIX_VALUE_RELEASE(v);
    return out;
}

static char *get_str(const pmix_proc_t *p, const char *key)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &v);
    char *out;

    if (rc != PMIX_SUCCESS)
        FAIL("PMIx_Get(%s) failed: %s", key, PMIx_Error_string(rc));
    if (v->type != PMIX_STRING)
        FAIL("PMIx_Get(%s): unexpected type %d", key, v->type);
    out = strdup(v->data.string);
    PMIX_VALUE_RELEASE(v);
    return out;
}

// Failure modes: a fence error means a peer died; wait to be ended by
// oshrun so the test sees which PE it blames.
static void fence(bool collect, bool failure_mode)
{
    pmix_info_t info;
    pmix_status_t rc;

    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        if (failure_mode) {
            for (;;)
                pause();
        }
        FAIL("PMIx_Fence(collect=%d) failed: %s", collect, PMIx_Error_string(rc));
    }
}

static int singleton(void)
{
    double t0 = now_s();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    double dt = now_s() - t0;

    printf("singleton: PMIx_Init -> %d (%s) in %.3f s; nspace '%s' rank %u\n", rc,
           PMIx_Error_string(rc), dt, rc == PMIX_SUCCESS ? me.nspace : "", me.rank);
    if (rc == PMIX_SUCCESS) {
        pmix_proc_t wild;
        pmix_value_t *v = NULL;
        PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
        printf("singleton: PMIx_Get(JOB_SIZE) -> %s, %u\n", PMIx_Error_string(rc),
               rc == PMIX_SUCCESS ? v->data.uint32 : 0);
        if (v)
            PMIX_VALUE_RELEASE(v);
        bool yes = true;
        pmix_info_t info;
        PMIx_Info_load(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        t0 = now_s();
        rc = PMIx_Fence(NULL, 0, &info, 1);
        printf("singleton: PMIx_Fence -> %s in %.3f s\n", PMIx_Error_string(rc), now_s() - t0);
        rc = PMIx_Finalize(NULL, 0);
        printf("singleton: PMIx_Finalize -> %s\n", PMIx_Error_string(rc));
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    const char *piddir = argc > 2 ? argv[2] : NULL;
    bool failure_mode = strcmp(mode, "ok") != 0 && strcmp(mode, "final_exit5") != 0;
    pmix_proc_t wild, peer;
    pmix_status_t rc;
    uint32_t size, lsize, lrank;
    char *peers;

    if (strcmp(mode, "singleton") == 0)
        return singleton();
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS)
        FAIL("PMIx_Init failed: %s", PMIx_Error_string(rc));
    write_pid(piddir, me.rank);

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    size = get_u32(&wild, PMIX_JOB_SIZE);
    lsize = get_u32(&wild, PMIX_LOCAL_SIZE);
    if (get_u32(&wild, PMIX_UNIV_SIZE) != size || lsize != size)
        FAIL("univ %u / local %u size differ from job size %u", get_u32(&wild, PMIX_UNIV_SIZE), lsize, size);
    if (get_u32(&wild, PMIX_NUM_NODES) != 1)
        FAIL("PMIX_NUM_NODES != 1");
    lrank = get_u32(&me, PMIX_LOCAL_RANK);
    if (lrank != me.rank || me.rank >= size)
        FAIL("rank %u local rank %u size %u", me.rank, lrank, size);
    if (get_u32(&me, PMIX_NODE_RANK) != me.rank || get_u32(&me, PMIX_GLOBAL_RANK) != me.rank)
        FAIL("node/global rank mismatch");
    if (get_u32(&me, PMIX_APPNUM) != 0 || get_u32(&me, PMIX_NODEID) != 0)
        FAIL("appnum/nodeid not 0");
    peers = get_str(&wild, PMIX_LOCAL_PEERS);
    {
        char want[1 << 16];
        size_t len = 0;
        for (uint32_t r = 0; r < size && len < sizeof(want) - 16; r++)
            len += (size_t)snprintf(want + len, sizeof(want) - len, r ? ",%u" : "%u", r);
        if (strcmp(peers, want) != 0)
            FAIL("PMIX_LOCAL_PEERS '%s', expected '%s'", peers, want);
    }
    free(peers);
    free(get_str(&me, PMIX_HOSTNAME));

    if (strcmp(mode, "idle") == 0) {
        for (;;)    // every rank waits to be ended (by --timeout)
            pause();
    }
    if (me.rank == 1 && failure_mode) {
        wait_for_pids(piddir, size);
        // The test times the job's end from here, not from oshrun's start:
        // under load, starting 4 PMIx clients alone can take seconds.
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        printf("pmix_probe: rank 1 fails at %lld ms realtime\n",
               (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        fflush(stdout);
    }
    if (me.rank == 1) {
        if (strcmp(mode, "signal") == 0) {
            raise(SIGKILL);
        } else if (strcmp(mode, "segv") == 0) {
            struct rlimit nocore = {0, 0};
            setrlimit(RLIMIT_CORE, &nocore);
            raise(SIGSEGV);
        } else if (strcmp(mode, "exit3") == 0) {
            exit(3);
        } else if (strcmp(mode, "nofinal_exit0") == 0) {
            _exit(0);
        } else if (strcmp(mode, "abort") == 0 || strcmp(mode, "abort_silent") == 0) {
            if (mode[5] == '\0')
                PMIx_Abort(7, "bye", NULL, 0);
            else
                PMIx_Abort(5, "", NULL, 0);
            for (;;)    // oshrun ends us
                pause();
        } else if (strcmp(mode, "hang") == 0) {
            for (;;)
                pause();
        }
    }

    // Modex: every rank publishes a value derived from its rank.
    {
        pmix_value_t val;
        char key[] = "probe.val";
        uint64_t mine = 0x1000u + me.rank;

        PMIx_Value_load(&val, &mine, PMIX_UINT64);
        rc = PMIx_Put(PMIX_GLOBAL, key, &val);
        PMIx_Value_destruct(&val);
        if (rc != PMIX_SUCCESS)
            FAIL("PMIx_Put failed: %s", PMIx_Error_string(rc));
        rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS)
            FAIL("PMIx_Commit failed: %s", PMIx_Error_string(rc));
        fence(true, failure_mode);
        for (uint32_t r = 0; r < size; r++) {
            pmix_value_t *v = NULL;
            PMIX_LOAD_PROCID(&peer, me.nspace, r);
            rc = PMIx_Get(&peer, key, NULL, 0, &v);
            if (rc != PMIX_SUCCESS)
                FAIL("PMIx_Get(rank %u, %s) failed: %s", r, key, PMIx_Error_string(rc));
            if (v->type != PMIX_UINT64 || v->data.uint64 != 0x1000u + r)
                FAIL("rank %u's value is wrong (type %d)", r, v->type);
            PMIX_VALUE_RELEASE(v);
        }
        // A key nobody put must fail quickly with PMIX_OPTIONAL (answered from
        // the local cache); without it PMIx 4.2 waits for the key to appear.
        if (size > 1) {
            pmix_value_t *v = NULL;
            pmix_info_t opt;
            bool yes = true;
            PMIx_Info_load(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
            PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % size);
            double t0 = now_s();
            rc = PMIx_Get(&peer, "probe.missing", &opt, 1, &v);
            PMIX_INFO_DESTRUCT(&opt);
            if (getenv("PROBE_VERBOSE"))
                fprintf(stderr, "missing key (optional): %s after %.3f s\n",
                        PMIx_Error_string(rc), now_s() - t0);
            if (rc == PMIX_SUCCESS)
                FAIL("PMIx_Get of a missing key succeeded");
            if (now_s() - t0 > 1.0)
                FAIL("PMIx_Get of a missing key took %.1f s", now_s() - t0);
            if (getenv("PROBE_VERBOSE")) {
                t0 = now_s();
                rc = PMIx_Get(&peer, "probe.missing", NULL, 0, &v);
                fprintf(stderr, "missing key (plain): %s after %.3f s\n",
                        PMIx_Error_string(rc), now_s() - t0);
            }
        }
    }
    fence(false, failure_mode);    // plain barrier

    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        FAIL("PMIx_Finalize failed: %s", PMIx_Error_string(rc));
    if (me.rank == 0)
        printf("pmix_probe: %u PEs ok\n", size);
    if (me.rank == 1 && strcmp(mode, "final_exit5") == 0)
        return 5;
    return 0;
}
