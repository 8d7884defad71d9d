#!/bin/bash
# Quiet A/B on the 16-core machine: tcp put + quiet 8 B, the progress thread's modes vs raw libfabric.
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee "$OUT/inj.txt") 2>&1
[ -d /usr/lib/x86_64-linux-gnu/pmix2 ] || cp -a "$D/pmix2" /usr/lib/x86_64-linux-gnu/
mkdir -p /work/main && ln -sfn "$D/inj/build" /work/main/build
export LD_LIBRARY_PATH=$D/lib
export FI_TCP_IFACE=lo SHMEM_DIRECT=0 SHMEM_OFI_PROVIDER='tcp;ofi_rxm' FI_SOCKETS_IFACE=lo
A=/work/main/build; cd /tmp
echo "== $(date -u) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
lat() { awk '$1=="8"{print $2; exit}'; }
for r in 1 2 3 4 5 6 7; do
  raw=$($A/bench/raw_fi put_lat -p 'tcp;ofi_rxm' --dc -m 8 -i 3000 2>&1 | lat)
  rawi=$($A/bench/raw_fi put_lat -p 'tcp;ofi_rxm' -m 8 -i 3000 2>&1 | lat)
  wt=$($A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | lat)
  pl=$(SHMEM_PROGRESS_THREAD=poll $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | lat)
  of=$(SHMEM_PROGRESS_THREAD=off $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | lat)
  mrw=$($A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_mr -m 8 -i 200 2>&1 | lat)
  mrp=$(SHMEM_PROGRESS_THREAD=poll $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_mr -m 8 -i 200 2>&1 | lat)
  rmr=$($A/bench/raw_fi msg_rate -p 'tcp;ofi_rxm' -i 200 2>&1 | lat)
  echo "round $r raw_dc $raw raw_inject $rawi default_wait $wt poll $pl off $of | rate default $mrw poll $mrp raw_inject $rmr"
done
echo "== sockets"
for r in 1 2 3; do
  raw=$(FI_SOCKETS_PE_WAITTIME=0 $A/bench/raw_fi put_lat -p sockets --dc -m 8 -i 3000 2>&1 | lat)
  df=$(FI_SOCKETS_PE_WAITTIME=0 SHMEM_OFI_PROVIDER=sockets $A/tools/oshrun/oshrun -n 2 $A/bench/osu_put_lat -m 8 -i 3000 2>&1 | lat)
  echo "round $r sockets raw_dc $raw default_poll $df"
done
echo "== done $(date -u)"
