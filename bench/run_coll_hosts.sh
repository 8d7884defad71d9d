#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run_coll_hosts.sh BUILD_DIR [KxP ...]
#
# Collectives across K hosts, flat against node-aware (issue 29). Makes K
# hosts as network namespaces on a bridge (tests/launchers/k_hosts.sh: each
# its own veth and address, nothing added to this machine's namespace), a
# throw-away Slurm cluster with a slurmd per host, and for each K x P (default
# "4x4 8x2") runs, with oshrun --launcher=srun (LAUNCHER=mpirun: Open MPI's
# mpirun, started in host0 with an rsh agent that enters each host):
#   counts  bench/osu_coll_count under SHMEM_STATS, flat
#           (SHMEM_COLL_NODE_AWARE=0) and node-aware: fabric messages (puts,
#           flags, gets) per PE per call, which between namespace hosts are
#           exactly the inter-host messages (same-host PEs map each other);
#           noise-free. Printed beside the rounds on the critical path of the
#           algorithm each form takes (the model in docs/SCALING.md).
#   latency bench/osu_coll_lat, barrier and 8-byte sum-reduce, 1 MiB broadcast
#           and sum-reduce, ROUNDS rounds alternating flat and node; medians
#           and the median of the per-round ratios.
#   sweep   (SWEEP=1) every collective at sizes 8 B..1 MiB under each form
#           of SWEEP_MODES (default "flat node node_rsag": node_rsag sets
#           SHMEM_REDUCE_RSAG_MIN=8 so reductions take the node form's
#           reduce-scatter at every size), ROUNDS rounds alternating: the
#           crossovers behind the auto choices (src/coll/select.c).
# A benchmark, not a test: the tests are ctest -L launchers
# (launchers.coll_hosts.*). Needs root, Slurm (or Open MPI), iproute2; the
# trap stops every daemon and job by PID and removes the namespaces.
#
# Environment: ROUNDS=5  ITERS=200 (count pass, small)  RESULTS=DIR
#   (default BUILD_DIR/bench-results/coll-hosts-<time>)  LAUNCHER=srun|mpirun
#   SKIP_LATENCY=1 (counts only)  SKIP_COUNTS=1
set -u
usage() { sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
BUILD=$(cd "$1" && pwd) || exit 2
shift
CONFIGS=${*:-"4x4 8x2"}
HERE=$(cd "$(dirname "$0")" && pwd)
LT=$HERE/../tests/launchers
# shellcheck source=../tests/launchers/common.sh
source "$LT/common.sh"
# shellcheck source=../tests/launchers/slurm_cluster.sh
source "$LT/slurm_cluster.sh"
# shellcheck source=../tests/launchers/k_hosts.sh
source "$LT/k_hosts.sh"
set +u
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-200}
LAUNCHER=${LAUNCHER:-srun}
OSHRUN=$BUILD/tools/oshrun/oshrun
COUNT=$BUILD/bench/osu_coll_count
LAT=$BUILD/bench/osu_coll_lat
for b in "$OSHRUN" "$COUNT" "$LAT"; do
    [ -x "$b" ] || { echo "run_coll_hosts.sh: build $b first" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "run_coll_hosts.sh: needs root (namespaces, Slurm)" >&2; exit 2; }
