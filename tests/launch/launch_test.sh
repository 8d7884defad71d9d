#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Tests for oshrun. Usage: launch_test.sh OSHRUN PROBE CASE
# Each case starts oshrun with the PMIx probe (or a plain program) and checks
# the exit status, the single "oshrun:" message, how long the job took to end,
# that every PE it started is gone and that oshrun's temp dir was removed.
# Only processes this script started are ever killed (see cleanup).
set -u

OSHRUN=$1
PROBE=$2
CASE=$3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/launch_test.XXXXXX") || exit 1
PIDDIR=$WORK/pids
mkdir -p "$PIDDIR" "$WORK/tmp"
# oshrun makes its private dir under $TMPDIR; point it here to check removal.
export TMPDIR=$WORK/tmp
BG_PID=""
FAILED=0

# Is $1 still one of our probe processes (and not a reused pid)?
is_our_probe() {
    local cmd
    cmd=$( { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null) || return 1
    [[ $cmd == *"$PROBE"* ]]
}

# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    if [[ -n $BG_PID ]] && kill -0 "$BG_PID" 2>/dev/null; then
        kill -KILL "$BG_PID" 2>/dev/null
        wait "$BG_PID" 2>/dev/null
    fi
    for f in "$PIDDIR"/pid.*; do
        [[ -e $f ]] || continue
        local pid
        pid=$(cat "$f")
        if is_our_probe "$pid"; then
            kill -KILL "$pid" 2>/dev/null
        fi
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 99' INT TERM

fail() {
    echo "FAIL [$CASE]: $*" >&2
    FAILED=1
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run_oshrun ARGS... : runs oshrun in the foreground; sets RC, MS, OUT, ERR
# and T_END (when it returned, ms of the realtime clock).
run_oshrun() {
    local t0
    t0=$(now_ms)
    "$OSHRUN" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
    RC=$?
    T_END=$(now_ms)
    MS=$(( T_END - t0 ))
    OUT=$(cat "$WORK/out")
    ERR=$(cat "$WORK/err")
}

expect_rc() {
    [[ $RC == "$1" ]] || fail "exit status $RC, expected $1"
}

# The only "oshrun:" line on stderr must match the regex $1 (or be absent
# when $1 is empty).
expect_msg() {
    local lines n
    lines=$(grep '^oshrun:' "$WORK/err")
    n=$(grep -c '^oshrun:' "$WORK/err")
    if [[ -z $1 ]]; then
        [[ $n == 0 ]] || fail "unexpected message(s): $lines"
        return
    fi
    [[ $n == 1 ]] || fail "expected one oshrun message, got $n: $lines"
    [[ $lines =~ $1 ]] || fail "message '$lines' does not match '$1'"
}

# The pid named in the message must be the one PE $1 recorded.
expect_msg_pid() {
    local want got
    want=$(cat "$PIDDIR/pid.$1" 2>/dev/null)
    got=$(sed -n 's/^oshrun: PE [0-9]* (pid \([0-9]*\)).*/\1/p' "$WORK/err")
    [[ -n $want && $want == "$got" ]] || fail "message names pid '$got', PE $1 was '$want'"
}

expect_within() {
    echo "[$CASE] job ended after $MS ms (bound $1 ms)"
    (( MS <= $1 )) || fail "took $MS ms, more than $1 ms"
}

expect_pids() {
    local n
    n=$(ls "$PIDDIR" | wc -l)
    [[ $n == "$1" ]] || fail "$n PEs recorded their pid, expected $1"
}

expect_all_gone() {
    for f in "$PIDDIR"/pid.*; do
        [[ -e $f ]] || continue
        local pid
        pid=$(cat "$f")
        if is_our_probe "$pid"; then
            fail "PE pid $pid ($f) is still running"
        fi
    done
    local left
    left=$(ls -A "$TMPDIR")
    [[ -z $left ]] || fail "oshrun left files in TMPDIR: $left"
}

wait_for_pids() {
    local i
    for ((i = 0; i < 200; i++)); do
        (( $(ls "$PIDDIR" | wc -l) >= $1 )) && return 0
        sleep 0.05
    done
    fail "PEs did not start"
    return 1
}

# A PE fails; the whole job must end with one message naming it, within 5 s
# of the failure (the probe says when it failed: timing from oshrun's start
# would count the job's start, which took 5.9 s once at load 25).
failure_case() {    # mode rc regex
    local t_fail
    run_oshrun -n 4 "$PROBE" "$1" "$PIDDIR"
    echo "$ERR" >&2
    expect_rc "$2"
    expect_msg "$3"
    [[ -z $3 ]] || expect_msg_pid 1
    t_fail=$(sed -n 's/^pmix_probe: rank 1 fails at \([0-9]*\) ms realtime$/\1/p' "$WORK/out")
    if [[ -z $t_fail ]]; then
        fail "rank 1 did not say when it failed: $OUT"
    else
        echo "[$CASE] the job started and reached the failure in $(( t_fail - T_END + MS )) ms"
        MS=$(( T_END - t_fail ))
    fi
    expect_within 5000
    expect_pids 4
    expect_all_gone
}

# oshrun itself gets signal $1; it forwards it and exits 128+sig.
signal_case() {
    set -m    # own process group: a script's background jobs ignore SIGINT
    "$OSHRUN" -n 3 "$PROBE" idle "$PIDDIR" >"$WORK/out" 2>"$WORK/err" </dev/null &
    BG_PID=$!
    set +m
    wait_for_pids 3 || return
    local t0
    t0=$(now_ms)
    kill "-$1" "$BG_PID"
    wait "$BG_PID"
    RC=$?
    MS=$(( $(now_ms) - t0 ))
    BG_PID=""
    cat "$WORK/err" >&2
    expect_rc "$2"
    expect_msg "^oshrun: received signal [0-9]+ \(.*\); ending the job$"
    expect_within 5000
    expect_all_gone
}

case $CASE in
ok_n1 | ok_n4)
    n=${CASE#ok_n}
    run_oshrun -n "$n" "$PROBE" ok "$PIDDIR"
    echo "$OUT"; echo "$ERR" >&2
    expect_rc 0
    expect_msg ""
    [[ $OUT == *"pmix_probe: $n PEs ok"* ]] || fail "probe did not report success"
    expect_pids "$n"
    expect_all_gone
    ;;
ok_fence_nb)
    # Without PMIx's local-only shortcut the fence goes through our fence_nb.
    PMIX_MCA_pmix_server_fence_localonly_opt=0 OSHRUN_DEBUG=1 \
        run_oshrun -n 3 "$PROBE" ok "$PIDDIR"
    echo "$OUT"; echo "$ERR" >&2
    expect_rc 0
    [[ $OUT == *"pmix_probe: 3 PEs ok"* ]] || fail "probe did not report success"
    grep -q 'fence_nb' "$WORK/err" || fail "fence_nb upcall was not used"
    expect_all_gone
    ;;
final_exit5)
    # Exiting non-zero after shmem_finalize does not end the job early, but
    # the status is returned.
    run_oshrun -n 3 "$PROBE" final_exit5 "$PIDDIR"
    echo "$OUT"; echo "$ERR" >&2
    expect_rc 5
    expect_msg ""
    [[ $OUT == *"pmix_probe: 3 PEs ok"* ]] || fail "probe did not report success"
    expect_all_gone
    ;;
