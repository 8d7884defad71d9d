#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The launcher (oshrun) or its PMIx channel fails under a live job (issue 28
# items 1 and 2). Every PE must end within the documented bound with a line
# saying why; nothing of the job may be left (processes, /dev/shm files of
# their pids, anything in the job's TMPDIR).
#   launcher_fail.sh OSHRUN LAUNCHER NETFAULT CASE
# CASE:
#   killed          oshrun SIGKILLed while its 3 PEs compute (never calling
#                   the library again): every PE ends at once, each saying
#                   the launcher went away; oshrun's sweeper removes the
#                   PEs' libfabric shm files and oshrun's temp dir
#   stopped         oshrun SIGSTOPped while its 3 PEs compute:
#                   every PE ends after SHMEM_LAUNCHER_TIMEOUT (3 s) with a
#                   line saying so; SIGCONTed, oshrun ends the job
#   stopped_fin     the same while the PEs are about to shmem_finalize (a
#                   fence: the runtime is needed and does not answer)
#   stopped_report  oshrun SIGSTOPped, then PE 1 reports (shmem_global_exit):
#                   PMIx_Abort is not acknowledged, PE 1 exits 2 s later;
#                   the others end by SHMEM_LAUNCHER_TIMEOUT
#   The next ones need a network namespace of their own (root; skipped
#   otherwise) whose only network, lo, the test takes down: it also carries
#   the PEs' PMIx connections to oshrun.
#   cut_fabric      2 PEs over tcp;ofi_rxm with puts, gets, atomics,
#                   barriers and reductions in flight (the netfault program);
#                   lo goes down: a PE reports after SHMEM_FABRIC_TIMEOUT (3 s)
#                   naming the peer and its host, and exits 2 s later (before
#                   issue 28 it sat in PMIx_Abort for ever)
#   cut_report      3 PEs on the same-host path (no network used); lo goes
#                   down, then PE 1 reports: it exits 2 s later, its line out
#   cut_fin         lo goes down, then the PEs call shmem_finalize (a fence
#                   that cannot reach oshrun): the PMIx connection's
#                   keepalive gives up SHMEM_LAUNCHER_TIMEOUT (3 s) after
#                   the last answer; a PE ends saying the launcher went
#                   away, and oshrun (which still sees its PEs) ends the rest
#   cut_compute     the same while the PEs compute for ever: the watchdog
#                   sees the connection closed
set -u
OSHRUN=$1 PROG=$2 NETFAULT=$3 CASE=$4
SKIP=77
fail() { echo "FAIL: $CASE: $*" >&2; [ -f "${W:-/nonexistent}/out" ] && cat "$W/out" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit $SKIP; }

case $CASE in
cut_*)
    if [ -z "${LAUNCHER_FAIL_NETNS:-}" ]; then
        [ "$(id -u)" -eq 0 ] || skip "a private network namespace needs root"
        command -v unshare >/dev/null || skip "'unshare' not found (util-linux)"
        LAUNCHER_FAIL_NETNS=1 exec unshare -n bash "$0" "$@"
    fi
    ip link set lo up || fail "cannot bring lo up in the test's namespace"
    ;;
esac

# Slack for a loaded machine (as netfault_test.sh): 2 s, plus 1 s for each
# runnable task beyond the CPU count in the 1-minute load average (up to 8 s
# more).
SLACK_MS=${LAUNCHER_FAIL_SLACK_MS:-$(awk -v n="$(nproc)" '{ x = $1 - n; if (x < 0) x = 0;
    if (x > 8) x = 8; printf "%d", 2000 + 1000 * x }' /proc/loadavg)}
LT=3 # SHMEM_LAUNCHER_TIMEOUT
FT=3 # SHMEM_FABRIC_TIMEOUT
ACK_MS=2000 # SHM_RT_ABORT_ACK_MS (src/runtime/rt.h)

W=$(mktemp -d "${TMPDIR:-/tmp}/launcher_fail.XXXXXX") || exit 2
mkdir "$W/tmp"
touch "$W/started"
JOB="" ALL=()
cleanup() {
    local p f
    [ -n "$JOB" ] && kill -CONT "$JOB" 2>/dev/null
    for p in "${ALL[@]}" $JOB; do kill -KILL "$p" 2>/dev/null; done
    [ -n "$JOB" ] && wait "$JOB" 2>/dev/null
    # After a failure the sweeper may have been killed with the rest: the
    # PEs' libfabric shm files (only those made during the test) go here.
    sleep 0.2
    for p in "${ALL[@]}"; do
        for f in /dev/shm/"$p":*; do
            [ -e "$f" ] && [ "$f" -nt "$W/started" ] && rm -f "$f"
        done
    done
    rm -rf "$W"
}
trap cleanup EXIT
# now_ms, alive, wait_gone
source "$(dirname "$0")/bound.sh"

export TMPDIR=$W/tmp SHMEM_LAUNCHER_TIMEOUT=$LT SHMEM_FABRIC_TIMEOUT=$FT PE_WATCHDOG_S=60
unset SHMEM_OFI_PROVIDER FI_PROVIDER

# start NPES PROG ARGS...: oshrun in the background, its own session.
start() {
    local np=$1
    shift
    setsid "$OSHRUN" -n "$np" --timeout 90 "$@" >"$W/out" 2>&1 &
    JOB=$!
}

# wait_line REGEX SECONDS
wait_line() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        grep -Eq -- "$1" "$W/out" && return 0
        kill -0 "$JOB" 2>/dev/null || break
        sleep 0.05
    done
    fail "no line matching '$1' within $2 s"
}

