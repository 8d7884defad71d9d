# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# K "hosts" on one machine, for the multi-host collective tests and the
# benchmark bench/run_coll_hosts.sh (sourced after common.sh and
# slurm_cluster.sh; callers check root and the packages).
#
# Each host is a network namespace PFX-I ("hostI", I = 0..K-1) with one
# veth end named osh0 at 10.214.0.(I+1)/24; the other ends hang on a bridge
# br0 inside a namespace of its own, PFX-sw, the switch: nothing is added to
# the machine's own namespace. Slurm: slurmctld and a slurmd in host0, a
# slurmd in every other host (each under its own hostname, unshare -u);
# munged is shared through its socket file. Every daemon goes into DAEMONS
# (slurm_cluster.sh's stop_daemons), and k_hosts_down kills whatever still
# runs in the namespaces before it deletes them.

K_NET=10.214.0

# k_hosts_up PFX K: the switch and K hosts. Skips where namespaces cannot be
# made; fails on anything after that.
k_hosts_up() {
    local pfx=$1 k=$2 i h s
    ip netns add "$pfx-sw" || skip "cannot create network namespaces here (ip netns add failed)"
    ip -n "$pfx-sw" link add br0 type bridge && ip -n "$pfx-sw" link set br0 up &&
        ip -n "$pfx-sw" link set lo up || fail "cannot make the bridge in $pfx-sw"
    for ((i = 0; i < k; i++)); do
        h=oshK$$h$i s=oshK$$s$i
        ip netns add "$pfx-$i" || fail "cannot create namespace $pfx-$i"
        ip link add "$h" type veth peer name "$s" || fail "cannot create a veth pair for host$i"
        ip link set "$h" netns "$pfx-$i" && ip link set "$s" netns "$pfx-sw" ||
            fail "cannot move host$i's veth ends"
        ip -n "$pfx-sw" link set "$s" master br0 && ip -n "$pfx-sw" link set "$s" up ||
            fail "cannot attach host$i to the bridge"
        ip -n "$pfx-$i" link set "$h" name osh0 &&
            ip -n "$pfx-$i" addr add "$K_NET.$((i + 1))/24" dev osh0 &&
            ip -n "$pfx-$i" link set osh0 up && ip -n "$pfx-$i" link set lo up ||
            fail "cannot configure host$i"
    done
    # (Reaching every host is shown by the cluster coming up: k_slurm_up.)
}

# k_hosts_down PFX K: everything still running in the namespaces, then the
# namespaces (their veth ends and the bridge go with them).
k_hosts_down() {
    local pfx=$1 k=$2 i p ns
    for ((i = -1; i < k; i++)); do
        ns=$pfx-$i
        [ "$i" -lt 0 ] && ns=$pfx-sw
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    return 0
}

# k_on_host PFX I CMD...: CMD in host I's network namespace under the name
# hostI (nsenter keeps /sys: slurmd needs the real cgroup mounts).
k_on_host() {
    local pfx=$1 i=$2
    shift 2
    nsenter --net="/run/netns/$pfx-$i" unshare -u sh -c 'hostname "$0"; exec "$@"' "host$i" "$@"
}

# k_on_host_argv PFX I: the same as a command prefix in the array ON_HOST
# (for run_job, which needs an executable).
k_on_host_argv() {
    # shellcheck disable=SC2034  # for the caller
    ON_HOST=(nsenter --net="/run/netns/$1-$2" unshare -u sh -c 'hostname "$0"; exec "$@"' "host$2")
}

# k_slurm_up PFX K CPUS: munged, slurm.conf for host0..hostK-1 with CPUS
# CPUs each, slurmctld + slurmd on host0, slurmd on the rest; waits until
# every node is idle. Needs $W (slurm_cluster.sh).
k_slurm_up() {
    local pfx=$1 k=$2 cpus=$3 i nodes=() state=""
    start_munged
    for ((i = 0; i < k; i++)); do nodes+=("host$i:$K_NET.$((i + 1)):$cpus"); done
    write_slurm_conf "ofishmem-k$k" "host0($K_NET.1)" "${nodes[@]}"
    k_on_host "$pfx" 0 slurmctld -D -i -f "$SLURM_CONF" >>"$W/slurmctld.log" 2>&1 &
    DAEMONS+=($!)
    for ((i = 0; i < k; i++)); do
        k_on_host "$pfx" "$i" slurmd -D -N "host$i" -f "$SLURM_CONF" >>"$W/slurmd-host$i.log" 2>&1 &
        DAEMONS+=($!)
    done
    for _ in $(seq 1 200); do
        state=$(k_on_host "$pfx" 0 sinfo -h -o %T 2>/dev/null | sort -u | tr '\n' ' ')
        [ "$state" = "idle " ] && return 0
        sleep 0.2
    done
    show_logs
    fail "the $k-host test cluster did not come up ('$state')"
}

# k_placement K SIZES...: a Slurm hostfile line per PE for srun
# --distribution=arbitrary: SIZES[i] PEs on host i, dealt round robin over
# the hosts that still have room (so no host's PEs are adjacent ranks).
k_placement() {
    local k=$1 i left=() any=1
    shift
    for ((i = 0; i < k; i++)); do left+=("$1"); shift; done
    while [ "$any" = 1 ]; do
        any=0
        for ((i = 0; i < k; i++)); do
            if [ "${left[$i]}" -gt 0 ]; then
                echo "host$i"
                left[$i]=$((left[i] - 1))
                any=1
            fi
        done
    done
}
