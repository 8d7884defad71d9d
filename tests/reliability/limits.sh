#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A job that runs out of something says which limit, what it has and what it
# needs (issue 28 item 3). Each case sets one limit low in its own shell.
#   limits.sh OSHRUN LIMITS CASE
#   nofile_pe      ulimit -n 100, 8 PEs over tcp;ofi_rxm; each PE opens
#                  every descriptor left, then talks to every PE: the
#                  fabric's connection fails with EMFILE, and the message
#                  says "ulimit -n", the limit, the files open, the need
#   nofile_oshrun  ulimit -n 24 (soft and hard), 8 PEs: oshrun refuses at
#                  once naming the limit and what 8 PEs need (it used to
#                  start them and fail or hang in its PMIx server)
#   nofile_raise   soft limit 24, hard 4096, 8 PEs over tcp: oshrun raises
#                  its soft limit (the PEs inherit it) and the job passes
#   nproc_oshrun   a user of its own (root only: setpriv) with ulimit -u 12,
#                  8 PEs: oshrun refuses naming "ulimit -u" and the need
#   as_heap        ulimit -v 1000000 (KiB), 2 PEs: the heap's mapping fails;
#                  one line per PE names "ulimit -v", the limit and the need
#   heap_huge      SHMEM_SYMMETRIC_SIZE=100T: the line says the largest
#                  mapping the PE could make and what it asked
#   devshm_fabric  a 48 MiB /dev/shm (private mount namespace: root only),
#                  3 PEs on libfabric shm (SHMEM_FABRIC=always): a warning
#                  says /dev/shm's free space and what 3 PEs need; the job
#                  runs (or stops with a message), never dies of SIGBUS
#   memlock        ulimit -l 0, 2 PEs on the shm provider and over tcp:
#                  nothing here pins memory, the job passes
# Every case: the job ends (no hang), nothing of it is left in the process
# table or its TMPDIR.
set -u
OSHRUN=$1 PROG=$2 CASE=$3
fail() { echo "FAIL: $CASE: $*" >&2; [ -f "${W:-/nonexistent}/out" ] && cat "$W/out" >&2; exit 1; }
skip() { echo "SKIP: $CASE: $*"; exit 77; }

W=$(mktemp -d "${TMPDIR:-/tmp}/limits.XXXXXX") || exit 2
chmod 755 "$W"
mkdir "$W/tmp"
chmod 1777 "$W/tmp"
TAG="limits.$$.$RANDOM"
cleanup() {
    local p
    for p in $(tagged); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
tagged() { grep -lsxzF "LIMITS_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
export PE_WATCHDOG_S=40 SHMEM_FABRIC_TIMEOUT=10
unset SHMEM_OFI_PROVIDER FI_PROVIDER
TCP=(SHMEM_OFI_PROVIDER='tcp;ofi_rxm' FI_TCP_IFACE=lo SHMEM_DIRECT=0)

# job PREFIX... -- NPES ARGS...: runs oshrun (through bash -c PREFIX, where
# the limit is set) with a time limit; RC and $W/out.
job() {
    local pre=$1 np=$2
    shift 2
    timeout 60 env LIMITS_TAG="$TAG" TMPDIR="$W/tmp" bash -c "$pre"' "$@"' limits \
        "$OSHRUN" -n "$np" --timeout 45 "$@" >"$W/out" 2>&1
    RC=$?
    [ "$RC" -ne 124 ] || fail "the job hung (outer timeout)"
}

expect_clean() {
    local left i
    for i in $(seq 40); do
        left=$(tagged | tr '\n' ' ')
        [ -z "$left" ] && break
        sleep 0.05
    done
    [ -z "$left" ] || fail "processes of the job left: $left"
    [ -z "$(ls -A "$W/tmp")" ] || fail "left in TMPDIR: $(ls -A "$W/tmp")"
    grep -q watchdog "$W/out" && fail "a PE hung to its watchdog"
    return 0
}
expect_fail() { [ "$RC" -ne 0 ] || fail "the job exited 0"; }
expect_pass() { [ "$RC" -eq 0 ] && grep -q "limits: passed" "$W/out" || fail "the job failed (status $RC)"; }
expect_line() { grep -Eq -- "$1" "$W/out" || fail "no line matching '$1'"; }

case $CASE in
nofile_pe)
    job "ulimit -n 100;" 8 env "${TCP[@]}" "$PROG" nofile
    expect_fail
    expect_line '^\[PE [0-7] [^ ]+:[0-9]+\] [a-z_]+\.c:[0-9]+: .*Too many open files: this PE has [0-9]+ files open and may open 100 \(ulimit -n; hard limit 100\).* a job of 8 PEs needs about [0-9]+ besides the program.s own files: raise the limit \(ulimit -n [0-9]+'
    ;;
nofile_oshrun)
    job "ulimit -n 24;" 8 "$PROG" run
    expect_fail
    expect_line '^oshrun: 8 PEs need about [0-9]+ open files in oshrun .* but it may open 24 \(ulimit -n; hard limit 24\): raise the limit \(ulimit -n [0-9]+'
    [ "$(grep -c . "$W/out")" -eq 1 ] || fail "more than oshrun's one line"
    ;;