# pes: oshrun's children (the PEs and its sweeper) into ALL, the PEs into PES.
collect() {
    local p
    PES=()
    for p in $(pgrep -P "$JOB"); do
        ALL+=("$p")
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = oshrun ] || PES+=("$p")
    done
    [ ${#PES[@]} -eq "$1" ] || fail "expected $1 PEs under oshrun, found ${#PES[@]}: ${PES[*]}"
}

# finish_job SECONDS: oshrun must return, with a failure status, within that.
finish_job() {
    local i
    for ((i = 0; i < $1 * 20; i++)); do
        kill -0 "$JOB" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$JOB" 2>/dev/null && fail "oshrun still ran $1 s after its PEs had gone"
    wait "$JOB"
    RC=$?
    JOB=""
    [ "$RC" -ne 0 ] || fail "the job exited 0"
}

# expect_clean: no process, no /dev/shm file of any of them, empty TMPDIR.
expect_clean() {
    local p f left i
    for i in $(seq 40); do
        left=$(alive "${ALL[@]}")
        [ -z "$left" ] && break
        sleep 0.05
    done
    [ -z "$left" ] || fail "processes of the job still alive: $left"
    for p in "${ALL[@]}"; do
        for f in /dev/shm/"$p":*; do
            [ -e "$f" ] && [ "$f" -nt "$W/started" ] && fail "$f of a job process left in /dev/shm"
        done
    done
    [ -z "$(ls -A "$W/tmp")" ] || fail "left in TMPDIR: $(ls -A "$W/tmp")"
    grep -q "watchdog\|finished" "$W/out" && fail "a PE hung to its watchdog or finished"
    return 0
}

# expect_lines REGEX N [MAX]: N lines match (N..MAX).
expect_lines() {
    local n
    n=$(grep -Ec -- "$1" "$W/out")
    [ "$n" -ge "$2" ] && [ "$n" -le "${3:-$2}" ] ||
        fail "$n lines match '$1', expected $2${3:+..$3}"
}

GONE_RE='^\[PE [0-9] [^ ]+:[0-9]+\] rt_(watch|pmix)\.c:[0-9]+: the launcher went away'
case $CASE in
killed | stopped | stopped_fin)
    mode=compute
    [ "$CASE" = stopped_fin ] && mode="finalize $W/go"
    # SHMEM_FABRIC=always on shm: libfabric shm's region files, which the
    # sweeper must remove after a killed oshrun.
    # shellcheck disable=SC2086
    SHMEM_FABRIC=always SHMEM_OFI_PROVIDER=shm start 3 "$PROG" $mode
    wait_line "launcher: ready" 30
    collect 3
    t0=$(now_ms)
    if [ "$CASE" = killed ]; then
        kill -KILL "$JOB"
        wait "$JOB" 2>/dev/null
        JOB=""
        wait_gone "$t0" 1000 "${PES[@]}"
        expect_lines "$GONE_RE: .*exited or was killed|$GONE_RE: lost the connection" 3
    else
        kill -STOP "$JOB"
        touch "$W/go"
        wait_gone "$t0" $((LT * 1000 + 1000)) "${PES[@]}"
        expect_lines "$GONE_RE: its process oshrun \(pid $JOB, this PE's parent\) has been stopped for $LT s" 3
        kill -CONT "$JOB"
        finish_job 5
        grep -Eq "^oshrun: PE [0-9] \(pid [0-9]+\) exited with status 1 before shmem_finalize" \
            "$W/out" || fail "oshrun did not report the PEs' exit"
    fi
    expect_clean
    echo "ok: $CASE: 3 PEs gone $TOOK ms after the launcher was ${CASE%%_*} (bound and slack: see above; load $(cut -d' ' -f1 /proc/loadavg))"
    ;;
