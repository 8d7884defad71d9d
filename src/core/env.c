// SPDX-License-Identifier: BSD-3-Clause
/* The environment table's parser and listing; the only getenv in the library. */
#include "core/env.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

shm_env_t shm_env_g;

const char *shm_env_from_process(const char *name)
{
    return getenv(name);
}

/*
 * A size as the spec defines SHMEM_SYMMETRIC_SIZE: "a non-negative integer or
 * floating point value with an optional character suffix" -- an integer, a
 * decimal fraction ("3.1m") and/or a decimal exponent ("1e9", "2.5e3M",
 * "15e-1"), then one optional scaling suffix k, m, g, t (any case; powers of
 * 2^10); the bytes are the ceiling of the product, computed exactly.
 * "KB"/"KiB" spellings are accepted too.
 */
#define MAX_DEN_POW10 36 /* 10^36 < 2^120: the divisor below stays in 128 bits */
#define POW10_35 ((unsigned __int128)10000000000000000000ULL * 10000000000000000ULL)

shm_status_t shm_env_parse_size(const char *s, size_t *out_p)
{
    /* strtoull would skip blanks and take a sign: demand a digit first. */
    if (s == NULL || !isdigit((unsigned char)*s))
        return SHM_ERR_ENV;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s)
        return SHM_ERR_ENV;
    /* The value is num / 10^den10 before the suffix, exactly: every digit
     * is kept, so more than 36 significant digits are refused. */
    unsigned __int128 num = v;
    int den10 = 0;
    if (*end == '.') {
        end++;
        if (!isdigit((unsigned char)*end))
            return SHM_ERR_ENV;
        for (; isdigit((unsigned char)*end); end++) {
            if (num >= POW10_35 || den10 >= MAX_DEN_POW10)
                return SHM_ERR_ENV;
            num = num * 10 + (unsigned)(*end - '0');
            den10++;
        }
    }
    if (*end == 'e' || *end == 'E') {
        end++;
        int neg = 0;
        if (*end == '+' || *end == '-')
            neg = (*end++ == '-');
        if (!isdigit((unsigned char)*end))
            return SHM_ERR_ENV;
        int e = 0;
        for (; isdigit((unsigned char)*end); end++) {
            if (e > 1000)
                return SHM_ERR_ENV;
            e = e * 10 + (*end - '0');
        }
        if (neg) {
            den10 += e;
        } else {
            /* Cancel against the fraction's tens, then scale up; a value
             * past SIZE_MAX before the suffix can only grow. */
            int cancel = e < den10 ? e : den10;
            e -= cancel;
            den10 -= cancel;
            for (; e > 0; e--) {
                if (num > SIZE_MAX)
                    return SHM_ERR_ENV;
                num *= 10;
            }
        }
        if (den10 > MAX_DEN_POW10)
            return SHM_ERR_ENV;
    }
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: return SHM_ERR_ENV;
    }
    /* Accept "64KB", "64KiB", "64kb" as well as "64k". */
    if (shift && (*end == 'i' || *end == 'I'))
        end++;
    if (shift && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0')
        return SHM_ERR_ENV;
    unsigned __int128 den = 1;
    for (int i = 0; i < den10; i++)
        den *= 10;
    /* ceil(num * 2^shift / den) = (q << shift) + ceil(r * 2^shift / den),
     * the second term by long division one bit at a time (r < den < 2^120). */
    unsigned __int128 q = num / den, r = num % den;
    if (q > (SIZE_MAX >> shift))
        return SHM_ERR_ENV;
    unsigned __int128 part = 0;
    for (unsigned i = 0; i < shift; i++) {
        r <<= 1;
        part <<= 1;
        if (r >= den) {
            r -= den;
            part |= 1;
        }
    }
    if (r != 0)
        part++;
    unsigned __int128 total = (q << shift) + part;
    if (total > SIZE_MAX)
        return SHM_ERR_ENV;
    *out_p = (size_t)total;
    return SHM_OK;
}

shm_status_t shm_env_parse_bool(const char *s, int *out_p)
{
    static const char *const yes[] = {"1", "y", "yes", "on", "true"};
    static const char *const no[] = {"0", "n", "no", "off", "false"};
    if (s == NULL)
        return SHM_ERR_ENV;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out_p = 1;
            return SHM_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out_p = 0;
            return SHM_OK;
        }
    }
    return SHM_ERR_ENV;
}

