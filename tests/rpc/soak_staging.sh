#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# soak_staging.sh BINDIR OSHRUN SECONDS [PROV]: the staging example
# (examples/staging) under random kills, for SECONDS.
# A 2-PE job hands 64 KiB steps to staging_server in runs of 100 steps;
# every 0.3-1.5 s (random) the soak SIGKILLs the server and restarts it
# (about 2 in 3 times) or SIGKILLs one PE of the running job, waits for the
# job to end, and starts it again from the same first step (so the server is
# sent steps it already has). A job that ends by itself must succeed; the
# next one goes on from where it stopped. At the end the last job runs to
# completion, the server is stopped cleanly and staging_check reads the file:
# every step a PE logged as acknowledged is there exactly once with its data,
# no (PE, step) twice, no torn record. Then the checker must catch a record
# appended twice and a torn last record, and a restarted server must cut the
# torn record away. Every process started here is reaped
# by PID; /dev/shm files named after a killed pid are removed (as oshrun's
# sweeper would) and checked gone; the work dir is removed (procs.sh).
# SOAK_TICKS_MIN / SOAK_TICKS_SPAN (tenths of a second, default 3 / 13) set
# the kill interval, SOAK_STEPS the steps of a job (100); STAGING_DEBUG=1
# makes the PEs print each failed resend; SOAK_KEEP=DIR copies the work dir
# (logs, file, acknowledgements) there when the soak fails.
set -u
BIN=$1 OSHRUN=$2 SECONDS_RUN=$3 PROV=${4:-shm}
# shellcheck source=tests/rpc/procs.sh
source "$(dirname "$0")/procs.sh"
procs_setup "$PROV" orpc-soak-staging
case $PROV in
  shm | sq) export SHMEM_RPC_PROVIDER=shm SHMEM_OFI_PROVIDER=shm ;;
  tcp) export SHMEM_RPC_PROVIDER="tcp;ofi_rxm" SHMEM_OFI_PROVIDER="tcp;ofi_rxm" ;;
esac
ls /dev/shm >"$W/shm.before" 2>/dev/null
NP=2 STEPS=${SOAK_STEPS:-100} BYTES=$((64 << 10)) CUS=2000
STARTED=() # every pid of ours that may have named files in /dev/shm

fail() {
  echo "FAIL [soak_staging/$PROV]: $*"
  [ -n "${SOAK_KEEP:-}" ] && cp -r "$W" "$SOAK_KEEP" && echo "work dir copied to $SOAK_KEEP"
  for f in "$W"/*.log; do echo "== $f"; tail -n "${SOAK_TAIL:-8}" "$f"; done
  exit 1
}

OLD_ADDR=""
start_server() {
  "$BIN/staging_server" "$W/addr" "$W/key" "$W/out.dat" >>"$W/server.log" 2>&1 &
  SRV=$!
  PIDS+=("$SRV")
  STARTED+=("$SRV")
  for _ in $(seq 400); do
    [ -s "$W/addr" ] && [ "$(cat "$W/addr")" != "$OLD_ADDR" ] && { OLD_ADDR=$(cat "$W/addr"); return 0; }
    kill -0 "$SRV" 2>/dev/null || fail "server died at start"
    sleep 0.05
  done
  fail "server wrote no address"
}
# What a supervisor does for a SIGKILLed process: reap it, remove the shm
# provider's region files named after its pid (only ones made since the start).
sweep_dead() {
  wait "$1" 2>/dev/null
  local f
  for f in /dev/shm/"$1":*; do
    [ -e "$f" ] || continue
    grep -qxF "${f#/dev/shm/}" "$W/shm.before" || rm -f "$f"
  done
}

FIRST=0 JOB="" JOB_PES=""
start_job() {
  "$OSHRUN" -n $NP "$BIN/staging_pe" "$W/addr" "$W/key" "$STEPS" $BYTES $CUS "$W/ack" $FIRST \
    >>"$W/job.log" 2>&1 &
  JOB=$!
  PIDS+=("$JOB")
  STARTED+=("$JOB")
  JOB_PES=""
}
# The PEs are oshrun's children (and its sweeper, which is not a PE: it has
# no "staging_pe" in its command line).
job_pes() {
  local p
  JOB_PES=""
  for p in $(pgrep -P "$JOB" 2>/dev/null); do
    case $(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | head -1) in
      */staging_pe | staging_pe) JOB_PES="$JOB_PES $p" ;;
    esac
  done
  for p in $JOB_PES; do STARTED+=("$p"); done
}

