#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Data-service peers survive each other (issue #19):
#   run_faults.sh BINDIR shm|tcp server_call|server_pull|server_push
# server_*: 3 client processes (rpc_faults) each have calls in flight when the
#   server dies: SIGKILLed by this script while it sits on them (call), or by
#   itself with a bulk pull/push of a client's buffer in flight (pull, push).
#   Every pending call of every client must end with an ORPC_ error within
#   its timeout (TIMEOUT_MS); the server is restarted at a new address, and
#   each client must look it up and make a checked call.
#   run_faults.sh BINDIR shm|tcp|sq client_pull|client_push|client_pull_late|
#                 client_push_late|client_stopped
# client_*: a client (rpc_faults victim_*) has the server pull from / push
#   into its 16 MiB buffer in a loop and is SIGKILLed by this script with a
#   transfer in flight, while a second client (bystander) makes checked
#   echo calls before, during and after (_late: killed before the first
#   transfer starts; client_stopped, shm and sq: SIGSTOPped 2 s first,
#   which the pid checks must not take for dead, then killed). The
#   server's transfer must fail with ORPC_EPEER (tcp: or the provider's
#   ORPC_EFABRIC) within CLIENT_BOUND_MS (2000) of the kill, be counted in
#   bulk_errors, its call slot freed; every bystander call must succeed.
# Every process started here is reaped (procs.sh); libfabric shm's region
# files of a SIGKILLed server (/dev/shm/<pid>:*, named after its pid) are
# removed as its supervisor would, and checked gone.
set -u
BIN=$1
PROV=$2
SC=$3
TIMEOUT_MS=${TIMEOUT_MS:-3000}
source "$(dirname "$0")/procs.sh"
procs_setup "$PROV" orpc-faults
# Region files already there (another job's, of a pid this test may reuse:
# pid_max is 32768 here) are not this test's.
ls /dev/shm >"$W/shm.before" 2>/dev/null

fail() { echo "FAIL [$PROV/$SC]: $*"; for f in "$W"/*.log; do echo "== $f"; tail -8 "$f"; done; exit 1; }

start_server() {
  "$BIN/rpc_server" -a "$W/srv.addr" -k "$W/srv.key" -p "$PROVIDER" "$@" >>"$W/server.log" 2>&1 &
  SRV_PID=$!
  PIDS+=("$SRV_PID")
  for _ in $(seq 200); do
    [ -s "$W/srv.addr" ] && [ "$(cat "$W/srv.addr")" != "${OLD_ADDR:-}" ] && return 0
    kill -0 "$SRV_PID" 2>/dev/null || fail "server died at start"
    sleep 0.05
  done
  fail "server wrote no address"
}
# The dead server's shm regions: named after its pid, left by SIGKILL.
sweep_dead() {
  rm -f /dev/shm/"$1":* 2>/dev/null
  wait "$1" 2>/dev/null
}
client() { timeout 100 "$BIN/rpc_client" "$W/srv.addr" "$W/srv.key" "$@"; }

case $SC in
server_call | server_pull | server_push)
  kind=${SC#server_}
  start_server
  OLD_ADDR=$(cat "$W/srv.addr")
  # Clients 2 and 3 first: their calls are pending when client 1's bulk
  # call makes the server die.
  cpids=()
  for i in 2 3 1; do
    k=call
    [ "$i" = 1 ] && k=$kind
    timeout 60 "$BIN/rpc_faults" "$W/srv.addr" "$W/srv.key" "$k" "$TIMEOUT_MS" >"$W/c$i.log" 2>&1 &
    cpids+=($!); PIDS+=($!)
    [ "$i" = 1 ] || for _ in $(seq 200); do grep -q pending "$W/c$i.log" && break; sleep 0.05; done
  done
  for i in 1 2 3; do
    for _ in $(seq 200); do grep -q pending "$W/c$i.log" && break; sleep 0.05; done
    grep -q pending "$W/c$i.log" || fail "client $i has no calls pending"
  done
  if [ "$kind" = call ]; then
    sleep 0.3
    kill -KILL "$SRV_PID"
  else
    for _ in $(seq 100); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$SRV_PID" 2>/dev/null && fail "the server did not die in its bulk $kind"
    grep -q "dying with a bulk $kind" "$W/server.log" || fail "the server died elsewhere"
  fi
  sweep_dead "$SRV_PID"
  start_server
  for p in "${cpids[@]}"; do
    wait "$p" || fail "a client failed (status $?): $(grep -h FAIL "$W"/c*.log)"
  done
  worst=$(cat "$W"/c*.log | sed -n 's/.* after \([0-9]*\) ms$/\1/p' | sort -n | tail -1)
  codes=$(cat "$W"/c*.log | sed -n 's/^.*: -[0-9]* (\(.*\)) after.*/\1/p' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  echo "server died; 3 clients' $(cat "$W"/c*.log | grep -c ': -[0-9]* (.*) after ') pending calls all failed, the last $worst ms after its issue (timeout $TIMEOUT_MS ms): $codes each looked up the restarted server and called it"
  client stop >/dev/null || fail "stop the restarted server"
  wait "$SRV_PID" || fail "restarted server exited with $?"
  ;;
server_stopped_first)
  # The server is stopped (alive, reading nothing) when a client's first
  # call comes: the call must fail by its timeout; the server is then killed
  # and restarted, and the client must reach the new one. On libfabric shm
  # 1.17 the first message to a server is its name request; one never read,
  # and the peer slot it was sent from reused for the new server, kept every
  # later call from leaving (the soak's 60 s stall).
  start_server
  OLD_ADDR=$(cat "$W/srv.addr")
  kill -STOP "$SRV_PID"
  timeout 60 "$BIN/rpc_faults" "$W/srv.addr" "$W/srv.key" first_stopped "$TIMEOUT_MS" >"$W/c1.log" 2>&1 &
  C_PID=$!; PIDS+=("$C_PID")
  for _ in $(seq 400); do grep -q "first call" "$W/c1.log" && break; sleep 0.05; done
  grep -q "first call" "$W/c1.log" || fail "the first call did not end"
  kill -KILL "$SRV_PID"
  kill -CONT "$SRV_PID" 2>/dev/null
  sweep_dead "$SRV_PID"
  start_server
  wait "$C_PID" || fail "the client failed (status $?): $(grep -h FAIL "$W"/c1.log)"
  echo "$(grep "first call" "$W/c1.log"); then the restarted server: $(grep "restarted server" "$W/c1.log")"
  client stop >/dev/null || fail "stop the restarted server"
  wait "$SRV_PID" || fail "restarted server exited with $?"
  ;;