true)
    run_oshrun -n 2 /bin/true
    expect_rc 0
    expect_msg ""
    run_oshrun -n 2 hostname
    expect_rc 0
    [[ $(echo "$OUT" | wc -l) == 2 ]] || fail "expected 2 lines from hostname: $OUT"
    run_oshrun -n 2 false
    expect_rc 1
    expect_msg "^oshrun: PE [01] \(pid [0-9]+\) exited with status 1; ending the job$"
    expect_all_gone
    ;;
stale_tmpdir)
    # A SIGKILLed oshrun whose sweeper is killed too leaves its rendezvous
    # directory (the sweeper alone would remove it); the next oshrun
    # removes it (dead owner, same pid namespace) and keeps the others: a
    # live owner's, and one named from another pid namespace.
    ns=$(stat -L -c %i /proc/self/ns/pid)
    "$OSHRUN" -n 1 sleep 30 >/dev/null 2>&1 </dev/null &
    BG_PID=$!
    for _ in $(seq 100); do
        compgen -G "$TMPDIR/oshrun.$ns.$BG_PID.*" >/dev/null && break
        sleep 0.1
    done
    killed=$(compgen -G "$TMPDIR/oshrun.$ns.$BG_PID.*") || fail "oshrun made no $TMPDIR/oshrun.$ns.$BG_PID.* directory"
    kids=$(pgrep -P "$BG_PID")
    [[ -n $kids ]] && kill -STOP $kids 2>/dev/null # the sweeper must not act first
    kill -KILL "$BG_PID"; wait "$BG_PID" 2>/dev/null
    [[ -n $kids ]] && kill -KILL $kids 2>/dev/null
    BG_PID=""
    [[ -d ${killed:-/nonexistent} ]] || fail "the killed oshrun's directory is gone already"
    live=$TMPDIR/oshrun.$ns.$$.keep1 other=$TMPDIR/oshrun.$((ns + 1)).999999.keep2
    mkdir -p "$live/x" "$other/x"
    run_oshrun -n 1 /bin/true
    expect_rc 0
    [[ -e ${killed:-/nonexistent} ]] && fail "the killed oshrun's directory $killed was not removed"
    [[ -d $live/x ]] || fail "a live oshrun's directory was removed"
    [[ -d $other/x ]] || fail "another pid namespace's directory was removed"
    rm -rf "$live" "$other"
    ;;
