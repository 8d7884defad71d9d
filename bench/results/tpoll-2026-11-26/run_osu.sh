#!/bin/bash
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo SHMEM_DIRECT=0 FI_SOCKETS_PE_WAITTIME=0
O=/work/wt/tpoll/bench/results/tpoll-2026-11-26
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for bench in osu_put_lat osu_get_lat; do
  for side in before after before after; do
    b=/work/wt/tpoll/build; [ $side = before ] && b=/tmp/tpoll-before
    echo "== $bench $side"
    SHMEM_OFI_PROVIDER='tcp;ofi_rxm' chrt -r 1 $b/tools/oshrun/oshrun -n 2 --timeout 120 $b/bench/$bench -m 8:64k -r 3 --csv $O/osu.csv --label "tcp-$side" 2>&1 | grep -v "^#"
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
