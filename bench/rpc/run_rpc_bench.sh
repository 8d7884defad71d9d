#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_rpc_bench.sh [BINDIR] [RAW_FI] [shm|tcp]: the two data-service tables,
# with raw fi_read/fi_write at 1 MiB (bench/raw_fi) for the bulk ratios.
set -u
BIN=${1:-$(dirname "$0")}
RAW=${2:-$BIN/raw_fi}
case ${3:-shm} in
  shm) PROV=shm ;;
  tcp) PROV="tcp;ofi_rxm"; export FI_TCP_IFACE=lo FI_OFI_RXM_USE_SRX=0 ;;
esac
export SHMEM_OFI_PROVIDER=$PROV
"$BIN/rpc_rate" -p "$PROV" -t "${RATE_SECONDS:-2}"
[ -x "$BIN/recv_post_cost" ] && "$BIN/recv_post_cost" "$PROV"
echo
if [ -x "$RAW" ]; then
  rg=$("$RAW" get_bw -p "$PROV" -m 1M:1M -r 3 | awk '/^1048576/ {print $2}')
  rp=$("$RAW" put_bw -p "$PROV" -m 1M:1M -r 3 | awk '/^1048576/ {print $2}')
fi
# Window 1 keeps one client buffer in flight, the working set of raw_fi (one
# reused buffer); window 8 spreads 8 client + 16 server MiB over the caches.
for w in ${BW_WINDOWS:-1 8}; do
  out=$("$BIN/bulk_bw" -p "$PROV" -n "${BW_ITERS:-400}" -w "$w")
  echo "$out"
  [ -x "$RAW" ] || continue
  printf "%-20s %12.0f %12.0f\n" "raw fi_read/fi_write" "$rg" "$rp"
  echo "$out" | awk -v rg="$rg" -v rp="$rp" -v w="$w" '
    /^(register each|registration cache|symmetric heap)/ {
      n = split($0, f, /  +/); g = f[2]; p = f[3];
      printf "ratio to raw, window %d, %-20s pull %.2f  push %.2f\n", w, f[1] ":", g / rg, p / rp }'
  echo
done
