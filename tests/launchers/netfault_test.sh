#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The network fails under a live job on two hosts (issue #19). The hosts are
# the two network namespaces of multihost_test.sh ("hosta", "hostb", the
# veth pair osh0 carrying Open MPI's control traffic), plus a second veth
# pair osh1 (10.213.1.1/.2) for the data: the PEs bind tcp;ofi_rxm to it
# (FI_TCP_IFACE=osh1). Breaking osh1 is a data network failing while the
# launcher's management network stays, as on a cluster: the launcher can
# still end the job once a PE reports. 4 PEs, 2 per host (ranks alternate),
# each streaming to its right neighbour on the other host (netfault.c),
# SHMEM_FABRIC_TIMEOUT=$LIMIT.
#   netfault_test.sh down_put|down_get|down_amo|down_barrier|down_coll
#       osh1 goes down in hosta while traffic runs: the job must end within
#       LIMIT + 2 s of that with one message naming the operation, a PE of
#       the other host and that host.
#   netfault_test.sh flap
#       osh1 goes down for 1 s and up again under mixed traffic (puts, gets,
#       fetch-adds, barriers, reductions, every value checked): the job
#       either recovers and passes, or ends as above; never wrong data, never
#       a hang.
#   netfault_test.sh flap_long
#       the same with SHMEM_FABRIC_TIMEOUT=10: TCP retransmits within a few
#       seconds of the link coming back, so the job must recover and pass.
#   netfault_test.sh reset_put|reset_amo
#       every data connection of hosta is aborted (ss -K: the kernel resets
#       them, as when a host reboots or a firewall cuts them). Measured with
#       libfabric 1.17: tcp;ofi_rxm reports the reset on messages (atomics
#       by active message: a CQ error entry, "Software caused connection
#       abort", reported after the 1 s grace; both hosts see such errors at
#       once, and at load ~28 mpirun took over 3 s to end the job after the
#       first report, so here one message per host is accepted), but not on
#       RMA writes and
#       reads in flight (no CQ error entry, no counter error): there the
#       SHMEM_FABRIC_TIMEOUT bound ends the job. The test takes either
#       message.
#   netfault_test.sh reset_barrier
#       the same reset under barriers (and a max-reduction every 32 rounds)
#       for RESET_BARRIER_S seconds: rxm reconnects, and a barrier flag (an
#       8-byte put) in flight on the reset connection can be lost without an
#       error. The waiting PE reads the sender's count after 0.5 s and takes
#       the flag from it (coll/barrier.c), so the job must not hang: it
#       recovers and passes (the usual outcome), or ends with the message
#       of the reset cases; never a PE at its watchdog, never mpirun's
#       timeout. Before the fix 2 of 3 runs hung.
#   netfault_test.sh stopped
#       PE 1 (hostb) is SIGSTOPped for LIMIT + 3 s while PE 0 (hosta)
#       fetch-adds on it: the job must end within LIMIT + 2 s of the stop.
# Every case: every process of the job gone when mpirun returns, no
# /dev/shm file of any of them, nothing left in the job's TMPDIR.
source "$(dirname "$0")/common.sh"
CASE=$1
LIMIT=${NETFAULT_LIMIT:-3}
[ "$CASE" = flap_long ] && LIMIT=10
# Allowed beyond LIMIT + 2 s for a machine shared with other builds (the
# docs give the times measured on a quiet one): 2 s, plus 1 s for each
# runnable task beyond the CPU count in the 1-minute load average (up to
# 8 s more). CI runs this beside the rest of the suite: at load 5 on 2
# cores the message came 6.1-7.1 s after the link went down (3.0-3.2 s on a
# quiet machine), every PE a further 1.1-2.2 s later (Open MPI's teardown:
# SIGTERM, then odls_base_sigkill_timeout = 1 s per daemon).
if [ -z "${NETFAULT_SLACK_MS:-}" ]; then
    SLACK_MS=$(awk -v n="$(nproc)" '{ x = $1 - n; if (x < 0) x = 0; if (x > 8) x = 8;
                                      printf "%d", 2000 + 1000 * x }' /proc/loadavg)
else
    SLACK_MS=$NETFAULT_SLACK_MS
