#!/usr/bin/env bash
# A/B of the progress thread's idle policy: new (thread_idle) vs old (rpc_idle_on), alternating.
cd /work/wt/rpcidle
B=$PWD/build/tests/rpc
set_variant() {
  if [ "$1" = old ]; then sed -i 's/^            thread_idle(r, &idle, last_gap);/            rpc_idle_on(\&idle, r, NULL);/' src/rpc/progress.c
  else sed -i 's/^            rpc_idle_on(&idle, r, NULL);$/            thread_idle(r, \&idle, last_gap);/' src/rpc/progress.c; fi
  # (only the thread loop's call: the other rpc_idle_on uses are not indented 12)
  cmake --build build -j2 >/dev/null 2>&1
}
for v in "$@"; do
  set_variant $v
  echo "=== variant $v ($(grep -c 'thread_idle(r, &idle, last_gap);' src/rpc/progress.c) thread_idle calls) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /tmp/rpcidle/idle_cpu.sh $B sq 4 5
  IDLE=5 /tmp/rpcidle/trickle.sh $B sq 4 5 5
  IDLE=5 /tmp/rpcidle/trickle.sh $B shm 4 5 5
  SHMEM_RPC_SAME_HOST=1 timeout 200 build/bench/rpc/rpc_rate -p shm --contexts 1,4 -c 1 -w 1 -t 2 -r 1 2>&1 | tail -3
  SHMEM_RPC_SAME_HOST=1 timeout 200 build/bench/rpc/rpc_rate -p shm --contexts 1,4 -c 4 -w 8 -t 2 -r 1 2>&1 | tail -3
done
set_variant new
