// SPDX-License-Identifier: BSD-3-Clause
/*
 * fabcheck core: the seven functions a libfabric loader looks up
 * (fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric, fi_strerror, fi_tostr,
 * fi_version), loading the real libfabric underneath, the FABCHECK_*
 * settings, violation logging and safe memory probes.
 *
 * The real libfabric is loaded RTLD_LOCAL. Its utility providers call
 * fi_getinfo/fi_dupinfo/fi_freeinfo through its own PLT with versioned
 * references (FABRIC_1.x); our definitions carry the version FABCHECK_1.0
 * (fabcheck.map), so the dynamic linker does not bind those calls to us
 * even though we are loaded RTLD_GLOBAL ahead of it. A guard below catches
 * it should that ever change.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fc.h"

fc_global_t fc_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc = -FI_ENOSYS;
static __thread int in_real; /* inside a call into the real libfabric */

static const char *const rule_names[] = {
#define FC_RULE_STR(r) #r,
    FC_RULES(FC_RULE_STR)
#undef FC_RULE_STR
};

const char *fc_rule_name(enum fc_rule rule)
{
    return rule < FC_NRULES ? rule_names[rule] : "?";
}

char *fc_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

uint32_t fc_new_id(void)
{
    return __atomic_add_fetch(&fc_g.next_id, 1, __ATOMIC_RELAXED);
}

/* ---- logging --------------------------------------------------------- */

static void emit(const char *line)
{
    size_t n = strlen(line);
    ssize_t w = write(2, line, n); /* one write: lines of several processes stay whole */
    (void)w;
    if (fc_g.logf) {
        fputs(line, fc_g.logf);
        fflush(fc_g.logf);
    }
}

void fc_violation(enum fc_rule rule, const char *fmt, ...)
{
    char msg[768], line[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "fabcheck[%s %d]: %s: %s\n",
             fc_g.prof ? fc_g.prof->key : "none", (int)getpid(), fc_rule_name(rule), msg);
    emit(line);
    __atomic_add_fetch(&fc_g.violations, 1, __ATOMIC_RELAXED);
    if (fc_g.abort_on_violation) {
        fc_reg_sweep(); /* ours goes too: nothing left in /dev/shm after the abort */
        abort();
    }
}

void fc_note(const char *fmt, ...)
{
    char msg[768], line[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "fabcheck[%s %d]: note: %s\n",
             fc_g.prof ? fc_g.prof->key : "none", (int)getpid(), msg);
    emit(line);
}

ssize_t fc_post_rc(const char *what, ssize_t rc)
{
    static int debug = -1;
    if (debug < 0)
        debug = getenv("FABCHECK_DEBUG") != NULL;
    if (debug && rc < 0 && rc != -FI_EAGAIN)
        fc_note("%s: answered %zd (%s)", what, rc, fc_g.strerror((int)-rc));
    return rc;
}

/* ---- FABCHECK_EAGAIN ------------------------------------------------- */

static unsigned long eagains_injected;

static void eagain_report(void)
{
    if (fc_g.eagain_n)
        fc_note("FABCHECK_EAGAIN: %lu posts answered -FI_EAGAIN (1 in %llu)", eagains_injected,
                (unsigned long long)fc_g.eagain_n);
}

int fc_eagain_now(void)
{
    if (fc_g.eagain_n == 0)
        return 0;
    static int hooked;
    if (!hooked) {
        hooked = 1;
        atexit(eagain_report);
    }
    /* xorshift64*: deterministic for a given FABCHECK_SEED and call order */
    uint64_t x = fc_g.rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    fc_g.rng = x;
    int now = (x * 0x2545F4914F6CDD1Dull) % fc_g.eagain_n == 0;
    eagains_injected += (unsigned long)now;
    return now;
}

/* ---- safe probes ----------------------------------------------------- */

/*
 * process_vm_{read,write}v on ourselves fail with EFAULT instead of
 * faulting; where they are not allowed (seccomp), a pipe does the same.
 */
static int probe_pipe[2] = {-1, -1};
static int use_pipe;