server_restarts)
  # One client through 12 servers in turn, each killed after the client's
  # calls; every third one is stopped before them (they must fail, the next
  # server must work): more forgotten peers than an instance keeps on shm.
  N=${RESTARTS:-12}
  timeout 120 "$BIN/rpc_faults" "$W/srv.addr" "$W/srv.key" restarts "$TIMEOUT_MS" "$N" >"$W/c1.log" 2>&1 &
  C_PID=$!; PIDS+=("$C_PID")
  OLD_ADDR=""
  for n in $(seq 0 $((N - 1))); do
    start_server
    OLD_ADDR=$(cat "$W/srv.addr")
    stopped=$((n % 3 == 1))
    [ $stopped = 1 ] && kill -STOP "$SRV_PID"
    echo "$n" >"$W/srv.addr.go.tmp" && mv "$W/srv.addr.go.tmp" "$W/srv.addr.go"
    for _ in $(seq 800); do grep -q "^server $n: " "$W/c1.log" && break; kill -0 "$C_PID" 2>/dev/null || break; sleep 0.025; done
    line=$(grep "^server $n: " "$W/c1.log") || fail "no answer about server $n"
    if [ $stopped = 1 ]; then
      echo "$line" | grep -q "^server $n: -" || fail "a call to a stopped server succeeded: $line"
    else
      echo "$line" | grep -q "^server $n: 0 " || fail "server $n (after $(((n + 1) / 3)) stopped ones) not reached: $line"
    fi
    kill -KILL "$SRV_PID"
    kill -CONT "$SRV_PID" 2>/dev/null
    sweep_dead "$SRV_PID"
  done
  wait "$C_PID" || fail "the client failed (status $?): $(grep -h FAIL "$W"/c1.log)"
  ms() { sed -n "s/^server [0-9]*: $1.* after \([0-9]*\) ms$/\1/p" "$W/c1.log" | sort -n | tail -1; }
  echo "one client through $N servers: $(grep -c ': -' "$W/c1.log") stopped before its calls failed (the last after $(ms -) ms, timeout $TIMEOUT_MS ms), every other one answered its 32 KiB and small echo (slowest $(ms 0) ms)"
  ;;
