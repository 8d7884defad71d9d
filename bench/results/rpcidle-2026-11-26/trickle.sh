#!/usr/bin/env bash
# trickle.sh BIN PROV NCTX PERIOD_MS SECS: server CPU while a client calls every PERIOD_MS
BIN=$1; P=$2; N=$3; PER=$4; S=$5
case $P in shm) PROV=shm; export SHMEM_RPC_SAME_HOST=0;; tcp) PROV="tcp;ofi_rxm"; export FI_TCP_IFACE=lo SHMEM_RPC_SAME_HOST=0;; sq) PROV=shm; export SHMEM_RPC_SAME_HOST=1;; esac
W=$(mktemp -d /tmp/rpcidle/w.XXXX)
FI_OFI_RXM_USE_SRX=0 "$BIN/rpc_ctx" server "$W/a" "$W/k" "$PROV" "$N" thread >"$W/log" 2>&1 &
SP=$!
for _ in $(seq 200); do [ -s "$W/a" ] && break; sleep 0.05; done
sleep 0.3
t() { awk '{print $14+$15}' /proc/$SP/stat; }
a=$(t); out=$(/tmp/rpcidle/trickle "$W/a" "$W/k" rate "$PER" "$S"); b=$(t)
echo "$P nctx=$N call every ${PER} ms for ${S}s ($out): server cpu $(echo "scale=2; ($b-$a)/100" | bc) s = $(echo "scale=1; ($b-$a)/$S" | bc) % of one core"
if [ "${IDLE:-0}" -gt 0 ]; then /tmp/rpcidle/trickle "$W/a" "$W/k" idle "$IDLE"; fi
timeout 30 "$BIN/rpc_ctx" client "$W/a" "$W/k" stop >/dev/null 2>&1
wait $SP; rm -rf "$W"
