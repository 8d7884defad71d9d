// SPDX-License-Identifier: BSD-3-Clause
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "runtime/rt.h"

unsigned char shm_log_level_g[SHM_LOG_NSUBSYS] = {
    [0 ... SHM_LOG_NSUBSYS - 1] = SHM_LVL_WARN,
};

static int log_pe = -1;
static char log_host[64];

static const char *const status_str[] = {
#define SHM_STATUS_STR(code, str) str,
    SHM_STATUS_LIST(SHM_STATUS_STR)
#undef SHM_STATUS_STR
};

const char *shm_status_str(shm_status_t st)
{
    if ((unsigned)st >= SHM_STATUS_COUNT)
        return "unknown status";
    return status_str[st];
}

static const char *const sub_names[] = {
#define SHM_LOG_SUB_NAME(id, name) name,
    SHM_LOG_SUBSYS(SHM_LOG_SUB_NAME)
#undef SHM_LOG_SUB_NAME
};
static const char *const lvl_names[] = {"error", "warn", "info", "debug", "trace"};

static int parse_level(const char *s, size_t n)
{
    for (int i = 0; i < 5; i++)
        if (strlen(lvl_names[i]) == n && strncasecmp(s, lvl_names[i], n) == 0)
            return i;
    if (n == 1 && s[0] >= '0' && s[0] <= '4')
        return s[0] - '0';
    return -1;
}

shm_status_t shm_log_configure(const char *spec)
{
    unsigned char lv[SHM_LOG_NSUBSYS];
    memcpy(lv, shm_log_level_g, sizeof(lv));
    const char *p = spec ? spec : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (eq == NULL) {
            int l = parse_level(p, n);
            if (l < 0)
                return SHM_ERR_ENV;
            memset(lv, l, sizeof(lv));
        } else {
            int sub = -1;
            for (int i = 0; i < SHM_LOG_NSUBSYS; i++)
                if (strlen(sub_names[i]) == (size_t)(eq - p) &&
                    strncasecmp(p, sub_names[i], (size_t)(eq - p)) == 0)
                    sub = i;
            int l = parse_level(eq + 1, n - (size_t)(eq + 1 - p));
            if (sub < 0 || l < 0)
                return SHM_ERR_ENV;
            lv[sub] = (unsigned char)l;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    memcpy(shm_log_level_g, lv, sizeof(lv));
    return SHM_OK;
}

void shm_log_set_identity(int pe)
{
    log_pe = pe;
    if (gethostname(log_host, sizeof(log_host)) != 0)
        strcpy(log_host, "?");
    log_host[sizeof(log_host) - 1] = '\0';
}

static void write_prefixed(const char *tag, const char *file, int line, const char *fmt,
                           va_list ap)
{
    char msg[1024];
    int n;
    if (log_host[0] == '\0')
        shm_log_set_identity(log_pe);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (log_pe >= 0)
        n = snprintf(msg, sizeof(msg), "[PE %d %s:%d] %s%s:%d: ", log_pe, log_host,
                     (int)getpid(), tag, base, line);
    else
        n = snprintf(msg, sizeof(msg), "[PE ? %s:%d] %s%s:%d: ", log_host, (int)getpid(), tag,
                     base, line);
    if (n < 0 || (size_t)n >= sizeof(msg))
        n = 0;
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    /* Messages start with __func__ of the API function, pshmem_<name>: the
     * user called shmem_<name>. */
    if (strncmp(msg + n, "pshmem_", 7) == 0)
        memmove(msg + n, msg + n + 1, strlen(msg + n + 1) + 1);
    size_t len = strlen(msg);
    if (len + 1 < sizeof(msg)) {
        msg[len++] = '\n';
        msg[len] = '\0';
    }
    /* One write so lines of different PEs do not interleave. */
    ssize_t rc = write(STDERR_FILENO, msg, len);
    (void)rc;
}

void shm_log_write(shm_log_sub_t sub, int lvl, const char *file, int line, const char *fmt, ...)
{
    char tag[32];
    snprintf(tag, sizeof(tag), "%s/%s ", sub_names[sub], lvl_names[lvl]);
    va_list ap;
    va_start(ap, fmt);
    write_prefixed(tag, file, line, fmt, ap);
    va_end(ap);
}

void shm_error_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_prefixed("", file, line, fmt, ap);
    va_end(ap);
}

void shm_fatal_at(const char *file, int line, const char *fmt, ...)
{
    /* Bounded from here: the line below may block (stderr a full pipe whose
     * reader is stopped), and so may telling the launcher. */
    shm_rt_end_within(SHM_RT_ABORT_END_MS + 1000, 1,
                      "this PE's fatal error did not end it in time (stderr or the launcher "
                      "blocked)");
    va_list ap;
    va_start(ap, fmt);
    write_prefixed("", file, line, fmt, ap);
    va_end(ap);
    /* Empty message: the line above already said what happened. */
    shm_rt_abort(1, "");
}
