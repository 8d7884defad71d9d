#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# soak.sh OSHRUN SOAK_EXE RPC_BINDIR SECONDS PROVIDER
#
# Runs, at the same time and for SECONDS:
#   - a 4-PE SHMEM job (soak.c: mixed RMA/AMO/collectives, contexts and teams
#     made and destroyed every round, each PE's RSS checked flat);
#   - an RPC server with clients coming and going (rpc_client churn), whose
#     memory (malloc in use and RSS) must stay flat over the client lifetimes.
# Every process it starts is reaped on any exit (by PID).
set -u
OSHRUN=$1 SOAK=$2 BIN=$3 SECS=$4 PROV=$5
source "$(dirname "$0")/../rpc/procs.sh"
procs_setup "$PROV" soak
[ "$PROV" = tcp ] && export SHMEM_DIRECT=0
fail() { echo "soak FAIL [$PROV]: $*"; exit 1; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
client() { timeout 100 "$BIN/rpc_client" "$W/srv.addr" "$W/srv.key" "$@"; }
stat_of() { client stats | sed -n "s/^$1=//p"; }

export FI_OFI_RXM_USE_SRX=0 SHMEM_RPC_PEER_IDLE=2000
"$BIN/rpc_server" -a "$W/srv.addr" -k "$W/srv.key" -p "$PROVIDER" >"$W/server.log" 2>&1 &
SRV=$!
PIDS+=("$SRV")
for _ in $(seq 200); do
  [ -s "$W/srv.addr" ] && break
  kill -0 "$SRV" 2>/dev/null || fail "RPC server died at start: $(cat "$W/server.log")"
  sleep 0.05
done
[ -s "$W/srv.addr" ] || fail "RPC server wrote no address"
client churn 20 >/dev/null || fail "warm-up churn"
rss0=$(rss_kb "$SRV")
heap0=$(stat_of heap_used)

SHMEM_OFI_PROVIDER=$PROVIDER "$OSHRUN" -n 4 --timeout $((SECS + 120)) "$SOAK" "$SECS" \
    >"$W/job.log" 2>&1 &
JOB=$!
PIDS+=("$JOB")
lifetimes=0
while kill -0 "$JOB" 2>/dev/null; do
  client churn 10 >>"$W/churn.log" 2>&1 || fail "a churn client failed: $(tail -3 "$W/churn.log")"
  lifetimes=$((lifetimes + 10))
done
wait "$JOB"
jrc=$?
cat "$W/job.log"
[ "$jrc" -eq 0 ] || fail "the SHMEM job failed (status $jrc)"
rss1=$(rss_kb "$SRV")
heap1=$(stat_of heap_used)
echo "RPC server: $lifetimes client lifetimes; RSS $rss0 -> $rss1 kB; malloc in use $heap0 -> $heap1 B"
# Limits as in tests/rpc (churn): malloc in use flat (256 kB), RSS within 2 MiB + 6.5 kB per lifetime on rxm.
[ $((heap1 - heap0)) -le 262144 ] || fail "RPC server heap grew by $((heap1 - heap0)) B"
rss_allow=$((2048 + lifetimes * 7))
[ $((rss1 - rss0)) -le "$rss_allow" ] || fail "RPC server RSS grew by $((rss1 - rss0)) kB (allowed $rss_allow)"
client stop >/dev/null || fail "stop"
wait "$SRV" || fail "RPC server exited with $?"
echo "soak [$PROV]: passed"
