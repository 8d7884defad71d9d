// SPDX-License-Identifier: BSD-3-Clause
/*
 * libfabric, loaded on first use.
 *
 * Merely loading Debian's libfabric 1.17 costs a process ~0.2 s (its psm
 * provider's libinfinipath calibrates the TSC by sleeping 100 ms in a
 * constructor; the verbs provider reads /proc/kallsyms twice at fi_ini:
 * docs/SCALING.md, "The libfabric tax"), more than a whole one-host job
 * needs when its PEs reach each other through mapped memory. So the
 * library does not link libfabric (no DT_NEEDED): the few functions of it
 * that are real symbols -- everything else (fi_domain, fi_write, ...) is
 * static inline through the objects' ops tables -- are renamed to the
 * wrappers below for every source of the library (src/CMakeLists.txt,
 * OFISHMEM_FABRIC_SHIMMED: -Dfi_getinfo=ofi_dl_fi_getinfo, ...), and the
 * first call of one of them loads libfabric (once, thread-safe). A job that
 * opens no fabric (SHMEM_FABRIC=auto on one host: core/init.c) never loads
 * it. The list here and the one in CMake must agree: the test
 * install.lazy_libfabric fails when the library has an undefined fi_ symbol
 * or needs libfabric.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "conduit/ofi/ofi.h"
#include "core/env.h"
#include "core/log.h"

#ifndef fi_getinfo
#error "ofi_dl.c is built with the library's -Dfi_NAME=ofi_dl_fi_NAME definitions (src/CMakeLists.txt)"
#endif

#ifndef OFISHMEM_LIBFABRIC_SONAME
#define OFISHMEM_LIBFABRIC_SONAME "libfabric.so.1"
#endif

/* X(name): every libfabric function the library calls that is a real symbol. */
#define OFI_DL_SYMS(X)                                                         \
    X(fi_getinfo)                                                              \
    X(fi_freeinfo)                                                             \
    X(fi_dupinfo)                                                              \
    X(fi_fabric)                                                               \
    X(fi_strerror)                                                             \
    X(fi_tostr)                                                                \
    X(fi_version)

/* name expands to the wrapper (ofi_dl_fi_NAME): its type is libfabric's. */
#define OFI_DL_PTR(name) static __typeof__(name) *name##_p;
OFI_DL_SYMS(OFI_DL_PTR)
#undef OFI_DL_PTR

static pthread_once_t ofi_dl_once = PTHREAD_ONCE_INIT;
static int ofi_dl_ok;
static char ofi_dl_err[768];
static char ofi_dl_name[256]; /* the file loaded (or tried first) */

/*
 * libinfinipath (loaded with libfabric for its psm provider) installs
 * handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT and SIGTERM
 * when it is loaded, unless IPATH_NO_BACKTRACE is set. They print a
 * backtrace and call exit(1): a PE that crashes or is sent SIGTERM then runs
 * its exit handlers, ours included, and enters shmem_finalize's barrier with
 * the other PEs (a hang, or a job that goes on as if nothing had happened)
 * instead of dying by its signal so that the launcher ends the job; and now
 * that libfabric is loaded after main started, they would also replace a
 * handler the program installed (an RPC server's SIGTERM: examples/staging).
 * So each of those signals gets back, right after the load and before
 * libfabric's shm provider (which chains to whatever it finds) installs its
 * own in the first fi_getinfo, the action it had before the load -- where
 * libinfinipath took it; any other change is left alone.
 */
static const int ipath_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};
#define IPATH_NSIGS (sizeof(ipath_sigs) / sizeof(ipath_sigs[0]))

static void signals_save(struct sigaction *saved)
{
    for (size_t i = 0; i < IPATH_NSIGS; i++)
        if (sigaction(ipath_sigs[i], NULL, &saved[i]) != 0)
            saved[i].sa_handler = SIG_DFL, saved[i].sa_flags = 0;
}