signal)
    failure_case signal 137 \
        "^oshrun: PE 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); ending the job$"
    ;;
segv)
    failure_case segv 139 \
        "^oshrun: PE 1 \(pid [0-9]+\) was killed by signal 11 \(Segmentation fault\); ending the job$"
    ;;
exit3)
    failure_case exit3 3 \
        "^oshrun: PE 1 \(pid [0-9]+\) exited with status 3 before shmem_finalize; ending the job$"
    ;;
nofinal_exit0)
    failure_case nofinal_exit0 1 \
        "^oshrun: PE 1 \(pid [0-9]+\) exited with status 0 before shmem_finalize; ending the job$"
    ;;
abort)
    failure_case abort 7 "^oshrun: PE 1 \(pid [0-9]+\) aborted the job with status 7: bye$"
    ;;
abort_silent)
    failure_case abort_silent 5 ""
    ;;
timeout)
    run_oshrun -n 4 --timeout 2 "$PROBE" hang "$PIDDIR"
    echo "$ERR" >&2
    expect_rc 124
    expect_msg "^oshrun: job timed out after 2 s; ending the job$"
    (( MS >= 2000 )) || fail "timed out early, after $MS ms"
    expect_within 5000
    expect_pids 4
    expect_all_gone
    ;;
stubborn)
    # A PE that ignores SIGTERM gets SIGKILL after the grace period.
    run_oshrun -n 2 --timeout 0.5 sh -c 'trap "" TERM; echo $$ >"$0/pid.$PMIX_RANK"; sleep 60' \
        "$PIDDIR"
    expect_rc 124
    expect_within 3000
    for f in "$PIDDIR"/pid.*; do
        kill -0 "$(cat "$f")" 2>/dev/null && fail "stubborn PE $(cat "$f") survived"
    done
    ;;
sigint)
    signal_case INT 130
    ;;
sigterm)
    signal_case TERM 143
    ;;
env_stdin)
    echo hello | "$OSHRUN" -n 2 -x OSR_TEST_A=abc -x OSR_TEST_B -- \
        sh -c 'echo "$OSR_TEST_A ${OSR_TEST_B-unset} $(cat)" >"$0/in.$PMIX_RANK"' "$WORK" \
        2>"$WORK/err"
    RC=$?
    expect_rc 0
    [[ $(cat "$WORK/in.0") == "abc unset hello" ]] || fail "rank 0 saw '$(cat "$WORK/in.0")'"
    [[ $(cat "$WORK/in.1") == "abc unset " ]] || fail "rank 1 saw '$(cat "$WORK/in.1")'"
    OSR_TEST_B=xyz "$OSHRUN" -n 1 -x OSR_TEST_B sh -c 'echo "$OSR_TEST_B" >"$0/b"' "$WORK"
    [[ $(cat "$WORK/b") == xyz ]] || fail "-x VAR did not pass oshrun's value"
    expect_all_gone
    ;;
