#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A job that needs no fabric runs where libfabric cannot be loaded at all
# (it is loaded on demand: src/conduit/ofi/ofi_dl.c), and one that needs it
# says which file it could not load:
#   without_libfabric.sh <oshrun> <pe_fabric_mode>
# Inside a private mount namespace, /dev/null is bind-mounted over
# libfabric.so.1 (root only: skipped otherwise). Then
#  - oshrun -n 2 and a singleton of pe_fabric_mode pass (SHMEM_FABRIC=auto);
#  - with SHMEM_FABRIC=always the job fails with one line naming
#    libfabric.so.1 and the loader's reason.
set -u
oshrun=$1
prog=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root for a private mount namespace"
unshare -m true 2>/dev/null || skip "unshare -m is refused here"
lib=$(ldconfig -p | sed -n 's/^[[:space:]]*libfabric\.so\.1 .*=> //p' | head -1)
[ -n "$lib" ] && lib=$(readlink -f "$lib")
[ -n "$lib" ] && [ -e "$lib" ] || skip "libfabric.so.1 is not in the loader's cache"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2016  # expanded by the inner shell
unshare -m --propagation private bash -c '
    mount --bind /dev/null "$1" || exit 90
    oshrun=$2 prog=$3
    echo "== oshrun -n 2, SHMEM_FABRIC=auto"
    "$oshrun" -n 2 --timeout 60 "$prog" none || echo "RC auto $?"
    echo "== singleton, SHMEM_FABRIC=auto"
    "$prog" none || echo "RC singleton $?"
    echo "== oshrun -n 1, SHMEM_FABRIC=always"
    SHMEM_FABRIC=always "$oshrun" -n 1 --timeout 60 "$prog" loaded && echo "RC always 0"
    exit 0
' without_libfabric "$lib" "$oshrun" "$prog" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -ne 90 ] || skip "cannot bind-mount over $lib"
[ "$rc" -eq 0 ] || fail "the namespace shell exited $rc"
grep -q "^RC auto" "$out" && fail "a 2-PE one-host job failed without libfabric"
grep -q "^RC singleton" "$out" && fail "a singleton failed without libfabric"
[ "$(grep -c 'fabric_mode: passed' "$out")" -eq 2 ] || fail "expected 2 'passed' lines"
echo "ok: a 2-PE one-host job and a singleton run without libfabric"
grep -q "^RC always 0" "$out" && fail "SHMEM_FABRIC=always succeeded without libfabric"
grep -Eq 'cannot load libfabric \(libfabric\.so\.1\): .*file too short' "$out" ||
    fail "no line naming libfabric.so.1 and the loader's reason"
echo "ok: SHMEM_FABRIC=always without libfabric: the error names libfabric.so.1 and why"
