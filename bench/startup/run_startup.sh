#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_startup.sh [--prefix DIR] [--base DIR] [--runs N] [--pes LIST]
#                [--tcp-pes LIST] [--no-peer] [--no-tcp] [--timeout S] [--out DIR]
#
# Start-up cost (issue 16): whole-process wall time of the smallest job,
# shmem_init + shmem_barrier_all + shmem_finalize (bench/startup/startup.c),
# median of N runs. A benchmark, not a test: it fails only when a job does.
#
# Part 1, shm, for each PE count in --pes (default 1 2 4 8; "" skips), runs alternate
# (one of each per round, so a busy machine hurts every column alike):
#   ours       PREFIX/bin/oshrun -n N startup
#   always     the same with SHMEM_FABRIC=always (the fabric opened, libfabric
#              loaded, as every job did before issue 16)
#   base       the same program built against --base (e.g. /work/main/build/prefix)
#   launcher   PREFIX/bin/oshrun -n N /bin/true (the launcher alone)
#   peer       Open MPI's OSHMEM: /usr/bin/oshrun -np N, in a loopback-only
#              network namespace (unshare -n; -rn when not root)
#   at 1 PE also: singleton (startup started without a launcher), ours and base.
# Part 2, for each count in --tcp-pes (default 8 16 32 64): the job on
# tcp;ofi_rxm over lo (SHMEM_DIRECT=0) next to shm (the default: same-host
# direct path) and shm_fab (libfabric's shm provider, SHMEM_DIRECT=0: both
# columns then load and use libfabric), with --base also base_tcp_rxm (the
# --base library on tcp), median of N runs, their ratios, and the
# sockets each PE holds after init and after an all-to-all of puts (min/max
# over PEs, sampled by the program from /proc/self/fd).
#
# --timeout S ends a job that takes longer (default 120 s; counted as failed).
# Writes OUT/startup.csv (part,config,npes,run,seconds), OUT/sockets.csv
# (provider,when,npes,sockets_min,sockets_max,rss_mean_kb) and
# OUT/summary.txt (the tables printed).
set -u

usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; }

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PREFIX=$REPO/build/prefix
BASE=
RUNS=11
PES="1 2 4 8"
TCP_PES="8 16 32 64"
PEER=1
TCP=1
OUT=
TIMEOUT=120
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX=${2:?}; shift 2 ;;
    --base) BASE=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --pes) PES=${2?}; shift 2 ;;
    --tcp-pes) TCP_PES=${2?}; shift 2 ;;
    --no-peer) PEER=0; shift ;;
    --no-tcp) TCP=0; shift ;;
    --out) OUT=${2:?}; shift 2 ;;
    --timeout) TIMEOUT=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_startup.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
