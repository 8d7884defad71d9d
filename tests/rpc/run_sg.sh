#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Scatter-gather and strided bulk descriptors: run_sg.sh BINDIR shm|tcp|sq
# Starts an sg_test server, runs every client mode against it, stops it,
# and reaps every process it started (only those PIDs) on any exit.
set -u
BIN=$1
PROV=$2
source "$(dirname "$0")/procs.sh"
procs_setup "$PROV" orpc-sg

fail() { echo "FAIL [$PROV/sg]: $*"; [ -f "$W/server.log" ] && tail -5 "$W/server.log"; exit 1; }

FI_OFI_RXM_USE_SRX=0 "$BIN/sg_test" server "$W/srv.addr" "$W/srv.key" "$PROVIDER" \
    >"$W/server.log" 2>&1 &
SRV_PID=$!
PIDS+=("$SRV_PID")
for _ in $(seq 200); do
  [ -s "$W/srv.addr" ] && break
  kill -0 "$SRV_PID" 2>/dev/null || fail "server died at start"
  sleep 0.05
done
[ -s "$W/srv.addr" ] || fail "server wrote no address"

client() { timeout 100 "$BIN/sg_test" client "$W/srv.addr" "$W/srv.key" "$@"; }
for mode in list strided empty bad expire; do
  client "$mode" || fail "$mode"
done
client stop || fail "stop"
wait "$SRV_PID" || fail "server exited with $?"
cat "$W/server.log"
