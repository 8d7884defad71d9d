#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_paths.sh busy|strided|lat [--prefix DIR] [--before DIR] [--rounds N]
#              [--provs LIST] [--out DIR] [-- PROGRAM-ARGS...]
#
# One command each for the issue-30 benchmarks of our own roads, on every
# provider, optionally beside another installed tree (main's) for a
# before/after; rounds alternate the two trees (ours first in odd rounds).
#
#   busy     bench/osu/osu_busy_amo: fetch-add, add + quiet, get, ... on a PE
#            that computes without calling the library against one waiting
#            in shmem_wait_until (default args: -o fetch_add,add,get -i 300 -r 3)
#   strided  bench/osu/osu_strided: iput/iget against a contiguous put/get of
#            the same bytes (default args: -e 8 -s 2 -m 4096:4096 -r 3)
#   lat      the small-message rows of bench/compare through the fabric:
#            put + quiet, get, long fetch-add (8 B, 5000 iterations) and the
#            put message rate (osu_put_lat, osu_get_lat, osu_atomic_lat,
#            osu_put_mr); PROGRAM-ARGS are not taken
#
#   --provs LIST  direct (the default one-host set-up, no fabric), shm (the
#                 shm provider, SHMEM_DIRECT=0), tcp, sockets; comma-separated
#                 (default: busy shm,tcp,sockets; strided direct,shm,tcp,sockets)
#   --rounds N    (default 5)
#   --before DIR  an installed tree run beside ours (label "before")
#   --env '...'   extra environment for our runs
#
# Writes OUT/all.csv (round,prov,label,bench,size,metric,value) and
# OUT/summary.txt: medians per row, and for each ratio metric (busy/wait,
# contiguous/strided) the median over rounds. A benchmark, not a test.
set -u
usage() { sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//'; }
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
WHAT=${1:-}
case "$WHAT" in busy|strided|lat) shift ;; -h|--help) usage; exit 0 ;;
*) echo "run_paths.sh: first argument: busy, strided or lat (--help)" >&2; exit 2 ;; esac
PREFIX=$REPO/build/prefix
BEFORE=
ROUNDS=5
OUT=
XENV=
if [ "$WHAT" = busy ]; then
    PROVS=shm,tcp,sockets; PROGS="osu_busy_amo"; ARGS=(-o fetch_add,add,get -i 300 -r 3)
elif [ "$WHAT" = strided ]; then
    PROVS=direct,shm,tcp,sockets; PROGS="osu_strided"; ARGS=(-e 8 -s 2 -m 4096:4096 -r 3)
else
    PROVS=shm,tcp,sockets; PROGS="osu_put_lat osu_get_lat osu_atomic_lat osu_put_mr"; ARGS=()
fi
# Arguments of each program in lat mode.
lat_args() {
    case $1 in
    osu_put_lat|osu_get_lat) echo "-m 8:8 -i 5000 -r 3" ;;
    osu_atomic_lat) echo "-t long -o fetch_add -i 5000 -r 3" ;;
    osu_put_mr) echo "-m 8:8 -r 3" ;;
    esac
}
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX=${2:?}; shift 2 ;;
    --before) BEFORE=${2:?}; shift 2 ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --provs) PROVS=${2:?}; shift 2 ;;
    --env) XENV=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --) shift; ARGS=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_paths.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
die() { echo "run_paths.sh: $*" >&2; exit 2; }
PREFIX=$(cd "$PREFIX" 2>/dev/null && pwd) || die "no installed ofishmem at '$PREFIX'"
LABELS=ours
if [ -n "$BEFORE" ]; then
    BEFORE=$(cd "$BEFORE" 2>/dev/null && pwd) || die "no installed tree at '$BEFORE'"
    LABELS="ours before"