client_pull | client_push | client_pull_late | client_push_late | client_stopped)
  kind=${SC#client_}
  delay=0 stop=0
  case $kind in
    *_late) kind=${kind%_late}; delay=1500 ;;
    stopped) kind=pull; stop=1 ;;
  esac
  BOUND=${CLIENT_BOUND_MS:-2000}
  # The server is single-threaded: a bystander's call that comes while the
  # handler pulls waits for it (the loop until the kill, then the detection).
  BY_TIMEOUT_MS=${BY_TIMEOUT_MS:-8000}
  start_server
  timeout 60 "$BIN/rpc_faults" "$W/srv.addr" "$W/srv.key" bystander "$BY_TIMEOUT_MS" 6 >"$W/by.log" 2>&1 &
  BY_PID=$!; PIDS+=("$BY_PID")
  # Not under timeout(1): the SIGKILL must reach the client itself (the
  # EXIT trap reaps it if the script fails first).
  "$BIN/rpc_faults" "$W/srv.addr" "$W/srv.key" "victim_$kind" "$TIMEOUT_MS" "$delay" >"$W/victim.log" 2>&1 &
  V_PID=$!; PIDS+=("$V_PID")
  started="bulk $kind loop running"
  [ "$delay" = 0 ] || started="bulk $kind loop waits"
  for _ in $(seq 400); do grep -q "$started" "$W/server.log" && break; sleep 0.025; done
  grep -q "$started" "$W/server.log" || fail "the server's bulk $kind loop did not start"
  [ "$delay" = 0 ] && sleep 0.2
  if [ "$stop" = 1 ]; then
    # Alive but stalled (SIGSTOP, 2 s: four liveness checks): the transfer
    # must wait, not fail; it goes on after SIGCONT.
    kill -STOP "$V_PID"
    sleep 2
    grep -q "bulk $kind loop ended" "$W/server.log" && fail "a stopped (live) client was given up: $(grep 'loop ended' "$W/server.log")"
    kill -CONT "$V_PID"
    sleep 0.5
    grep -q "bulk $kind loop ended" "$W/server.log" && fail "a stopped (live) client was given up: $(grep 'loop ended' "$W/server.log")"
  fi
  t_kill=$(date +%s%3N)
  kill -KILL "$V_PID"
  wait "$V_PID" 2>/dev/null
  if [ "$delay" != 0 ]; then
    # Killed before the first transfer: timed from that transfer's start.
    for _ in $(seq 400); do grep -q "bulk $kind loop running" "$W/server.log" && break; sleep 0.025; done
    t_kill=$(sed -n 's/.*first transfer at \([0-9]*\) ms realtime.*/\1/p' "$W/server.log")
    [ -n "$t_kill" ] || fail "the server's first transfer did not start"
  fi
  for _ in $(seq 400); do grep -q "bulk $kind loop ended" "$W/server.log" && break; sleep 0.025; done
  line=$(grep "bulk $kind loop ended" "$W/server.log") || fail "the server's transfer did not end within 10 s of the kill"
  t_err=$(echo "$line" | sed -n 's/.* at \([0-9]*\) ms realtime.*/\1/p')
  took=$((t_err - t_kill))
  echo "$line" | grep -q ": -[0-9]* (" || fail "the transfer did not fail: $line"
  # tcp;ofi_rxm: the provider's error for the reset connection
  # (ORPC_EFABRIC, -3) is reported as it is; ORPC_EPEER where the server
  # can tell the client is dead (its pid on shm, the same-host queues).
  want=": -13 ("
  case $PROV in tcp | fab_*) want=": -13 (\|: -3 (" ;; esac
  echo "$line" | grep -q "$want" || fail "the transfer failed $took ms after the kill, but not with ORPC_EPEER: $line"
  [ "$took" -le "$BOUND" ] || fail "the transfer failed $took ms after the kill (bound $BOUND ms)"
  # The bystander was served during and after; the dead client's share is gone.
  wait "$BY_PID" || fail "the bystander's calls failed: $(grep FAIL "$W/by.log")"
  st=$(client stats) || fail "stats call"
  echo "$st" | grep -q . || fail "no stats"
  sweep_dead "$V_PID"
  client stop >/dev/null || fail "stop the server"
  wait "$SRV_PID" || fail "server exited with $?"
  srv=$(grep "^server: requests" "$W/server.log" | tail -1)
  errs=$(echo "$srv" | sed -n 's/.*bulk-errors \([0-9]*\).*/\1/p')
  [ "${errs:-0}" -ge 1 ] || fail "bulk_errors not counted: $srv"
  live=$(echo "$srv" | sed -n 's/.*live-calls \([0-9]*\).*/\1/p')
  [ "${live:-1}" = 0 ] || fail "the dead client's call was not freed: $srv"
  echo "client killed $([ "$delay" = 0 ] && echo during || echo before) a bulk $kind: the server's transfer failed $took ms after the kill ($line); $(tail -2 "$W/by.log" | head -1); server: $srv"
  ;;
*) echo "unknown scenario $SC"; exit 2 ;;
esac
for f in /dev/shm/*; do
  grep -qxF "${f#/dev/shm/}" "$W/shm.before" && continue
  for p in "${PIDS[@]}"; do
    case $f in /dev/shm/"$p":*) fail "left in /dev/shm: $f" ;; esac
  done
done
echo "PASS [$PROV/$SC]"
