#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_inject.sh [--build DIR] [--before DIR] [--rt] [--rounds N] [--iters N]
#               [--provs "tcp sockets"] [--out DIR]
#
# Issue 16 item 5: small puts over tcp;ofi_rxm and sockets (loopback, 2 PEs,
# SHMEM_DIRECT=0) against raw libfabric (bench/raw_fi), in alternating
# rounds, one program after the other, medians over rounds:
#
#   ours_put_lat     osu_put_lat 8 B: shmem_putmem + shmem_quiet (default:
#                    injected put, quiet reads 8 B back)
#   ours_put_lat_dc  the same with SHMEM_QUIET_FLUSH=0 (delivery-complete puts)
#   ours_put_mr      osu_put_mr: 64 x shmem_putmem 8 B + shmem_quiet, puts/s
#   raw_inject       raw_fi put_lat: fi_inject_write + put counter (counted at
#                    send on tcp: no remote-completion guarantee)
#   raw_dc           raw_fi put_lat --dc: fi_writemsg FI_DELIVERY_COMPLETE
#   raw_flush        raw_fi put_lat --flush: inject + 8-byte read (our protocol)
#   raw_mr           raw_fi msg_rate: 64 x fi_inject_write + counter, ops/s
#
# --before DIR: the ours_* rows also from a second build (rows before_*),
# in the same rounds, so that a change is measured side by side.
# --rt: every program runs under `chrt -r 1` (SCHED_RR): on a machine whose
# cores other jobs keep busy, a 2-PE ping-pong measures the scheduler
# otherwise (raw_fi delivery-complete write 10 us under chrt, 670-1100 us
# without, load 14-30 on 2 cores). Runs are short; say so with the figures.
#
# Writes OUT/all.csv (round,prov,row,value), OUT/summary.txt (medians, the
# ratios of the issue's targets), OUT/logs/. The build directory must hold
# tools/oshrun/oshrun, bench/osu_put_lat, bench/osu_put_mr, bench/raw_fi.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$REPO/build
ROUNDS=5
ITERS=2000
PROVS="tcp sockets"
OUT=
BEFORE=
RT=()
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=${2:?--build needs a directory}; shift 2 ;;
    --before) BEFORE=${2:?--before needs a build directory}; shift 2 ;;
    --rt) RT=(chrt -r 1); shift ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --iters) ITERS=${2:?}; shift 2 ;;
    --provs) PROVS=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    -h|--help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_inject.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
case "$ROUNDS$ITERS" in *[!0-9]*|'') echo "run_inject.sh: --rounds/--iters take numbers" >&2; exit 2 ;; esac
OSHRUN=$BUILD/tools/oshrun/oshrun
for f in "$OSHRUN" "$BUILD/bench/osu_put_lat" "$BUILD/bench/osu_put_mr" "$BUILD/bench/raw_fi"; do
    [ -x "$f" ] || { echo "run_inject.sh: $f is missing (build first)" >&2; exit 2; }
done
if [ -n "$BEFORE" ]; then
    for f in "$BEFORE/tools/oshrun/oshrun" "$BEFORE/bench/osu_put_lat" "$BEFORE/bench/osu_put_mr"; do
        [ -x "$f" ] || { echo "run_inject.sh: $f is missing (build the --before tree)" >&2; exit 2; }
    done