fi
OUT=${OUT:-$PWD/$WHAT-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" "$OUT/bin" || exit 2
OUT=$(cd "$OUT" && pwd)
# The program is built once from this tree's source against each library,
# so a tree that predates it (--before main) runs the same program.
for l in $LABELS; do
    pre=$PREFIX
    [ "$l" = before ] && pre=$BEFORE
    for PROG in $PROGS; do
        "$pre/bin/oshcc" -O2 -I"$REPO/bench/common" -I"$REPO/bench/osu" "$REPO/bench/osu/$PROG.c" \
            "$REPO/bench/common/harness.c" -o "$OUT/bin/$PROG.$l" -Wl,-rpath,"$pre/lib" \
            >>"$OUT/logs/build.$l.log" 2>&1 ||
            die "build of $PROG against $pre failed: $OUT/logs/build.$l.log"
    done
done
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$OUT/all.csv"
FAILED=0
echo "run_paths.sh: $WHAT, $ROUNDS rounds, $PROVS; load $LOAD0; results in $OUT"
for r in $(seq 1 "$ROUNDS"); do
    echo "run_paths.sh: round $r (load $(cut -d' ' -f1 /proc/loadavg))"
    for pv in ${PROVS//,/ }; do
        case $pv in
        direct) penv=(SHMEM_OFI_PROVIDER=shm) ;;
        shm) penv=(SHMEM_OFI_PROVIDER=shm SHMEM_DIRECT=0) ;;
        tcp) penv=("SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_DIRECT=0) ;;
        sockets) penv=(SHMEM_OFI_PROVIDER=sockets SHMEM_DIRECT=0) ;;
        *) die "provider '$pv'? (direct, shm, tcp, sockets)" ;;
        esac
        order=$LABELS
        [ $((r % 2)) = 0 ] && order=$(echo "$LABELS" | tr ' ' '\n' | tac | tr '\n' ' ')
        for PROG in $PROGS; do
            args=("${ARGS[@]}")
            # shellcheck disable=SC2207
            [ "$WHAT" = lat ] && args=($(lat_args "$PROG"))
            for l in $order; do
                pre=$PREFIX; xe=$XENV
                [ "$l" = before ] && { pre=$BEFORE; xe=; }
                tag=r$r.$pv.$l.$PROG
                csv=$OUT/logs/$tag.csv
                : >"$csv"
                # shellcheck disable=SC2086
                if ! env $xe "${penv[@]}" "$pre/bin/oshrun" -n 2 --timeout 600 "$OUT/bin/$PROG.$l" \
                    "${args[@]}" --csv "$csv" --label "$l" >"$OUT/logs/$tag.log" 2>&1; then
                    echo "  failed: $tag (see $OUT/logs/$tag.log)"
                    FAILED=$((FAILED + 1))
                fi
                awk -F, -v r="$r" -v p="$pv" 'NF { print r "," p "," $2 "," $1 "," $3 "," $4 "," $5 }' \
                    "$csv" >>"$OUT/all.csv"
            done
        done
    done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
awk -F, -v load0="$LOAD0" -v load1="$LOAD1" -v rounds="$ROUNDS" '
    function med(k, n,   i, j, t) {
        for (i = 1; i <= n; i++) a[i] = V[k, i]
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $2 FS $4 FS $5 FS $6; c = ++N[k, $3]; V[k FS $3, c] = $7; keys[k] = 1; labs[$3] = 1 }
    END {
        printf "%-8s %-12s %7s %-28s %10s %10s %8s\n", "prov", "bench", "size", "metric", "ours", "before", "o/b"
        for (k in keys) {
            split(k, f, FS)
            o = N[k, "ours"] ? med(k FS "ours", N[k, "ours"]) : ""
            b = N[k, "before"] ? med(k FS "before", N[k, "before"]) : ""
            c = 0
            for (i = 1; i <= N[k, "ours"] && i <= N[k, "before"]; i++)
                if (V[k FS "before", i] > 0) V["q", ++c] = V[k FS "ours", i] / V[k FS "before", i]
            q = c ? sprintf("%.3f", med("q", c)) : "-"
            printf "%-8s %-12s %7s %-28s %10s %10s %8s\n", f[1], f[2], f[3], f[4],
                   o == "" ? "-" : sprintf("%.3f", o), b == "" ? "-" : sprintf("%.3f", b), q
        }
    }' "$OUT/all.csv" | { read -r h; echo "$h"; sort -k1,1 -k2,2 -k4,4; } >"$OUT/summary.txt"
{
    echo "medians of $ROUNDS alternating rounds (each program itself reports the median of its -r repetitions);"
    echo "*_ratio rows: busy/wait (lower is better), contiguous/strided (higher is better);"
    echo "o/b: median over rounds of ours/before, each round's pair run back to back"
    echo "load average $LOAD0 at start, $LOAD1 at end (2 cores)"
} >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
[ "$FAILED" = 0 ]
