#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fatal paths end in bounded time under Open MPI's mpirun and Slurm's srun
# too (issue 28 item 1; tests/reliability/launcher_fail.sh does oshrun).
# Everything runs in a network namespace whose only network is lo (the
# launchers listen on every interface), which the cut_* cases take down:
# it carries the PEs' PMIx connections to their server (mpirun; Slurm's
# slurmstepd) as well as the data (tcp;ofi_rxm on lo).
#   fatal_bound_test.sh CASE
#   mpirun_cut_fabric | srun_cut_fabric
#       2 PEs with traffic of every kind (the netfault program); lo goes
#       down: a PE reports after SHMEM_FABRIC_TIMEOUT (3 s) naming the peer
#       and its host; its PMIx_Abort cannot leave, so it exits 2 s later
#       (SHM_RT_ABORT_ACK_MS); the other PE, silent (one report per host),
#       3 s after its own detection plus the same 2 s. Every PE must be gone
#       within 3 + 3 + 2 s (+ slack) of the cut.
#   mpirun_stopped_report | srun_stopped_report
#       the PEs' parent (mpirun; slurmstepd) SIGSTOPped, then PE 1 reports
#       (shmem_global_exit): it exits 2 s later; the others, in a barrier,
#       end when the parent has been stopped SHMEM_LAUNCHER_TIMEOUT (3 s).
#   mpirun_killed
#       mpirun SIGKILLed while its PEs compute (never calling the library
#       again): each ends at once (its line goes nowhere: the PEs' output
#       passed through mpirun).
# Each case: the launcher returns (once lo is back up, or it is continued),
# no process of the job is left, no /dev/shm file of theirs, nothing in the
# job's TMPDIR (mpirun_killed: mpirun's own session directory excepted).
source "$(dirname "$0")/common.sh"
CASE=$1
case $CASE in
mpirun_*) need mpirun openmpi-bin ;;
srun_*)
    source "$(dirname "$0")/slurm_cluster.sh"
    need_slurm
    [ "$(id -u)" -eq 0 ] || skip "a throw-away Slurm cluster needs root (SlurmUser=root)"
    ;;
