#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# contract_cost.sh [--before PREFIX] [--after PREFIX] [--checker LIB] [--lmr]
#                  [--rounds N] [--reps N] [--out DIR] [--quick]
#
# What the providers' contracts cost (issue #31 item 6), from the same
# OSU-style programs (bench/osu) built with each installed tree's oshcc:
#
#  1. With --before PREFIX: before/after side by side on the providers that
#     ask for nothing more than the fast paths give (tcp;ofi_rxm, sockets,
#     and shm through libfabric, SHMEM_DIRECT=0): put + quiet 8 B, get 8 B,
#     fetch-add, put and get bandwidth 64 KiB and 1 MiB. The rows must not
#     move (ratio after/before ~1.0 within the noise).
#  2. With --checker LIB (tests/fabric's libfabcheck.so): the same programs
#     through the contract-checking fabric over tcp;ofi_rxm, with no profile
#     (a pass-through: the checker's own cost) and under the verbs
#     (FI_MR_LOCAL: descriptors, registered bounce buffers or a
#     registration per transfer) and cxi (FI_MR_ENDPOINT) profiles, sizes
#     8 B to 4 MiB. Ratios profile/pass-through are what the contract path
#     costs on top of the same wire; the checker's own bookkeeping cancels.
#  3. With --checker LIB --lmr: FI_MR_LOCAL's two roads for a caller's
#     private (malloc) buffer, under the verbs profile, per size 8 B - 4 MiB
#     (bench/fabric/private_buf.c): a registered bounce buffer
#     (SHMEM_BOUNCE_SIZE=4M) against a registration per transfer
#     (SHMEM_BOUNCE_SIZE=0). Only the copy's cost is real here: the
#     checker's registration is bookkeeping over tcp's, not a NIC pinning
#     pages: a NIC's registration costs more, so on hardware the bounce
#     road wins up to larger sizes than here, unless the provider's
#     registration cache finds the buffer already registered (a buffer
#     reused from call to call). Measured 2026-11-29: registration 1.03-1.30x
#     the bounce road up to 16 KiB, 0.84-1.05x from 64 KiB
#     (bench/results/contract-2026-11-29/lmr).
#
# Rounds alternate the sides (A B, then B A, ...); the table gives the
# median over rounds of each program's median of --reps repetitions, and
# the ratio. 2 PEs on this host, loopback only. A benchmark, not a test.
#   --after PREFIX  the tree measured (default: REPO/build/prefix)
#   --rounds N      alternating rounds (default 5)
#   --reps N        repetitions inside each program (default 3)
#   --out DIR       results (default ./contract-cost/<date-time>): all.csv,
#                   medians.txt, logs/
#   --quick         2 rounds, 1 rep, fewer sizes (a smoke run)
set -u

usage() { sed -n '3,32p' "$0" | sed 's/^# \{0,1\}//'; }
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
AFTER=$REPO/build/prefix
BEFORE=
CHECKER=
ROUNDS=5
REPS=3
OUT=
QUICK=0
LMR=0
while [ $# -gt 0 ]; do
    case "$1" in
    --before) BEFORE=${2:?}; shift 2 ;;
    --after) AFTER=${2:?}; shift 2 ;;
    --checker) CHECKER=${2:?}; shift 2 ;;
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --reps) REPS=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --quick) QUICK=1; ROUNDS=2; REPS=1; shift ;;
    --lmr) LMR=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "contract_cost.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
