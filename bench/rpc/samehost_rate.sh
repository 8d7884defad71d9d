#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# samehost_rate.sh BINDIR [MERCURY_BIN]: the same-host RPC rate rows of
# issue 21, 8-byte echo, one client, 1 and 16 calls in flight:
#   ours over the same-host queues, ours over libfabric shm
#   (SHMEM_RPC_SAME_HOST=0), and Mercury's hg_rate against hg_perf_server
#   on its na+sm plugin, busy polling (-b), when MERCURY_BIN holds them.
# The three alternate ROUNDS times; medians and median per-round ratios.
# Env: ROUNDS (5), SECONDS_PER_POINT (1), HG_LOOPS (loops of hg_rate, 50000).
set -u
BIN=${1:?usage: samehost_rate.sh BINDIR [MERCURY_BIN]}
MERC=${2:-}
ROUNDS=${ROUNDS:-5}
T=${SECONDS_PER_POINT:-1}
L=${HG_LOOPS:-50000}
[ -n "$MERC" ] && [ ! -x "$MERC/hg_rate" ] && { echo "no hg_rate in $MERC" >&2; MERC=; }
W=$(mktemp -d "${TMPDIR:-/tmp}/samehost_rate.XXXXXX") || exit 1
SRV=
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# hg_rate X: Mercury's ops/s with X in flight (its server serves one client, then exits).
hg() {
  ( cd "$W" && rm -f port.cfg
    "$MERC/hg_perf_server" -c na -p sm -b >/dev/null 2>&1 & echo $! >"$W/srv.pid"
    for _ in $(seq 200); do [ -s port.cfg ] && break; sleep 0.05; done
    timeout 300 "$MERC/hg_rate" -c na -p sm -b -l "$L" -y 8 -z 8 -x "$1" 2>/dev/null |
      awk '$1 == 8 {print $2}' )
  SRV=$(cat "$W/srv.pid"); wait "$SRV" 2>/dev/null; SRV=
}

for x in 1 16; do
  : >"$W/rows"
  for ((k = 1; k <= ROUNDS; k++)); do
    line=$("$BIN/rpc_rate" --transport -c 1 -w "$x" -t "$T" -r 1 | awk '$1 == 1 {print $2, $3}')
    m=0
    [ -n "$MERC" ] && m=$(hg "$x")
    echo "$line ${m:-0}" >>"$W/rows"
  done
  echo "# same host, 8-byte echo, 1 client, $x in flight: median of $ROUNDS alternating rounds (calls/s)"
  awk -v merc="${MERC:+1}" '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
        t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { n++; q[n] = $1; p[n] = $2; m[n] = $3; qp[n] = $1 / $2; qm[n] = $3 > 0 ? $1 / $3 : 0 }
    END {
      printf "%-34s %12.0f\n", "ofishmem, same-host queues", median(q, n)
      printf "%-34s %12.0f   queues/shm %.2f\n", "ofishmem, libfabric shm", median(p, n), median(qp, n)
      if (merc) printf "%-34s %12.0f   queues/Mercury %.2f\n", "Mercury na+sm, busy (-b)", median(m, n), median(qm, n)
    }' "$W/rows"
  echo
done