*) fail "unknown case '$CASE'" ;;
esac
in_loopback_netns "$@"

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_fatal.XXXXXX") || exit 1
chmod 755 "$W"
mkdir "$W/jobtmp" # not $W/tmp: the Slurm test cluster's TmpFS
touch "$W/started"
STOPPED=""
cleanup() {
    ip link set lo up 2>/dev/null
    [ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
    local p
    for p in $(tagged_pids); do kill -KILL "$p" 2>/dev/null; done
    reap_jobs
    [ "$(type -t stop_daemons)" = function ] && stop_daemons
    rm -rf "$W"
}
trap cleanup EXIT

LT=3 FT=3 ACK_MS=2000
# As netfault_test.sh: 2 s, plus 1 s per runnable task beyond the CPUs (<= 8 s).
SLACK_MS=$(awk -v n="$(nproc)" '{ x = $1 - n; if (x < 0) x = 0; if (x > 8) x = 8;
                                  printf "%d", 2000 + 1000 * x }' /proc/loadavg)
TAG="fatal_bound.$$.$RANDOM"
# now_ms, alive, wait_gone (a miss shows the job's output)
source "$(dirname "$0")/../reliability/bound.sh"
bound_fail() { cat "$W/out" >&2; fail "$CASE: $*"; }
BOUND_FAIL=bound_fail BOUND_GRACE_MS=10000

# The job's processes carry TAG in their environment (both launchers pass
# theirs on): found in /proc whatever their parent.
tagged_pids() {
    grep -lsxzF "FATAL_BOUND_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}

# start CMD...: the launcher in the background (own session); JOB its pid.
start() {
    setsid env FATAL_BOUND_TAG="$TAG" TMPDIR="$W/jobtmp" "$@" >"$W/out" 2>&1 &
    JOB=$!
    BG_PIDS+=("$JOB")
}

wait_line() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        grep -Eq -- "$1" "$W/out" && return 0
        kill -0 "$JOB" 2>/dev/null || break
        sleep 0.05
    done
    cat "$W/out" >&2
    fail "$CASE: no line matching '$1' within $2 s"
}

# pes COMM N: the job's PEs (by command name) into PES, all into ALL.
pes() {
    local p i
    for i in $(seq 40); do
        PES=()
        for p in $(tagged_pids); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] && PES+=("$p")
        done
        [ ${#PES[@]} -eq "$2" ] && break
        sleep 0.05
    done
    [ ${#PES[@]} -eq "$2" ] || fail "$CASE: expected $2 PEs ($1), found ${#PES[@]}"
    ALL=("${PES[@]}")
}

# finish SECONDS: the launcher returns within that, with a failure status.
finish() {
    local i
    for ((i = 0; i < $1 * 20; i++)); do
        kill -0 "$JOB" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$JOB" 2>/dev/null && { cat "$W/out" >&2; fail "$CASE: the launcher still ran $1 s later"; }
    wait "$JOB"
    RC=$?
    [ "$RC" -ne 0 ] || { cat "$W/out" >&2; fail "$CASE: the job exited 0"; }
}

# expect_clean [TMPDIR_TOO]: no process, /dev/shm file or (by default) temp
# file of the job left.
expect_clean() {
    local left i p f
    for i in $(seq 60); do
        left=$(alive $(tagged_pids))
        [ -z "$left" ] && break
        sleep 0.05
    done
    [ -z "$left" ] || fail "$CASE: processes of the job still alive: $left"
    for p in "${ALL[@]}"; do
        for f in /dev/shm/"$p":*; do
            [ -e "$f" ] && [ "$f" -nt "$W/started" ] && fail "$CASE: $f left in /dev/shm"
        done
    done
    if [ "${1:-1}" = 1 ]; then
        [ -z "$(ls -A "$W/jobtmp")" ] || fail "$CASE: left in TMPDIR: $(ls -A "$W/jobtmp")"
    fi
    grep -q "watchdog\|finished" "$W/out" && { cat "$W/out" >&2; fail "$CASE: a PE hung to its watchdog or finished"; }
    return 0
}

FABRIC_RE='^\[PE [01] [^ ]+:[0-9]+\] ofi_fault\.c:[0-9]+: .*(to|from) PE [01] \(host [^ )]+\) .*(made no progress for 3 s|failed)'
GONE_RE='^\[PE [0-9] [^ ]+:[0-9]+\] rt_(watch|pmix)\.c:[0-9]+: the launcher went away'
ACK_RE="rt/warn rt_watch\.c:[0-9]+: the launcher did not acknowledge this PE's abort"
export SHMEM_LAUNCHER_TIMEOUT=$LT SHMEM_FABRIC_TIMEOUT=$FT PE_WATCHDOG_S=60
unset SHMEM_OFI_PROVIDER FI_PROVIDER

if [ "${CASE%%_*}" = srun ]; then
    ip link add osh0 type veth peer name osh1 || fail "cannot create a veth pair in the namespace"
    ip addr add 10.213.254.1/24 dev osh0 && ip link set osh0 up && ip link set osh1 up ||
        fail "cannot configure the veth pair"
    slurm_cluster_up "$W" || fail "the test cluster did not come up"
    LAUNCH=(srun --mpi=pmix --time=2 --kill-on-bad-exit=0)
    PARENT=slurmstepd
else
    LAUNCH=(mpirun --allow-run-as-root --oversubscribe --timeout 60 --mca btl self
            --mca plm_rsh_agent false)
    PARENT=mpirun
fi

# The PEs' parent: mpirun itself, or the step's slurmstepd.
parent_of() { awk '{print $4}' "/proc/$1/stat"; }

case $CASE in
*_cut_fabric)
    start env SHMEM_OFI_PROVIDER='tcp;ofi_rxm' FI_TCP_IFACE=lo SHMEM_DIRECT=0 SHMEM_YIELD=on \
        SHMEM_LAUNCHER_TIMEOUT=20 "${LAUNCH[@]}" -n 2 "$NETFAULT" mixed
    wait_line "netfault: streaming" 40
    pes launchers_netfa 2
    sleep 0.3
    t0=$(now_ms)
    ip link set lo down || fail "cannot take lo down"
    wait_gone "$t0" $((FT * 1000 + 3000 + ACK_MS)) "${PES[@]}"
    ip link set lo up
    up=$(now_ms)
    finish 30
    echo "the launcher returned $(($(now_ms) - up)) ms after lo came back up"
    # One report per host, unless the second PE's own stall is seen after
    # the first has left (2 s after its report: its claim goes with it) and
    # before the launcher ended the job (seen once at load 15 under mpirun).
    n=$(grep -Ec '^\[PE [01] [^ ]+:[0-9]+\] [a-z_]+\.c:[0-9]+: ' "$W/out")
    [ "$n" -ge 1 ] && [ "$n" -le 2 ] || { cat "$W/out" >&2; fail "$CASE: $n library messages, expected 1 (or 2)"; }
    grep -Eq "$FABRIC_RE" "$W/out" || { cat "$W/out" >&2; fail "$CASE: no message naming the peer and its host"; }
    expect_clean
    ok "$CASE: link and PMIx channel cut: PEs gone $TOOK ms later (load $(cut -d' ' -f1 /proc/loadavg)): $(grep -E "$FABRIC_RE" "$W/out")"
    ;;
*_stopped_report)
    # The PEs' output passes through the launcher (mpirun's and srun's I/O
    # forwarding): nothing shows while it is stopped, so the lines are
    # checked once it runs again.
    start "${LAUNCH[@]}" -n 3 "$PE_LAUNCHER" report "$W/go"
    wait_line "launcher: ready" 40
    pes reliability_lau 3
    STOPPED=$(parent_of "${PES[0]}")
    [ "$(cat "/proc/$STOPPED/comm")" = "$PARENT" ] || fail "$CASE: the PEs' parent is $(cat "/proc/$STOPPED/comm"), not $PARENT"
    kill -STOP "$STOPPED"
    t0=$(now_ms)
    touch "$W/go"
    # PE 1 reports at once and leaves 2 s later; the others at LT.
    wait_gone "$t0" $((LT * 1000 + 1000)) "${PES[@]}"
    kill -CONT "$STOPPED"
    STOPPED=""
    finish 30
    grep -q "report_epoch_ms=" "$W/out" || { cat "$W/out" >&2; fail "$CASE: PE 1 did not report"; }
    grep -Eq "$ACK_RE" "$W/out" || { cat "$W/out" >&2; fail "$CASE: PE 1 did not say why it left"; }
    n=$(grep -Ec "$GONE_RE: its process $PARENT \(pid [0-9]+, this PE's parent\) has been stopped for $LT s" "$W/out")
    [ "$n" -eq 2 ] || { cat "$W/out" >&2; fail "$CASE: $n PEs said their launcher was stopped, expected 2"; }
    expect_clean
    ok "$CASE: $PARENT stopped while PE 1 reported: PEs gone $TOOK ms after the stop (load $(cut -d' ' -f1 /proc/loadavg))"
    ;;
mpirun_killed)
    # Their output went through mpirun: the PEs' lines die with it (a pipe
    # without a reader); that each PE ends at once is what can be checked.
    start "${LAUNCH[@]}" -n 3 "$PE_LAUNCHER" compute
    wait_line "launcher: ready" 40
    pes reliability_lau 3
    t0=$(now_ms)
    kill -KILL "$JOB"
    wait "$JOB" 2>/dev/null
    wait_gone "$t0" 1000 "${PES[@]}"
    expect_clean 0 # mpirun's own session directory stays (its owner was killed)
    ok "$CASE: mpirun killed: 3 PEs gone $TOOK ms later"
    ;;
esac