[ -n "$BEFORE$CHECKER" ] || { echo "contract_cost.sh: give --before PREFIX and/or --checker LIB" >&2; exit 2; }
[ -z "$CHECKER" ] || [ -r "$CHECKER" ] || { echo "contract_cost.sh: no checker library at $CHECKER" >&2; exit 2; }
OUT=${OUT:-$PWD/contract-cost/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" "$OUT/bin" || exit 1
CSV=$OUT/all.csv
: >"$CSV"
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo

# build SIDE PREFIX: the programs, with that tree's compiler wrapper.
build() {
    local side=$1 prefix=$2 p
    [ -x "$prefix/bin/oshcc" ] || { echo "contract_cost.sh: no oshcc in $prefix" >&2; exit 2; }
    mkdir -p "$OUT/bin/$side"
    for p in osu/osu_put_lat osu/osu_get_lat osu/osu_atomic_lat osu/osu_put_bw \
        osu/osu_get_bw fabric/private_buf; do
        "$prefix/bin/oshcc" -O2 -I"$REPO/bench/common" -I"$REPO/bench/osu" \
            "$REPO/bench/$p.c" "$REPO/bench/common/harness.c" -o "$OUT/bin/$side/${p#*/}" ||
            exit 1
    done
}

# one SIDE PREFIX LABEL PROGRAM SIZES [ENV...]: one run, rows into all.csv
# as round,side,label,bench,size,metric,value.
ROUND=0
one() {
    local side=$1 prefix=$2 label=$3 prog=$4 sizes=$5
    shift 5
    local log="$OUT/logs/r$ROUND-$side-$label-$prog.log" tmp="$OUT/logs/.rows"
    : >"$tmp"
    if ! env "$@" timeout 300 "$prefix/bin/oshrun" -n 2 --timeout 280 \
        "$OUT/bin/$side/$prog" -m "$sizes" -r "$REPS" --csv "$tmp" --label "$label" \
        >"$log" 2>&1; then
        echo "  FAILED: $side $label $prog (see $log)"
        return 1
    fi
    sed "s/^/$ROUND,$side,/" "$tmp" >>"$CSV"
}

# set_of SIDE PREFIX LABEL SIZES_LAT SIZES_BW [ENV...]
set_of() {
    local side=$1 prefix=$2 label=$3 lat=$4 bw=$5
    shift 5
    one "$side" "$prefix" "$label" osu_put_lat "$lat" "$@"
    one "$side" "$prefix" "$label" osu_get_lat "$lat" "$@"
    [ "$lat" = 8:8 ] && one "$side" "$prefix" "$label" osu_atomic_lat 8:8 "$@"
    one "$side" "$prefix" "$label" osu_put_bw "$bw" "$@"
    one "$side" "$prefix" "$label" osu_get_bw "$bw" "$@"
}

build after "$AFTER"
[ -n "$BEFORE" ] && build before "$BEFORE"
BW_SIZES=65536:1048576
CK_LAT=8:4194304
CK_BW=8192:4194304
if [ "$QUICK" = 1 ]; then
    BW_SIZES=1048576:1048576
    CK_LAT=8:65536
    CK_BW=65536:1048576
fi
PROVS=("tcp;ofi_rxm" sockets shm)
echo "== results in $OUT (load $(cut -d' ' -f1-3 /proc/loadavg))"
for ROUND in $(seq 1 "$ROUNDS"); do
    echo "== round $ROUND of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))"
    if [ -n "$BEFORE" ]; then
        order="before after"
        [ $((ROUND % 2)) = 0 ] && order="after before"
        for prov in "${PROVS[@]}"; do
            for side in $order; do
                pre=$AFTER
                [ "$side" = before ] && pre=$BEFORE
                set_of "$side" "$pre" "${prov%%;*}" 8:8 "$BW_SIZES" \
                    SHMEM_OFI_PROVIDER="$prov" SHMEM_DIRECT=0
            done
        done
    fi
    if [ -n "$CHECKER" ] && [ "$LMR" = 1 ]; then
        roads="bounce reg"
        [ $((ROUND % 2)) = 0 ] && roads="reg bounce"
        for road in $roads; do
            bs=4M
            [ "$road" = reg ] && bs=0
            one after "$AFTER" "lmr_$road" private_buf "$CK_LAT" SHMEM_OFI_LIBRARY="$CHECKER" \
                FABCHECK_PROVIDER="tcp;ofi_rxm" FABCHECK_PROFILE=verbs SHMEM_DIRECT=0 \
                SHMEM_BOUNCE_SIZE=$bs SHMEM_BOUNCE_BUFFERS=4
        done
    elif [ -n "$CHECKER" ]; then
        profiles="none verbs cxi"
        [ $((ROUND % 2)) = 0 ] && profiles="cxi verbs none"
        for prof in $profiles; do
            penv=(SHMEM_OFI_LIBRARY="$CHECKER" FABCHECK_PROVIDER="tcp;ofi_rxm" SHMEM_DIRECT=0)
            if [ "$prof" = none ]; then
                penv+=(SHMEM_OFI_PROVIDER="tcp;ofi_rxm")
            else
                penv+=(FABCHECK_PROFILE="$prof")
            fi
            set_of after "$AFTER" "fab_$prof" "$CK_LAT" "$CK_BW" "${penv[@]}"
        done
    fi
done

# Medians over rounds and ratios: after/before per provider; profile/none.
awk -F, '
{ key = $3 "," $4 "," $5 "," $6; v[$2 SUBSEP key, ++n[$2 SUBSEP key]] = $7; keys[key] = 1 }
function med(k,   m, i, j, t, a) {
    m = n[k]; if (m == 0) return -1
    for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
    for (key in keys) {
        split(key, f, ",")
        a = med("before" SUBSEP key); b = med("after" SUBSEP key)
        if (a > 0 && b > 0) printf "%-16s %-16s %9s %-10s %12.3f %12.3f %7.3f  (before, after)\n", f[1], f[2], f[3], f[4], a, b, b / a
        if (f[2] ~ /^fab_/ && f[2] != "fab_none") {
            nk = f[1] ",fab_none," f[3] "," f[4]
            a = med("after" SUBSEP nk); b = med("after" SUBSEP key)
            if (a > 0 && b > 0) printf "%-16s %-16s %9s %-10s %12.3f %12.3f %7.3f  (pass-through, profile)\n", f[1], f[2], f[3], f[4], a, b, b / a
        }
        if (f[2] == "lmr_reg") {
            nk = f[1] ",lmr_bounce," f[3] "," f[4]
            a = med("after" SUBSEP nk); b = med("after" SUBSEP key)
            if (a > 0 && b > 0) printf "%-16s %-16s %9s %-10s %12.3f %12.3f %7.3f  (bounce, registration)\n", f[1], "verbs", f[3], f[4], a, b, b / a
        }
    }
}' "$CSV" | sort -k1,1 -k2,2 -k3,3n >"$OUT/medians.body"
{ printf "%-16s %-16s %9s %-10s %12s %12s %7s\n" bench label size metric A B B/A
  cat "$OUT/medians.body"; } >"$OUT/medians.txt"
rm -f "$OUT/medians.body"
cat "$OUT/medians.txt"
echo "== done (load $(cut -d' ' -f1-3 /proc/loadavg)); rows: $CSV"