static int pipe_copy(void *dst, const void *src, size_t len)
{
    if (probe_pipe[0] < 0 && pipe2(probe_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    size_t done = 0;
    while (done < len) {
        size_t n = len - done > 4096 ? 4096 : len - done;
        if (write(probe_pipe[1], (const char *)src + done, n) != (ssize_t)n)
            return -1; /* EFAULT: src unreadable */
        ssize_t r = read(probe_pipe[0], (char *)dst + done, n);
        if (r != (ssize_t)n) {
            char sink[4096];
            while (read(probe_pipe[0], sink, sizeof(sink)) > 0)
                ;
            return -1; /* EFAULT: dst unwritable */
        }
        done += n;
    }
    return 0;
}

static int vm_copy(void *dst, const void *src, size_t len, int is_write)
{
    if (len == 0)
        return 0;
    if (!use_pipe) {
        struct iovec l = {.iov_base = is_write ? (void *)src : dst, .iov_len = len};
        struct iovec r = {.iov_base = is_write ? dst : (void *)src, .iov_len = len};
        ssize_t n = is_write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0)
                             : process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        if (n == (ssize_t)len)
            return 0;
        if (n < 0 && (errno == ENOSYS || errno == EPERM))
            use_pipe = 1;
        else
            return -1;
    }
    return pipe_copy(dst, src, len);
}

int fc_mem_write(void *dst, const void *src, size_t len)
{
    return vm_copy(dst, src, len, 1);
}

int fc_mem_read(void *dst, const void *src, size_t len)
{
    return vm_copy(dst, src, len, 0);
}

/* ---- loading --------------------------------------------------------- */

/*
 * libinfinipath (loaded with libfabric for its psm provider) installs
 * handlers for fatal signals at load; give back those it took (the same
 * dance as src/conduit/ofi/ofi_dl.c does for us).
 */
static const int ipath_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};
#define NSIGS (sizeof(ipath_sigs) / sizeof(ipath_sigs[0]))

static void restore_signals(const struct sigaction *saved)
{
    for (size_t i = 0; i < NSIGS; i++) {
        struct sigaction sa;
        Dl_info info;
        if (sigaction(ipath_sigs[i], NULL, &sa) != 0)
            continue;
        void *h = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
        if (h == (void *)SIG_DFL || h == (void *)SIG_IGN || !dladdr(h, &info) ||
            info.dli_fname == NULL || strstr(info.dli_fname, "libinfinipath") == NULL)
            continue;
        sigaction(ipath_sigs[i], &saved[i], NULL);
    }
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return (v && *v) ? strtoull(v, NULL, 0) : dflt;
}

static void init_once_fn(void)
{
    const char *p = getenv("FABCHECK_PROFILE");
    if (p && *p && strcmp(p, "none") != 0) {
        fc_g.prof = fc_profile_find(p);
        if (fc_g.prof == NULL) {
            fprintf(stderr, "fabcheck: FABCHECK_PROFILE='%s' is not a profile (%s)\n", p,
                    fc_profile_names());
            init_rc = -FI_EINVAL;
            return;
        }
    }
    const char *u = getenv("FABCHECK_PROVIDER");
    fc_g.underlying = (u && *u) ? u : "tcp;ofi_rxm";
    fc_g.abort_on_violation = (int)env_u64("FABCHECK_ABORT", 1);
    fc_g.auth_required = (int)env_u64("FABCHECK_AUTH_REQUIRED", 0);
    const char *lf = getenv("FABCHECK_LOG");
    if (lf && *lf)
        fc_g.logf = fopen(lf, "ae");
    const char *ea = getenv("FABCHECK_EAGAIN");
    if (ea && *ea) {
        double v = strtod(ea, NULL);
        fc_g.eagain_n = v <= 0 ? 0 : v < 1 ? (uint64_t)(1.0 / v + 0.5) : (uint64_t)v;
    }
    fc_g.rng = env_u64("FABCHECK_SEED", 1) * 0x9E3779B97F4A7C15ull + 0x1234567;
    if (fc_g.rng == 0)
        fc_g.rng = 1;

    /*
     * FI_PROVIDER names the profile's provider (it selects us); the real
     * libfabric reads it once, at its first fi_getinfo, and would then hide
     * the provider we run over. It sees no FI_PROVIDER; we apply the
     * filter ourselves (fc_getinfo.c).
     */
    const char *fp = getenv("FI_PROVIDER");
    if (fc_g.prof && fp && *fp) {
        fc_g.prov_filter = strdup(fp);
        unsetenv("FI_PROVIDER");
    }
    /*
     * An app tunes rxm by provider name (ofishmem: src/conduit/ofi/ofi_init.c
     * rxm_defaults, and FI_OFI_RXM_USE_SRX=0 for its extra contexts); under
     * a profile the name is the profile's, so the rxm underneath gets the
     * same modest receive buffers here (a value the user set stays). rxm's
     * default, 4096 16-KiB buffers per shared receive context, cost ~70 MB
     * an endpoint: 64 contexts did not fit.
     */
    if (fc_g.prof && strstr(fc_g.underlying, "ofi_rxm")) {
        setenv("FI_OFI_RXM_MSG_RX_SIZE", "128", 0);
        setenv("FI_OFI_RXM_USE_SRX", "0", 0);
    }
    struct sigaction saved[NSIGS];
    for (size_t i = 0; i < NSIGS; i++)
        sigaction(ipath_sigs[i], NULL, &saved[i]);
    fc_g.real = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (fc_g.real == NULL) {
        fprintf(stderr, "fabcheck: cannot load the real libfabric (libfabric.so.1): %s\n",
                dlerror());
        goto out;
    }
    restore_signals(saved);
#define FC_SYM(field, name)                                                    \
    if ((*(void **)&fc_g.field = dlsym(fc_g.real, name)) == NULL) {            \
        fprintf(stderr, "fabcheck: libfabric.so.1 has no %s\n", name);         \
        goto out;                                                              \
    }
    FC_SYM(getinfo, "fi_getinfo")
    FC_SYM(freeinfo, "fi_freeinfo")
    FC_SYM(dupinfo, "fi_dupinfo")
    FC_SYM(fabric, "fi_fabric")
    FC_SYM(strerror, "fi_strerror")
    FC_SYM(tostr, "fi_tostr")
    FC_SYM(version, "fi_version")
#undef FC_SYM
    if (fc_g.prof) {
        /* The real providers initialise now, with FI_PROVIDER unset. */
        struct fi_info *all = NULL;
        in_real = 1;
        if (fc_g.getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, &all) == 0)
            fc_g.freeinfo(all);
        in_real = 0;
        restore_signals(saved); /* providers may install handlers at their init too */
        if (fc_reg_open() != 0)
            goto out;
    }
    init_rc = 0;
