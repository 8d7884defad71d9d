#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Collective calls (issue #18 item 3): run_coll.sh BINDIR shm|tcp|sq SCENARIO
#  small:  services of 1 member (one server), 2 (one server, 2 contexts) and
#          3 (three servers joined): gather, sum/min/max, a combine callback,
#          every fanout and two roots; a failing member named; a wrong key.
#  large:  5 members (servers of 2 and 3 contexts joined) and 8 (four
#          servers of 2 contexts): the same.
#  faults: 5 members (a server of 2 contexts and three of 1): a member
#          SIGSTOPped fails the call within its deadline (4 s) naming it, the
#          service answers again after SIGCONT; a member SIGKILLed is named
#          the same way; the others still stop cleanly. A member whose key
#          differs drops the request its parent forwards: named (every hop
#          checks the key).
# Reaps every process it started (procs.sh).
set -u
BIN=$1
PROV=$2
SC=$3
source "$(dirname "$0")/procs.sh"
procs_setup "$PROV" orpc-coll
export SHMEM_RPC_AUTH_KEY=00112233445566778899aabbccddeef0

fail() { echo "FAIL [$PROV/$SC]: $*"; for f in "$W"/s*.log; do [ -f "$f" ] && tail -3 "$f"; done; exit 1; }

SPIDS=()
# start_servers NCTX...: one server per argument, joined into $W/svc.addr.
start_servers() {
  SPIDS=()
  local i=0 files=()
  for nc in "$@"; do
    i=$((i + 1))
    rm -f "$W/s$i.addr"
    key=$SHMEM_RPC_AUTH_KEY
    [ "$i" = "${ODD_KEY_SERVER:-0}" ] && key=ffffffffffffffffffffffffffffffff
    SHMEM_RPC_AUTH_KEY=$key FI_OFI_RXM_USE_SRX=0 "$BIN/rpc_coll" server "$W/s$i.addr" "$PROVIDER" "$nc" >"$W/s$i.log" 2>&1 &
    SPIDS+=($!); PIDS+=($!)
    files+=("$W/s$i.addr")
  done
  for f in "${files[@]}"; do
    for _ in $(seq 400); do [ -s "$f" ] && break; sleep 0.05; done
    [ -s "$f" ] || fail "a server wrote no address ($f)"
  done
  if [ ${#files[@]} = 1 ]; then
    cp "${files[0]}" "$W/svc.addr"
  else
    "$BIN/rpc_coll" join "$W/svc.addr" "${files[@]}" || fail "join"
  fi
}
client() { timeout 100 "$BIN/rpc_coll" client "$W/svc.addr" "$@"; }
# stop_servers [EXPECT_FAIL]: a collective stop, then every server exits 0.
stop_servers() {
  if [ $# = 0 ]; then client stop || fail "collective stop"; else client stop >/dev/null 2>&1; fi
  for p in "${SPIDS[@]}"; do
    [ "$p" = dead ] && continue
    wait "$p" || fail "a server exited with $?"
  done
}
# members N NCTX...: the whole check over one layout.
members() {
  local n=$1; shift
  start_servers "$@"
  client basic "$n" || fail "basic over $n members"
  client fail "$n" || fail "failures over $n members"
  client auth "$n" || fail "wrong key over $n members"
  stop_servers
}
# pid_of MEMBER: the pid of the process serving it.
pid_of() { client pids | awk -v m="$1" '$1 == m { print $2 }'; }

case $SC in
small)
  members 1 1
  members 2 2
  members 3 1 1 1
  ;;
large)
  members 5 2 3
  members 8 2 2 2 2
  ;;
faults)
  start_servers 2 1 1 1
  client basic 5 >/dev/null || fail "basic over 5 members"
  p4=$(pid_of 4); p3=$(pid_of 3)
  [ -n "$p4" ] && [ -n "$p3" ] && [ "$p4" = "${SPIDS[3]}" ] && [ "$p3" = "${SPIDS[2]}" ] ||
    fail "members 3 and 4 are not the third and fourth servers (pids $p3 $p4)"
  # Stopped: member 4 (a grandchild of the root in a binary tree).
  kill -STOP "$p4"
  client stalled 5 4 4000 || { kill -CONT "$p4"; fail "a stopped member"; }
  kill -CONT "$p4"
  client pids >/dev/null || fail "the service does not answer after SIGCONT"
  # Killed: member 3.
  kill -KILL "$p3"
  wait "$p3" 2>/dev/null
  SPIDS[2]=dead
  client stalled 5 3 4000 || fail "a killed member"
  stop_servers expect_fail
  # Member 2 (the third server) has another key: its parent's request is dropped there.
  ODD_KEY_SERVER=3 start_servers 1 1 1
  client stalled 3 2 4000 || fail "a member with another key"
  client stop >/dev/null 2>&1
  kill -TERM "${SPIDS[2]}"
  for p in "${SPIDS[@]}"; do wait "$p" || fail "a server exited with $?"; done
  ;;
*) echo "unknown scenario $SC"; exit 2 ;;
esac
echo "PASS [$PROV/$SC]"