fi
OUT=${OUT:-$PWD/inject-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs"
: >"$OUT/all.csv"
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo SHMEM_DIRECT=0
# sockets' own progress thread sleeps between polls unless told not to
# (PROVIDERS.md: ~10 ms per small op); the same setting for ours and raw.
export FI_SOCKETS_PE_WAITTIME=0

prov_name() { [ "$1" = tcp ] && echo "tcp;ofi_rxm" || echo "$1"; }

# run ROUND PROV ROW AWK-FIELD-SIZE CMD...: record the value of the "8" row.
run() {
    local round=$1 prov=$2 row=$3; shift 3
    local log=$OUT/logs/$row.$prov.r$round.txt
    timeout 120 "${RT[@]}" "$@" >"$log" 2>&1
    local v
    v=$(awk '$1 == "8" {print $2; exit}' "$log")
    if [ -z "$v" ]; then
        echo "  $prov $row: no result (see $log)" >&2
        return
    fi
    echo "$round,$prov,$row,$v" >>"$OUT/all.csv"
    printf '  %-8s %-16s %12s\n' "$prov" "$row" "$v"
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "results in $OUT ($ROUNDS rounds, $ITERS iterations; load $LOAD_START)"
for round in $(seq 1 "$ROUNDS"); do
    echo "round $round (load $(cut -d' ' -f1 /proc/loadavg))"
    for short in $PROVS; do
        p=$(prov_name "$short")
        # Alternate which side goes first.
        order="ours raw"
        [ -n "$BEFORE" ] && order="ours raw before"
        if [ $((round % 2)) = 0 ]; then order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' '); fi
        for side in $order; do
            if [ "$side" = ours ] || [ "$side" = before ]; then
                b=$BUILD; [ "$side" = before ] && b=$BEFORE
                run "$round" "$short" "${side}_put_lat" env SHMEM_OFI_PROVIDER="$p" \
                    "$b/tools/oshrun/oshrun" -n 2 "$b/bench/osu_put_lat" -m 8 -i "$ITERS"
                run "$round" "$short" "${side}_put_lat_dc" env SHMEM_OFI_PROVIDER="$p" \
                    SHMEM_QUIET_FLUSH=0 "$b/tools/oshrun/oshrun" -n 2 "$b/bench/osu_put_lat" -m 8 \
                    -i "$ITERS"
                run "$round" "$short" "${side}_put_mr" env SHMEM_OFI_PROVIDER="$p" \
                    "$b/tools/oshrun/oshrun" -n 2 "$b/bench/osu_put_mr" -m 8 -i "$((ITERS / 10))"
            else
                run "$round" "$short" raw_inject "$BUILD/bench/raw_fi" put_lat -p "$p" -m 8 -i "$ITERS"
                run "$round" "$short" raw_dc "$BUILD/bench/raw_fi" put_lat -p "$p" --dc -m 8 -i "$ITERS"
                run "$round" "$short" raw_flush "$BUILD/bench/raw_fi" put_lat -p "$p" --flush -m 8 \
                    -i "$ITERS"
                run "$round" "$short" raw_mr "$BUILD/bench/raw_fi" msg_rate -p "$p" -i "$((ITERS / 10))"
            fi
        done
    done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

awk -F, -v rounds="$ROUNDS" -v l0="$LOAD_START" -v l1="$LOAD_END" -v rt="${RT:+; every program under chrt -r 1}" '
    { k = $2 FS $3; n[k]++; v[k, n[k]] = $4; provs[$2] = 1 }
    function med(k,   m, i, j, t, a) {
        m = n[k]; if (m == 0) return ""
        for (i = 1; i <= m; i++) a[i] = v[k, i]
        for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    function row(title, a, b, lim, kind,   x, y, r, ok) {
        x = med(a); y = med(b)
        if (x == "" || y == "") { printf "%-52s %10s %10s %6s %s\n", title, x, y, "-", "no data"; return }
        r = kind == "rate" ? y / x : x / y
        ok = r <= lim ? "MET" : "MISSED"
        printf "%-52s %10.2f %10.2f %6.2f <= %-4s %s\n", title, x, y, r, lim, ok
    }
    END {
        printf "%-52s %10s %10s %6s\n", "target (8 B, 2 PEs, loopback)", "ours", "raw", "ratio"
        for (p in provs) {
            print "-- " (p == "tcp" ? "tcp;ofi_rxm" : p) " (us; rate rows: ops/s, ratio raw/ours)"
            row("put+quiet vs raw fi_write delivery-complete", p FS "ours_put_lat", p FS "raw_dc", 1.1)
            row("put+quiet vs raw inject + 8 B read (same protocol)", p FS "ours_put_lat", p FS "raw_flush", 1.2)
            row("put+quiet vs raw inject + counter (no guarantee)", p FS "ours_put_lat", p FS "raw_inject", 1.2)
            row("put message rate vs raw inject rate", p FS "ours_put_mr", p FS "raw_mr", 1.2, "rate")
            row("put+quiet, every put delivery-complete", p FS "ours_put_lat_dc", p FS "raw_dc", 1.1)
            if (n[p FS "before_put_lat"]) {
                row("--before build: put+quiet vs raw delivery-complete", p FS "before_put_lat", p FS "raw_dc", 1.1)
                row("--before build: put message rate vs raw inject rate", p FS "before_put_mr", p FS "raw_mr", 1.2, "rate")
                row("put+quiet: this build / --before build", p FS "ours_put_lat", p FS "before_put_lat", 1.0)
            }
        }
        printf "medians of %d alternating round(s); load average %s at start, %s at end (2 cores)%s\n", rounds, l0, l1, rt
    }' "$OUT/all.csv" | tee "$OUT/summary.txt"
