#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_bw.sh [--prefix DIR] [--before DIR] [--rounds N] [--provs LIST]
#           [--sizes MIN:MAX] [--out DIR] [--env 'VAR=V ...']
#
# Bandwidth at the provider's limit (issue 30 item 2): ours through the
# fabric (SHMEM_DIRECT=0) against raw libfabric on the same provider
# (bench/raw_fi: fi_write, fi_write with FI_DELIVERY_COMPLETE as our puts
# are on tcp;ofi_rxm and sockets, fi_read), 2 PEs on this host, windows of
# 64 transfers then a wait, the same on both sides. Rows alternate within a
# round (ours first in odd rounds); ratios are taken per round and their
# median reported, as the rows swing by +-15 % from run to run here.
#
#   --prefix DIR  our installed tree (default REPO/build/prefix)
#   --before DIR  another installed tree (e.g. main's) run beside ours:
#                 rows label "before", ratios ours/before
#   --rounds N    alternating rounds (default 7)
#   --provs LIST  comma-separated: shm,tcp,sockets (default all three)
#   --sizes A:B   sizes, powers of two (default 64k:16M)
#   --env '...'   extra environment for our runs (e.g. SHMEM_FRAGMENT_SIZE=256k)
#   --out DIR     results (default ./bw-results/<date-time>)
#
# Writes OUT/all.csv (round,prov,label,bench,size,value), OUT/summary.txt,
# OUT/bandwidth-<prov>.png. A benchmark, not a test.
set -u
usage() { sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; }
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PREFIX=$REPO/build/prefix
BEFORE=
ROUNDS=7
PROVS=shm,tcp,sockets
SIZES=64k:16M
OUT=
XENV=
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX=${2:?}; shift 2 ;;
    --before) BEFORE=${2:?}; shift 2 ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --provs) PROVS=${2:?}; shift 2 ;;
    --sizes) SIZES=${2:?}; shift 2 ;;
    --env) XENV=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_bw.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
die() { echo "run_bw.sh: $*" >&2; exit 2; }
PREFIX=$(cd "$PREFIX" 2>/dev/null && pwd) || die "no installed ofishmem at '$PREFIX'"
BENCH=$PREFIX/libexec/ofishmem/bench
for f in "$PREFIX/bin/oshrun" "$BENCH/osu_put_bw" "$BENCH/osu_get_bw" "$BENCH/raw_fi"; do
    [ -x "$f" ] || die "$f is missing (cmake --install the build)"
done
if [ -n "$BEFORE" ]; then
    BEFORE=$(cd "$BEFORE" 2>/dev/null && pwd) || die "no installed tree at '$BEFORE'"
    [ -x "$BEFORE/libexec/ofishmem/bench/osu_put_bw" ] || die "$BEFORE has no bench programs"
fi
OUT=${OUT:-$PWD/bw-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$OUT/all.csv"
FAILED=0

# one ROUND PROV LABEL BENCH CMD...: the harness's CSV rows become ours.
one() {
    local r=$1 pv=$2 label=$3 b=$4; shift 4
    local csv=$OUT/logs/r$r.$pv.$label.$b.csv
    : >"$csv"
    if ! "$@" -m "$SIZES" -i 10 --csv "$csv" --label "$label" \
        >"$OUT/logs/r$r.$pv.$label.$b.log" 2>&1 || [ ! -s "$csv" ]; then
        echo "  failed: r$r $pv $label $b (see $OUT/logs)"
        FAILED=$((FAILED + 1))
    fi
    awk -F, -v r="$r" -v p="$pv" -v l="$label" -v b="$b" 'NF { print r "," p "," l "," b "," $3 "," $5 }' \
        "$csv" >>"$OUT/all.csv"
}
ours() { # prefix prov prog args...
    local pre=$1 prov=$2 p=$3
    shift 3
    env $XENV LD_LIBRARY_PATH="$pre/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SHMEM_DIRECT=0 \
        SHMEM_OFI_PROVIDER="$prov" "$pre/bin/oshrun" -n 2 --timeout 280 \
        "$pre/libexec/ofishmem/bench/$p" "$@"
}
echo "run_bw.sh: $ROUNDS rounds, $PROVS, $SIZES; load $LOAD0; results in $OUT"
for r in $(seq 1 "$ROUNDS"); do
    echo "run_bw.sh: round $r (load $(cut -d' ' -f1 /proc/loadavg))"
    for pv in ${PROVS//,/ }; do
        case $pv in tcp) prov="tcp;ofi_rxm" ;; shm|sockets) prov=$pv ;; *) die "provider '$pv'?" ;; esac
        for b in put get; do
            rows=(ours raw)
            [ "$b" = put ] && rows+=(raw_dc)
            [ -n "$BEFORE" ] && rows+=(before)
            [ $((r % 2)) = 0 ] && rows=($(printf '%s\n' "${rows[@]}" | tac))
            for l in "${rows[@]}"; do
                case $l in
                ours) one "$r" "$pv" ours "$b" ours "$PREFIX" "$prov" "osu_${b}_bw" ;;
                before) one "$r" "$pv" before "$b" ours "$BEFORE" "$prov" "osu_${b}_bw" ;;
                raw) one "$r" "$pv" raw "$b" "$BENCH/raw_fi" "${b}_bw" -p "$prov" -t 280 ;;
                raw_dc) one "$r" "$pv" raw_dc "$b" "$BENCH/raw_fi" "${b}_bw" -p "$prov" --dc -t 280 ;;
                esac
            done
        done
    done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# Per (prov, bench, size): median of each label, median over rounds of
