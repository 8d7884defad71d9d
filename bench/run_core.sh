#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_core.sh BUILD_DIR
#
# Core comparison of ofishmem against the raw libfabric yardstick (raw_fi),
# on each provider (shm, then tcp;ofi_rxm on loopback). Raw and ours are
# interleaved test by test (raw, ours, raw, ours, ...) for ROUNDS rounds so
# that machine noise hits both alike; each program reports the median of
# REPS repetitions, and the table shows the median over the rounds and the
# ratio ours/raw.
#
# Environment:
#   ROUNDS=3  REPS=3          rounds, repetitions inside each program
#   PROVIDERS="shm tcp;ofi_rxm"
#   RESULTS=DIR               where CSV files and logs go
#                             (default BUILD_DIR/bench-results/<time>)
#   OSHRUN_TIMEOUT=120        passed to oshrun --timeout
#
# Binaries: BUILD_DIR/bench/ (whole-tree build) or BUILD_DIR/ (bench built
# alone); oshrun: BUILD_DIR/tools/oshrun/oshrun. Without the osu programs or
# oshrun, only the raw side runs, and the script says so.
set -u

usage() { sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac

BUILD=$(cd "$1" && pwd) || exit 2
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-3}
PROVIDERS=${PROVIDERS:-"shm tcp;ofi_rxm"}
OSHRUN_TIMEOUT=${OSHRUN_TIMEOUT:-120}
RESULTS=${RESULTS:-$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)}

export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo

BD=
for d in "$BUILD/bench" "$BUILD"; do
    if [ -x "$d/raw_fi" ]; then BD=$d; break; fi
done
if [ -z "$BD" ]; then
    echo "run_core.sh: no raw_fi under $BUILD/bench or $BUILD (build it first)" >&2
    exit 2
fi
OSHRUN=$BUILD/tools/oshrun/oshrun

OSU_OK=1
missing=
for p in osu_put_lat osu_get_lat osu_put_bw osu_get_bw osu_put_mr osu_atomic_lat; do
    [ -x "$BD/$p" ] || missing="$missing $p"
done
[ -x "$OSHRUN" ] || missing="$missing $OSHRUN"
if [ -n "$missing" ]; then
    OSU_OK=0
    echo "run_core.sh: SKIPPING the ofishmem (osu) side: not built:$missing"
    echo "run_core.sh: (the osu programs need the ofishmem target; raw_fi only)"
fi

mkdir -p "$RESULTS" || exit 2
LOG=$RESULTS/log.txt
: >"$LOG"
echo "run_core.sh: results in $RESULTS (rounds $ROUNDS, reps $REPS)"
echo "run_core.sh: load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# name | raw_fi arguments | osu program and arguments
TESTS=(
    "put_lat 8|put_lat -m 8|osu_put_lat -m 8"
    "put_lat 1M|put_lat -m 1M|osu_put_lat -m 1M"
    "get_lat 8|get_lat -m 8|osu_get_lat -m 8"
    "get_lat 1M|get_lat -m 1M|osu_get_lat -m 1M"
    "put_bw 1M|put_bw -m 1M|osu_put_bw -m 1M"
    "get_bw 1M|get_bw -m 1M|osu_get_bw -m 1M"
    "msg_rate 8|msg_rate|osu_put_mr -m 8"
    "fetch_add|fadd_lat|osu_atomic_lat"
)

# A third busy process on a small machine turns spin-polling latencies
# from microseconds into milliseconds: say so next to the numbers.
BUSY=0
check_load() {
    local l
    l=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v l="$l" -v n="$(nproc)" 'BEGIN { exit !(l > n) }'; then
        echo "  WARNING: load average $l > $(nproc) CPUs: numbers unreliable"
        BUSY=1
    fi
}

FAILS=0
run_logged() { # what, command...
    local what=$1; shift
    echo "### $what: $*" >>"$LOG"
    if ! "$@" >>"$LOG" 2>&1; then
        echo "  FAILED: $what (see $LOG)"
        FAILS=$((FAILS + 1))
    fi
}