case "$RUNS" in ''|*[!0-9]*) echo "run_startup.sh: --runs takes a number" >&2; exit 2 ;; esac
case "$TIMEOUT" in ''|*[!0-9]*) echo "run_startup.sh: --timeout takes seconds" >&2; exit 2 ;; esac
OUT=${OUT:-$PWD/startup-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/bin" "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
say() { echo "run_startup.sh: $*"; }

# ---- build the program with each library ----------------------------------
build() { # oshcc out
    "$1" -O2 "$HERE/startup.c" -o "$2" >>"$OUT/logs/build.log" 2>&1
}
[ -x "$PREFIX/bin/oshcc" ] || { say "no installed ofishmem at $PREFIX (--prefix)"; exit 2; }
build "$PREFIX/bin/oshcc" "$OUT/bin/ours" || { say "build failed: $OUT/logs/build.log"; exit 2; }
if [ -n "$BASE" ]; then
    build "$BASE/bin/oshcc" "$OUT/bin/base" || { say "build with --base failed"; exit 2; }
fi
if [ "$PEER" = 1 ]; then
    if [ -x /usr/bin/oshcc ] && [ -x /usr/bin/oshrun ] && command -v unshare >/dev/null &&
        build /usr/bin/oshcc "$OUT/bin/peer"; then :; else
        say "Open MPI OSHMEM (openmpi-bin, libopenmpi-dev) or unshare missing: no peer column"
        PEER=0
    fi
fi

# ---- timing ------------------------------------------------------------------
FAILED=0
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$OUT/startup.csv"
TOLERATED=0
# timed PART CONFIG NPES RUN CMD... : appends one row; the command's output
# goes to a log. Wall time from bash's own clock (no fork around the job).
# Open MPI 4.1's OSHMEM crashes inside shmem_finalize here (see
# bench/compare): a peer run that printed "startup: N PEs up" counts.
timed() {
    local part=$1 cfg=$2 n=$3 run=$4
    shift 4
    local log="$OUT/logs/$part.$cfg.$n.log" t0 t1 rc
    t0=$EPOCHREALTIME
    "$@" >"$OUT/logs/last.log" 2>&1
    rc=$?
    t1=$EPOCHREALTIME
    cat "$OUT/logs/last.log" >>"$log"
    if [ "$rc" != 0 ] && [ "$cfg" = peer ] && grep -q "^startup: $n PEs up" "$OUT/logs/last.log"; then
        TOLERATED=$((TOLERATED + 1))
        rc=0
    fi
    if [ "$rc" != 0 ]; then
        FAILED=$((FAILED + 1))
        say "$part $cfg n=$n run $run failed (exit $rc): $log"
        return
    fi
    awk -v p="$part" -v c="$cfg" -v n="$n" -v r="$run" -v a="$t0" -v b="$t1" \
        'BEGIN { printf "%s,%s,%s,%s,%.4f\n", p, c, n, r, b - a }' >>"$OUT/startup.csv"
}

NS=-n
[ "$(id -u)" = 0 ] || NS=-rn
peer_run() { # npes prog args...
    local n=$1
    shift
    local cmd
    cmd=$(printf '%q ' /usr/bin/oshrun --allow-run-as-root --oversubscribe -np "$n" "$@")
    timeout "$TIMEOUT" unshare $NS bash -c "ip link set lo up && exec $cmd"
}
ours_run() { # oshrun-prefix npes prog args...
    local p=$1 n=$2
    shift 2
    SHMEM_OFI_PROVIDER=shm "$p/bin/oshrun" -n "$n" --timeout "$TIMEOUT" "$@"
}
always_run() { SHMEM_FABRIC=always ours_run "$@"; }

# ---- part 1: shm, 1..8 PEs -----------------------------------------------
say "part 1: shm, PEs {$PES}, $RUNS runs each, alternating"
for n in $PES; do
    for r in $(seq 1 "$RUNS"); do
        if [ "$n" = 1 ]; then
            timed shm singleton 1 "$r" env SHMEM_OFI_PROVIDER=shm timeout "$TIMEOUT" "$OUT/bin/ours"
            timed shm singleton-always 1 "$r" env SHMEM_OFI_PROVIDER=shm SHMEM_FABRIC=always \
                timeout "$TIMEOUT" "$OUT/bin/ours"
            [ -n "$BASE" ] && timed shm base-singleton 1 "$r" env SHMEM_OFI_PROVIDER=shm \
                timeout "$TIMEOUT" "$OUT/bin/base"
        fi
        timed shm ours "$n" "$r" ours_run "$PREFIX" "$n" "$OUT/bin/ours"
        timed shm always "$n" "$r" always_run "$PREFIX" "$n" "$OUT/bin/ours"
        [ -n "$BASE" ] && timed shm base "$n" "$r" ours_run "$BASE" "$n" "$OUT/bin/base"
        timed shm launcher "$n" "$r" "$PREFIX/bin/oshrun" -n "$n" /bin/true
        [ -n "$BASE" ] && timed shm base-launcher "$n" "$r" "$BASE/bin/oshrun" -n "$n" /bin/true
        [ "$PEER" = 1 ] && timed shm peer "$n" "$r" peer_run "$n" "$OUT/bin/peer"
    done
done

# ---- part 2: tcp;ofi_rxm next to shm, and sockets per PE ------------------
: >"$OUT/sockets.csv"
if [ "$TCP" = 1 ]; then
    say "part 2: tcp;ofi_rxm over lo vs shm, PEs {$TCP_PES}, $RUNS runs each"
    for n in $TCP_PES; do
        for r in $(seq 1 "$RUNS"); do
            timed tcp shm "$n" "$r" ours_run "$PREFIX" "$n" "$OUT/bin/ours"
            timed tcp shm_fab "$n" "$r" env SHMEM_OFI_PROVIDER=shm SHMEM_DIRECT=0 \
                "$PREFIX/bin/oshrun" -n "$n" --timeout "$TIMEOUT" "$OUT/bin/ours"
            timed tcp tcp_rxm "$n" "$r" env SHMEM_OFI_PROVIDER='tcp;ofi_rxm' SHMEM_DIRECT=0 \
                FI_TCP_IFACE=lo "$PREFIX/bin/oshrun" -n "$n" --timeout "$TIMEOUT" "$OUT/bin/ours"
            [ -n "$BASE" ] && timed tcp base_tcp_rxm "$n" "$r" env SHMEM_OFI_PROVIDER='tcp;ofi_rxm' \
                SHMEM_DIRECT=0 FI_TCP_IFACE=lo "$BASE/bin/oshrun" -n "$n" --timeout "$TIMEOUT" \
                "$OUT/bin/base"
        done
        for prov in shm 'tcp;ofi_rxm'; do
            tag=${prov//;/_}
            env SHMEM_OFI_PROVIDER="$prov" SHMEM_DIRECT=0 FI_TCP_IFACE=lo \
                "$PREFIX/bin/oshrun" -n "$n" --timeout "$TIMEOUT" "$OUT/bin/ours" --sockets \
                --alltoall --csv "$OUT/sockets.$tag.tmp" >>"$OUT/logs/sockets.$tag.$n.log" 2>&1 ||
                { FAILED=$((FAILED + 1)); say "sockets run $prov n=$n failed"; }
        done
    done
    for tag in shm tcp_ofi_rxm; do
        [ -f "$OUT/sockets.$tag.tmp" ] && sed "s/^/$tag,/" "$OUT/sockets.$tag.tmp" >>"$OUT/sockets.csv"
        rm -f "$OUT/sockets.$tag.tmp"
    done
fi

# ---- tables --------------------------------------------------------------
{
    echo "start-up, whole process (shmem_init + barrier + shmem_finalize), median of $RUNS runs, seconds"
    echo "host $(hostname), $(nproc) cores, load average (1/5/15 min) at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg); $(date)"
    awk -F, '
        { k = $1 "," $2 "," $3; v[k, ++c[k]] = $5; parts[$1] = 1; cfgs[$1 "," $2] = 1; ns[$1 "," $3] = 1 }
        function med(k,   n, i, j, t, a) {
            n = c[k]; if (n == 0) return "-"
            for (i = 1; i <= n; i++) a[i] = v[k, i]
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return sprintf("%.3f", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
        }
        END {
            np = split("shm tcp", P, " ")
            for (pi = 1; pi <= np; pi++) {
                p = P[pi]; if (!(p in parts)) continue
                hdr = sprintf("%-16s", p == "shm" ? "config \\ PEs" : "provider \\ PEs")
                nn = 0; delete N
                for (k in ns) { split(k, s, ","); if (s[1] == p) N[++nn] = s[2] + 0 }
                for (i = 2; i <= nn; i++) { t = N[i]; for (j = i - 1; j >= 1 && N[j] > t; j--) N[j + 1] = N[j]; N[j + 1] = t }
                for (i = 1; i <= nn; i++) hdr = hdr sprintf("%9d", N[i])
                print ""; print hdr
                nc = split("singleton singleton-always base-singleton ours always base launcher base-launcher peer shm shm_fab tcp_rxm base_tcp_rxm", C, " ")
                for (ci = 1; ci <= nc; ci++) {
                    if (!((p "," C[ci]) in cfgs)) continue
                    line = sprintf("%-16s", C[ci])
                    for (i = 1; i <= nn; i++) line = line sprintf("%9s", med(p "," C[ci] "," N[i]))
                    print line
                }
                if (p != "tcp" || !((p ",tcp_rxm") in cfgs)) continue
                nr = split("shm_fab shm", R, " ")
                for (ri = 1; ri <= nr; ri++) {
                    if (!((p "," R[ri]) in cfgs)) continue
                    line = sprintf("%-16s", "tcp_rxm/" R[ri])
                    for (i = 1; i <= nn; i++) {
                        a = med(p ",tcp_rxm," N[i]); b = med(p "," R[ri] "," N[i])
                        line = line sprintf("%9s", (a == "-" || b == "-" || b == 0) ? "-" : sprintf("%.2f", a / b))
                    }
                    print line
                }
                line = sprintf("%-16s", "tcp_rxm ms/PE")
                for (i = 1; i <= nn; i++) {
                    a = med(p ",tcp_rxm," N[i])
                    line = line sprintf("%9s", a == "-" ? "-" : sprintf("%.1f", 1000 * a / N[i]))
                }
                print line
            }
        }' "$OUT/startup.csv"
    if [ -s "$OUT/sockets.csv" ]; then
        echo
        echo "sockets per PE (min-max over PEs, from /proc/self/fd) and mean RSS per PE (MiB)"
        printf '%-14s %-15s %s\n' provider when 'npes: sockets min-max / RSS'
        sort -t, -k1,2 -k3n "$OUT/sockets.csv" | awk -F, '
            { k = $1 " " $2; row[k] = row[k] sprintf("  %s: %s-%s/%.1f", $3, $4, $5, $6 / 1024); if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
            END { for (i = 1; i <= n; i++) { split(order[i], s, " "); printf "%-14s %-15s%s\n", s[1], s[2], row[order[i]] } }'
    fi
    [ "$TOLERATED" = 0 ] || echo "peer runs that crashed in finalize after start-up (counted): $TOLERATED"
    [ "$FAILED" = 0 ] || echo "FAILED runs: $FAILED (see $OUT/logs)"
} | tee "$OUT/summary.txt"
say "CSV: $OUT/startup.csv $OUT/sockets.csv"
[ "$FAILED" = 0 ]
