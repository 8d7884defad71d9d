#!/usr/bin/env bash
# idle_cpu.sh BIN PROV(shm|tcp|sq) NCTX SECS: CPU seconds of an idle NCTX-context server over SECS
BIN=$1; P=$2; N=$3; S=${4:-5}
case $P in shm) PROV=shm; export SHMEM_RPC_SAME_HOST=0;; tcp) PROV="tcp;ofi_rxm"; export FI_TCP_IFACE=lo SHMEM_RPC_SAME_HOST=0;; sq) PROV=shm; export SHMEM_RPC_SAME_HOST=1;; esac
W=$(mktemp -d /tmp/rpcidle/w.XXXX)
FI_OFI_RXM_USE_SRX=0 "$BIN/rpc_ctx" server "$W/a" "$W/k" "$PROV" "$N" thread >"$W/log" 2>&1 &
SP=$!
for _ in $(seq 200); do [ -s "$W/a" ] && break; sleep 0.05; done
# one call to every context, so the server has had clients
timeout 30 "$BIN/rpc_ctx" client "$W/a" "$W/k" spread 1 $((N*2)) >/dev/null 2>&1
sleep 0.5
t() { awk '{print $14+$15}' /proc/$SP/stat; }
a=$(t); sleep "$S"; b=$(t)
tck=$(getconf CLK_TCK)
echo "$P nctx=$N idle ${S}s: cpu $(echo "scale=3; ($b-$a)/$tck" | bc) s ($(echo "scale=1; 100*($b-$a)/$tck/$S" | bc) % of one core)"
timeout 30 "$BIN/rpc_ctx" client "$W/a" "$W/k" stop >/dev/null 2>&1
wait $SP
rm -rf "$W"