for prov in $PROVIDERS; do
    tag=${prov//;/_}
    csv=$RESULTS/$tag.csv
    : >"$csv"
    echo "== provider $prov"
    for round in $(seq 1 "$ROUNDS"); do
        echo "  round $round/$ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))"
        check_load
        for t in "${TESTS[@]}"; do
            IFS='|' read -r name raw osu <<<"$t"
            read -r -a raw_args <<<"$raw"
            read -r -a osu_cmd <<<"$osu"
            run_logged "raw $prov $name" timeout 300 "$BD/raw_fi" "${raw_args[@]}" \
                -p "$prov" -r "$REPS" --csv "$csv" --label raw
            if [ "$OSU_OK" = 1 ]; then
                run_logged "ours $prov $name" env SHMEM_OFI_PROVIDER="$prov" \
                    "$OSHRUN" -n 2 --timeout "$OSHRUN_TIMEOUT" \
                    "$BD/${osu_cmd[0]}" "${osu_cmd[@]:1}" \
                    -r "$REPS" --csv "$csv" --label ours
            fi
        done
    done

    echo
    echo "provider $prov: median of $ROUNDS rounds (each the median of $REPS reps)"
    awk -F, -v osu="$OSU_OK" '
        function med(key,   n, i, j, t, a) {
            n = cnt[key]
            if (!n) return ""
            for (i = 1; i <= n; i++) a[i] = val[key, i]
            for (i = 2; i <= n; i++) {          # insertion sort, n is tiny
                t = a[i]
                for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
                a[j + 1] = t
            }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        { k = $2 SUBSEP $1 SUBSEP $3 SUBSEP $4; cnt[k]++; val[k, cnt[k]] = $5 }
        function row(label, better, rb, rs, rm, ob, os, om,   r, o, ratio) {
            r = med("raw" SUBSEP rb SUBSEP rs SUBSEP rm)
            o = med("ours" SUBSEP ob SUBSEP os SUBSEP om)
            ratio = (r != "" && o != "" && r + 0 != 0) ? sprintf("%.2f", o / r) : "-"
            printf "%-26s %14s %14s %8s   %s\n", label, \
                r == "" ? "-" : sprintf("%.2f", r), \
                o == "" ? "-" : sprintf("%.2f", o), ratio, better
        }
        END {
            printf "%-26s %14s %14s %8s\n", "", "raw_fi", "ofishmem", "ours/raw"
            row("put lat 8 B (us)",      "lower is better",  "put_lat", 8, "lat_us", "put_lat", 8, "lat_us")
            row("put lat 1 MiB (us)",    "lower is better",  "put_lat", 1048576, "lat_us", "put_lat", 1048576, "lat_us")
            row("get lat 8 B (us)",      "lower is better",  "get_lat", 8, "lat_us", "get_lat", 8, "lat_us")
            row("get lat 1 MiB (us)",    "lower is better",  "get_lat", 1048576, "lat_us", "get_lat", 1048576, "lat_us")
            row("put bw 1 MiB (MB/s)",   "higher is better", "put_bw", 1048576, "bw_MBps", "put_bw", 1048576, "bw_MBps")
            row("get bw 1 MiB (MB/s)",   "higher is better", "get_bw", 1048576, "bw_MBps", "get_bw", 1048576, "bw_MBps")
            row("msg rate 8 B (ops/s)",  "higher is better", "msg_rate", 8, "rate_ops", "msg_rate", 8, "rate_ops")
            row("fetch-add int64 (us)",  "lower is better",  "fadd_lat", 8, "lat_us", "atomic_lat", 8, "long_fetch_add")
            if (osu != 1) print "(ofishmem side skipped: programs not built)"
        }' "$csv"
    echo
done

echo "run_core.sh: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$BUSY" = 0 ] || echo "run_core.sh: the machine was busy during some rounds (see WARNINGs)"
if [ "$FAILS" -gt 0 ]; then
    echo "run_core.sh: $FAILS run(s) failed; see $LOG"
    exit 1
fi
exit 0
