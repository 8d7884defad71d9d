#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PE programs under Slurm: srun --mpi=pmix (Slurm's PMIx plugin is the PMIx
# server). The test starts its own throw-away cluster: munged, slurmctld and
# one slurmd, as root, with config, state, sockets and logs in a temp dir,
# inside a network namespace of its own (loopback plus a veth pair that
# exists only there: Slurm refuses to bind when no non-loopback address is
# configured). Everything it started is stopped by PID on exit.
#   slurm_test.sh CASE
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_cluster.sh"
CASE=$1
need_slurm
[ "$(id -u)" -eq 0 ] || skip "a throw-away Slurm cluster needs root (SlurmUser=root)"
in_loopback_netns "$@"

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_slurm.XXXXXX") || exit 1
chmod 755 "$W"
stop_cluster() {
    reap_jobs
    stop_daemons
    rm -rf "$W"
}
trap stop_cluster EXIT

# Slurm binds with AI_ADDRCONFIG, which fails with only loopback configured:
# give the namespace a veth pair whose address exists only in here.
ip link add osh0 type veth peer name osh1 || fail "cannot create a veth pair in the test namespace"
ip addr add 10.213.254.1/24 dev osh0 && ip link set osh0 up && ip link set osh1 up ||
    fail "cannot configure the test's veth pair"

slurm_cluster_up || fail "the test cluster did not come up"

SRUN=(srun --mpi=pmix --time=2 --kill-on-bad-exit=0)
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo

case $CASE in
probe)
    for np in 2 4; do
        run_job "$W/out" env SHMEM_VERSION=1 "${SRUN[@]}" -n "$np" "$PROBE" "$np" 1
        expect_ok "probe under srun -n $np" "$W/out"
        expect_line "probe" "$W/out" "launcher_probe: passed .*$np PEs"
        expect_line "no fabric on one host (SHMEM_FABRIC=auto)" "$W/out" "$np PEs, provider none"
        ok "srun --mpi=pmix -n $np: rank/size, SHMEM_TEAM_SHARED, direct path, RMA/AMO"
    done
    run_job "$W/out" "${SRUN[@]}" -n 4 "$RING"
    expect_ok "hello_ring" "$W/out"
    expect_line "hello_ring" "$W/out" "^ring OK: 4 of 4 PEs received the right data"
    ok "examples/hello_ring under srun -n 4"
    ;;
pe_tests)
    for t in "$PE_RMA_SIZES" "$PE_BARRIER" "$PE_SETUP_QUERY 2"; do
        # shellcheck disable=SC2086  # $t is a program and its argument
        run_job "$W/out" env SHMEM_OFI_PROVIDER='tcp;ofi_rxm' SHMEM_DIRECT=0 \
            "${SRUN[@]}" -n 2 $t
        expect_ok "$(basename "${t%% *}") -n 2 on tcp" "$W/out"
        expect_line "$(basename "${t%% *}")" "$W/out" "passed .*2 PEs"
        ok "$(basename "${t%% *}") under srun -n 2 on tcp;ofi_rxm"
    done
    ;;
oshrun_launcher)
    cmd=$("$OSHRUN" --launcher=srun -n 3 --timeout 90 -x SHMEM_INFO=1 --showme prog a 2>&1) ||
        fail "--showme: $cmd"
    want="srun --mpi=pmix --ntasks=3 --time=1:30 prog a"
    [ "$cmd" = "$want" ] || fail "--showme printed '$cmd', expected '$want'"
    ok "oshrun --launcher=srun --showme: $cmd"
    run_job "$W/out" "$OSHRUN" --launcher=srun -n 2 --timeout 60 -x SHMEM_VERSION=1 "$PROBE" 2 1
    expect_ok "oshrun --launcher=srun" "$W/out"
    expect_line "probe" "$W/out" "launcher_probe: passed .*2 PEs"
    expect_line "-x SHMEM_VERSION=1 reached the PEs" "$W/out" "2 PEs, provider none"
    ok "oshrun --launcher=srun -n 2 ran the probe"
    ;;
pe_killed)
    # --kill-on-bad-exit=0: Slurm itself leaves the other tasks running, so
    # only the library (PMIx event) or its own checks can end the job.
    start=$(date +%s)
    run_job "$W/out" "${SRUN[@]}" -n 3 "$PE_DIES"
    expect_death_ends_job "$W/out" "$start" 40
    ok "a killed PE ended the srun job in ${TOOK}s, status $RC"
    cat "$W/out"
    ;;
*) fail "unknown case '$CASE'" ;;
esac
