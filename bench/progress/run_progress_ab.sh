#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_progress_ab.sh OLD_BUILD NEW_BUILD
#
# Side by side: the latency rows of bench/compare (8-byte put, get and
# fetch-add, 2 PEs) for two builds, alternating old/new for ROUNDS rounds on
# each set-up (shm direct path, shm through libfabric, tcp;ofi_rxm on
# loopback), then the progress thread's cost: CPU time of an idle PE and a
# computing PE served by its progress thread (progress_cost, NEW_BUILD only,
# SHMEM_PROGRESS_THREAD=auto vs off). Prints medians and new/old ratios.
#   ROUNDS=5  SIZE=8  OSHRUN_TIMEOUT=120
set -u
[ $# -eq 2 ] || { sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
OLD=$(cd "$1" && pwd) || exit 2
NEW=$(cd "$2" && pwd) || exit 2
ROUNDS=${ROUNDS:-5}
SIZE=${SIZE:-8}
T=${OSHRUN_TIMEOUT:-120}
export FI_TCP_IFACE=lo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

setups=("shm|SHMEM_OFI_PROVIDER=shm" "shmfab|SHMEM_OFI_PROVIDER=shm SHMEM_DIRECT=0"
        "tcp|SHMEM_OFI_PROVIDER=tcp;ofi_rxm SHMEM_DIRECT=0")
benches=(osu_put_lat osu_get_lat osu_atomic_lat)

one() { # BUILD BENCH ENV... -> value of the SIZE row (atomic: fetch-add row)
    local b=$1 prog=$2; shift 2
    local out
    out=$(env "$@" "$b/tools/oshrun/oshrun" -n 2 --timeout "$T" "$b/bench/$prog" -m "$SIZE" -r 3 2>&1)
    if [ "$prog" = osu_atomic_lat ]; then
        echo "$out" | awk '/fetch_add|fadd|fetch-add/ && /long/ {print $NF; exit}'
    else
        echo "$out" | awk -v s="$SIZE" '$1 == s {print $2; exit}'
    fi
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

for r in $(seq "$ROUNDS"); do
    for s in "${setups[@]}"; do
        name=${s%%|*}; read -r -a env <<<"${s#*|}"
        for prog in "${benches[@]}"; do
            for side in old new; do
                b=$OLD; [ $side = new ] && b=$NEW
                v=$(one "$b" "$prog" "${env[@]}")
                [ -n "$v" ] && echo "$v" >>"$tmp/$name.$prog.$side"
            done
        done
    done
done
printf '%-8s %-16s %12s %12s %8s   (us, median of %d rounds, load %s)\n' setup bench old new new/old \
    "$ROUNDS" "$(cut -d' ' -f1-3 /proc/loadavg)"
for s in "${setups[@]}"; do
    name=${s%%|*}
    for prog in "${benches[@]}"; do
        o=$(median <"$tmp/$name.$prog.old" 2>/dev/null || echo nan)
        n=$(median <"$tmp/$name.$prog.new" 2>/dev/null || echo nan)
        ratio=$(awk -v o="$o" -v n="$n" 'BEGIN {if (o > 0) printf "%.2f", n / o; else print "nan"}')
        printf '%-8s %-16s %12s %12s %8s\n' "$name" "$prog" "$o" "$n" "$ratio"
    done
done

echo
echo "progress thread cost (NEW_BUILD, progress_cost, CPU seconds of each PE's process):"
for s in "${setups[@]}"; do
    name=${s%%|*}; read -r -a env <<<"${s#*|}"
    for mode in auto off; do
        idle=$(env "${env[@]}" SHMEM_PROGRESS_THREAD=$mode "$NEW/tools/oshrun/oshrun" -n 2 --timeout "$T" \
               "$NEW/bench/progress_cost" idle 3 2>&1 | awk -F, '$1=="idle" {s = s " PE" $2 "=" $5} END {print s}')
        serve=$(env "${env[@]}" SHMEM_PROGRESS_THREAD=$mode "$NEW/tools/oshrun/oshrun" -n 2 --timeout 60 \
                "$NEW/bench/progress_cost" serve 2 2>&1 |
                awk -F, '$1=="serve" && $2==1 {print "puts=" $6 " fetch_lat_us=" $7}')
        printf '  %-7s thread=%-4s idle 3 s:%s | PE 0 computes 2 s, PE 1 streams: %s\n' "$name" "$mode" \
               "$idle" "${serve:-none completed}"
    done
done
