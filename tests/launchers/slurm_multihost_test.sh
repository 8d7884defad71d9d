#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# One Slurm job on two hosts: two network namespaces joined by a veth pair
# (10.213.0.1/.2, only inside them) stand for hosts "hosta" and "hostb",
# each with its own slurmd (own hostname through unshare -u); slurmctld
# runs in hosta, munged is shared through its socket file. srun --mpi=pmix
# starts PEs on both; they bind tcp;ofi_rxm to osh0 (FI_TCP_IFACE). The
# trap stops every daemon by PID and removes the namespaces.
#   slurm_multihost_test.sh CASE
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_cluster.sh"
CASE=$1
need_slurm
need nsenter util-linux
[ "$(id -u)" -eq 0 ] || skip "network namespaces and a throw-away Slurm cluster need root"

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_slurm_mh.XXXXXX") || exit 1
chmod 755 "$W"
NSA=oshs-$$-a
NSB=oshs-$$-b
cleanup() {
    reap_jobs
    stop_daemons
    two_hosts_down "$NSA" "$NSB"
    rm -rf "$W"
}
trap cleanup EXIT

two_hosts_up "$NSA" "$NSB"

# In host X: nsenter keeps /sys (slurmd needs the real cgroup mounts), only
# the network namespace changes; unshare -u gives the host its own name.
on_host() {
    local h=$1
    shift
    local ns=$NSA
    [ "$h" = hostb ] && ns=$NSB
    nsenter --net="/run/netns/$ns" unshare -u sh -c 'hostname "$0"; exec "$@"' "$h" "$@"
}
# The same as a command line, for run_job.
ON_HOSTA=(nsenter --net="/run/netns/$NSA" unshare -u sh -c 'hostname "$0"; exec "$@"' hosta)

start_munged
write_slurm_conf ofishmem-mh "hosta(10.213.0.1)" hosta:10.213.0.1:4 hostb:10.213.0.2:4
on_host hosta slurmctld -D -i -f "$SLURM_CONF" >>"$W/slurmctld.log" 2>&1 &
DAEMONS+=($!)
on_host hosta slurmd -D -N hosta -f "$SLURM_CONF" >>"$W/slurmd-hosta.log" 2>&1 &
DAEMONS+=($!)
on_host hostb slurmd -D -N hostb -f "$SLURM_CONF" >>"$W/slurmd-hostb.log" 2>&1 &
DAEMONS+=($!)
state=""
for _ in $(seq 1 100); do
    state=$(on_host hosta sinfo -h -o %T 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$state" = "idle " ] && break
    sleep 0.2
done
[ "$state" = "idle " ] || { show_logs; fail "the two-host test cluster did not come up ('$state')"; }
echo "test cluster up: slurmctld + slurmd on hosta, slurmd on hostb (pids ${DAEMONS[*]})"

export FI_TCP_IFACE=osh0
unset FI_PROVIDER SHMEM_OFI_PROVIDER
SRUN=(srun --mpi=pmix --time=2 -N 2 --ntasks-per-node=2 --distribution=cyclic)

case $CASE in
probe)
    run_job "$W/out" "${ON_HOSTA[@]}" env SHMEM_VERSION=1 SHMEM_LOG_LEVEL=rt=debug \
        "${SRUN[@]}" -n 4 "$PROBE" 4 2
    expect_ok "probe on 4 PEs over 2 Slurm nodes" "$W/out"
    expect_line "probe" "$W/out" "launcher_probe: passed .*4 PEs"
    expect_line "default provider across hosts" "$W/out" "4 PEs, provider tcp;ofi_rxm"
    expect_two_host_split "$W/out"
    ok "srun -N 2 -n 4: SHMEM_TEAM_SHARED per host, tcp;ofi_rxm, direct path only within a host"
    run_job "$W/out" "${ON_HOSTA[@]}" "${SRUN[@]}" -n 4 "$RING"
    expect_ok "hello_ring on 2 Slurm nodes" "$W/out"
    expect_line "hello_ring" "$W/out" "^ring OK: 4 of 4 PEs received the right data"
    ok "examples/hello_ring with 4 PEs on 2 Slurm nodes"
    ;;
*) fail "unknown case '$CASE'" ;;
esac
