#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_example.sh xfer|staging shm|tcp BINDIR [OSHRUN]: starts the server,
# runs the client(s), checks the output; reaps only the processes it started.
set -u
EX=$1 PROV=$2 BIN=$3 OSHRUN=${4:-}
case $PROV in
  shm) export SHMEM_RPC_PROVIDER=shm SHMEM_OFI_PROVIDER=shm ;;
  tcp) export SHMEM_RPC_PROVIDER="tcp;ofi_rxm" SHMEM_OFI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo ;;
esac
W=$(mktemp -d "${TMPDIR:-/tmp}/orpc-example.XXXXXX")
SRV=""
cleanup() {
  if [ -n "$SRV" ]; then kill -TERM "$SRV" 2>/dev/null; sleep 0.3; kill -KILL "$SRV" 2>/dev/null; fi
  rm -rf "$W"
}
trap cleanup EXIT
wait_addr() {
  for _ in $(seq 200); do [ -s "$W/addr" ] && return 0; kill -0 "$SRV" 2>/dev/null || return 1; sleep 0.05; done
  return 1
}
case $EX in
xfer)
  "$BIN/xfer_server" "$W/addr" "$W/key" >"$W/server.log" 2>&1 &
  SRV=$!
  wait_addr || { cat "$W/server.log"; echo "FAIL: no server"; exit 1; }
  timeout 100 "$BIN/xfer_client" "$W/addr" "$W/key" --stop || exit 1
  wait "$SRV" || exit 1
  SRV=""
  ;;
staging)
  "$BIN/staging_server" "$W/addr" "$W/key" "$W/out.dat" >"$W/server.log" 2>&1 &
  SRV=$!
  wait_addr || { cat "$W/server.log"; echo "FAIL: no server"; exit 1; }
  NP=2 STEPS=20 BYTES=$((1 << 20))
  timeout 100 "$OSHRUN" -n $NP "$BIN/staging_pe" "$W/addr" "$W/key" $STEPS $BYTES 2000 "$W/ack" ||
    exit 1
  kill -TERM "$SRV"; wait "$SRV" || { cat "$W/server.log"; exit 1; }
  SRV=""
  cat "$W/server.log"
  # One record per step: its 32-byte header, then its payload.
  size=$(stat -c %s "$W/out.dat")
  [ "$size" -eq $((NP * STEPS * (32 + BYTES))) ] || { echo "FAIL: file has $size bytes"; exit 1; }
  # Each step came as one scatter-gather descriptor (header + payload).
  grep -q "$((NP * STEPS)) headers checked, 0 bad" "$W/server.log" ||
    { echo "FAIL: not every step's header was checked"; exit 1; }
  # Every acknowledged step is in the file once, with its data.
  "$BIN/staging_check" "$W/out.dat" "$W"/ack.* || exit 1
  [ "$(cat "$W"/ack.* | wc -l)" -eq $((NP * STEPS)) ] || { echo "FAIL: acknowledgements missing"; exit 1; }
  ;;
esac
echo "PASS [$EX/$PROV]"
