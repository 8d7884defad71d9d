#!/bin/bash
# The harness of the variant experiments (README.md here). The PQX_* variables
# were temporary hooks in a scratch build, not in the tree: PQX_IDLE (thread
# started, blocks on its stop pipe), PQX_TS (FI_THREAD_SAFE with the thread
# off), PQX_WAITFD / PQX_WAITCQ (the FI_WAIT_FD CQ with the thread off),
# PQX_FD (FI_WAIT_FD, not FI_WAIT_POLLFD), PQX_SKIPCQ=N (CQ read every Nth
# wait turn). Rows: raw = raw_fi put_lat --dc; base = main at 4c5812e.
# usage: pq-exp.sh ROUNDS ITERS OUTCSV variant... ; variant = name:ENV=V,ENV=V  (special name raw = raw dc, base = base build)
R=$1; I=$2; OUT=$3; shift 3
B=/work/wt/pq/build; BB=/tmp/pq-base/build
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo SHMEM_DIRECT=0 FI_SOCKETS_PE_WAITTIME=0
PROV=${PROV:-tcp;ofi_rxm}
NICE=${NICE:-nice -n -15}
for r in $(seq 1 $R); do
  vs=("$@"); if [ $((r%2)) = 0 ]; then vs=($(printf '%s\n' "$@" | tac)); fi
  for v in "${vs[@]}"; do
    name=${v%%:*}; envs=${v#*:}; [ "$envs" = "$v" ] && envs=
    e=(); IFS=, read -ra e <<<"$envs"
    case $name in
      raw*) out=$($NICE env "${e[@]}" timeout 30 $B/bench/raw_fi put_lat -p "$PROV" --dc -m 8 -i $I 2>&1);;
      rawinj*) out=$($NICE env "${e[@]}" timeout 30 $B/bench/raw_fi put_lat -p "$PROV" -m 8 -i $I 2>&1);;
      base*) out=$($NICE env "${e[@]}" SHMEM_OFI_PROVIDER="$PROV" timeout 30 $BB/tools/oshrun/oshrun -n 2 $BB/bench/osu_put_lat -m 8 -i $I 2>&1);;
      *) out=$($NICE env "${e[@]}" SHMEM_OFI_PROVIDER="$PROV" timeout 30 $B/tools/oshrun/oshrun -n 2 $B/bench/osu_put_lat -m 8 -i $I 2>&1);;
    esac
    val=$(awk '$1=="8"{print $2; exit}' <<<"$out")
    echo "$r,$name,$val,$(cut -d' ' -f1 /proc/loadavg)" >>$OUT
  done
done
awk -F, '{n[$2]++; v[$2,n[$2]]=$3} END{for(k in n){m=n[k]; for(i=1;i<=m;i++)a[i]=v[k,i]; for(i=2;i<=m;i++){t=a[i];for(j=i-1;j>=1&&a[j]>t;j--)a[j+1]=a[j];a[j+1]=t} printf "%-8s n=%d median %.2f  min %.2f max %.2f\n",k,m,(m%2?a[(m+1)/2]:(a[m/2]+a[m/2+1])/2),a[1],a[m]}}' $OUT | sort
