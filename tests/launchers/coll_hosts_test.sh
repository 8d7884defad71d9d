#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Collectives on K real "hosts" (issue 29): K network namespaces on a bridge
# (k_hosts.sh), one slurmd each, and one Slurm job with uneven PEs per host
# dealt round robin over the hosts (srun --distribution=arbitrary), so every
# team shape of coll_ops (world, odd PEs, reversed, both 2-D splits)
# straddles hosts unevenly. Checks:
#   - pe_coll_coll_ops (every collective, every shape, the library's own
#     choice) passes, and SHMEM_STATS shows the node forms were taken for
#     every kind of collective;
#   - pe_coll_coll_sockets: after init, a barrier and a max-reduce no PE is
#     connected to more than 2 x ceil(log2 K) other PEs, nor holds more than
#     F + that many sockets (F = 16 here: the launcher's PMIx connection and
#     listener, two rxm endpoints' listeners and wait objects).
#   coll_hosts_test.sh k2|k4|k8
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/slurm_cluster.sh"
source "$(dirname "$0")/k_hosts.sh"
CASE=$1
need_slurm
need nsenter util-linux
[ "$(id -u)" -eq 0 ] || skip "network namespaces and a throw-away Slurm cluster need root"
: "${PE_COLL_OPS:?}" "${PE_COLL_SOCKETS:?}"

case $CASE in
k2) SIZES=(3 1) ;;
k4) SIZES=(3 1 2 2) ;;
k8) SIZES=(2 1 3 1 2 1 2 1) ;;
*) fail "unknown case '$CASE'" ;;
esac
K=${#SIZES[@]}
NP=0
for s in "${SIZES[@]}"; do NP=$((NP + s)); done

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_coll_hosts.XXXXXX") || exit 1
chmod 755 "$W"
PFX=oshc-$$
cleanup() {
    reap_jobs
    stop_daemons
    k_hosts_down "$PFX" "$K"
    rm -rf "$W"
}
trap cleanup EXIT

k_hosts_up "$PFX" "$K"
k_slurm_up "$PFX" "$K" 8
echo "test cluster up: $K hosts, PEs per host ${SIZES[*]} ($NP PEs)"
k_placement "$K" "${SIZES[@]}" >"$W/hostfile"
k_on_host_argv "$PFX" 0

export FI_TCP_IFACE=osh0 SLURM_HOSTFILE=$W/hostfile SHMEM_YIELD=on
unset FI_PROVIDER SHMEM_OFI_PROVIDER SHMEM_COLL_HOSTS
SRUN=(srun --mpi=pmix --time=3 --kill-on-bad-exit=1 -N "$K" -n "$NP" --distribution=arbitrary)

run_job "$W/out" "${ON_HOST[@]}" env SHMEM_STATS="$W/stats.%p" "${SRUN[@]}" "$PE_COLL_OPS"
expect_ok "coll_ops on $K hosts" "$W/out"
expect_line "coll_ops" "$W/out" "coll_ops: passed .*$NP PEs"
# PE 0 leads host0, which spans every shape; the leaders' stats must show
# every kind of collective taking a node form.
for kind in barrier bcast reduce fcollect collect alltoall; do
    grep -Eq "^stats PE 0 $kind: calls [0-9]+ node [1-9]" "$W/stats.0" ||
        { cat "$W/stats.0" >&2; fail "$kind: no node-aware call on PE 0 ($K hosts)"; }
done
ok "coll_ops with $NP PEs on $K hosts (${SIZES[*]} PEs), node forms of every collective"

run_job "$W/out" "${ON_HOST[@]}" "${SRUN[@]}" "$PE_COLL_SOCKETS" "$K" 16
expect_ok "coll_sockets on $K hosts" "$W/out"
expect_line "coll_sockets" "$W/out" "coll_sockets: passed .*$NP PEs"
grep "^coll_sockets:" "$W/out"
ok "connections and sockets after init + barrier + max-reduce on $K hosts within the bound"