fi
need mpirun openmpi-bin
need ip iproute2
need unshare util-linux
[ "$(id -u)" -eq 0 ] || skip "creating network namespaces needs root"

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_netfault.XXXXXX") || exit 1
touch "$W/started" # region files older than this are not the job's (pids recur)
NSA=oshn-$$-a
NSB=oshn-$$-b
NETNS_ETC_MADE=""
[ -d /etc/netns ] || NETNS_ETC_MADE=1
cleanup() {
    reap_jobs
    # NETFAULT_OUT=FILE keeps the job's output (for a look at a run that passed).
    [ -n "${NETFAULT_OUT:-}" ] && [ -f "$W/out" ] && cp "$W/out" "$NETFAULT_OUT"
    two_hosts_down "$NSA" "$NSB"
    rm -rf "/etc/netns/$NSA" "/etc/netns/$NSB"
    [ -n "$NETNS_ETC_MADE" ] && rmdir /etc/netns 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT

two_hosts_up "$NSA" "$NSB"
data_link_up "$NSA" "$NSB"
for ns in "$NSA" "$NSB"; do
    mkdir -p "/etc/netns/$ns"
    printf '127.0.0.1 localhost\n10.213.0.1 hosta\n10.213.0.2 hostb\n' >"/etc/netns/$ns/hosts"
done
cat >"$W/agent" <<AGENT
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case \$host in
    hostb) ns=$NSB ;;
    hosta) ns=$NSA ;;
    *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare -u sh -c "hostname \$host; exec \$*"
AGENT
chmod +x "$W/agent"
printf 'hosta slots=2\nhostb slots=2\n' >"$W/hosts"
mkdir "$W/tmp"

export FI_TCP_IFACE=osh1 TMPDIR=$W/tmp SHMEM_YIELD=on SHMEM_FABRIC_TIMEOUT=$LIMIT
unset FI_PROVIDER SHMEM_OFI_PROVIDER
MPIRUN=(ip netns exec "$NSA" unshare -u sh -c 'hostname hosta; exec "$@"' mpirun
        mpirun --allow-run-as-root --timeout 60 --hostfile "$W/hosts" --map-by node
        --mca plm_rsh_agent "$W/agent" --mca oob_tcp_if_include 10.213.0.0/24
        --mca btl self -x FI_TCP_IFACE -x TMPDIR -x SHMEM_YIELD -x SHMEM_FABRIC_TIMEOUT
        -x PE_WATCHDOG_S)
# SHMEM_LOG_LEVEL (e.g. warn,ofi=debug) reaches the PEs when set.
[ -n "${SHMEM_LOG_LEVEL:-}" ] && MPIRUN+=(-x SHMEM_LOG_LEVEL)
[ -n "${SHMEM_PROGRESS_THREAD:-}" ] && MPIRUN+=(-x SHMEM_PROGRESS_THREAD)
export PE_WATCHDOG_S=40

now_ms() { date +%s%3N; }
LIB_LINE='^\[PE [0-9]+ host[ab]:[0-9]+\] [a-z_]+\.c:[0-9]+: '

# start_job MODE [SECONDS]: the job in the background; JOB its pid.
start_job() {
    setsid "${MPIRUN[@]}" -np 4 "$NETFAULT" "$@" >"$W/out" 2>&1 &
    JOB=$!
    BG_PIDS+=("$JOB")
}

# job_pids: the PEs (and daemons) now alive in both hosts, added to $W/pids.
job_pids() {
    { ip netns pids "$NSA"; ip netns pids "$NSB"; } >>"$W/pids" 2>/dev/null
}

# wait_line REGEX SECONDS: until the job's output has it (else fail).
wait_line() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        grep -Eq -- "$1" "$W/out" && { job_pids; return 0; }
        kill -0 "$JOB" 2>/dev/null || break
        sleep 0.05
    done
    cat "$W/out" >&2
    fail "$CASE: no line matching '$1' within $2 s"
}

# pes_alive: some PE of the job still runs (zombies are dead).
pes_alive() {
    local p st
    for p in $(ip netns pids "$NSA") $(ip netns pids "$NSB"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = launchers_netfa ] || continue
        st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
        [ -n "$st" ] && [ "$st" != Z ] && return 0
    done
    return 1
}

# finish_job: waits for the job, collecting pids meanwhile; RC, END_MS.
finish_job() {
    MSG_MS="" PES_GONE_MS=""
    while kill -0 "$JOB" 2>/dev/null; do
        job_pids
        [ -z "$MSG_MS" ] && grep -Eq "$LIB_LINE" "$W/out" && MSG_MS=$(now_ms)
        [ -z "$PES_GONE_MS" ] && ! pes_alive && PES_GONE_MS=$(now_ms)
        sleep 0.05
    done
    END_MS=$(now_ms)
    : "${PES_GONE_MS:=$END_MS}"
    wait "$JOB"
    RC=$?
}

