#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PEs whose process ids have different numbers of digits. libfabric shm's
# endpoint names carry the pid, so PEs 999999 and 1000000 publish names of
# different lengths (a fresh CI machine once gave PEs 999 and 1000, and the
# address exchange refused the job). The job runs in a pid namespace of its
# own (unshare -p) whose next pid is set just below 1000000, far from the
# host's pids; the test checks that the PEs' pids do straddle the boundary
# and that the probe passes (RMA, AMO and barrier between every pair).
#   piddigits_test.sh CASE   (CASE: probe)
source "$(dirname "$0")/common.sh"
need unshare util-linux
[ "$(id -u)" -eq 0 ] || skip "a pid namespace with a chosen next pid needs root"

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_piddigits.XXXXXX") || exit 1
mkdir "$W/pids"
cleanup() {
    reap_jobs
    rm -rf "$W"
}
trap cleanup EXIT

# Inside: bash is pid 1 and execs oshrun; oshrun's threads take a pid or
# two, then the PEs come (each PE writes its pid, then execs the probe).
run_job "$W/out" unshare -p -f --mount-proc bash -c '
    echo 999995 >/proc/sys/kernel/ns_last_pid || exit 90
    exec "$0" -n 4 sh -c "echo \$\$ >$1/\$PMIX_RANK; exec $2 4 1"' "$OSHRUN" "$W/pids" "$PROBE"
cat "$W/out"
[ "$RC" -ne 90 ] || skip "cannot choose the next pid in a new pid namespace here"
[ "$RC" -eq 0 ] || fail "the job failed (status $RC)"
short=0 long=0
for f in "$W"/pids/*; do
    pid=$(cat "$f")
    if [ "${#pid}" -le 6 ]; then short=$((short + 1)); else long=$((long + 1)); fi
done
[ $short -gt 0 ] && [ $long -gt 0 ] ||
    fail "the PEs' pids did not straddle 999999/1000000: $(cat "$W"/pids/* | tr '\n' ' ')"
ok "4 PEs with pids $(cat "$W"/pids/* | sort -n | tr '\n' ' ')passed"
