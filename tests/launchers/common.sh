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
    [ "$(type -t stop_daemons)" = function ] && stop_daemons
    kill_netns_strays
}

# kill_netns_strays: inside the test's private network namespace every other
# process is one this test started (a daemon's child such as a slurmstepd
# outlives slurmd, and a stopped step outlived its test): all are killed.
kill_netns_strays() {
    [ -n "${LAUNCHERS_IN_NETNS:-}" ] || return 0
    local me p ns left=()
    me=$(readlink /proc/$$/ns/net) || return 0
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
        ns=$(readlink "/proc/$p/ns/net" 2>/dev/null) || continue
        [ "$ns" = "$me" ] || continue
        kill -CONT "$p" 2>/dev/null
        kill -KILL "$p" 2>/dev/null && left+=("$p")
    done
    [ ${#left[@]} -eq 0 ] || echo "killed ${#left[@]} leftover process(es) in the test's namespace: ${left[*]}" >&2
}

# expect_ok NAME OUTFILE: the job succeeded.
expect_ok() {
    [ "$RC" -eq 0 ] || { cat "$2" >&2; fail "$1: exit status $RC"; }
}

# expect_line NAME OUTFILE REGEX
expect_line() {
    grep -Eq -- "$3" "$2" || { cat "$2" >&2; fail "$1: no line matching '$3'"; }
}

# Two "hosts" for the multi-host tests: network namespaces $1 and $2 joined by
# a veth pair whose ends are both named osh0, with 10.213.0.1 and .2 (they
# exist only inside the namespaces), and lo up in each. Skips where
# namespaces cannot be made; fails on anything after that.
two_hosts_up() {
    local nsa=$1 nsb=$2 a=oshA$$ b=oshB$$
    ip netns add "$nsa" || skip "cannot create network namespaces here (ip netns add failed)"
    ip netns add "$nsb" || fail "cannot create a second network namespace"
    ip link add "$a" type veth peer name "$b" || fail "cannot create a veth pair"
    ip link set "$a" netns "$nsa" && ip link set "$b" netns "$nsb" ||
        fail "cannot move the veth ends into the namespaces"
    local ns dev n
    for n in 1 2; do
        ns=$nsa dev=$a
        [ $n = 2 ] && ns=$nsb dev=$b
        ip -n "$ns" link set "$dev" name osh0 && ip -n "$ns" addr add "10.213.0.$n/24" dev osh0 &&
            ip -n "$ns" link set osh0 up && ip -n "$ns" link set lo up ||
            fail "cannot configure $ns"
    done
    ip -n "$nsa" route get 10.213.0.2 | grep -q "dev osh0" ||
        fail "hosta has no route to hostb over the veth pair"
}

# A second link between the two hosts of two_hosts_up, for data only: a
# veth pair named osh1 in both, 10.213.1.1 and .2. A test can break it (ip
# link set osh1 down) while the launcher's traffic still flows over osh0.
data_link_up() {
    local nsa=$1 nsb=$2 a=oshC$$ b=oshD$$ n ns dev
    ip link add "$a" type veth peer name "$b" || fail "cannot create a second veth pair"
    ip link set "$a" netns "$nsa" && ip link set "$b" netns "$nsb" ||
        fail "cannot move the second veth pair into the namespaces"
    for n in 1 2; do
        ns=$nsa dev=$a
        [ $n = 2 ] && ns=$nsb dev=$b
        ip -n "$ns" link set "$dev" name osh1 && ip -n "$ns" addr add "10.213.1.$n/24" dev osh1 &&
            ip -n "$ns" link set osh1 up || fail "cannot configure osh1 in $ns"
    done
}

# For the EXIT trap: whatever still runs in the namespaces was started by the
# test; it goes, then the namespaces (and with them the veth pair).
two_hosts_down() {
    local ns p
    for ns in "$@"; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
}

# expect_two_host_split OUT: 4 PEs, 0 and 2 on hosta, 1 and 3 on hostb, as
# launcher_probe prints it and as the library's rt debug line
# (SHMEM_LOG_LEVEL=rt=debug) places each PE: node, and same-host PEs.
expect_two_host_split() {
    local out=$1 pe
    expect_line "host split" "$out" "^host 0: PEs 0 2$"
    expect_line "host split" "$out" "^host 1: PEs 1 3$"
    for pe in 0 2; do
        expect_line "PE $pe placement (library's rt debug line)" "$out" \
            "\[PE $pe hosta:.*PE $pe of 4 on host hosta \(2 hosts in the job\), same-host PEs 0,2"
    done
    for pe in 1 3; do
        expect_line "PE $pe placement (library's rt debug line)" "$out" \
            "\[PE $pe hostb:.*PE $pe of 4 on host hostb \(2 hosts in the job\), same-host PEs 1,3"
    done
}

# expect_death_ends_job OUT START MAX: the job in which PE 1 was SIGKILLed
# (pe_pe_dies, the others in a barrier; RC from run_job, START its date +%s)
# ended with a non-zero status within MAX seconds, with no barrier returning
# and without the PEs' watchdog. Sets TOOK.
expect_death_ends_job() {
    local out=$1
    TOOK=$(($(date +%s) - $2))
    [ "$RC" -ne 0 ] || { cat "$out" >&2; fail "the job with a dead PE exited 0"; }
    if grep -q "returned although PE 1 is dead" "$out"; then
        cat "$out" >&2
        fail "a barrier returned with PE 1 dead"
    fi
    [ "$TOOK" -lt "$3" ] || { cat "$out" >&2; fail "the job took ${TOOK}s to end after PE 1 died"; }
    grep -q "watchdog" "$out" && { cat "$out" >&2; fail "the PEs hung until their watchdog"; }
    return 0
}