# expect_clean: no process of the job left, no /dev/shm file of theirs,
# nothing in TMPDIR.
expect_clean() {
    local p left=() f i
    # Everything in the two namespaces belongs to the job. A PE that is
    # still being torn down when mpirun returns (seen in CI: an empty
    # cmdline, the process exiting) gets 3 s to be gone.
    for i in $(seq 60); do
        left=()
        for p in $(ip netns pids "$NSA") $(ip netns pids "$NSB"); do
            left+=("$p:$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)")
        done
        [ ${#left[@]} -eq 0 ] && break
        sleep 0.05
    done
    for p in $(sort -u "$W/pids"); do
        for f in /dev/shm/"$p":*; do
            [ -e "$f" ] && [ "$f" -nt "$W/started" ] && fail "$CASE: $f of a job process left in /dev/shm"
        done
    done
    [ ${#left[@]} -eq 0 ] || fail "$CASE: processes of the job still alive: ${left[*]}"
    [ -z "$(ls -A "$W/tmp")" ] || fail "$CASE: left in TMPDIR: $(ls -A "$W/tmp")"
}

# expect_fabric_end FROM_MS WHAT: the job failed, with exactly one library
# message, naming the cause; every PE was gone within LIMIT + 2 s of FROM_MS,
# and mpirun (whose own teardown of its daemons follows) within 5 s more.
expect_fabric_end() {
    local took=$((PES_GONE_MS - $1)) mpirun_took=$((END_MS - $1)) lines
    [ "$RC" -ne 0 ] || { cat "$W/out" >&2; fail "$CASE: the job exited 0"; }
    grep -q "watchdog" "$W/out" && { cat "$W/out" >&2; fail "$CASE: a PE hung until its watchdog"; }
    grep -Eq "wrong data|expected .* got" "$W/out" && { cat "$W/out" >&2; fail "$CASE: wrong data"; }
    lines=$(grep -Ec "$LIB_LINE" "$W/out")
    if [ "${PER_HOST_OK:-}" ] && [ "$lines" -eq 2 ]; then
        # One per host, not per PE: see reset_* above.
        [ "$(grep -E "$LIB_LINE" "$W/out" | grep -c '^\[PE [0-9]* hosta')" -eq 1 ] ||
            { cat "$W/out" >&2; fail "$CASE: 2 library messages from one host"; }
        echo "note: one message per host (2): mpirun took longer than the 3 s hold to end the job"
    else
        [ "$lines" -eq 1 ] || { cat "$W/out" >&2; fail "$CASE: $lines library messages, expected 1"; }
    fi
    grep -Eq "$2" "$W/out" || { cat "$W/out" >&2; fail "$CASE: the message does not match '$2'"; }
    echo "fault (wall clock $1 ms) -> message $((${MSG_MS:-$END_MS} - $1)) ms, -> every PE gone $took ms, -> mpirun returned $mpirun_took ms (load $(cut -d' ' -f1 /proc/loadavg), slack $SLACK_MS ms)"
    [ "$took" -le $(((LIMIT + 2) * 1000 + SLACK_MS)) ] ||
        { cat "$W/out" >&2; fail "$CASE: the PEs ended $took ms after the fault (limit ${LIMIT} s + 2 s + ${SLACK_MS} ms)"; }
    [ "$mpirun_took" -le $(((LIMIT + 7) * 1000 + SLACK_MS - 2000)) ] ||
        { cat "$W/out" >&2; fail "$CASE: mpirun returned $mpirun_took ms after the fault"; }
    TOOK=$took
}

FABRIC_MSG="(to|from) PE [0-9]+ \(host host[ab]\) .*(made no progress for $LIMIT s|failed)"
case $CASE in
down_put | down_get | down_amo | down_barrier | down_coll)
    mode=${CASE#down_}
    start_job "$mode"
    wait_line "netfault: streaming" 40
    sleep 0.3
    down_ms=$(now_ms)
    ip -n "$NSA" link set osh1 down || fail "cannot take osh1 down"
    echo "link down: ip returned $(($(now_ms) - down_ms)) ms after the fault's time stamp"
    finish_job
    expect_fabric_end "$down_ms" "$FABRIC_MSG"
    expect_clean
    ok "$CASE: link down under $mode traffic: the job ended $TOOK ms later, status $RC, one message: $(grep -E "$FABRIC_MSG" "$W/out" | head -1)"
    ;;
flap | flap_long)
    start_job mixed 8
    wait_line "netfault: streaming" 40
    sleep 0.5
    down_ms=$(now_ms)
    ip -n "$NSA" link set osh1 down || fail "cannot take osh1 down"
    sleep 1
    ip -n "$NSA" link set osh1 up || fail "cannot bring osh1 up"
    up_ms=$(now_ms)
    finish_job
    [ "$CASE" = flap_long ] && expect_ok "flap_long: the job did not recover" "$W/out"
    if [ "$RC" -eq 0 ]; then
        expect_line "flap" "$W/out" "netfault: passed"
        grep -Eq "wrong data|expected .* got" "$W/out" && { cat "$W/out" >&2; fail "flap: wrong data"; }
        expect_clean
        ok "$CASE: link down for $((up_ms - down_ms)) ms: the job recovered and passed, data checked ($(grep -o '[0-9]* rounds of mixed in [0-9.]* s' "$W/out"))"
    else
        # One line per host (docs/RELIABILITY.md): the far host's PE holds
        # 3 s before it reports, and the launcher's own channel to that host
        # crosses the same dead link, so under load it may not end that PE
        # first (down_put at load 15 beside 2 CPU hogs: both hosts reported).
        PER_HOST_OK=1 expect_fabric_end "$down_ms" "$FABRIC_MSG"
        expect_clean
        ok "$CASE: link down for $((up_ms - down_ms)) ms: the job ended $TOOK ms after the link went down, one message per host at most"
    fi
    ;;
stopped)
    start_job amo
    wait_line "netfault: streaming" 40
    pe1=""
    for p in $(ip netns pids "$NSB"); do
        grep -qz '^PMIX_RANK=1$' "/proc/$p/environ" 2>/dev/null &&
            [ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$NETFAULT")" ] && pe1=$p
    done
    [ -n "$pe1" ] || fail "stopped: PE 1 not found in hostb"
    stop_ms=$(now_ms)
    kill -STOP "$pe1"
    ( sleep $((LIMIT + 3)); kill -CONT "$pe1" 2>/dev/null ) &
    finish_job
    expect_fabric_end "$stop_ms" "to PE 1 \(host hostb\) made no progress for $LIMIT s"
    expect_clean
    ok "stopped: PE 1 stopped: the job ended $TOOK ms later, status $RC, one message"
    ;;
reset_barrier)
    start_job barrier "${RESET_BARRIER_S:-6}"
    wait_line "netfault: streaming" 40
    sleep 0.3
    reset_ms=$(now_ms)
    ip netns exec "$NSA" ss -K -tn dst 10.213.1.2 >"$W/ss" ||
        skip "ss -K cannot abort sockets here (kernel without CONFIG_INET_DIAG_DESTROY)"
    [ "$(grep -c ESTAB "$W/ss")" -gt 0 ] || fail "$CASE: ss -K aborted no connection: $(cat "$W/ss")"
    finish_job
    grep -q "watchdog" "$W/out" && { cat "$W/out" >&2; fail "$CASE: a PE hung until its watchdog"; }
    lost=$(grep -c "never arrived though that PE issued it" "$W/out")
    if [ "$RC" -eq 0 ]; then
        expect_line "$CASE" "$W/out" "netfault: passed"
        expect_clean
        ok "$CASE: connections reset under barriers: the job recovered and passed $((END_MS - reset_ms)) ms after the reset, $lost lost flag(s) taken from the sender's count ($(grep -o '[0-9]* rounds of barrier in [0-9.]* s' "$W/out"))"
    else
        PER_HOST_OK=1 expect_fabric_end "$reset_ms" "$FABRIC_MSG"
        expect_clean
        ok "$CASE: connections reset under barriers: the job ended $TOOK ms later, status $RC, one message: $(grep -E "$LIB_LINE" "$W/out" | head -1); $lost lost flag(s) taken from the sender's count"
    fi
    ;;
reset_put | reset_amo)
    mode=${CASE#reset_}
    start_job "$mode"
    wait_line "netfault: streaming" 40
    sleep 0.3
    reset_ms=$(now_ms)
    ip netns exec "$NSA" ss -K -tn dst 10.213.1.2 >"$W/ss" ||
        skip "ss -K cannot abort sockets here (kernel without CONFIG_INET_DIAG_DESTROY)"
    [ "$(grep -c ESTAB "$W/ss")" -gt 0 ] || fail "$CASE: ss -K aborted no connection: $(cat "$W/ss")"
    finish_job
    PER_HOST_OK=1 expect_fabric_end "$reset_ms" "$FABRIC_MSG"
    expect_clean
    ok "$CASE: connections reset under $mode traffic: the job ended $TOOK ms later, status $RC, one message: $(grep -E "$LIB_LINE" "$W/out" | head -1)"
    ;;
*) fail "unknown case '$CASE'" ;;
esac
