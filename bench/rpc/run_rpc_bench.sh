#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_rpc_bench.sh [BINDIR] [RAW_FI] [shm|tcp]: the two data-service tables.
#  1. rpc_rate: multi-recv vs one buffer per request, 1..16 clients.
#  2. bulk_bw next to raw fi_read/fi_write at 1 MiB over the same working set
#     (W buffers on each side for a window of W calls: raw_fi --bufs W).
#     Window 1 is one call at a time (the RPC round trip is not hidden);
#     window 8 hides it. Raw and ours alternate ROUNDS times; the table shows
#     medians and the median of the per-round ratios (the machine is noisy).
#  3. sg_bw: 1 MiB as 16 x 64 KiB segments vs one segment (scatter-gather).
# Env: ROUNDS (5), RATE_SECONDS (2; 0 skips the rate table), BW_ITERS (400),
#      SG_ROUNDS (21; 0 skips the scatter-gather table),
#      BW_WINDOWS ("1 8"; "" skips the bulk table), PIN=1 (rate table with
#      the server alone on CPU 0: rpc_rate --pin).
set -u
BIN=${1:-$(dirname "$0")}
RAW=${2:-$BIN/raw_fi}
case ${3:-shm} in
  shm) PROV=shm ;;
  tcp) PROV="tcp;ofi_rxm"; export FI_TCP_IFACE=lo FI_OFI_RXM_USE_SRX=0 ;;
  *) echo "run_rpc_bench.sh: provider must be shm or tcp, got '$3'" >&2; exit 2 ;;
esac
ROUNDS=${ROUNDS:-5}
export SHMEM_OFI_PROVIDER=$PROV
if [ "${RATE_SECONDS:-2}" != 0 ]; then
  pin=()
  [ "${PIN:-0}" = 1 ] && pin=(--pin)
  "$BIN/rpc_rate" -p "$PROV" -t "${RATE_SECONDS:-2}" -r "$ROUNDS" "${pin[@]}" || exit 1
  [ -x "$BIN/recv_post_cost" ] && "$BIN/recv_post_cost" "$PROV"
  echo
fi
[ -x "$RAW" ] || { echo "run_rpc_bench.sh: no raw_fi at $RAW: bulk ratios skipped" >&2; RAW=; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for w in ${BW_WINDOWS-1 8}; do
  : >"$rows"
  for ((k = 1; k <= ROUNDS; k++)); do
    if [ -n "$RAW" ]; then
      g=$("$RAW" get_bw -p "$PROV" -m 1M:1M --bufs "$w" | awk '/^1048576/ {print $2}')
      p=$("$RAW" put_bw -p "$PROV" -m 1M:1M --bufs "$w" | awk '/^1048576/ {print $2}')
      echo "$k|raw fi_read/fi_write|$g|$p" >>"$rows"
    fi
    "$BIN/bulk_bw" -p "$PROV" -n "${BW_ITERS:-400}" -w "$w" | awk -v k="$k" '
      /^(register each|registration cache|symmetric heap)/ {
        split($0, f, /  +/); printf "%s|%s|%s|%s\n", k, f[1], f[2], f[3] }' >>"$rows" ||
      exit 1
  done
  echo "# bulk_bw: provider $PROV, 1 MiB, window $w, median of $ROUNDS alternating rounds (MB/s)"
  awk -F'|' '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
        t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { mode[$2] = 1; n = ++cnt[$2]; G[$2, n] = $3; P[$2, n] = $4; if ($2 ~ /^raw/) { RG[$1] = $3; RP[$1] = $4 } }
    END {
      printf "%-22s %12s %12s %16s %16s\n", "client memory", "pull (get)", "push (put)", "pull/raw", "push/raw"
      split("raw fi_read/fi_write|register each|registration cache|symmetric heap", order, "|")
      for (o = 1; o <= 4; o++) {
        m = order[o]; if (!(m in mode)) continue; n = cnt[m]
        for (i = 1; i <= n; i++) { g[i] = G[m, i]; p[i] = P[m, i]
          qg[i] = RG[i] ? G[m, i] / RG[i] : 0; qp[i] = RP[i] ? P[m, i] / RP[i] : 0 }
        printf "%-22s %12.0f %12.0f", m, median(g, n), median(p, n)
        if (m ~ /^raw/ || !(1 in RG)) printf "\n"
        else printf " %16.2f %16.2f\n", median(qg, n), median(qp, n)
      }
    }' "$rows"
  echo
done
if [ "${SG_ROUNDS:-21}" != 0 ] && [ -x "$BIN/sg_bw" ]; then
  "$BIN/sg_bw" -p "$PROV" -n 30 -r "${SG_ROUNDS:-21}" || exit 1
  echo
fi
