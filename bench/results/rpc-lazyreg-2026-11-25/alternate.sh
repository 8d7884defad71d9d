#!/bin/bash
# alternating: base vs new library, call_cost --bulk 4096, per provider and cache mode
B=/work/wt/mercury/build/bench/rpc/call_cost
for k in 1 2 3 4 5; do
  for prov in shm 'tcp;ofi_rxm'; do
    for c in "" --cache; do
      for impl in base new; do
        if [ $impl = base ]; then L=/tmp/mercury-base/build/src; else L=/work/wt/mercury/build/src; fi
        out=$(FI_TCP_IFACE=lo LD_LIBRARY_PATH=$L timeout 120 $B --bulk 4096 -n 5000 -r 1 -p "$prov" $c 2>&1)
        regs=$(echo "$out" | sed -n 's/.*last round: \([0-9]*\)/\1/p')
        vals=$(echo "$out" | awk '/^expose/ {e=$NF} /^release/ {r=$NF} /^whole/ {w=$NF} /^serve/ {s=$NF} END {print e, s, r, w}')
        echo "$k|$prov|${c:-nocache}|$impl|$vals|$regs|$(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
