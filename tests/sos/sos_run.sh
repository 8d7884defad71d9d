#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the programs sos_build.sh built (Sandia OpenSHMEM's test suite) under
# the installed oshrun, one job at a time:
#   sos_run.sh <work-dir> <default|tcp> <npes> <expected-failures file>
#   default: the default one-host path (no fabric: same-host direct access);
#   tcp:     SHMEM_DIRECT=0 over tcp;ofi_rxm on loopback.
# A program passes when its job exits 0 (the suite's own convention: `make
# check` passes a program on exit 0). The first job's version banner must
# name the path asked for, so a setting that is not applied fails the run.
# A failing program listed in the expected-failures file (with its reason)
# counts as expected; a listed program that passes fails the run, so the
# list stays true. Logs: <work-dir>/results/<path>.np<npes>/.
# SOS_TIMEOUT (default 120): seconds a job may take.
set -uo pipefail
work=$1
path=$2
np=$3
expected=$4
tmo=${SOS_TIMEOUT:-120}
prefix=$work/prefix
oshrun=$prefix/bin/oshrun
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
[ -s "$work/programs" ] || fail "$work/programs is missing: sos_build.sh did not run"
[ -x "$oshrun" ] || fail "no oshrun in $prefix"

# The job environment: only what the path sets (nothing inherited decides it).
for v in $(env | sed -n 's/^\(SHMEM_[A-Z0-9_]*\)=.*/\1/p') FI_PROVIDER; do unset "$v"; done
case $path in
default) banner="provider none" ;;
tcp)
    export SHMEM_DIRECT=0 SHMEM_OFI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo
    banner="provider tcp;ofi_rxm"
    ;;
*) fail "unknown path '$path' (default|tcp)" ;;
esac

res=$work/results/$path.np$np
rm -rf "$res"
mkdir -p "$res"

# Expected failures: "TREE/DIR/PROGRAM PATH NPES REASON..." (PATH and NPES
# may be *); '#' starts a comment.
expected_reason() { # TREE/DIR/PROG -> reason, or nothing
    awk -v t="$1" -v p="$path" -v n="$np" '
        /^[[:space:]]*(#|$)/ { next }
        $1 == t && ($2 == p || $2 == "*") && ($3 == n || $3 == "*") {
            $1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit }' "$expected"
}

hello=$work/default/test/unit/hello
out=$(SHMEM_VERSION=1 timeout -k 5 "$tmo" "$oshrun" -n "$np" "$hello" </dev/null 2>&1) ||
    fail "hello on $path at $np PEs failed: $out"
grep -qF "$banner" <<<"$out" || fail "the $path path was asked for, but the job says: $(head -1 <<<"$out")"

npass=0
nxfail=0
failed=()
xpassed=()
start=$(date +%s)
while read -r tree dir prog; do
    name=$tree/$dir/$prog
    log=$res/${tree}_${dir}_$prog.log
    t0=$(date +%s%N)
    # oshrun's own timeout ends the job (and names it); timeout(1) is the backstop.
    (cd "$work/$tree/test/$dir" &&
        timeout -k 10 $((tmo + 15)) "$oshrun" -n "$np" --timeout "$tmo" "./$prog") \
        </dev/null >"$log" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    why=$(expected_reason "$name")
    if [ $rc -eq 0 ] && [ -z "$why" ]; then
        npass=$((npass + 1))
        printf 'ok      %-60s %6d ms\n' "$name" "$ms"
    elif [ $rc -eq 0 ]; then
        xpassed+=("$name")
        printf 'XPASS   %-60s %6d ms (listed as failing: %s)\n' "$name" "$ms" "$why"
    elif [ -n "$why" ]; then
        nxfail=$((nxfail + 1))
        printf 'xfail   %-60s %6d ms exit %d (%s)\n' "$name" "$ms" "$rc" "$why"
    else
        failed+=("$name")
        printf 'FAIL    %-60s %6d ms exit %d; log %s, its end:\n' "$name" "$ms" "$rc" "$log"
        tail -30 "$log" | sed 's/^/    | /'
    fi
done <"$work/programs"

echo "sos $path np$np: $npass passed, ${#failed[@]} failed, $nxfail expected failures," \
     "${#xpassed[@]} unexpected passes in $(($(date +%s) - start)) s" \
     "(load $(cut -d' ' -f1-3 /proc/loadavg))"
[ ${#failed[@]} -eq 0 ] || echo "failed: ${failed[*]}"
[ ${#xpassed[@]} -eq 0 ] || echo "passed but listed in $expected: ${xpassed[*]}"
[ ${#failed[@]} -eq 0 ] && [ ${#xpassed[@]} -eq 0 ]