static void signals_restore(const struct sigaction *saved)
{
    for (size_t i = 0; i < IPATH_NSIGS; i++) {
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

static void ofi_dl_load_once(void)
{
    /* SHMEM_OFI_LIBRARY replaces the list: a library named there that does
     * not load is an error, not a silent fall-back to the real one. */
    const char *user = shm_env_g.OFI_LIBRARY;
    const char *const dflt[] = {
        OFISHMEM_LIBFABRIC_SONAME,
#ifdef OFISHMEM_LIBFABRIC_PATH
        OFISHMEM_LIBFABRIC_PATH, /* the libfabric this was built against, by full path */
#endif
    };
    const char *const *names = dflt;
    size_t nnames = sizeof(dflt) / sizeof(dflt[0]);
    if (user != NULL && *user != '\0') {
        names = &user;
        nnames = 1;
    }
    snprintf(ofi_dl_name, sizeof(ofi_dl_name), "%s", names[0]);
    void *h = NULL;
    char why[256] = "";
    struct sigaction saved[IPATH_NSIGS];
    signals_save(saved);
    for (size_t i = 0; i < nnames && h == NULL; i++) {
        /* GLOBAL: as when it was linked (a provider built as a plug-in, or
         * the program, may look its symbols up). */
        h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (h == NULL && i == 0) /* the first failure says most (not found, wrong ELF class) */
            snprintf(why, sizeof(why), "%s", dlerror());
        if (h != NULL)
            snprintf(ofi_dl_name, sizeof(ofi_dl_name), "%s", names[i]);
    }
    if (h != NULL)
        signals_restore(saved);
    if (h == NULL) {
        snprintf(ofi_dl_err, sizeof(ofi_dl_err),
                 "cannot load libfabric (%s%s): %s; %s", ofi_dl_name,
                 names == dflt ? "" : ", named by SHMEM_OFI_LIBRARY", why,
                 names == dflt ? "install it (Debian: libfabric1) or add its directory to "
                                 "LD_LIBRARY_PATH"
                               : "give SHMEM_OFI_LIBRARY a library that exists, or unset it");
        return;
    }
#define OFI_DL_SYM(name)                                                       \
    if ((name##_p = (__typeof__(name) *)dlsym(h, #name)) == NULL) {            \
        snprintf(ofi_dl_err, sizeof(ofi_dl_err),                               \
                 "libfabric (%s) has no symbol %s: %s", ofi_dl_name, #name,   \
                 dlerror());                                                    \
        return;                                                                \
    }
    OFI_DL_SYMS(OFI_DL_SYM)
#undef OFI_DL_SYM
    ofi_dl_ok = 1;
}

/* 0 once libfabric is loaded; else reports why (once per process) and -1. */
int cdt_ofi_dl_load(void)
{
    pthread_once(&ofi_dl_once, ofi_dl_load_once);
    if (__builtin_expect(ofi_dl_ok, 1))
        return 0;
    static int reported;
    if (!__atomic_exchange_n(&reported, 1, __ATOMIC_RELAXED))
        shm_error("%s", ofi_dl_err);
    return -1;
}

int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info)
{
    if (cdt_ofi_dl_load() != 0)
        return -FI_ENOSYS;
    return fi_getinfo_p(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info *info)
{
    if (info != NULL && cdt_ofi_dl_load() == 0)
        fi_freeinfo_p(info);
}

/* fi_allocinfo() is fi_dupinfo(NULL) (inline in rdma/fabric.h). */
struct fi_info *fi_dupinfo(const struct fi_info *info)
{
    if (cdt_ofi_dl_load() != 0)
        return NULL;
    return fi_dupinfo_p(info);
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    if (cdt_ofi_dl_load() != 0)
        return -FI_ENOSYS;
    return fi_fabric_p(attr, fabric, context);
}

/* Error paths may ask before anything loaded libfabric (or when it cannot
 * be): the number then, not a crash. */
const char *fi_strerror(int errnum)
{
    if (cdt_ofi_dl_load() == 0)
        return fi_strerror_p(errnum);
    static __thread char buf[48];
    snprintf(buf, sizeof(buf), "libfabric error %d", errnum);
    return buf;
}

char *fi_tostr(const void *data, enum fi_type datatype)
{
    if (cdt_ofi_dl_load() == 0)
        return fi_tostr_p(data, datatype);
    static char none[] = "(libfabric not loaded)";
    return none;
}

uint32_t fi_version(void)
{
    return cdt_ofi_dl_load() == 0 ? fi_version_p() : 0;
}

const char *cdt_ofi_dl_name(void)
{
    return ofi_dl_name;
}

int cdt_ofi_dl_loaded(void)
{
    return __atomic_load_n(&ofi_dl_ok, __ATOMIC_ACQUIRE);
}
