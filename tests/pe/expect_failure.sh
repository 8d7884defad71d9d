#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# expect_failure.sh MAX_SECONDS REGEX -- COMMAND [ARGS...]
#
# Passes when COMMAND exits non-zero, prints a line matching REGEX (grep -E)
# on stderr, and ends within MAX_SECONDS. Used for jobs that must fail, e.g.
# a PE killed while the others wait in a barrier. If the job prints
# "death_epoch_ms=N" (when the fault was injected, CLOCK_REALTIME), the time
# from then to the end must also stay within DEATH_MAX_MS (default 2000).
set -u
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
    echo "usage: $0 MAX_SECONDS REGEX -- COMMAND [ARGS...]" >&2
    exit 2
fi
max_s=$1
regex=$2
shift 3

errfile=$(mktemp "${TMPDIR:-/tmp}/pe_expect_failure.XXXXXX") || exit 2
trap 'rm -f "$errfile"' EXIT

start_ns=$(date +%s%N)
# stderr is kept for the check and shown afterwards in the test log.
"$@" 2>"$errfile"
status=$?
end_ns=$(date +%s%N)
cat "$errfile" >&2
elapsed_ms=$(( (end_ns - start_ns) / 1000000 ))

# oshrun removes the libfabric shm regions (/dev/shm/<pid>:*) of PEs that died.
for pid in $(grep -oE 'PE [0-9]+ \(pid [0-9]+\) was killed' "$errfile" | grep -oE '[0-9]+\)' |
             tr -d ')'); do
    if ls /dev/shm/"$pid":* >/dev/null 2>&1; then
        echo "expect_failure: FAIL: /dev/shm/$pid:* left behind by the dead PE" >&2
        rm -f /dev/shm/"$pid":*
        leftover=1
    fi
done

fail=${leftover:-0}
death_ms=$(grep -oE 'death_epoch_ms=[0-9]+' "$errfile" | head -1 | cut -d= -f2)
if [ -n "$death_ms" ]; then
    to_end_ms=$(( end_ns / 1000000 - death_ms ))
    echo "expect_failure: job ended ${to_end_ms} ms after the fault"
    if [ "$to_end_ms" -gt "${DEATH_MAX_MS:-2000}" ]; then
        echo "expect_failure: FAIL: ${to_end_ms} ms from the fault to the end of the job" >&2
        fail=1
    fi
fi
if [ "$status" -eq 0 ]; then
    echo "expect_failure: FAIL: '$1' exited 0, expected a failing job" >&2
    fail=1
fi
if ! grep -Eq -- "$regex" "$errfile"; then
    echo "expect_failure: FAIL: no stderr line matches /$regex/" >&2
    fail=1
fi
if [ "$elapsed_ms" -ge $(( max_s * 1000 )) ]; then
    echo "expect_failure: FAIL: took ${elapsed_ms} ms, limit ${max_s} s" >&2
    fail=1
fi
if [ "$fail" -eq 0 ]; then
    echo "expect_failure: ok: exit status $status, message found, ${elapsed_ms} ms"
fi
exit "$fail"
