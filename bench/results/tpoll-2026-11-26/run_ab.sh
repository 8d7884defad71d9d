#!/bin/bash
export FI_TCP_IFACE=lo SHMEM_DIRECT=0 SHMEM_OFI_PROVIDER='tcp;ofi_rxm'
A=/work/wt/tpoll/build; B=/tmp/tpoll-before
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2 3 4 5; do
  raw=$(chrt -r 1 $A/bench/raw_fi put_lat -p 'tcp;ofi_rxm' --dc -m 8 -i 3000 2>&1 | awk '$1=="8"{print $2; exit}')
  bef=$(chrt -r 1 $B/tools/oshrun/oshrun -n 2 $B/bench/osu_put_lat -m 8 -i 3000 2>&1 | awk '$1=="8"{print $2; exit}')
  wt=$(SHMEM_PROGRESS_THREAD=wait chrt -r 1 $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | awk '$1=="8"{print $2; exit}')
  pl=$(SHMEM_PROGRESS_THREAD=poll chrt -r 1 $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | awk '$1=="8"{print $2; exit}')
  of=$(SHMEM_PROGRESS_THREAD=off chrt -r 1 $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | awk '$1=="8"{print $2; exit}')
  mrp=$(SHMEM_PROGRESS_THREAD=poll chrt -r 1 $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_mr -m 8 -i 200 2>&1 | awk '$1=="8"{print $2; exit}')
  mrw=$(SHMEM_PROGRESS_THREAD=wait chrt -r 1 $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_mr -m 8 -i 200 2>&1 | awk '$1=="8"{print $2; exit}')
  rmr=$(chrt -r 1 $A/bench/raw_fi msg_rate -p 'tcp;ofi_rxm' -i 200 2>&1 | awk '$1=="8"{print $2; exit}')
  echo "round $r raw_dc $raw before $bef wait $wt poll $pl off $of | mr poll $mrp wait $mrw raw $rmr"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
