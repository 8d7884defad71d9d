#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ab.sh PROVS ROUNDS PREFIX_A BIN_A ENV_A PREFIX_B BIN_B ENV_B [ARGS...]
#
# osu_strided through the fabric (SHMEM_DIRECT=0) for two installed trees
# (or one tree under two environments), alternating A and B every round
# (A first in odd rounds). BIN_x is bench/osu/osu_strided built against
# PREFIX_x (oshcc ... -Wl,-rpath,PREFIX_x/lib). BIND=core passes
# --bind-to core to oshrun, NICE=-20 runs the job at that nice level: on a
# machine whose cores are taken by CPU hogs the scheduler otherwise stacks
# both PEs on one core, and a road that needs the target's progress waits
# for its 4 ms slices (seen: iput 2-12 ms, ps psr equal for both PEs).
# Prints "round prov A|B <osu_strided row>"; sum.awk gives medians.
set -u
provs=$1 rounds=$2 pa=$3 ba=$4 ea=$5 pb=$6 bb=$7 eb=$8
shift 8
args=("$@")
[ ${#args[@]} = 0 ] && args=(-e 8 -s 2 -m 4096:4096 -r 5)
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
echo "load start $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
    for p in ${provs//,/ }; do
        case $p in shm) pv=shm ;; tcp) pv="tcp;ofi_rxm" ;; sockets) pv=sockets ;; esac
        order="A B"
        [ $((r % 2)) = 0 ] && order="B A"
        for v in $order; do
            if [ "$v" = A ]; then pre=$pa b=$ba e=$ea; else pre=$pb b=$bb e=$eb; fi
            # shellcheck disable=SC2086
            line=$(nice -n "${NICE:-0}" env $e SHMEM_OFI_PROVIDER="$pv" SHMEM_DIRECT=0 timeout 120 \
                "$pre/bin/oshrun" -n 2 ${BIND:+--bind-to $BIND} "$b" "${args[@]}" | tail -1)
            echo "$r $p $v $line"
        done
    done
done
echo "load end $(cut -d' ' -f1-3 /proc/loadavg)"
