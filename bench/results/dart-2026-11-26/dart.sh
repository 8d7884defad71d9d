#!/bin/bash
# DART's figure (issue 18): a SHMEM job's time handing off 16 MiB per step vs its compute time,
# with and without the client's asynchronous progress. 2 PEs, 12 steps, 20 ms of compute a step.
B=/work/main/build; BIN=$B/examples; O=$B/tools/oshrun/oshrun
run() { # label, env...
  local label=$1; shift
  local W; W=$(mktemp -d /tmp/orpc-dart.XXXXXX)
  env "$@" "$BIN/staging_server" "$W/addr" "$W/key" "$W/out.dat" >"$W/server.log" 2>&1 & local SRV=$!
  for _ in $(seq 200); do [ -s "$W/addr" ] && break; sleep 0.05; done
  local line; line=$(env "$@" timeout 120 $O -n 2 "$BIN/staging_pe" "$W/addr" "$W/key" 8 $((16<<20)) 200000 2>&1 | grep -E '^(staging|PE [0-9]+):' | sed -E 's/.*in hand-off call ([0-9.]+) us\/step, compute ([0-9.]+) us\/step, waiting ([0-9.]+) us\/step.*/hand-off \1 compute \2 waiting \3/' | grep -v '^staging' | tr '\n' ' ')
  kill -TERM $SRV; wait $SRV 2>/dev/null
  echo "$label: $line"
  rm -rf "$W"
}
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2; do
  run "tcp, client progress thread on " SHMEM_RPC_PROVIDER='tcp;ofi_rxm' FI_TCP_IFACE=lo SHMEM_RPC_PROGRESS_THREAD=1
  run "tcp, client progress thread off" SHMEM_RPC_PROVIDER='tcp;ofi_rxm' FI_TCP_IFACE=lo SHMEM_RPC_PROGRESS_THREAD=0
  run "same host (queues), thread off  " SHMEM_RPC_PROVIDER=shm SHMEM_RPC_PROGRESS_THREAD=0
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
