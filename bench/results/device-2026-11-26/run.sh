#!/bin/bash
# Device run (16 cores): RPC service contexts at 16 clients (#18), tcp vs shm
# job start at 8-128 PEs (#16), the PE tests at 16 PEs.
# usage: .dev/run.sh [parts: rpc start tests]
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
PARTS=${*:-"rpc start tests"}
exec > >(tee "$OUT/log.txt") 2>&1
echo "== machine $(date -u)"; nproc; uname -r; ldd --version | head -1; df -h /dev/shm | tail -1
sz=$(df -k /dev/shm | awk 'NR==2{print $2}')
[ "${sz:-0}" -lt 8000000 ] && { mount -o remount,size=32G /dev/shm || mount -t tmpfs -o size=32G tmpfs /dev/shm; df -h /dev/shm | tail -1; }
ulimit -n 65536 2>/dev/null; ulimit -n
[ -d /usr/lib/x86_64-linux-gnu/pmix2 ] || { mkdir -p /usr/lib/x86_64-linux-gnu && cp -a "$D/pmix2" /usr/lib/x86_64-linux-gnu/; }
LP=$D/lib:$D/prefix/lib:/usr/lib/x86_64-linux-gnu/pmix2/lib
gv=$(ldd --version | head -1 | grep -oE '[0-9]+\.[0-9]+$'); gmin=${gv#*.}
if [ -z "${FORCE_LOADER:-}" ] && [ "${gv%%.*}" -ge 2 ] && [ "${gmin:-0}" -ge 36 ]; then
    export LD_LIBRARY_PATH=$LP; export RUN=
else
    echo "glibc $gv < 2.36: the carried loader"
    export RUN="$D/glibc/ld-linux-x86-64.so.2 --library-path $D/glibc:$LP"
fi
# exec'ed programs (under oshrun) go through a wrapper that applies $RUN
mkdir -p /tmp/w
wrap() { printf '#!/bin/bash\nexec $RUN %s "$@"\n' "$1" >/tmp/w/$(basename "$1"); chmod +x /tmp/w/$(basename "$1"); }
wrap "$D/bin/startup"
for t in "$D"/tbin/*; do wrap "$t"; done
OSHRUN="$RUN $D/prefix/bin/oshrun"
cd /tmp
$OSHRUN -n 2 /tmp/w/startup && echo "oshrun works"
export FI_TCP_IFACE=lo

case " $PARTS " in *" rpc "*)
echo "== rpc_rate: service contexts 1,2,4 x clients 1,4,16 (same-host queues, each context its own progress thread)"
timeout 120 $RUN $D/bin/rpc_rate --contexts 1,2,4 -c 1,4,16 -t 1 -r 3 --csv $OUT/rpc_ctx_sq.csv
echo "== rpc_rate: the same through libfabric shm (SHMEM_RPC_SAME_HOST=0)"
SHMEM_RPC_SAME_HOST=0 timeout 90 $RUN $D/bin/rpc_rate -p shm --contexts 1,2,4 -c 4,16 -t 1 -r 3 --csv $OUT/rpc_ctx_shm.csv
echo "== rpc_rate: handlers with 2 us of work"
timeout 60 $RUN $D/bin/rpc_rate --contexts 1,2,4 -c 16 -W 2 -t 1 -r 3
;; esac

case " $PARTS " in *" start "*)
echo "== start: shmem_init + barrier + finalize, whole process, seconds (3 runs, alternating)"
echo "config,npes,run,rc,seconds" >$OUT/start.csv
end=$((SECONDS + 150))
for n in ${START_PES:-8 16 32 64 128}; do for r in 1 2 3; do
    for cfg in shm shm_fab tcp_rxm; do
        [ $SECONDS -gt $end ] && break 3
        case $cfg in
        shm) e=(SHMEM_OFI_PROVIDER=shm) ;;
        shm_fab) e=(SHMEM_OFI_PROVIDER=shm SHMEM_DIRECT=0) ;;
        tcp_rxm) e=("SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_DIRECT=0) ;;
        esac
        t0=$EPOCHREALTIME
        env "${e[@]}" $OSHRUN -n $n --timeout 60 /tmp/w/startup >/tmp/start.log 2>&1; rc=$?
        t1=$EPOCHREALTIME
        awk -v c=$cfg -v n=$n -v r=$r -v rc=$rc -v a=$t0 -v b=$t1 'BEGIN{printf "%s,%d,%d,%d,%.3f\n",c,n,r,rc,b-a}' | tee -a $OUT/start.csv
        [ $rc = 0 ] || tail -5 /tmp/start.log
    done
done; done
;; esac

case " $PARTS " in *" tests "*)
for N in ${TEST_N:-16}; do
echo "== PE tests at $N PEs (the np4 tests of pe, pe_amo, pe_coll, re-run at $N)"
pass=0; fail=0; end=$((SECONDS + ${TESTS_S:-170}))
while IFS=$'\t' read -r name envs prog args; do
    [ $SECONDS -gt $end ] && { echo "(time budget reached)"; break; }
    args=${args//NPES/$N}
    t0=$SECONDS
    eval "env $envs PE_WATCHDOG_S=40 timeout 50 $OSHRUN -n $N --timeout 45 /tmp/w/$prog $args" >/tmp/t.log 2>&1; rc=$?
    if [ $rc = 0 ]; then pass=$((pass+1)); echo "PASS $name ($((SECONDS-t0)) s)"; else fail=$((fail+1)); echo "FAIL $name rc=$rc ($((SECONDS-t0)) s)"; tail -4 /tmp/t.log; fi
done < $D/tests.txt
echo "tests at $N PEs: $pass passed, $fail failed"
done
;; esac
ls /dev/shm | wc -l
echo "== done $(date -u)"
