#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fabcheck's own tests (ctest -L fabcheck), over tcp;ofi_rxm on loopback.
#
#   run.sh rule <fc_rules> <scenario>
#       The wrong program of <scenario> under the profile that has its rule,
#       with FABCHECK_ABORT=0: it must exit 0 (its operation failed), every
#       violation logged must be that rule, at least one must be, and neither
#       process may leave its registry behind.
#   run.sh good <fc_rules> <profile|none> [scenario]
#       Every correct twin (or one) under <profile> with the default
#       FABCHECK_ABORT=1 and FABCHECK_AUTH_REQUIRED=1: exit 0, no violation.
#   run.sh eagain <fc_rules> <profile>
#       The correct twins with FABCHECK_EAGAIN=3: they still pass, and the
#       checker reports the -FI_EAGAIN answers it injected.
#   run.sh abort <fc_rules>
#       A wrong program with FABCHECK_ABORT at its default: the process dies
#       of SIGABRT right after the RULE line; its registry is gone.
#   run.sh registry <fc_rules>
#       A registry left by a SIGKILLed process goes at the next start.
#   run.sh getinfo <fc_getinfo> <profile>
#       fc_getinfo's checks, then with FI_PROVIDER naming the profile.
set -u
mode=$1
exe=$2
shift 2
tmp=$(mktemp -d /tmp/fabcheck-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export FI_TCP_IFACE=lo FABCHECK_PROVIDER=${FABCHECK_PROVIDER:-tcp;ofi_rxm}
unset FI_PROVIDER FABCHECK_EAGAIN FABCHECK_ABORT FABCHECK_AUTH_REQUIRED
RULES='MR_LOCAL|MR_ENDPOINT|VIRT_ADDR|PROV_KEY|MR_KEY|MR_RANGE|MR_ACCESS|MR_RAW|MR_ALLOCATED|CONTEXT|ASYNC_IOV|ATOMIC|LIMIT|AUTH_KEY|AV|EP_STATE'

fail() {
    echo "FAIL: $*"
    echo "---- output"; cat "$tmp/out" 2>/dev/null
    echo "---- fabcheck log"; cat "$tmp/log" 2>/dev/null
    exit 1
}

# No registry of the processes the last run named may remain.
registries_gone() {
    local p
    for p in $(awk '/^pids /{print $2, $3}' "$tmp/out"); do
        [ -e "/dev/shm/fabcheck-$p" ] && fail "/dev/shm/fabcheck-$p left behind by process $p"
    done
    return 0
}

case $mode in
rule)
    scen=$1
    line=$("$exe" list | awk -v s="$scen" '$1 == s')
    [ -n "$line" ] || fail "fc_rules has no scenario $scen"
    read -r _ rule profile env <<<"$line"
    [ "$rule" != "-" ] || fail "$scen has no rule"
    [ "$env" = "-" ] || [ "$env" = "msg" ] || export "${env?}"
    FABCHECK_PROFILE=$profile FABCHECK_ABORT=0 FABCHECK_LOG=$tmp/log \
        timeout 60 "$exe" "$scen" bad >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail "$scen under $profile: exit $rc (0: the operation failed)"
    grep -q "OP FAILED" "$tmp/out" || fail "$scen: the operation did not fail"
    grep -Eq "^fabcheck\[$profile [0-9]+\]: $rule: " "$tmp/log" ||
        fail "$scen under $profile: no $rule line"
    other=$(grep -E "^fabcheck\[[a-z]+ [0-9]+\]: ($RULES): " "$tmp/log" | grep -Ev "\]: $rule: ")
    [ -z "$other" ] || fail "$scen: other rules logged: $other"
    registries_gone
    grep -E "\]: $rule: " "$tmp/log" | head -1
    echo "ok: $scen under $profile: $rule caught, the operation failed"
    ;;
good)
    profile=$1
    scen=${2:-all}
    FABCHECK_PROFILE=$profile FABCHECK_AUTH_REQUIRED=1 FABCHECK_LOG=$tmp/log \
        timeout 600 "$exe" "$scen" good >"$tmp/out" 2>&1
    rc=$?
    grep -E "^== .*: (ok|FAIL)" "$tmp/out"
    [ $rc -eq 0 ] || fail "correct programs under $profile: exit $rc"
    if grep -Eq "^fabcheck\[[a-z]+ [0-9]+\]: ($RULES): " "$tmp/log" 2>/dev/null; then
        fail "a violation logged for a correct program under $profile"
    fi
    registries_gone
    echo "ok: every correct twin clean under $profile"
    ;;
eagain)
    profile=$1
    FABCHECK_PROFILE=$profile FABCHECK_EAGAIN=3 FABCHECK_SEED=7 FABCHECK_AUTH_REQUIRED=1 \
        FABCHECK_LOG=$tmp/log timeout 600 "$exe" all good >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail "correct programs with FABCHECK_EAGAIN=3 under $profile: exit $rc"
    n=$(grep -o 'FABCHECK_EAGAIN: [0-9]* posts' "$tmp/log" | awk '{s += $2} END {print s + 0}')
    [ "$n" -gt 0 ] || fail "no -FI_EAGAIN injected"
    registries_gone
    echo "ok: correct twins pass with $n posts answered -FI_EAGAIN by the checker"
    ;;
abort)
    FABCHECK_PROFILE=verbs FABCHECK_LOG=$tmp/log timeout 60 "$exe" mr_local bad >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 134 ] || fail "exit $rc, not SIGABRT (134)"
    grep -Eq "^fabcheck\[verbs [0-9]+\]: MR_LOCAL: " "$tmp/log" || fail "no MR_LOCAL line"
    grep -q "OP FAILED\|OP OK" "$tmp/out" && fail "the program went on after the violation"
    sleep 1 # the target notices the origin is gone and exits
    registries_gone
    echo "ok: the first violation aborts; no registry left"
    ;;
registry)
    FABCHECK_PROFILE=verbs "$exe" hold >"$tmp/hold" 2>&1 &
    holder=$!
    for _ in $(seq 200); do grep -q READY "$tmp/hold" && break; sleep 0.1; done
    grep -q READY "$tmp/hold" || { kill -9 $holder; fail "the holder did not start"; }
    [ -e "/dev/shm/fabcheck-$holder" ] || { kill -9 $holder; fail "no registry while it runs"; }
    kill -9 $holder
    wait $holder 2>/dev/null
    [ -e "/dev/shm/fabcheck-$holder" ] ||
        echo "note: the SIGKILLed process's registry is already gone (another test swept it)"
    FABCHECK_PROFILE=verbs FABCHECK_LOG=$tmp/log timeout 60 "$exe" key_size good >"$tmp/out" 2>&1 ||
        fail "the next start failed"
    [ -e "/dev/shm/fabcheck-$holder" ] && fail "/dev/shm/fabcheck-$holder survived the next start"
    registries_gone
    echo "ok: a killed process's registry goes at the next start; a clean exit leaves none"
    ;;
getinfo)
    profile=$1
    FABCHECK_PROFILE=$profile timeout 60 "$exe" >"$tmp/out" 2>&1 || fail "fc_getinfo under $profile"
    cat "$tmp/out"
    prov=$(awk '/^profile provider /{print $3}' "$tmp/out")
    FI_PROVIDER=$prov FABCHECK_PROFILE=$profile timeout 60 "$exe" only >"$tmp/out" 2>&1 ||
        fail "fc_getinfo with FI_PROVIDER=$prov"
    cat "$tmp/out"
    ;;
*)
    echo "usage: run.sh rule|good|eagain|abort|registry|getinfo ..." >&2
    exit 2
    ;;
esac