nofile_raise)
    [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 4096 ] || skip "the hard limit on open files is below 4096"
    job "ulimit -Sn 24 && ulimit -Hn 4096 && [ \"\$(ulimit -Sn)\" = 24 ] || exit 99;" 8 env "${TCP[@]}" "$PROG" run
    expect_pass
    ;;
nproc_oshrun)
    [ "$(id -u)" -eq 0 ] || skip "needs root (a user of its own, whose processes it can count)"
    command -v setpriv >/dev/null || skip "'setpriv' not found (util-linux)"
    uid=$((40000 + $$ % 20000))
    job "setpriv --reuid=$uid --regid=$uid --clear-groups bash -c 'ulimit -u 12; exec \"\$@\"' x" 8 \
        "$PROG" run
    expect_fail
    expect_line '^oshrun: 8 PEs need up to [0-9]+ processes and threads .* this user may run 12 \(ulimit -u\) and runs [0-9]+ already: raise the limit \(ulimit -u [0-9]+\)'
    ;;
as_heap)
    job "ulimit -v 1000000;" 2 "$PROG" run
    expect_fail
    n=$(grep -Ec '^\[PE [01] [^ ]+:[0-9]+\] heap\.c:[0-9]+: cannot map a symmetric heap of [0-9]+ bytes \(SHMEM_SYMMETRIC_SIZE.*this PE may map 1000000 KiB in all \(ulimit -v\), maps [0-9]+ KiB already and could map at most [0-9]+ MiB more; it needs [0-9]+ MiB: raise the limit to at least [0-9]+ KiB' "$W/out")
    [ "$n" -eq 2 ] || fail "$n PEs named the address-space limit, expected 2"
    [ "$(grep -Ec '^\[PE [01] ' "$W/out")" -eq 2 ] || fail "more than one line per PE"
    ;;
heap_huge)
    job "" 2 env SHMEM_SYMMETRIC_SIZE=100T "$PROG" run
    expect_fail
    expect_line '^\[PE [01] [^ ]+:[0-9]+\] heap\.c:[0-9]+: cannot map a symmetric heap of [0-9]+ bytes \(SHMEM_SYMMETRIC_SIZE.*the largest mapping this PE could make now is [0-9.]+ [MGT]iB .*it needs 100\.0 TiB: lower SHMEM_SYMMETRIC_SIZE'
    ;;
devshm_fabric)
    [ "$(id -u)" -eq 0 ] || skip "needs root for a private mount namespace"
    unshare -m true 2>/dev/null || skip "unshare -m is refused here"
    job "unshare -m --propagation private bash -c 'mount -t tmpfs -o size=48m tmpfs /dev/shm && exec \"\$@\"' x" \
        3 env SHMEM_FABRIC=always SHMEM_OFI_PROVIDER=shm "$PROG" run
    grep -Eq 'by signal 7|Bus error' "$W/out" && fail "a PE died of SIGBUS"
    expect_line '^\[PE 0 [^ ]+:[0-9]+\] init/warn init\.c:[0-9]+: /dev/shm has [0-9]+ MiB free, and libfabric.s shm provider keeps up to 32 MiB there per PE .* the 3 PEs of this host need about 96 MiB'
    [ "$RC" -eq 0 ] || expect_line '^\[PE [0-2] [^ ]+:[0-9]+\] [a-z_]+\.c:[0-9]+: '
    ;;
memlock)
    job "ulimit -l 0;" 2 env SHMEM_OFI_PROVIDER=shm SHMEM_DIRECT=0 "$PROG" run
    expect_pass
    job "ulimit -l 0;" 2 env "${TCP[@]}" "$PROG" run
    expect_pass
    ;;
*) fail "unknown case" ;;
esac
expect_clean
echo "ok: $CASE: $(grep -Ev '^(PE [0-9]+: opened|PE 0: limits: passed)' "$W/out" | head -1)"
