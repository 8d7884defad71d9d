#!/bin/bash
# A/B of waiting same-host RPC clients (main vs cwait), on 2 CPUs of the
# device (taskset -c 0,1: this VM's core count, quiet) and on all 16.
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee "$OUT/ab.txt") 2>&1
echo "== $(date -u) $(nproc) cores"
LP=$D/lib:/usr/lib/x86_64-linux-gnu/pmix2/lib
[ -d /usr/lib/x86_64-linux-gnu/pmix2 ] || cp -a "$D/pmix2" /usr/lib/x86_64-linux-gnu/
cd /tmp
run() { # build cpus args...
    local b=$1 cpus=$2; shift 2
    LD_LIBRARY_PATH=$D/$b/lib:$LP timeout 120 taskset -c $cpus $D/$b/bin/rpc_rate "$@" 2>&1 | grep -E '^[0-9]'
}
for cpus in 0,1 0-15; do
  for w in 0 20; do
    [ $cpus = 0-15 ] && [ $w = 20 ] && continue
    for round in 1 2 3; do
      for b in main cwait; do
        echo "cpus=$cpus W=$w round=$round build=$b: $(run $b $cpus --contexts 1,2 -c 16 -W $w -t 1 -r 1)"
      done
    done
  done
done
echo "== one client, one call in flight (latency-bound), cpus 0,1"
for round in 1 2 3; do for b in main cwait; do
  echo "lat round=$round build=$b: $(run $b 0,1 --contexts 1 -c 1 -w 1 -t 1 -r 1)"
done; done
echo "== done $(date -u)"