stopped_report)
    start 3 "$PROG" report "$W/go"
    wait_line "launcher: ready" 30
    collect 3
    kill -STOP "$JOB"
    t0=$(now_ms)
    touch "$W/go"
    wait_line "report_epoch_ms=" 10
    rep=$(grep -oE 'report_epoch_ms=[0-9]+' "$W/out" | cut -d= -f2)
    pe1=$(pgrep -P "$JOB" -f "$PROG" | while read -r p; do
        grep -qz "^PMIX_RANK=1$" "/proc/$p/environ" 2>/dev/null && echo "$p"; done)
    # PE 1 exits ACK_MS after its report (oshrun cannot take the abort).
    [ -n "$pe1" ] && wait_gone "$rep" "$ACK_MS" "$pe1"
    echo "PE 1 gone $TOOK ms after its report"
    wait_gone "$t0" $((LT * 1000 + 1000)) "${PES[@]}"
    grep -Eq "rt/warn rt_watch\.c:[0-9]+: the launcher did not acknowledge this PE's abort" \
        "$W/out" || fail "PE 1 did not say why it left"
    expect_lines "$GONE_RE: its process oshrun .* has been stopped for $LT s" 2
    kill -CONT "$JOB"
    finish_job 5
    expect_clean
    echo "ok: $CASE: PE 1 reported with oshrun stopped and left; all PEs gone $TOOK ms after the stop"
    ;;
cut_fabric)
    # The keepalive's bound well above the fabric's: the abort is under test.
    SHMEM_LAUNCHER_TIMEOUT=20 SHMEM_OFI_PROVIDER='tcp;ofi_rxm' FI_TCP_IFACE=lo SHMEM_DIRECT=0 SHMEM_YIELD=on \
        start 2 "$NETFAULT" mixed
    wait_line "netfault: streaming" 30
    collect 2
    sleep 0.3
    t0=$(now_ms)
    ip link set lo down || fail "cannot take lo down"
    wait_gone "$t0" $((FT * 1000 + ACK_MS + 1000)) "${PES[@]}"
    finish_job 5
    # One report per host (1 or 2: see fatal_bound_test.sh)
    expect_lines '^\[PE [01] [^ ]+:[0-9]+\] [a-z_]+\.c:[0-9]+: ' 1 2
    grep -Eq "^\[PE [01] [^ ]+:[0-9]+\] ofi_fault\.c:[0-9]+: .* (to|from) PE [01] \(host [^ )]+\) .*made no progress for $FT s" \
        "$W/out" || fail "no fabric message naming the peer and its host"
    expect_clean
    echo "ok: $CASE: link and PMIx channel cut: PEs gone $TOOK ms later, oshrun status $RC"
    ;;
cut_report)
    SHMEM_LAUNCHER_TIMEOUT=20 start 3 "$PROG" report "$W/go"
    wait_line "launcher: ready" 30
    collect 3
    ip link set lo down || fail "cannot take lo down"
    touch "$W/go"
    wait_line "report_epoch_ms=" 10
    rep=$(grep -oE 'report_epoch_ms=[0-9]+' "$W/out" | cut -d= -f2)
    wait_gone "$rep" $((ACK_MS + 1000)) "${PES[@]}"
    finish_job 5
    grep -Eq "rt/warn rt_watch\.c:[0-9]+: the launcher did not acknowledge this PE's abort" \
        "$W/out" || fail "PE 1 did not say why it left"
    grep -Eq "^oshrun: PE 1 \(pid [0-9]+\) exited with status 5 before shmem_finalize" \
        "$W/out" || fail "oshrun did not name PE 1"
    expect_clean
    echo "ok: $CASE: PMIx channel cut, PE 1 reported: PEs gone $TOOK ms after the report"
    ;;
cut_fin | cut_compute)
    mode="finalize $W/go"
    [ "$CASE" = cut_compute ] && mode=compute
    # shellcheck disable=SC2086
    start 3 "$PROG" $mode
    wait_line "launcher: ready" 30
    collect 3
    t0=$(now_ms)
    ip link set lo down || fail "cannot take lo down"
    touch "$W/go"
    # The keepalive's first probe goes LT/3 s after the last traffic, the
    # connection is closed LT s after the last acknowledgement.
    wait_gone "$t0" $((LT * 1000 + 2000)) "${PES[@]}"
    finish_job 5
    expect_lines "$GONE_RE" 1 3
    grep -Eq "^oshrun: PE [0-9] \(pid [0-9]+\) exited with status 1 before shmem_finalize" \
        "$W/out" || fail "oshrun did not report the PE's exit"
    expect_clean
    echo "ok: $CASE: PMIx channel cut ($mode): PEs gone $TOOK ms later"
    ;;
*) fail "unknown case" ;;
esac