if [ "$LAUNCHER" = srun ]; then need_slurm; else need mpirun openmpi-bin; fi
RESULTS=${RESULTS:-$BUILD/bench-results/coll-hosts-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/coll_hosts.XXXXXX") || exit 1
chmod 755 "$W"
PFX=oshb-$$
KUP=0
cleanup() {
    reap_jobs
    stop_daemons
    # shellcheck disable=SC2034  # slurm_cluster.sh's list
    DAEMONS=()
    [ "$KUP" -gt 0 ] && k_hosts_down "$PFX" "$KUP"
    KUP=0
    rm -rf "$W/spool" "$W/tmp" "$W/state"
}
trap 'cleanup; rm -rf "$W"' EXIT
export FI_TCP_IFACE=osh0 SHMEM_YIELD=on
unset FI_PROVIDER SHMEM_OFI_PROVIDER SHMEM_COLL_HOSTS SHMEM_STATS

up() { # K: hosts and the launcher's daemons
    cleanup
    k_hosts_up "$PFX" "$1"
    KUP=$1
    if [ "$LAUNCHER" = srun ]; then
        k_slurm_up "$PFX" "$1" 8
    else
        cat >"$W/agent" <<AGENT
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
h=\$1; shift
exec nsenter --net=/run/netns/$PFX-\${h#host} unshare -u sh -c "hostname \$h; exec \$*"
AGENT
        chmod +x "$W/agent"
        : >"$W/hostfile"
        for ((i = 0; i < $1; i++)); do echo "host$i slots=8" >>"$W/hostfile"; done
    fi
    k_on_host_argv "$PFX" 0
}

# job K P OUT ENV... -- PROG ARGS: one K x P job from host0.
job() {
    local k=$1 p=$2 out=$3 envs=()
    shift 3
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    if [ "$LAUNCHER" = srun ]; then
        run_job "$out" "${ON_HOST[@]}" env "${envs[@]}" "$OSHRUN" --launcher=srun \
            -n $((k * p)) -N "$p" --timeout 600 "$@"
    else
        local x=() e
        for e in "${envs[@]}"; do x+=(-x "$e"); done
        run_job "$out" "${ON_HOST[@]}" env "${envs[@]}" mpirun --allow-run-as-root --timeout 600 \
            --hostfile "$W/hostfile" --map-by "ppr:$p:node" --mca plm_rsh_agent "$W/agent" \
            --mca oob_tcp_if_include "$K_NET.0/24" --mca btl self -x FI_TCP_IFACE -x SHMEM_YIELD \
            "${x[@]}" "$@"
    fi
    [ "$RC" -eq 0 ] || { echo "run_coll_hosts.sh: job failed ($*), see $out" >&2; tail -5 "$out" >&2; }
}

MODES="flat node"
# Settings of a mode, as separate words.
mode_env() {
    case $1 in
    flat) echo SHMEM_COLL_NODE_AWARE=0 ;;
    node) echo SHMEM_COLL_NODE_AWARE=1 ;;
    node_rsag) echo SHMEM_COLL_NODE_AWARE=1 SHMEM_REDUCE_RSAG_MIN=8 ;;
    node_small) echo SHMEM_COLL_NODE_AWARE=1 SHMEM_REDUCE_RSAG_MIN=1G ;;
    *) echo "run_coll_hosts.sh: unknown mode $1" >&2; exit 2 ;;
    esac
}

# counts K P: per mode a baseline (ITERS 0) and three measured jobs; per
# (mode, class, kind) the max and mean over PEs of fabric messages per call.
counts() {
    local k=$1 p=$2 m d cls spec
    for m in $MODES; do
        for spec in "base:all:8:0" "small:all:8:$ITERS" "large:bcast,reduce:1048576:20" \
            "large:fcollect,collect,alltoall:16384:20"; do
            IFS=: read -r cls list size it <<<"$spec"
            [ "$list" = all ] && list=barrier,bcast,reduce,fcollect,collect,alltoall
            d=$RESULTS/stats-${k}x$p-$m-$cls-$size
            rm -rf "$d"
            mkdir -p "$d"
            # shellcheck disable=SC2046  # a mode's settings are separate words
            job "$k" "$p" "$d/out" $(mode_env "$m") "SHMEM_STATS=$d/pe.%p" -- \
                "$COUNT" -c "$list" -s "$size" -i "$it"
            echo "$it" >"$d/iters"
        done
    done
}

# Aggregates the stats files into $RESULTS/counts-KxP.csv:
# mode,class,kind,size,pe,msgs_per_call,bytes_per_call
aggregate() {
    local k=$1 p=$2
    local csv=$RESULTS/counts-${k}x$p.csv m
    echo "mode,class,kind,size,pe,msgs_per_call,bytes_per_call" >"$csv"
    for m in $MODES; do
        awk -v mode="$m" -v base="$RESULTS/stats-${k}x$p-$m-base-8" '
            function add(file, sign,   line, f, pe, kind) {
                while ((getline line < file) > 0) {
                    split(line, f, " ")
                    if (f[1] != "stats" || f[4] !~ /:$/) continue
                    pe = f[3]; kind = substr(f[4], 1, length(f[4]) - 1)
                    msgs[pe, kind] += sign * (f[10] + f[14] + f[16])
                    bytes[pe, kind] += sign * (f[12] + f[18])
                    seen[pe, kind] = 1
                }
                close(file)
            }
            FNR == 1 {
                dir = FILENAME; sub(/\/iters$/, "", dir)
                n = split(dir, parts, "-"); size = parts[n]; cls = parts[n - 1]
                if (cls == "base") next
                it = $1
                delete msgs; delete bytes; delete seen
                cmd = "ls " dir "/pe.* 2>/dev/null"
                while ((cmd | getline f) > 0) {
                    add(f, 1)
                    pe = f; sub(/.*pe\./, "", pe)
                    add(base "/pe." pe, -1)
                }
                close(cmd)
                for (key in seen) {
                    split(key, kk, SUBSEP)
                    if (msgs[key] < 0) msgs[key] = 0
                    printf "%s,%s,%s,%s,%s,%.2f,%.0f\n", mode, cls, kk[2], size, kk[1],
                        msgs[key] / it, bytes[key] / it
                }
            }' "$RESULTS"/stats-${k}x$p-$m-{small-8,large-1048576,large-16384}/iters >>"$csv"
    done
}

