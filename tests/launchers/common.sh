# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Helpers of the launcher tests; sourced. Binaries come from the environment
# (OSHRUN, PROBE, RING, PE_*: set by CMakeLists.txt).
set -u
SKIP=77
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit $SKIP; }
ok() { echo "ok: $*"; }

# need CMD PACKAGE: skip the test if a launcher package is truly absent.
need() {
    command -v "$1" >/dev/null 2>&1 || skip "'$1' not found: install the Debian package '$2'"
}

# Re-runs the calling script inside a fresh network namespace that has only
# loopback, so nothing it starts can listen on a real interface.
in_loopback_netns() {
    if [ -z "${LAUNCHERS_IN_NETNS:-}" ]; then
        command -v unshare >/dev/null || skip "'unshare' not found (util-linux)"
        [ "$(id -u)" -eq 0 ] || skip "a private network namespace needs root (run the tests as root)"
        LAUNCHERS_IN_NETNS=1 exec unshare -n bash "$0" "$@"
    fi
    ip link set lo up || fail "cannot bring up lo in the test's network namespace"
}

# run_job OUTFILE CMD...: runs CMD in the background (own process group),
# remembers its pid in BG_PIDS for the EXIT trap, waits for it, and sets RC.
BG_PIDS=()
run_job() {
    local out=$1
    shift
    setsid "$@" >"$out" 2>&1 &
    local pid=$!
    BG_PIDS+=("$pid")
    wait "$pid"
    RC=$?
}

# The EXIT trap: every job this script started, and its process group, goes.
reap_jobs() {
    local pid
    for pid in "${BG_PIDS[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM -- "-$pid" 2>/dev/null
            sleep 0.5
            kill -KILL -- "-$pid" 2>/dev/null
        fi
    done
}

# expect_ok NAME OUTFILE: the job succeeded.
expect_ok() {
    [ "$RC" -eq 0 ] || { cat "$2" >&2; fail "$1: exit status $RC"; }
}

# expect_line NAME OUTFILE REGEX
expect_line() {
    grep -Eq -- "$3" "$2" || { cat "$2" >&2; fail "$1: no line matching '$3'"; }
}
