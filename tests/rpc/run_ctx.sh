#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Service contexts (issue #18 item 3): run_ctx.sh BINDIR shm|tcp|sq SCENARIO
#  spread:   4 contexts, each its own progress thread, then driven by one
#            application thread each: 3 client processes x 4 threads, every
#            context receives calls (the handler's context index), round
#            robin per client; calls by key land on one context each.
#  safety:   deadlines and auth enforced on every context.
#  shutdown: calls held on every context, the server closes under them:
#            it exits cleanly, each call ends with an error by its deadline.
#  joined:   two servers' addresses joined into one (a parallel service):
#            round robin over every context of both.
#  idle:     4 contexts with their progress threads, called once, then left
#            idle: the server process uses under 10 % of one core over 2 s
#            (sleeping threads: ~3 %; threads that only yield measured 25 %
#            on a machine at load 12, more on a quieter one), and answers again.
# Reaps every process it started (procs.sh).
set -u
BIN=$1
PROV=$2
SC=$3
source "$(dirname "$0")/procs.sh"
procs_setup "$PROV" orpc-ctx

fail() { echo "FAIL [$PROV/$SC]: $*"; [ -f "$W/server.log" ] && tail -5 "$W/server.log"; exit 1; }

# start_server NCTX thread|app: sets SRV_PID
start_server() {
  rm -f "$W/srv.addr"
  FI_OFI_RXM_USE_SRX=0 "$BIN/rpc_ctx" server "$W/srv.addr" "$W/srv.key" "$PROVIDER" "$1" "$2" \
      >"$W/server.log" 2>&1 &
  SRV_PID=$!
  PIDS+=("$SRV_PID")
  for _ in $(seq 200); do
    [ -s "$W/srv.addr" ] && return 0
    kill -0 "$SRV_PID" 2>/dev/null || fail "server died at start"
    sleep 0.05
  done
  fail "server wrote no address"
}
client() { timeout 100 "$BIN/rpc_ctx" client "$W/srv.addr" "$W/srv.key" "$@"; }
stop_server() {
  client stop || fail "stop"
  wait "$SRV_PID" || fail "server exited with $?"
  cat "$W/server.log"
}

case $SC in
spread)
  for mode in thread app; do
    start_server 4 $mode
    grep -q '/ctx=[0-9a-f.]*,[0-9a-f.]*,[0-9a-f.]*$' "$W/srv.addr" ||
      fail "address names no 3 more contexts: $(cat "$W/srv.addr")"
    if [ "$PROV" = sq ]; then
      [ "$(grep -o '\.[0-9a-f]\{16\}' "$W/srv.addr" | sort -u | wc -l)" -ge 4 ] ||
        fail "not every context has its own queue set: $(cat "$W/srv.addr")"
    fi
    cpids=()
    for i in 1 2 3; do client spread 4 40 >"$W/c$i.log" 2>&1 & cpids+=($!); PIDS+=($!); done
    for p in "${cpids[@]}"; do wait "$p" || fail "a spread client failed ($mode): $(cat "$W"/c*.log | grep FAIL)"; done
    cat "$W/c1.log"
    client keyed || fail "keyed ($mode)"
    stop_server
  done
  ;;
safety)
  start_server 4 thread
  client deadline || fail "deadline"
  client auth || fail "auth"
  stop_server
  # The default from the environment, and a bad one refused by name.
  SHMEM_RPC_CONTEXTS=3 start_server 0 thread
  [ "$(client count)" = 3 ] || fail "SHMEM_RPC_CONTEXTS=3 gave $(client count) contexts"
  client spread 1 6 >/dev/null || fail "spread over SHMEM_RPC_CONTEXTS=3"
  stop_server
  for bad in 17 -1; do
    SHMEM_RPC_CONTEXTS=$bad timeout 20 "$BIN/rpc_ctx" server "$W/bad.addr" "$W/bad.key" \
        "$PROVIDER" 0 thread >"$W/bad.log" 2>&1
    rc=$?
    [ $rc = 3 ] || fail "SHMEM_RPC_CONTEXTS=$bad: server exit $rc, want 3 (refused)"
    grep -q 'SHMEM_RPC_CONTEXTS.*want 1\.\.16' "$W/bad.log" ||
      fail "SHMEM_RPC_CONTEXTS=$bad refused without naming it: $(cat "$W/bad.log")"
  done
  ;;
shutdown)
  for mode in thread app; do
    start_server 4 $mode
    client hold 3 || fail "hold ($mode)"
    wait "$SRV_PID" || fail "server exited with $? after closing under held calls ($mode)"
    cat "$W/server.log"
    grep -q 'closed with 12 calls held' "$W/server.log" || fail "server did not hold 12 calls"
  done
  ;;
joined)
  # A parallel service: two server processes (2 and 3 contexts) with one
  # key, joined into one address (orpc_addr_join) naming all 5 contexts.
  export SHMEM_RPC_AUTH_KEY=0123456789abcdef0123456789abcdef
  echo "$SHMEM_RPC_AUTH_KEY" >"$W/srv.key"; chmod 600 "$W/srv.key"
  spids=()
  for s in 1 2; do
    rm -f "$W/s$s.addr"
    FI_OFI_RXM_USE_SRX=0 "$BIN/rpc_ctx" server "$W/s$s.addr" - "$PROVIDER" $((s + 1)) thread \
        >"$W/s$s.log" 2>&1 &
    spids+=($!); PIDS+=($!)
  done
  for s in 1 2; do
    for _ in $(seq 200); do [ -s "$W/s$s.addr" ] && break; sleep 0.05; done
    [ -s "$W/s$s.addr" ] || fail "server $s wrote no address"
  done
  "$BIN/rpc_ctx" join "$W/srv.addr" "$W/s1.addr" "$W/s2.addr" || fail "join"
  cpids=()
  for i in 1 2; do client joined 5 >"$W/j$i.log" 2>&1 & cpids+=($!); PIDS+=($!); done
  for p in "${cpids[@]}"; do wait "$p" || fail "a client of the joined service failed: $(cat "$W"/j*.log | grep FAIL)"; done
  cat "$W/j1.log"
  for s in 1 2; do
    timeout 30 "$BIN/rpc_ctx" client "$W/s$s.addr" "$W/srv.key" stop || fail "stop server $s"
  done
  for p in "${spids[@]}"; do wait "$p" || fail "a joined server exited with $?"; done
  cat "$W"/s1.log "$W"/s2.log
  ;;
idle)
  start_server 4 thread
  client spread 1 8 >/dev/null || fail "spread before idleness"
  sleep 0.5
  cpu() { awk '{print $14 + $15}' "/proc/$SRV_PID/stat"; }
  t0=$(date +%s%N); c0=$(cpu)
  sleep 2
  c1=$(cpu); t1=$(date +%s%N)
  # CPU ticks over wall time, in per cent of one core.
  pct=$(( (c1 - c0) * 1000000000 / $(getconf CLK_TCK) * 100 / (t1 - t0) ))
  echo "idle server, 4 contexts: $((c1 - c0)) ticks in $(( (t1 - t0) / 1000000 )) ms = ${pct} % of one core"
  [ "$pct" -lt 10 ] || fail "an idle 4-context server used ${pct} % of one core (threads spin?)"
  client spread 1 8 >/dev/null || fail "spread after idleness"
  stop_server
  ;;
*) echo "unknown scenario $SC"; exit 2 ;;
esac
echo "PASS [$PROV/$SC]"
