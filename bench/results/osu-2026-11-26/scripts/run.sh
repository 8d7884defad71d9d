#!/bin/bash
# run.sh SETUP BINDIR LAUNCHER  -> runs every program, writes runs/SETUP/*.out and a summary line per run
setup=$1 bindir=$2 launcher=$3
out=/tmp/osu/runs/$setup; mkdir -p $out
case $setup in
  direct|ompi) envs=() ;;
  shmfab) envs=(SHMEM_DIRECT=0) ;;
  tcp) envs=(SHMEM_DIRECT=0 "FI_PROVIDER=tcp;ofi_rxm" FI_TCP_IFACE=lo) ;;
esac
run() { # NAME NP ARGS...
  local name=$1 np=$2; shift 2
  local f=$out/$name.np$np.${1:-noarg}.out
  local t0=$(date +%s.%N)
  env "${envs[@]}" timeout 120 $launcher -n $np $bindir/$name "$@" > $f 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  printf "%-8s %-24s np%-2s %-7s rc=%-3s %6.1fs load=%s\n" $setup $name $np "${1:-}" $rc $(echo "$t1-$t0"|bc) "$(cut -d' ' -f1 /proc/loadavg)" | tee -a $out/summary.txt
}
progs2=${PROGS2:-"put get put_nb get_nb put_overlap put_nb_13 get_nb_13 put_overlap_13 put_mr atomics put_mr_nb get_mr_nb put_mr_nb_13 get_mr_nb_13"}
coll=${COLL:-"barrier broadcast collect fcollect reduce"}
for p in $progs2; do for m in heap global; do run osu_oshm_$p 2 $m; done; done
for p in $coll; do for n in ${NPS:-2 4 8}; do run osu_oshm_$p $n; done; done
