#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_coll.sh BUILD_DIR [table|sweep]
#
# Collective latency (bench/osu_coll_lat under our oshrun, SHMEM_TEAM_WORLD).
#   table  barrier, bcast, reduce, fcollect, collect, alltoall at NPES
#          (default "2 4"), sizes SIZES, default algorithm choice: the median
#          over ROUNDS runs of each cell (one program run = OSU averages).
#   sweep  each collective with each of its algorithms forced by name
#          (SHMEM_<COLL>_ALGORITHM), interleaved run by run, so the crossover
#          points in src/coll/select.c can be checked on this machine.
#
# Environment:
#   ROUNDS=5  NPES="2 4"  SIZES="8 1024 65536 1048576"
#   PROVIDER=shm (SHMEM_OFI_PROVIDER)   SHMEM_DIRECT=1 (0: through libfabric)
#   RESULTS=DIR  (default BUILD_DIR/bench-results/coll-<time>; CSV + logs)
set -u

usage() { sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
BUILD=$(cd "$1" && pwd) || exit 2
MODE=${2:-table}
ROUNDS=${ROUNDS:-5}
NPES=${NPES:-"2 4"}
SIZES=${SIZES:-"8 1024 65536 1048576"}
export SHMEM_OFI_PROVIDER=${PROVIDER:-shm} SHMEM_DIRECT=${SHMEM_DIRECT:-1}
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
RESULTS=${RESULTS:-$BUILD/bench-results/coll-$(date +%Y%m%d-%H%M%S)}
OSHRUN=$BUILD/tools/oshrun/oshrun
BIN=$BUILD/bench/osu_coll_lat
[ -x "$BIN" ] && [ -x "$OSHRUN" ] || { echo "run_coll.sh: build $BIN and $OSHRUN first" >&2; exit 2; }
mkdir -p "$RESULTS"
CSV=$RESULTS/coll.csv
echo "npes,coll,alg,size,round,usec" >"$CSV"

min_size=8 max_size=8
for s in $SIZES; do
    [ "$s" -lt "$min_size" ] && min_size=$s
    [ "$s" -gt "$max_size" ] && max_size=$s
done

# run NPES COLL ALG ROUND: one program run, its lines appended to the CSV.
run() {
    local n=$1 c=$2 alg=$3 r=$4 var log
    var="SHMEM_$(echo "$c" | tr a-z A-Z)_ALGORITHM"
    log=$RESULTS/$c-$alg-np$n-r$r.log
    if ! env "$var=$alg" "$OSHRUN" -n "$n" --timeout 300 "$BIN" -c "$c" \
            -m "$min_size:$max_size" >"$log" 2>&1; then
        echo "run_coll.sh: $c ($alg) on $n PEs failed, see $log" >&2
        return 1
    fi
    awk -v n="$n" -v c="$c" -v a="$alg" -v r="$r" -v sizes=" $SIZES " \
        '/^[0-9]/ { if (c == "barrier" || index(sizes, " " $1 " ")) print n "," c "," a "," $1 "," r "," $2 }' \
        "$log" >>"$CSV"
}

algs_of() {
    case $1 in
    barrier) echo "linear dissemination" ;;
    bcast) echo "linear tree" ;;
    reduce) echo "linear rd rsag" ;;
    fcollect|collect) echo "linear ring bruck" ;;
    alltoall) echo "linear pairwise" ;;
    esac
}

COLLS="barrier bcast reduce fcollect collect alltoall"
for r in $(seq "$ROUNDS"); do
    for n in $NPES; do
        for c in $COLLS; do
            if [ "$MODE" = sweep ]; then
                for a in $(algs_of "$c"); do run "$n" "$c" "$a" "$r"; done
            else
                run "$n" "$c" auto "$r"
            fi
        done
    done
done

# Medians per (npes, coll, alg, size).
echo "# $(uptime)"
echo "# provider $SHMEM_OFI_PROVIDER, SHMEM_DIRECT=$SHMEM_DIRECT, median of $ROUNDS runs (us); CSV: $CSV"
sort -t, -k1,1n -k2,2 -k3,3 -k4,4n -k6,6g "$CSV" | awk -F, 'NR > 1 || $1 != "npes" {
        if ($1 == "npes") next
        k = $1 "," $2 "," $3 "," $4
        v[k, ++cnt[k]] = $6
        if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    }
    END {
        printf "%-5s %-9s %-13s %9s %10s\n", "npes", "coll", "alg", "size", "median_us"
        for (i = 1; i <= nk; i++) {
            k = order[i]; m = cnt[k]
            med = (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
            split(k, f, ",")
            printf "%-5s %-9s %-13s %9s %10.2f\n", f[1], f[2], f[3], f[4], med
        }
    }'
