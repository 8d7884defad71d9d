# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the tests that time how soon a job's PEs end after a fault
# (tests/reliability/launcher_fail.sh, tests/launchers/fatal_bound_test.sh).
# Uses the sourcing script's SLACK_MS and fail; BOUND_GRACE_MS (default
# 5000): how long past bound + slack to keep watching before reporting the
# PEs still running; BOUND_FAIL (default fail): the function a miss calls.

now_ms() { date +%s%3N; }

# alive PIDS...: those still running (a zombie has ended).
alive() {
    local p st out=()
    for p in "$@"; do
        st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
        [ -n "$st" ] && [ "$st" != Z ] && out+=("$p")
    done
    echo "${out[@]}"
}

# wait_gone FROM_MS BOUND_MS PIDS...: every one ended within BOUND_MS of
# FROM_MS (+ SLACK_MS); sets TOOK (ms from FROM_MS).
wait_gone() {
    local from=$1 bound=$2 left
    shift 2
    while :; do
        left=$(alive "$@")
        [ -z "$left" ] && break
        [ $(($(now_ms) - from)) -gt $((bound + SLACK_MS + ${BOUND_GRACE_MS:-5000})) ] && break
        sleep 0.05
    done
    TOOK=$(($(now_ms) - from))
    [ -z "$left" ] || ${BOUND_FAIL:-fail} "PEs $left still ran $TOOK ms after the fault"
    [ "$TOOK" -le $((bound + SLACK_MS)) ] ||
        ${BOUND_FAIL:-fail} "the PEs ended $TOOK ms after the fault (bound $bound ms + slack $SLACK_MS ms)"
}