badargs)
    for args in "" "-n" "-n 0" "-n abc /bin/true" "-n 2" "--bogus /bin/true" \
        "-n 2 --timeout 0 /bin/true" "-n 2 -x 1BAD=x /bin/true" "-n 2 -x"; do
        # shellcheck disable=SC2086
        run_oshrun $args
        [[ $RC == 2 ]] || fail "'oshrun $args' exited $RC, expected 2"
        [[ $ERR == *"--help"* ]] || fail "'oshrun $args' printed no usage hint: $ERR"
    done
    run_oshrun --help
    expect_rc 0
    [[ $OUT == usage:* ]] || fail "--help printed '$OUT'"
    run_oshrun --version
    expect_rc 0
    [[ $OUT == *PMIx* ]] || fail "--version printed '$OUT'"
    run_oshrun -n 2 "$WORK/does-not-exist"
    expect_rc 127
    expect_msg "^oshrun: cannot run '.*': No such file or directory$"
    expect_all_gone
    ;;
compat)
    # Open MPI's launcher options in a stranger's job script.
    show='echo "$PMIX_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2) $PWD"'
    run_oshrun -N 3 bash -c "$show"
    expect_rc 0
    [[ $(sort <<<"$OUT" | cut -d' ' -f1 | tr '\n' ' ') == "0 1 2 " ]] || fail "-N 3 ran: $OUT"
    run_oshrun -ppn 2 -genv OSR_COMPAT "a b" -genvall bash -c 'echo "$PMIX_RANK $OSR_COMPAT"'
    expect_rc 0
    [[ $(sort <<<"$OUT" | tr '\n' ' ') == "0 a b 1 a b " ]] || fail "-ppn 2 -genv ran: $OUT"
    run_oshrun --map-by ppr:2:node bash -c "$show"
    expect_rc 0
    [[ $(wc -l <<<"$OUT") == 2 ]] || fail "--map-by ppr:2:node ran: $OUT"
    run_oshrun -np 2 --oversubscribe --allow-run-as-root --map-by core --bind-to core \
        --report-bindings --mca btl ^openib --wdir "$WORK" bash -c "$show"
    expect_rc 0
    [[ $(grep -c '^oshrun: PE [01] bound to core: CPU' "$WORK/err") == 2 ]] ||
        fail "--report-bindings printed: $ERR"
    grep -q "^oshrun: ignoring 1 --mca setting" "$WORK/err" || fail "--mca was not named: $ERR"
    while read -r rank cpus dir; do
        [[ $dir == "$WORK" ]] || fail "PE $rank ran in '$dir', not --wdir $WORK"
        want=$(sed -n "s/^oshrun: PE $rank bound to core: CPU //p" "$WORK/err")
        [[ $cpus == "$want" || $cpus == "${want/,/-}" ]] ||
            fail "PE $rank may run on CPUs $cpus, bound to $want"
    done <<<"$OUT"
    if (( $(nproc) >= 2 )); then
        [[ $(cut -d' ' -f2 <<<"$OUT" | sort -u | wc -l) == 2 ]] || fail "both PEs on one core: $OUT"
    fi
    # -c N (Open MPI's -np) and --tag-output: every line of every PE, tagged,
    # on the stream it was written to, none lost or split (a last line
    # without a newline gets one).
    run_oshrun -c 3 --tag-output bash -c \
        'seq 1 20000; echo "err $PMIX_RANK" >&2; printf "last $PMIX_RANK"'
    expect_rc 0
    for r in 0 1 2; do
        [[ $(grep -c "^\[1,$r\]<stdout>:[0-9]*$" <<<"$OUT") == 20000 ]] ||
            fail "--tag-output: PE $r's 20000 lines: $(grep -c "^\[1,$r\]" <<<"$OUT")"
        [[ $(grep "^\[1,$r\]<stdout>:[0-9]*$" <<<"$OUT" | cut -d: -f2 | awk '{ s += $1 } END { print s }') == 200010000 ]] ||
            fail "--tag-output: PE $r's lines are not 1..20000"
        grep -qx "\[1,$r\]<stdout>:last $r" <<<"$OUT" || fail "--tag-output: PE $r's last line"
        grep -qx "\[1,$r\]<stderr>:err $r" <<<"$ERR" || fail "--tag-output: PE $r's stderr: $ERR"
    done
    [[ $(wc -l <<<"$OUT") == 60003 ]] || fail "--tag-output: $(wc -l <<<"$OUT") lines, expected 60003"
    run_oshrun --launcher=mpirun --showme -c 2 --tag-output prog
    [[ $OUT == "mpirun --oversubscribe -np 2 --tag-output prog" ]] || fail "mpirun command: $OUT"
    for args in "-n 4 -N 2" "--bind-to numa -n 2" "--map-by foo -n 2" "-N 0" "-n 2 --mca btl" \
        "-n 2 -genv 1X y" "-n 2 -genv X"; do
        # shellcheck disable=SC2086
        run_oshrun $args /bin/true
        [[ $RC == 2 && $ERR == *"--help"* ]] || fail "'oshrun $args' exited $RC: $ERR"
    done
    run_oshrun -n 4 -N 2 /bin/true
    expect_msg "needs 2 hosts; oshrun starts PEs on this host only"
    run_oshrun -n 2 --wdir "$WORK/none" /bin/true
    expect_rc 1
    expect_msg "cannot change to the working directory"
    run_oshrun --launcher=mpirun --showme -n 4 -N 2 --bind-to core --mca btl self prog
    [[ $OUT == "mpirun --oversubscribe -np 4 -N 2 --bind-to core --mca btl self prog" ]] ||
        fail "mpirun command: $OUT"
    run_oshrun --launcher=mpirun --showme -n 4 -ppn 2 -genv OSR_COMPAT x prog
    [[ $OUT == "mpirun --oversubscribe -np 4 -N 2 -x OSR_COMPAT prog" ]] || fail "mpirun command: $OUT"
    # Host lists that name this host only: -n comes from their slots.
    printf '# a job script hostfile\nlocalhost slots=2 max_slots=4\n\n%s:1\n' "$(hostname)" >"$WORK/hosts"
    run_oshrun --hostfile "$WORK/hosts" bash -c 'echo $PMIX_RANK'
    expect_rc 0
    [[ $(sort <<<"$OUT" | tr '\n' ' ') == "0 1 2 " ]] || fail "--hostfile (3 slots) ran: $OUT"
    run_oshrun -H localhost:2,127.0.0.1 bash -c 'echo $PMIX_RANK'
    expect_rc 0
    [[ $(wc -l <<<"$OUT") == 3 ]] || fail "-H localhost:2,127.0.0.1 ran: $OUT"
    run_oshrun -np 2 --host "$(hostname)" -f "$WORK/hosts" bash -c 'echo $PMIX_RANK'
    expect_rc 0
    [[ $(wc -l <<<"$OUT") == 2 ]] || fail "-np 2 with a host list ran: $OUT"
    run_oshrun --host localhost,node-elsewhere-0 -n 2 /bin/true
    expect_rc 2
    expect_msg "names 'node-elsewhere-0', another host; oshrun starts PEs on this host only"
    printf 'localhost slots=two\n' >"$WORK/badhosts"
    run_oshrun --hostfile "$WORK/badhosts" -n 1 /bin/true
    expect_rc 2
    expect_msg "badhosts:1: invalid 'slots=two'"
    run_oshrun --machinefile "$WORK/nohosts" -n 1 /bin/true
    expect_rc 2
    expect_msg "cannot read the hostfile"
    run_oshrun --launcher=mpirun --showme -n 4 --hostfile "$WORK/hosts" prog
    [[ $OUT == "mpirun --oversubscribe -np 4 --hostfile $WORK/hosts prog" ]] || fail "mpirun command: $OUT"
    run_oshrun --launcher=srun --showme -n 4 --host hosta:2,hostb:2 prog
    [[ $OUT == "srun --mpi=pmix --ntasks=4 --nodelist=hosta,hostb prog" ]] || fail "srun command: $OUT"
    run_oshrun --launcher=srun --showme -n 4 --npernode 2 --bind-to hwthread --wdir /tmp prog
    [[ $OUT == "srun --mpi=pmix --ntasks=4 --ntasks-per-node=2 --cpu-bind=threads --chdir=/tmp prog" ]] ||
        fail "srun command: $OUT"
    expect_all_gone
    ;;
singleton)
    # Not a launcher test: record what PMIx_Init does with no server.
    t0=$(now_ms)
    out=$(env -u PMIX_NAMESPACE -u PMIX_RANK "$PROBE" singleton)
    MS=$(( $(now_ms) - t0 ))
    echo "$out"
    expect_within 5000
    ;;
*)
    fail "unknown case"
    ;;
esac

if (( FAILED )); then
    exit 1
fi
echo "PASS [$CASE]"
exit 0