shm_status_t shm_env_parse_int(const char *s, long *out_p)
{
    if (s == NULL || *s == '\0')
        return SHM_ERR_ENV;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return SHM_ERR_ENV;
    *out_p = v;
    return SHM_OK;
}

static shm_status_t parse_STR(const char *s, const char **out_p)
{
    *out_p = s;
    return SHM_OK;
}
#define parse_BOOL shm_env_parse_bool
#define parse_INT shm_env_parse_int
#define parse_SIZE shm_env_parse_size

static const char *const type_hint_BOOL = "a boolean (0/1, yes/no, on/off, true/false)";
static const char *const type_hint_INT = "an integer";
static const char *const type_hint_SIZE = "a byte count, integer or decimal (an exponent is allowed), with optional k/M/G/T suffix, e.g. 512M, 1.5G or 2e9";
static const char *const type_hint_STR = "a string";

shm_status_t shm_env_load(shm_env_t *env_p, shm_env_lookup_fn lookup, char *err, size_t errlen)
{
    shm_env_t env;
    char name[64];
    const char *val;

#define SHM_ENV(nm, type, dflt, cat, help)                                     \
    val = NULL;                                                                \
    snprintf(name, sizeof(name), "SHMEM_%s", #nm);                             \
    if (lookup)                                                                \
        val = lookup(name);                                                    \
    if (val == NULL && lookup) {                                               \
        snprintf(name, sizeof(name), "SMA_%s", #nm);                           \
        val = lookup(name);                                                    \
    }                                                                          \
    if (val == NULL) {                                                         \
        val = dflt;                                                            \
        snprintf(name, sizeof(name), "SHMEM_%s", #nm);                         \
    }                                                                          \
    if (parse_##type(val, &env.nm) != SHM_OK) {                                \
        snprintf(err, errlen, "%s='%s' is not valid: expected %s", name, val,  \
                 type_hint_##type);                                            \
        return SHM_ERR_ENV;                                                    \
    }
#include "core/env.def"
#undef SHM_ENV

    *env_p = env;
    return SHM_OK;
}

static void fmt_value_BOOL(char *buf, size_t len, int v) { snprintf(buf, len, "%d", v); }
static void fmt_value_INT(char *buf, size_t len, long v) { snprintf(buf, len, "%ld", v); }
static void fmt_value_STR(char *buf, size_t len, const char *v)
{
    snprintf(buf, len, "%s", (v && *v) ? v : "(unset)");
}
static void fmt_value_SIZE(char *buf, size_t len, size_t v)
{
    static const char sfx[] = "kMGT";
    int i = -1;
    while (v != 0 && (v & 1023) == 0 && i < 3) {
        v >>= 10;
        i++;
    }
    if (i >= 0)
        snprintf(buf, len, "%zu%c", v, sfx[i]);
    else
        snprintf(buf, len, "%zu", v);
}

/* Markdown table cells: a '|' would end the cell. */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void shm_env_print(FILE *f, const shm_env_t *env, int markdown)
{
    char buf[256];
    if (markdown) {
        fprintf(f, "| Variable | Type | Default | Category | Meaning |\n");
        fprintf(f, "|---|---|---|---|---|\n");
    } else {
        fprintf(f, "ofishmem environment (SHMEM_INFO):\n");
    }
#define SHM_ENV(nm, type, dflt, cat, help)                                     \
    if (markdown) {                                                            \
        fprintf(f, "| `SHMEM_%s` | %s | `%s` | %s | ", #nm, #type,             \
                *dflt ? dflt : "(empty)", cat);                                \
        md_cell(f, help);                                                      \
        fprintf(f, " |\n");                                                   \
    } else {                                                                   \
        fmt_value_##type(buf, sizeof(buf), env->nm);                           \
        fprintf(f, "  SHMEM_%-20s = %-12s [%s, default '%s']\n      %s\n", #nm, \
                buf, cat, dflt, help);                                         \
    }
#include "core/env.def"
#undef SHM_ENV
}
