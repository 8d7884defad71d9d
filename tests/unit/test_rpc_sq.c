// SPDX-License-Identifier: BSD-3-Clause
/*
 * The same-host transport's pieces: the SPSC ring (records, wrap with a pad,
 * full, too large, garbage from the producer, two threads at full speed) and
 * descriptor passing over a Unix socket (core/unixsock.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/unixsock.h"
#include "rpc/sq_ring.h"

#define CAP 4096

typedef struct {
    sq_ring_ctl_t ctl;
    _Alignas(64) uint8_t data[CAP];
} ring_mem_t;

static ring_mem_t *ring_new(sq_end_t *prod, sq_end_t *cons)
{
    ring_mem_t *m = aligned_alloc(64, sizeof(*m));
    memset(m, 0, sizeof(*m));
    sq_end_init(prod, m->data, CAP, &m->ctl);
    sq_end_init(cons, m->data, CAP, &m->ctl);
    return m;
}

static void test_roundtrip(void **state)
{
    (void)state;
    sq_end_t p, c;
    ring_mem_t *m = ring_new(&p, &c);
    const void *msg = NULL;
    size_t len = 0;
    assert_int_equal(sq_peek(&c, &msg, &len), 0);
    assert_true(sq_empty(&c));
    assert_int_equal(sq_push2(&p, "head", 4, "payload", 7), 0);
    assert_int_equal(sq_push2(&p, "x", 1, NULL, 0), 0);
    assert_false(sq_empty(&c));
    assert_int_equal(sq_peek(&c, &msg, &len), 1);
    assert_int_equal(len, 11);
    assert_memory_equal(msg, "headpayload", 11);
    sq_release(&c, len);
    assert_int_equal(sq_peek(&c, &msg, &len), 1);
    assert_int_equal(len, 1);
    assert_memory_equal(msg, "x", 1);
    sq_release(&c, len);
    assert_int_equal(sq_peek(&c, &msg, &len), 0);
    assert_int_equal(m->ctl.tail, c.pos);
    free(m);
}

/* Messages of every size cross the end many times; the ring fills and drains. */
static void test_wrap_full(void **state)
{
    (void)state;
    sq_end_t p, c;
    ring_mem_t *m = ring_new(&p, &c);
    uint8_t buf[CAP], seq = 0, want = 0;
    size_t sent = 0, got = 0;
    for (int round = 0; round < 2000; round++) {
        size_t n = 1 + (size_t)(round * 37) % (sq_max_msg(CAP) - 1);
        memset(buf, seq, n);
        int rc = sq_push2(&p, buf, n / 2, buf + n / 2, n - n / 2);
        if (rc == 1) { /* full: drain everything, then it must fit */
            const void *msg;
            size_t len;
            while (sq_peek(&c, &msg, &len) == 1) {
                const uint8_t *b = msg;
                assert_int_equal(b[0], want);
                assert_int_equal(b[len - 1], want);
                want++;
                got++;
                sq_release(&c, len);
            }
            rc = sq_push2(&p, buf, n / 2, buf + n / 2, n - n / 2);
        }
        assert_int_equal(rc, 0);
        seq++;
        sent++;
    }
    const void *msg = NULL;
    size_t len = 0;
    while (sq_peek(&c, &msg, &len) == 1) {
        assert_int_equal(((const uint8_t *)msg)[0], want++);
        got++;
        sq_release(&c, len);
    }
    assert_int_equal(sent, got);
    assert_true(p.pos > 100 * CAP);
    free(m);
}

static void test_too_large(void **state)
{
    (void)state;
    sq_end_t p, c;
    ring_mem_t *m = ring_new(&p, &c);
    static uint8_t big[CAP];
    assert_int_equal(sq_push2(&p, big, sq_max_msg(CAP) + 1, NULL, 0), -1);
    assert_int_equal(sq_push2(&p, big, sq_max_msg(CAP), NULL, 0), 0);
    free(m);
}