out:
    if (fc_g.prov_filter)
        setenv("FI_PROVIDER", fc_g.prov_filter, 1);
}

int fc_init(void)
{
    pthread_once(&init_once, init_once_fn);
    return init_rc;
}

/* ---- the exported functions ------------------------------------------ */

FC_EXPORT int fi_getinfo(uint32_t version, const char *node, const char *service,
                         uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
    if (in_real) {
        /* The real libfabric called us: symbol interposition (see above). */
        fc_note("the real libfabric's own fi_getinfo call reached fabcheck; forwarding");
        return fc_g.getinfo(version, node, service, flags, hints, info);
    }
    int rc = fc_init();
    if (rc != 0)
        return rc;
    in_real = 1;
    if (fc_g.prof == NULL)
        rc = fc_g.getinfo(version, node, service, flags, hints, info);
    else
        rc = fc_getinfo(version, node, service, flags, hints, info);
    in_real = 0;
    return rc;
}

FC_EXPORT void fi_freeinfo(struct fi_info *info)
{
    if (info != NULL && fc_init() == 0)
        fc_g.freeinfo(info);
}

FC_EXPORT struct fi_info *fi_dupinfo(const struct fi_info *info)
{
    if (fc_init() != 0)
        return NULL;
    return fc_g.dupinfo(info);
}

FC_EXPORT int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    int rc = fc_init();
    if (rc != 0)
        return rc;
    if (fc_g.prof && attr && fc_is_profile_name(attr->prov_name))
        return fc_fabric_open(attr, fabric, context);
    return fc_g.fabric(attr, fabric, context);
}

FC_EXPORT const char *fi_strerror(int errnum)
{
    if (fc_init() == 0)
        return fc_g.strerror(errnum);
    static __thread char buf[48];
    snprintf(buf, sizeof(buf), "libfabric error %d", errnum);
    return buf;
}

FC_EXPORT char *fi_tostr(const void *data, enum fi_type datatype)
{
    if (fc_init() == 0)
        return fc_g.tostr(data, datatype);
    static char none[] = "(libfabric not loaded)";
    return none;
}

FC_EXPORT uint32_t fi_version(void)
{
    return fc_init() == 0 ? fc_g.version() : 0;
}

/* ---- stubs for ops tables -------------------------------------------- */

int fc_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    (void)fid, (void)bfid, (void)flags;
    return -FI_ENOSYS;
}

int fc_no_control(struct fid *fid, int command, void *arg)
{
    (void)fid, (void)command, (void)arg;
    return -FI_ENOSYS;
}

int fc_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
    (void)fid, (void)name, (void)flags, (void)ops, (void)context;
    return -FI_ENOSYS;
}