# latency K P: ROUNDS rounds, flat and node alternating (order flipped each
# round); lines "mode,round,coll,size,us" into $RESULTS/lat-KxP.csv.
latency() {
    local k=$1 p=$2
    local r m csv=$RESULTS/lat-${k}x$p.csv out
    echo "mode,round,coll,size,us" >"$csv"
    for ((r = 1; r <= ROUNDS; r++)); do
        local order=$MODES
        [ $((r % 2)) -eq 0 ] && order="node flat"
        for m in $order; do
            out=$RESULTS/lat-${k}x$p-$m-r$r
            # shellcheck disable=SC2046
            job "$k" "$p" "$out.small" $(mode_env "$m") -- "$LAT" -c barrier,reduce -m 8:8 \
                -i 300 -w 30
            # shellcheck disable=SC2046
            job "$k" "$p" "$out.large" $(mode_env "$m") -- "$LAT" -c bcast,reduce \
                -m 1048576:1048576 -i 20 -w 3
            awk -v m="$m" -v r="$r" '
                /collective latency:/ { c = $5; sub(/,$/, "", c) }
                /^[0-9]/ && c != "" { print m "," r "," c "," $1 "," $2 }' \
                "$out.small" "$out.large" >>"$csv"
        done
    done
}

# sweep K P: each collective, 8 B..1 MiB, each of SWEEP_MODES, ROUNDS rounds
# (the order of the modes rotates each round); $RESULTS/sweep-KxP.csv.
sweep() {
    local k=$1 p=$2
    local r m c csv=$RESULTS/sweep-${k}x$p.csv out modes
    read -r -a modes <<<"${SWEEP_MODES:-flat node node_rsag}"
    echo "mode,round,coll,size,us" >"$csv"
    for ((r = 1; r <= ROUNDS; r++)); do
        for c in bcast reduce fcollect collect alltoall; do
            for ((i = 0; i < ${#modes[@]}; i++)); do
                m=${modes[$(((i + r) % ${#modes[@]}))]}
                [ "$m" = node_rsag ] && [ "$c" != reduce ] && continue
                out=$RESULTS/sweep-${k}x$p-$m-$c-r$r
                # shellcheck disable=SC2046
                job "$k" "$p" "$out" $(mode_env "$m") -- "$LAT" -c "$c" -m 8:1048576 -i 30 -w 3
                awk -v m="$m" -v r="$r" -v c="$c" '/^[0-9]/ { print m "," r "," c "," $1 "," $2 }' \
                    "$out" >>"$csv"
            done
        done
    done
    echo "sweep: median us over $ROUNDS rounds; ratio to flat (median of per-round ratios)"
    awk -F, 'NR > 1 { v[$1, $3, $4, $2] = $5; key[$3 "," $4] = 1; mode[$1] = 1; if ($2 > R) R = $2 }
        function med(a, n,   i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        END {
            for (kk in key) {
                split(kk, c, ",")
                line = sprintf("%-9s %8s", c[1], c[2])
                for (m in mode) {
                    n = nr = 0
                    for (r = 1; r <= R; r++) {
                        x = v[m, c[1], c[2], r]; f = v["flat", c[1], c[2], r]
                        if (x != "") a[++n] = x
                        if (x != "" && f != "" && f > 0) ra[++nr] = x / f
                    }
                    if (n) line = line sprintf("  %s %9.1f (%.2f)", m, med(a, n), med(ra, nr))
                }
                print line
            }
        }' "$csv" | sort -k1,1 -k2,2n
}

# Rounds crossing hosts on the critical path, as the algorithms are built,
# for ranks placed in blocks of P per host (docs/SCALING.md): in how many of
# an algorithm's sequential steps some message goes to another host.
# Dissemination crosses in every round; binomial trees and recursive
# doubling only in steps of distance >= P (P a power of two).
# rounds KIND SIZE N K FORM
rounds() {
    awk -v kind="$1" -v size="$2" -v n="$3" -v k="$4" -v form="$5" 'BEGIN {
        cl = 0; while (2 ^ cl < n) cl++
        ck = 0; while (2 ^ ck < k) ck++
        fk = 0; while (2 ^ (fk + 1) <= k) fk++
        fn = 0; while (2 ^ (fn + 1) <= n) fn++
        p = n / k; lp = 0; while (2 ^ lp < p) lp++
        far = (2 ^ lp == p) ? cl - lp : cl          # steps of distance >= P
        rdn = ((2 ^ lp == p) ? fn - lp : fn) + (2 ^ fn < n ? 2 : 0)
        rdk = fk + (2 ^ fk < k ? 2 : 0)
        bar = (n > 4 && n <= 8) ? 2 : cl
        if (form == "node") {
            if (kind == "barrier" || kind == "bcast") r = ck
            else if (kind == "reduce") r = size < 16384 ? rdk : k <= 8 ? 2 * ck + 2 : 3 * ck
            else if (kind == "fcollect" || kind == "collect") r = k <= 3 ? 2 : 1 + ck
            else r = 1
        } else {
            if (kind == "barrier") r = bar
            else if (kind == "bcast") r = (n <= 8 && size < 1048576) ? 1 : far
            else if (kind == "reduce") r = size >= 16384 ? bar + 2 : (n <= 8 && size <= 4096) ? 1 : rdn
            else if (kind == "fcollect" || kind == "collect") r = n <= 8 ? 2 : 1 + cl
            else r = n <= 8 && size * n <= 32768 ? 1 : 2
        }
        print r
    }'
}

report() {
    local k=$1 p=$2
    local n=$((k * p)) csv=$RESULTS/counts-${k}x$p.csv kind cls size f x
    echo
    echo "== $k hosts x $p PEs ($n PEs), $LAUNCHER, tcp;ofi_rxm between hosts, $(cut -d' ' -f1-3 /proc/loadavg) load"
    if [ -s "$csv" ]; then
        printf "%-9s %8s | %-27s | %-27s | %s\n" "" "" "inter-host msgs/PE/call flat" \
            "node (max / mean over PEs)" "rounds crossing hosts"
        printf "%-9s %8s | %13s %13s | %13s %13s | %5s %5s\n" coll bytes max mean max mean flat node
        for spec in barrier:8 bcast:8 reduce:8 fcollect:8 collect:8 alltoall:8 bcast:1048576 \
            reduce:1048576 fcollect:16384 collect:16384 alltoall:16384; do
            IFS=: read -r kind size <<<"$spec"
            line=$(printf "%-9s %8s |" "$kind" "$([ "$kind" = barrier ] && echo - || echo "$size")")
            for f in flat node; do
                x=$(awk -F, -v m="$f" -v c="$kind" -v s="$size" '
                    $1 == m && $3 == c && $4 == s { n++; t += $6; if ($6 > mx) mx = $6 }
                    END { if (n) printf "%13.2f %13.2f", mx, t / n; else printf "%13s %13s", "-", "-" }' "$csv")
                line="$line $x |"
            done
            printf "%s %5s %5s\n" "$line" "$(rounds "$kind" "$size" "$n" "$k" flat)" \
                "$(rounds "$kind" "$size" "$n" "$k" node)"
        done
    fi
    local lat=$RESULTS/lat-${k}x$p.csv
    [ -s "$lat" ] || return 0
    echo "latency, median of $ROUNDS alternating rounds (us); node/flat: median of per-round ratios"
    printf "%-9s %8s %10s %10s %10s\n" coll bytes flat node node/flat
    awk -F, 'NR > 1 { v[$1, $3, $4, $2] = $5; key[$3 "," $4] = 1; if ($2 > R) R = $2 }
        function med(a, n,   i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        END {
            for (kk in key) {
                split(kk, c, ",")
                nf = nn = nr = 0
                for (r = 1; r <= R; r++) {
                    f = v["flat", c[1], c[2], r]; d = v["node", c[1], c[2], r]
                    if (f != "") fl[++nf] = f
                    if (d != "") nd[++nn] = d
                    if (f != "" && d != "" && f > 0) ra[++nr] = d / f
                }
                printf "%-9s %8s %10.2f %10.2f %10.2f\n", c[1], c[2], med(fl, nf), med(nd, nn), med(ra, nr)
            }
        }' "$lat" | sort
}

LASTK=0
for cfg in $CONFIGS; do
    k=${cfg%x*} p=${cfg#*x}
    [ "$k" != "$LASTK" ] && up "$k"
    LASTK=$k
    [ -n "${SKIP_COUNTS:-}" ] || { counts "$k" "$p"; aggregate "$k" "$p"; }
    [ -n "${SKIP_LATENCY:-}" ] || latency "$k" "$p"
    report "$k" "$p" | tee -a "$RESULTS/summary.txt"
    [ -z "${SWEEP:-}" ] || sweep "$k" "$p" | tee -a "$RESULTS/summary.txt"
done
echo "results: $RESULTS"