/* The producer is another process: a header that is not a record is refused. */
static void test_garbage(void **state)
{
    (void)state;
    sq_end_t p, c;
    ring_mem_t *m = ring_new(&p, &c);
    const void *msg = NULL;
    size_t len = 0;
    uint64_t bad[] = {
        (uint64_t)7 << 32 | 8,                 /* unknown kind */
        (uint64_t)SQ_REC_MSG << 32 | CAP,      /* longer than the ring */
        (uint64_t)SQ_REC_PAD << 32 | 16,       /* a pad that does not end the lap */
        (uint64_t)SQ_REC_MSG << 32 | 0xffffffffu,
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memcpy(m->data, &bad[i], 8);
        assert_int_equal(sq_peek(&c, &msg, &len), -1);
    }
    free(m);
}

#define NMSG 200000

static void *producer(void *arg)
{
    sq_end_t *p = arg;
    for (uint32_t i = 0; i < NMSG; i++) {
        uint32_t v[4] = {i, i * 3, i ^ 0x5a5a5a5au, i};
        size_t n = 4 + (i % 4) * 4;
        while (sq_push2(p, v, n, NULL, 0) == 1)
            ;
    }
    return NULL;
}

/* Two threads at full speed: every message arrives once, whole, in order. */
static void test_threads(void **state)
{
    (void)state;
    sq_end_t p, c;
    ring_mem_t *m = ring_new(&p, &c);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, &p), 0);
    for (uint32_t i = 0; i < NMSG;) {
        const void *msg = NULL;
        size_t len = 0;
        int k = sq_peek(&c, &msg, &len);
        assert_true(k >= 0);
        if (k == 0)
            continue;
        uint32_t v[4] = {0};
        memcpy(v, msg, len);
        assert_int_equal(len, 4 + (i % 4) * 4);
        assert_int_equal(v[0], i);
        if (len >= 8)
            assert_int_equal(v[1], i * 3);
        if (len >= 12)
            assert_int_equal(v[2], i ^ 0x5a5a5a5au);
        sq_release(&c, len);
        i++;
    }
    pthread_join(t, NULL);
    free(m);
}

/* A memfd handed over a socket is the same memory at the other end. */
static void test_fd_passing(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pid_t pid;
    assert_true(shm_unix_peer_same_user(sv[0], &pid));
    assert_int_equal(pid, getpid());
    int fd = memfd_create("test", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4096), 0);
    char *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(a != MAP_FAILED);
    uint64_t hello = 0x1122334455667788ull, got = 0;
    assert_int_equal(shm_unix_send_fds(sv[0], &hello, sizeof(hello), &fd, 1), 0);
    int rfd = -1;
    assert_int_equal(shm_unix_recv_fds(sv[1], &got, sizeof(got), &rfd, 1), 1);
    assert_true(got == hello);
    char *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
    assert_true(b != MAP_FAILED);
    strcpy(a, "shared");
    assert_string_equal(b, "shared");
    /* Two descriptors where one is expected: refused, none left open. */
    int two[2] = {fd, fd};
    assert_int_equal(shm_unix_send_fds(sv[0], &hello, sizeof(hello), two, 2), 0);
    assert_int_equal(shm_unix_recv_fds(sv[1], &got, sizeof(got), &rfd, 1), -1);
    assert_int_equal(errno, EPROTO);
    /* The other end closed: ECONNRESET. */
    close(sv[0]);
    assert_int_equal(shm_unix_recv_fds(sv[1], &got, sizeof(got), &rfd, 1), -1);
    assert_int_equal(errno, ECONNRESET);
    struct sockaddr_un sa;
    assert_true(shm_unix_abstract(&sa, "orpc-sq.%s", "0123456789abcdef") > 0);
    assert_int_equal(sa.sun_path[0], '\0');
    assert_string_equal(sa.sun_path + 1, "orpc-sq.0123456789abcdef");
    char longname[200];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(shm_unix_abstract(&sa, "%s", longname), 0);
    munmap(a, 4096);
    munmap(b, 4096);
    close(fd);
    close(sv[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),  cmocka_unit_test(test_wrap_full),
        cmocka_unit_test(test_too_large),  cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_threads),    cmocka_unit_test(test_fd_passing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
