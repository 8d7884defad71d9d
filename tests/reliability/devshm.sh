#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devshm.sh CASE OSHRUN PROG [ARGS...]
#
#   small           in a private mount namespace (unshare -m) with a 64 MiB
#                   tmpfs on /dev/shm, run `oshrun -n 2 PROG ARGS` (big_heap
#                   100: 100 MiB of heap written per PE). It must run to the
#                   end, or stop at shmem_init with one message that says
#                   what is short; it must never die of SIGBUS. Needs root
#                   (skipped, status 77, otherwise). The mount goes with the
#                   namespace.
#   oshrun_killed   start `oshrun -n 3 PROG ARGS` (fault hang: PEs that stay
#                   in a barrier), wait for the PEs' libfabric shm region
#                   files to appear, SIGKILL oshrun, and check that within a
#                   few seconds every PE is gone and no /dev/shm file named
#                   after a PE's pid is left (oshrun's sweeper removes them).
set -u
case_=$1
oshrun=$2
shift 2

fail() { echo "devshm.sh $case_: FAIL: $*" >&2; exit 1; }

case "$case_" in
small)
    if [ "$(id -u)" -ne 0 ]; then
        echo "devshm.sh small: SKIP: needs root for a private mount namespace"
        exit 77
    fi
    if ! unshare -m true 2>/dev/null; then
        echo "devshm.sh small: SKIP: unshare -m is refused here"
        exit 77
    fi
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    # The job's stderr and status, from inside the namespace.
    unshare -m --propagation private bash -c '
        mount -t tmpfs -o size=64m tmpfs /dev/shm || exit 90
        df -h /dev/shm | tail -1
        "$@"
    ' devshm "$oshrun" -n 2 --timeout 120 "$@" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -ne 90 ] || { echo "devshm.sh small: SKIP: cannot mount a tmpfs"; exit 77; }
    if grep -Eq 'signal 7|Bus error|SIGBUS' "$out"; then
        fail "a PE died of SIGBUS with a 64 MiB /dev/shm"
    fi
    if [ "$rc" -eq 0 ]; then
        grep -q 'big_heap: passed' "$out" || fail "exit 0 but no 'passed' line"
        echo "devshm.sh small: ok: the job ran with a 64 MiB /dev/shm"
        exit 0
    fi
    # Stopping is allowed only at shmem_init, with one library message.
    n=$(grep -cE '^\[PE [0-9]+ [^]]+\] [a-z_]+\.c:[0-9]+: ' "$out")
    [ "$n" -ge 1 ] || fail "exit status $rc without a message from the library"
    echo "devshm.sh small: ok: the job stopped at shmem_init with a message (status $rc)"
    exit 0
    ;;
oshrun_killed)
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    touch "$work/started"
    "$oshrun" -n 3 --timeout 60 "$@" >"$work/out" 2>&1 &
    osh=$!
    pes=""
    for _ in $(seq 1 200); do
        # oshrun's children running PROG (not its sweeper).
        pes=$(pgrep -P "$osh" -f "^$1" | tr '\n' ' ')
        n_files=0
        for p in $pes; do
            for f in /dev/shm/"$p":*; do
                [ -e "$f" ] && n_files=$((n_files + 1))
            done
        done
        # Every PE has its regions once all 3 are in the barrier.
        [ "$(echo $pes | wc -w)" -ge 3 ] && [ "$n_files" -ge 3 ] && break
        sleep 0.1
    done
    [ "$(echo $pes | wc -w)" -ge 3 ] || { kill -KILL "$osh"; fail "PEs did not start"; }
    echo "PEs $pes; their /dev/shm files: $(for p in $pes; do ls /dev/shm | grep "^$p:"; done | tr '\n' ' ')"
    [ "$n_files" -ge 1 ] || echo "devshm.sh: note: no region file seen (not the shm provider?)"
    kill -KILL "$osh"
    wait "$osh" 2>/dev/null
    left=""
    for _ in $(seq 1 50); do
        alive=""
        for p in $pes; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        left=""
        for p in $pes; do
            for f in /dev/shm/"$p":*; do
                [ -e "$f" ] && [ "$f" -nt "$work/started" ] && left="$left $f"
            done
        done
        [ -z "$alive" ] && [ -z "$left" ] && break
        sleep 0.1
    done
    [ -z "$alive" ] || fail "PEs still alive after oshrun was killed:$alive"
    if [ -n "$left" ]; then
        rm -f $left
        fail "left in /dev/shm after oshrun was SIGKILLed:$left"
    fi
    echo "devshm.sh oshrun_killed: ok: PEs gone, nothing of theirs left in /dev/shm"
    exit 0
    ;;
*)
    fail "unknown case"
    ;;
esac
