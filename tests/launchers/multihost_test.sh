#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# One job on two hosts. Two network namespaces, joined by a veth pair, stand
# for two hosts ("hosta", "hostb"; addresses 10.213.0.1/.2 exist only inside
# them, both ends are named osh0). Open MPI's mpirun runs in hosta with a
# hostfile naming both; its rsh agent (written below) starts the daemon of
# hostb with `ip netns exec`, under its own hostname (unshare -u). The PEs
# of each host then sit in their host's namespace, and each binds
# tcp;ofi_rxm to osh0 (FI_TCP_IFACE). Names are unique per run; the trap
# removes the namespaces, /etc/netns/<ns> and every process it started.
#   multihost_test.sh CASE
source "$(dirname "$0")/common.sh"
CASE=$1
need mpirun openmpi-bin
need ip iproute2
need unshare util-linux
[ "$(id -u)" -eq 0 ] || skip "creating network namespaces needs root"

W=$(mktemp -d "${TMPDIR:-/tmp}/launchers_multihost.XXXXXX") || exit 1
NSA=osh-$$-a
NSB=osh-$$-b
NETNS_ETC_MADE=""
[ -d /etc/netns ] || NETNS_ETC_MADE=1
cleanup() {
    reap_jobs
    two_hosts_down "$NSA" "$NSB"
    rm -rf "/etc/netns/$NSA" "/etc/netns/$NSB"
    [ -n "$NETNS_ETC_MADE" ] && rmdir /etc/netns 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT

two_hosts_up "$NSA" "$NSB"
for ns in "$NSA" "$NSB"; do
    # `ip netns exec` shows /etc/netns/<ns>/hosts as /etc/hosts in there.
    mkdir -p "/etc/netns/$ns"
    printf '127.0.0.1 localhost\n10.213.0.1 hosta\n10.213.0.2 hostb\n' >"/etc/netns/$ns/hosts"
done

# Open MPI's rsh agent: "agent [options] HOST COMMAND...". Start the daemon
# in HOST's namespace, under HOST's name.
cat >"$W/agent" <<AGENT
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case \$host in
    hostb) ns=$NSB ;;
    hosta) ns=$NSA ;;
    *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare -u sh -c "hostname \$host; exec \$*"
AGENT
chmod +x "$W/agent"
printf 'hosta slots=2\nhostb slots=2\n' >"$W/hosts"

export FI_TCP_IFACE=osh0 TMPDIR=$W
unset FI_PROVIDER SHMEM_OFI_PROVIDER
# Both "hosts" share this machine's cores: each PE sees 2 PEs on its host and
# would spin rather than yield (SHMEM_YIELD=auto), starving the others.
export SHMEM_YIELD=on
# mpirun in hosta, named hosta; ranks alternate between the hosts.
MPIRUN=(ip netns exec "$NSA" unshare -u sh -c 'hostname hosta; exec "$@"' mpirun
        mpirun --allow-run-as-root --timeout 90 --hostfile "$W/hosts" --map-by node
        --mca plm_rsh_agent "$W/agent" --mca oob_tcp_if_include 10.213.0.0/24
        --mca btl self -x FI_TCP_IFACE -x TMPDIR -x SHMEM_YIELD)

case $CASE in
probe)
    for np in 2 4; do
        run_job "$W/out" "${MPIRUN[@]}" -x SHMEM_VERSION=1 -x SHMEM_LOG_LEVEL=rt=debug \
            -np "$np" "$PROBE" "$np" 2
        expect_ok "probe on $np PEs over 2 hosts" "$W/out"
        expect_line "probe" "$W/out" "launcher_probe: passed .*$np PEs"
        expect_line "default provider across hosts" "$W/out" "$np PEs, provider tcp;ofi_rxm"
        if [ "$np" = 4 ]; then
            expect_two_host_split "$W/out"
        else
            expect_line "host split" "$W/out" "^host 1: PEs 1$"
        fi
        ok "$np PEs on hosta+hostb: SHMEM_TEAM_SHARED per host, tcp;ofi_rxm, direct path only within a host"
    done
    ;;
pe_tests)
    # fabric_mode: two hosts need the fabric (SHMEM_FABRIC=auto): libfabric loaded.
    for t in "4 $PE_RMA_TARGETS" "4 $PE_SETUP_QUERY 4" "2 $PE_BARRIER" "4 $PE_FABRIC_MODE loaded"; do
        np=${t%% *}
        t=${t#* }
        # shellcheck disable=SC2086  # $t is a program and its argument
        run_job "$W/out" "${MPIRUN[@]}" -np "$np" $t
        expect_ok "$(basename "${t%% *}") on 2 hosts" "$W/out"
        expect_line "$(basename "${t%% *}")" "$W/out" "passed .*$np PEs"
        ok "$(basename "${t%% *}") with $np PEs on 2 hosts"
    done
    ;;
barrier_np4)
    # 1000 barriers with puts, 2 PEs per host. It once hung, blamed on
    # rxm's lazy connections colliding (both ends of a pair connecting at
    # once); pairs connect on first contact again, so it guards that.
    run_job "$W/out" "${MPIRUN[@]}" -np 4 "$PE_BARRIER"
    expect_ok "pe_barrier_sync with 4 PEs on 2 hosts" "$W/out"
    expect_line "pe_barrier_sync" "$W/out" "passed .*4 PEs"
    ok "pe_barrier_sync with 4 PEs on 2 hosts"
    ;;
debug)
    # multihost_test.sh debug PROGRAM ARGS...: run anything on the two hosts.
    shift
    run_job "$W/out" "${MPIRUN[@]}" -np "${MH_NP:-4}" "$@"
    cat "$W/out"
    exit "$RC"
    ;;
*) fail "unknown case '$CASE'" ;;
esac