# ours/raw, ours/raw_dc (puts), ours/before.
awk -F, -v load0="$LOAD0" -v load1="$LOAD1" -v rounds="$ROUNDS" '
    function med(k, n,   i, j, t) {
        for (i = 1; i <= n; i++) a[i] = V[k, i]
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $2 FS $4 FS $5; v[$1 FS $3 FS k] = $6; keys[k] = 1; R[$1] = 1 }
    END {
        printf "%-8s %-4s %9s %9s %9s %9s %9s %8s %8s %8s\n", "prov", "op", "size", "ours", "raw", "raw_dc",
               "before", "o/raw", "o/rawdc", "o/before"
        n = 0; for (k in keys) ks[++n] = k
        for (i = 2; i <= n; i++) { t = ks[i]; split(t, tt, FS); for (j = i - 1; j >= 1; j--) { split(ks[j], uu, FS)
            if (uu[1] > tt[1] || (uu[1] == tt[1] && (uu[2] > tt[2] || (uu[2] == tt[2] && uu[3] + 0 > tt[3] + 0)))) ks[j + 1] = ks[j]; else break }
            ks[j + 1] = t }
        for (i = 1; i <= n; i++) {
            k = ks[i]; split(k, f, FS)
            split("ours raw raw_dc before", L, " ")
            for (m = 1; m <= 4; m++) { c = 0; for (r in R) if ((r FS L[m] FS k) in v) V[L[m], ++c] = v[r FS L[m] FS k]; M[L[m]] = c ? med(L[m], c) : "" }
            split("raw raw_dc before", Q, " ")
            for (m = 1; m <= 3; m++) { c = 0
                for (r in R) if ((r FS "ours" FS k) in v && (r FS Q[m] FS k) in v && v[r FS Q[m] FS k] > 0)
                    V["q", ++c] = v[r FS "ours" FS k] / v[r FS Q[m] FS k]
                RQ[Q[m]] = c ? sprintf("%.2f", med("q", c)) : "-" }
            printf "%-8s %-4s %9d %9.0f %9s %9s %9s %8s %8s %8s\n", f[1], f[2], f[3], M["ours"],
                   M["raw"] == "" ? "-" : sprintf("%.0f", M["raw"]), M["raw_dc"] == "" ? "-" : sprintf("%.0f", M["raw_dc"]),
                   M["before"] == "" ? "-" : sprintf("%.0f", M["before"]), RQ["raw"], RQ["raw_dc"], RQ["before"]
        }
        printf "MB/s, medians of %d alternating rounds; ratios: median of per-round ratios\n", rounds
        printf "load average %s at start, %s at end (2 cores)\n", load0, load1
    }' "$OUT/all.csv" | tee "$OUT/summary.txt"

if command -v gnuplot >/dev/null; then
    for pv in ${PROVS//,/ }; do
        specs=""
        for b in put get; do
            for l in ours raw raw_dc before; do
                f=$OUT/logs/plot.$pv.$b.$l
                awk -F, -v p="$pv" -v b="$b" -v l="$l" '$2 == p && $4 == b && $3 == l { print $5, $6 }' \
                    "$OUT/all.csv" | sort -k1,1n -k2,2g | awk '{ v[$1] = v[$1] " " $2 }
                    END { for (z in v) { n = split(v[z], a, " "); print z, a[int((n + 1) / 2)] } }' |
                    sort -n >"$f"
                [ -s "$f" ] && specs="$specs${specs:+, }'$f' using 1:2 with linespoints title '$b $l'"
            done
        done
        [ -n "$specs" ] && gnuplot -e "set terminal pngcairo size 1000,650 noenhanced; set logscale x 2;
            set grid; set key left top; set xlabel 'bytes'; set format x '%.0s%cB'; set ylabel 'MB/s';
            set output '$OUT/bandwidth-$pv.png'; set title '$pv: ours (SHMEM_DIRECT=0) vs raw libfabric';
            plot $specs" 2>>"$OUT/logs/gnuplot.log"
    done
fi
[ "$FAILED" = 0 ]
