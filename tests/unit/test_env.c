// SPDX-License-Identifier: BSD-3-Clause
/* The environment table: parsers, defaults, aliases and error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/env.h"

static const char *const *fake_env;

static const char *fake_lookup(const char *name)
{
    for (const char *const *p = fake_env; p && *p; p += 2)
        if (strcmp(p[0], name) == 0)
            return p[1];
    return NULL;
}

static void test_parse_size(void **state)
{
    (void)state;
    size_t v;
    assert_int_equal(shm_env_parse_size("0", &v), SHM_OK);
    assert_int_equal(v, 0);
    assert_int_equal(shm_env_parse_size("4096", &v), SHM_OK);
    assert_int_equal(v, 4096);
    assert_int_equal(shm_env_parse_size("64k", &v), SHM_OK);
    assert_int_equal(v, 64 << 10);
    assert_int_equal(shm_env_parse_size("64K", &v), SHM_OK);
    assert_int_equal(v, 64 << 10);
    assert_int_equal(shm_env_parse_size("512M", &v), SHM_OK);
    assert_int_equal(v, (size_t)512 << 20);
    assert_int_equal(shm_env_parse_size("2G", &v), SHM_OK);
    assert_int_equal(v, (size_t)2 << 30);
    assert_int_equal(shm_env_parse_size("3MB", &v), SHM_OK);
    assert_int_equal(v, (size_t)3 << 20);
    assert_int_equal(shm_env_parse_size("1KiB", &v), SHM_OK);
    assert_int_equal(v, 1024);
    /* Decimal values (spec, SHMEM_SYMMETRIC_SIZE): the ceiling of the product. */
    assert_int_equal(shm_env_parse_size("3.1m", &v), SHM_OK);
    assert_int_equal(v, 3250586); /* the spec's own example */
    assert_int_equal(shm_env_parse_size("1.5G", &v), SHM_OK);
    assert_int_equal(v, (size_t)3 << 29);
    assert_int_equal(shm_env_parse_size("0.5", &v), SHM_OK);
    assert_int_equal(v, 1);
    assert_int_equal(shm_env_parse_size("2.0t", &v), SHM_OK);
    assert_int_equal(v, (size_t)2 << 40);
    assert_int_equal(shm_env_parse_size("0.0000001k", &v), SHM_OK);
    assert_int_equal(v, 1);
    /* "floating point value": an exponent too, still the exact ceiling. */
    assert_int_equal(shm_env_parse_size("1e9", &v), SHM_OK);
    assert_int_equal(v, 1000000000);
    assert_int_equal(shm_env_parse_size("2.5E8", &v), SHM_OK);
    assert_int_equal(v, 250000000);
    assert_int_equal(shm_env_parse_size("1e+3k", &v), SHM_OK);
    assert_int_equal(v, 1000 << 10);
    assert_int_equal(shm_env_parse_size("15e-1", &v), SHM_OK);
    assert_int_equal(v, 2); /* 1.5 bytes -> 2 */
    assert_int_equal(shm_env_parse_size("1.5e-1k", &v), SHM_OK);
    assert_int_equal(v, 154); /* 153.6 */
    assert_int_equal(shm_env_parse_size("0.25e1M", &v), SHM_OK);
    assert_int_equal(v, (size_t)5 << 19);
    assert_int_equal(shm_env_parse_size("18446744073709551615e0", &v), SHM_OK);
    assert_int_equal(v, SIZE_MAX);
    assert_int_equal(shm_env_parse_size("1.8e19", &v), SHM_OK);
    assert_int_equal(v, 18000000000000000000ULL);
    assert_int_equal(shm_env_parse_size("0e999", &v), SHM_OK);
    assert_int_equal(v, 0);
    /* Every digit counts (up to 36): the 19th decimal moves the ceiling here. */
    assert_int_equal(shm_env_parse_size("1.0000000000000000001e18", &v), SHM_OK);
    assert_int_equal(v, 1000000000000000001ULL); /* 1e18 + 0.1 */

    const char *bad[] = {"", "-1", "12x", "k", "1.5.2G", "1.G", ".5G", "1.", "1MM", " 1",
                         "99999999999999999999", "17179869184G", "20kk", "1,5G",
                         "1e", "1e+", "1E-", "e9", "1e9.5", "1e20", "1e19k", "2e1000000",
                         "1e-37", "1.5ee3", "1e3e3", "0.0000000000000000000000000000000000001"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 777;
        assert_int_equal(shm_env_parse_size(bad[i], &v), SHM_ERR_ENV);
        assert_int_equal(v, 777); /* output untouched on error */
    }
}

