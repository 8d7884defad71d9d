#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How the figures of this directory were taken: each part under the
# machine's exclusive lock, one after the other, waiting for the 1-minute
# load to fall below LOADMAX first (the machine is shared; above its 2
# cores the figures measure the scheduler). OURS: this branch installed;
# BASE: main at 99c8561 installed (before). Usage: measure.sh PART...
#   busy strided lat bw sos
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
OURS=${OURS:-$REPO/build2/prefix}
BASE=${BASE:-/work/wt/speed-base/build/prefix}
LOADMAX=${LOADMAX:-3}
ROUNDS=${ROUNDS:-7}
wait_quiet() {
    while :; do
        l=$(cut -d' ' -f1 /proc/loadavg)
        awk -v l="$l" -v m="$LOADMAX" 'BEGIN { exit !(l < m) }' && return
        sleep 30
    done
}
for part in "$@"; do
    wait_quiet
    echo "== $part $(date +%H:%M) load $(cat /proc/loadavg)"
    case $part in
    busy) flock -x /tmp/ofishmem.machine "$REPO/bench/compare/run_paths.sh" busy --prefix "$OURS" \
              --before "$BASE" --rounds "$ROUNDS" --out "$HERE/busy" ;;
    strided) flock -x /tmp/ofishmem.machine "$REPO/bench/compare/run_paths.sh" strided --prefix "$OURS" \
              --before "$BASE" --rounds 5 --out "$HERE/strided" -- -e 8 -s 2 -m 4096:4096 -i 20 -r 3 ;;
    lat) flock -x /tmp/ofishmem.machine "$REPO/bench/compare/run_paths.sh" lat --prefix "$OURS" \
              --before "$BASE" --rounds "$ROUNDS" --out "$HERE/lat" ;;
    bw-*) pv=${part#bw-}
          flock -x /tmp/ofishmem.machine "$REPO/bench/compare/run_bw.sh" --prefix "$OURS" \
              --before "$BASE" --rounds "$ROUNDS" --provs "$pv" --sizes 64k:16M --out "$HERE/bw-$pv" ;;
    sos-*) pv=${part#sos-}
          flock -x /tmp/ofishmem.machine "$REPO/bench/compare/compare_sos.sh" --build "$REPO/build" \
              --prefix "$OURS" --rounds 5 --provs "$pv" --out "$HERE/sos-$pv" ;;
    *) echo "unknown part $part" ;;
    esac
done