t_start=$(date +%s.%N)
server_kills=0 job_kills=0 jobs_done=0 skipped=0
start_server
start_job
end=$(($(date +%s) + SECONDS_RUN))
job_check() { # a job that ended by itself must have succeeded; the next goes on
  kill -0 "$JOB" 2>/dev/null && return 0
  wait "$JOB"
  local rc=$?
  [ $rc = 0 ] || fail "a job that was not killed failed (rc $rc)"
  jobs_done=$((jobs_done + 1))
  FIRST=$((FIRST + STEPS))
  start_job
}
while [ "$(date +%s)" -lt "$end" ]; do
  # 0.3-1.5 s until the next kill (SOAK_TICKS_MIN + 0..SOAK_TICKS_SPAN-1
  # tenths), keeping a job running all the while
  ticks=$((${SOAK_TICKS_MIN:-3} + RANDOM % ${SOAK_TICKS_SPAN:-13}))
  for _ in $(seq $ticks); do sleep 0.1; job_check; done
  echo "$(date +%T.%N) kill" >>"$W/soak.log"
  if [ $((RANDOM % 3)) -lt 2 ]; then
    kill -KILL "$SRV" 2>/dev/null
    sweep_dead "$SRV"
    server_kills=$((server_kills + 1))
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 * r / 32767 }')"
    start_server
  else
    job_pes
    read -r -a pes <<<"$JOB_PES"
    [ ${#pes[@]} -gt 0 ] || { skipped=$((skipped + 1)); continue; } # still starting
    victim=${pes[$((RANDOM % ${#pes[@]}))]}
    kill -KILL "$victim" 2>/dev/null
    # oshrun sees a PE die, ends the job and reaps the others.
    for _ in $(seq 300); do kill -0 "$JOB" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$JOB" 2>/dev/null && fail "job not ended 30 s after PE $victim was killed"
    wait "$JOB"
    for p in $JOB_PES; do
      [ -d "/proc/$p" ] && [ "$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)" = "$JOB" ] &&
        fail "PE $p outlived its job"
      sweep_dead "$p"
    done
    job_kills=$((job_kills + 1))
    start_job # the same steps again: the server has some of them already
  fi
done
# The last job runs to completion against a live server.
for _ in $(seq 1200); do kill -0 "$JOB" 2>/dev/null || break; sleep 0.1; done
kill -0 "$JOB" 2>/dev/null && fail "the last job did not end within 120 s"
wait "$JOB" || fail "the last job failed"
jobs_done=$((jobs_done + 1))
kill -TERM "$SRV"
wait "$SRV" || fail "server stopped with an error"
PIDS=()

"$BIN/staging_check" "$W/out.dat" "$W"/ack.* >"$W/check.log" 2>&1 || { cat "$W/check.log"; fail "check"; }
acks=$(cat "$W"/ack.* | wc -l)
# The last job's steps were all acknowledged: the job finished.
for pe in $(seq 0 $((NP - 1))); do
  for s in $(seq $FIRST $((FIRST + STEPS - 1))); do
    grep -qx "$pe $s" "$W/ack.$pe" || fail "PE $pe step $s of the last job never acknowledged"
  done
done
retries=$(sed -n 's/.*retries \([0-9]*\);.*/\1/p' "$W/job.log" | awk '{ s += $1 } END { print s + 0 }')
ondisk=$(grep -c ": already on disk$" "$W/server.log")
torn=$(grep -c "dropping" "$W/server.log")
[ "$server_kills" -ge 1 ] || fail "no server was killed (run longer)"

# The checker and the restart scan on files made bad on purpose: a record
# repeated (the checker must see the duplicate), then a torn record at the
# end (the checker must refuse it; a restarted server must cut it away).
rec=$((32 + BYTES))
cp "$W/out.dat" "$W/good.dat"
head -c $rec "$W/good.dat" >>"$W/out.dat"
"$BIN/staging_check" "$W/out.dat" >"$W/bad.log" 2>&1 && fail "staging_check missed a duplicate record"
grep -q "1 records duplicate" "$W/bad.log" || fail "duplicate not reported: $(cat "$W/bad.log")"
cp "$W/good.dat" "$W/out.dat"
head -c $((rec - 100)) "$W/good.dat" >>"$W/out.dat"
"$BIN/staging_check" "$W/out.dat" >"$W/bad.log" 2>&1 && fail "staging_check missed a torn record"
grep -q "$((rec - 100)) bytes after the last complete record" "$W/bad.log" ||
  fail "torn record not reported: $(cat "$W/bad.log")"
start_server
kill -TERM "$SRV"
wait "$SRV" || fail "server stopped with an error"
PIDS=()
grep -q "dropping $((rec - 100)) bytes" "$W/server.log" || fail "the restarted server kept a torn record"
cmp -s "$W/out.dat" "$W/good.dat" || fail "the restarted server's file is not the good one"
for f in /dev/shm/*; do
  [ -e "$f" ] || continue
  grep -qxF "${f#/dev/shm/}" "$W/shm.before" && continue
  for p in "${STARTED[@]}"; do
    case $f in /dev/shm/"$p":*) fail "left in /dev/shm: $f" ;; esac
  done
done
t_end=$(date +%s.%N)
echo "soak_staging [$PROV] ${SECONDS_RUN}s (whole run $(awk -v a="$t_start" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }') s): server killed+restarted $server_kills times, jobs killed+restarted $job_kills, jobs completed $jobs_done ($STEPS steps x $NP PEs of $BYTES B); $acks acknowledgements logged, $retries resends by PEs of finished jobs, $ondisk hand-offs answered from disk, torn tails cut $torn"
cat "$W/check.log"
echo "PASS [soak_staging/$PROV]"