static void test_parse_bool_int(void **state)
{
    (void)state;
    int b;
    const char *yes[] = {"1", "yes", "Y", "on", "TRUE"};
    const char *no[] = {"0", "no", "n", "OFF", "false"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(shm_env_parse_bool(yes[i], &b), SHM_OK);
        assert_int_equal(b, 1);
        assert_int_equal(shm_env_parse_bool(no[i], &b), SHM_OK);
        assert_int_equal(b, 0);
    }
    assert_int_equal(shm_env_parse_bool("2", &b), SHM_ERR_ENV);
    assert_int_equal(shm_env_parse_bool("maybe", &b), SHM_ERR_ENV);
    long l;
    assert_int_equal(shm_env_parse_int("-42", &l), SHM_OK);
    assert_int_equal(l, -42);
    assert_int_equal(shm_env_parse_int("42abc", &l), SHM_ERR_ENV);
    assert_int_equal(shm_env_parse_int("", &l), SHM_ERR_ENV);
}

static void test_defaults(void **state)
{
    (void)state;
    shm_env_t env;
    char err[256] = "";
    fake_env = NULL;
    assert_int_equal(shm_env_load(&env, fake_lookup, err, sizeof(err)), SHM_OK);
    assert_int_equal(env.SYMMETRIC_SIZE, (size_t)256 << 20);
    assert_int_equal(env.DEBUG, 0);
    assert_string_equal(env.OFI_PROVIDER, "");
    assert_string_equal(env.YIELD, "auto");
}

static void test_values_and_alias(void **state)
{
    (void)state;
    static const char *const e[] = {"SHMEM_SYMMETRIC_SIZE", "1G", "SMA_DEBUG", "yes",
                                    "SHMEM_OFI_PROVIDER", "tcp;ofi_rxm",
                                    "SHMEM_BOUNCE_BUFFERS", "8", NULL};
    fake_env = e;
    shm_env_t env;
    char err[256] = "";
    assert_int_equal(shm_env_load(&env, fake_lookup, err, sizeof(err)), SHM_OK);
    assert_int_equal(env.SYMMETRIC_SIZE, (size_t)1 << 30);
    assert_int_equal(env.DEBUG, 1); /* the SMA_ alias of Sandia/OSHMEM */
    assert_string_equal(env.OFI_PROVIDER, "tcp;ofi_rxm");
    assert_int_equal(env.BOUNCE_BUFFERS, 8);
}

static void test_shmem_wins_over_alias(void **state)
{
    (void)state;
    static const char *const e[] = {"SHMEM_SYMMETRIC_SIZE", "2M", "SMA_SYMMETRIC_SIZE", "4M",
                                    NULL};
    fake_env = e;
    shm_env_t env;
    char err[256];
    assert_int_equal(shm_env_load(&env, fake_lookup, err, sizeof(err)), SHM_OK);
    assert_int_equal(env.SYMMETRIC_SIZE, (size_t)2 << 20);
}

static void test_bad_value_names_variable(void **state)
{
    (void)state;
    static const char *const e[] = {"SHMEM_SYMMETRIC_SIZE", "lots", NULL};
    fake_env = e;
    shm_env_t env = {0};
    char err[256] = "";
    assert_int_equal(shm_env_load(&env, fake_lookup, err, sizeof(err)), SHM_ERR_ENV);
    assert_non_null(strstr(err, "SHMEM_SYMMETRIC_SIZE"));
    assert_non_null(strstr(err, "'lots'"));
    assert_int_equal(env.SYMMETRIC_SIZE, 0); /* nothing written on error */

    static const char *const e2[] = {"SMA_DEBUG", "sometimes", NULL};
    fake_env = e2;
    assert_int_equal(shm_env_load(&env, fake_lookup, err, sizeof(err)), SHM_ERR_ENV);
    assert_non_null(strstr(err, "SMA_DEBUG"));
}

static void test_listing_has_every_variable(void **state)
{
    (void)state;
    shm_env_t env;
    char err[256];
    fake_env = NULL;
    assert_int_equal(shm_env_load(&env, fake_lookup, err, sizeof(err)), SHM_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    shm_env_print(f, &env, 0);
    fclose(f);
#define SHM_ENV(nm, type, dflt, cat, help) assert_non_null(strstr(buf, "SHMEM_" #nm));
#include "core/env.def"
#undef SHM_ENV
    assert_non_null(strstr(buf, "256M"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_bool_int),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_values_and_alias),
        cmocka_unit_test(test_shmem_wins_over_alias),
        cmocka_unit_test(test_bad_value_names_variable),
        cmocka_unit_test(test_listing_has_every_variable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
