#!/bin/bash
# numbers.sh ROUNDS OUTDIR: OSU put/get latency and put_mr, ours (direct, shmfab, tcp) and Open MPI OSHMEM, alternating
R=${1:-3} O=${2:-/tmp/osu/numbers}; mkdir -p $O
OURS=/work/wt/osu/build/prefix/bin/oshrun
one() { # SETUP PROG ROUND
  local s=$1 p=$2 r=$3 f=$O/$s.$p.r$3.out
  local t0=$(date +%s.%N) rc
  case $s in
    direct) timeout 120 $OURS -n 2 /tmp/osu/bin-ours/osu_oshm_$p heap > $f 2>&1; rc=$? ;;
    shmfab) SHMEM_DIRECT=0 timeout 120 $OURS -n 2 /tmp/osu/bin-ours/osu_oshm_$p heap > $f 2>&1; rc=$? ;;
    tcp) SHMEM_DIRECT=0 FI_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo timeout 120 $OURS -n 2 /tmp/osu/bin-ours/osu_oshm_$p heap > $f 2>&1; rc=$? ;;
    ompi) unshare -n bash -c "ip link set lo up; timeout 120 /usr/bin/oshrun --allow-run-as-root --oversubscribe -np 2 /tmp/osu/bin-ompi/osu_oshm_$p heap" > $f 2>&1; rc=$? ;;
  esac
  echo "$s $p r$r rc=$rc $(printf %.1f $(echo "$(date +%s.%N)-$t0"|bc))s load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a $O/log.txt
}
for r in $(seq 1 $R); do
  for p in put get put_mr; do
    for s in direct shmfab tcp ompi; do one $s $p $r; done
  done
done
