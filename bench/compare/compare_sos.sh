#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# compare_sos.sh [--sos TARBALL] [--build DIR] [--prefix DIR] [--rounds N]
#                [--provs LIST] [--rows LIST] [--out DIR] [--quick]
#                [--budget S] [--build-only] [--rebuild-sos] [--hosts2]
#
# ofishmem side by side with Sandia OpenSHMEM (SOS) 1.5.3 through the same
# libfabric providers (issue 30). A benchmark, not a test.
#
# SOS is built from its release tarball into BUILD/sos/ (cached: a second
# run reuses it while the tarball and the configure flags are the same):
#   default  ./configure as its README gives it (scalable memory
#            registration): runs on the sockets provider here;
#   basic    + --enable-ofi-mr=basic --enable-hard-polling
#            --enable-completion-polling --disable-threads: the build that
#            finds tcp;ofi_rxm (SOS's default does not run there), the
#            configuration the OpenSHMEM-X conduit paper also used.
# The SAME sources (bench/osu + bench/common) are built with our oshcc and
# with each SOS build's oshcc, and run 2 PEs on this host, alternating ours
# and SOS (ours first in odd rounds, SOS first in even ones), row by row.
# Ours goes through the fabric (SHMEM_DIRECT=0, SHMEM_OFI_PROVIDER=PROV);
# SOS's launcher is Open MPI's mpirun, which listens on every interface: it
# runs only inside a loopback-only network namespace (unshare -n), with
# --allow-run-as-root --oversubscribe.
#
#   --sos TARBALL  SOS's release tarball (or env SOS_TARBALL; default
#                  REPO/../shared/peers/sos-1.5.3.tar.gz). It is not part of
#                  the repository: without it the script says so and stops.
#   --build DIR    our build directory (default REPO/build); SOS goes into
#                  DIR/sos/{default,basic}
#   --prefix DIR   our installed tree (default BUILD/prefix)
#   --rounds N     alternating rounds (default 5)
#   --provs LIST   providers, comma-separated: sockets,tcp (default both)
#   --rows LIST    rows, comma-separated (default all): put_lat put_mr get_lat
#                  fadd barrier put_bw get_bw strided busy_amo
#   --out DIR      results (default ./compare-sos/<date-time>)
#   --quick        fewer sizes and iterations (a smoke run of the harness)
#   --budget S     no new round starts when it would pass S seconds (default 1800)
#   --build-only   build SOS and the programs, run nothing
#   --rebuild-sos  rebuild SOS even when the cached build matches
#   --hosts2       4 PEs on two hosts instead of 2 on this one: two network
#                  namespaces joined by a veth pair (root needed), both
#                  libraries started by the same mpirun (rsh agent into the
#                  other namespace, as tests/launchers/multihost_test.sh),
#                  PEs alternating between the hosts (PE 0 and PE 1 on
#                  different ones); ours with its defaults (the same-host
#                  direct path between PEs of one host). The two "hosts"
#                  share this machine's cores.
#
# Writes OUT/all.csv (round,prov,lib,bench,size,metric,value), OUT/ratios.csv
# (per round: ours/SOS), OUT/summary.txt (medians of each side, median of the
# per-round ratios, the issue-30 targets), OUT/*.png (gnuplot), OUT/logs/.
set -u

usage() { sed -n '3,47p' "$0" | sed 's/^# \{0,1\}//'; }

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SOS_TGZ=${SOS_TARBALL:-}
BUILD=$REPO/build
PREFIX=
ROUNDS=5
PROVS=sockets,tcp
ROWS=put_lat,put_mr,get_lat,fadd,barrier,put_bw,get_bw,strided,busy_amo
OUT=
QUICK=0
BUDGET=1800
BUILD_ONLY=0
REBUILD=0
HOSTS2=0
while [ $# -gt 0 ]; do
    case "$1" in
    --sos) SOS_TGZ=${2:?--sos needs the tarball}; shift 2 ;;
    --build) BUILD=${2:?--build needs a directory}; shift 2 ;;
    --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --provs) PROVS=${2:?--provs needs a list}; shift 2 ;;
    --rows) ROWS=${2:?--rows needs a list}; shift 2 ;;
    --out) OUT=${2:?--out needs a directory}; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --budget) BUDGET=${2:?--budget needs seconds}; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    --rebuild-sos) REBUILD=1; shift ;;
    --hosts2) HOSTS2=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare_sos.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
say() { echo "compare_sos.sh: $*"; }
die() { echo "compare_sos.sh: $*" >&2; exit 2; }
case "$ROUNDS$BUDGET" in *[!0-9]*|'') die "--rounds/--budget take numbers" ;; esac
[ "$ROUNDS" -ge 1 ] || die "--rounds must be >= 1"

if [ -z "$SOS_TGZ" ]; then
    for f in "$REPO/../shared/peers/sos-1.5.3.tar.gz" /work/shared/peers/sos-1.5.3.tar.gz; do
        [ -f "$f" ] && { SOS_TGZ=$f; break; }
    done
fi
[ -n "$SOS_TGZ" ] && [ -f "$SOS_TGZ" ] || die "Sandia OpenSHMEM's tarball (sos-1.5.3.tar.gz) \
was not found${SOS_TGZ:+ at '$SOS_TGZ'}: it is not part of the repository; give its path \
with --sos TARBALL or SOS_TARBALL=TARBALL"
SOS_TGZ=$(cd "$(dirname "$SOS_TGZ")" && pwd)/$(basename "$SOS_TGZ")
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || die "no build directory '$BUILD' (--build DIR)"
PREFIX=${PREFIX:-$BUILD/prefix}
PREFIX=$(cd "$PREFIX" 2>/dev/null && pwd) ||
    die "no installed ofishmem at '$PREFIX' (cmake --install $BUILD; or --prefix DIR)"
for f in oshcc oshrun; do
    [ -x "$PREFIX/bin/$f" ] || die "$PREFIX/bin/$f is missing (is $PREFIX an installed ofishmem?)"
done
for t in mpirun unshare ip autoreconf libtoolize make; do
    command -v "$t" >/dev/null || die "$t is needed (openmpi-bin, util-linux, iproute2, autoconf, libtool, make)"
done
command -v gnuplot >/dev/null || say "gnuplot not found: no plots (apt-get install gnuplot-nox)"

OUT=${OUT:-$PWD/compare-sos/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" "$OUT/runs" "$OUT/bin" || exit 2
OUT=$(cd "$OUT" && pwd)
T_START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- SOS: built once per configuration, reused while nothing changed -------
SOS_BASE=(--with-ofi=/usr --with-pmix=/usr/lib/x86_64-linux-gnu/pmix2 --disable-fortran)
SOS_BASIC=(--enable-ofi-mr=basic --enable-hard-polling --enable-completion-polling --disable-threads)
TGZ_SUM=$(sha256sum "$SOS_TGZ" | cut -d' ' -f1)

build_sos() { # variant configure-args... ; leaves BUILD/sos/VARIANT/prefix
    local v=$1; shift
    local dir=$BUILD/sos/$v stamp want
    stamp=$dir/prefix/.ofishmem-stamp
    want="$TGZ_SUM $*"
    if [ "$REBUILD" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
        [ -x "$dir/prefix/bin/oshcc" ]; then
        say "SOS ($v): cached in $dir/prefix"
        return 0
    fi
    say "SOS ($v): building from $(basename "$SOS_TGZ") into $dir (a few minutes)"
    rm -rf "$dir"
    mkdir -p "$dir/src" || return 1
    local log=$OUT/logs/sos-$v-build.log
    (
        set -e
        tar xzf "$SOS_TGZ" -C "$dir/src" --strip-components=1
        cd "$dir/src"
        ./autogen.sh
        ./configure --prefix="$dir/prefix" "$@"
        make -j2
        make install
    ) >"$log" 2>&1 || { say "SOS ($v) build failed: see $log"; return 1; }
    echo "$want" >"$stamp"
    rm -rf "$dir/src" # 0.1 GB of objects; the tarball rebuilds it
}
build_sos default "${SOS_BASE[@]}" || exit 2
build_sos basic "${SOS_BASE[@]}" "${SOS_BASIC[@]}" || exit 2

# ---- the programs, built from the same sources against each library -------
PROGS="osu_put_lat osu_put_mr osu_get_lat osu_put_bw osu_get_bw osu_atomic_lat osu_coll_lat \
osu_strided osu_busy_amo"
CFLAGS_B="-O2 -I$REPO/bench/common -I$REPO/bench/osu"
build_progs() { # label oshcc
    mkdir -p "$OUT/bin/$1"
    for p in $PROGS; do
        [ -f "$REPO/bench/osu/$p.c" ] || continue
        "$2" $CFLAGS_B "$REPO/bench/osu/$p.c" "$REPO/bench/common/harness.c" -o "$OUT/bin/$1/$p" \
            >>"$OUT/logs/build.log" 2>&1 || { say "build of $p ($1) failed: $OUT/logs/build.log"; exit 2; }
    done
}
say "building the OSU-style programs with ours and both SOS builds"
build_progs ours "$PREFIX/bin/oshcc"
build_progs sos_default "$BUILD/sos/default/prefix/bin/oshcc"
build_progs sos_basic "$BUILD/sos/basic/prefix/bin/oshcc"
[ "$BUILD_ONLY" = 1 ] && { say "built: $OUT/bin"; exit 0; }

# ---- runs ------------------------------------------------------------------
if [ "$QUICK" = 1 ]; then
    I_LAT="-i 300"; I_BW="-m 64k:1M -i 4"; I_STR="-i 5"; I_BUSY="-i 50"
else
    I_LAT="-i 3000"; I_BW="-m 64k:16M -i 5"; I_STR="-i 20"; I_BUSY="-i 300"
fi
# name | rows expected | program and arguments (the same for both libraries)
ALL_ROWS=(
    "put_lat|1|osu_put_lat -m 8:8 $I_LAT"
    "put_mr|1|osu_put_mr -m 8:8"
    "get_lat|1|osu_get_lat -m 8:8 $I_LAT"
    "fadd|1|osu_atomic_lat -t long -o fetch_add $I_LAT"
    "barrier|1|osu_coll_lat -c barrier $I_LAT"
    "put_bw|0|osu_put_bw $I_BW"
    "get_bw|0|osu_get_bw $I_BW"
    "strided|0|osu_strided $I_STR"
    "busy_amo|2|osu_busy_amo $I_BUSY"
)
TIMEOUT=300
export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
FAILED=0
: >"$OUT/all.csv"
: >"$OUT/runs.txt"

# --hosts2: two namespaces, hosta (mpirun's) and hostb, as the launcher
# tests make them; removed with everything started in them at exit.
if [ "$HOSTS2" = 1 ]; then
    [ "$(id -u)" = 0 ] || die "--hosts2 creates network namespaces: run as root"
    NSA=osh-sos-$$-a NSB=osh-sos-$$-b
    hosts_down() {
        local ns p
        for ns in "$NSA" "$NSB"; do
            for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
            ip netns del "$ns" 2>/dev/null
            rm -rf "/etc/netns/$ns"
        done
    }
    trap hosts_down EXIT
    ip netns add "$NSA" && ip netns add "$NSB" && ip link add oshS$$a type veth peer name oshS$$b &&
        ip link set oshS$$a netns "$NSA" && ip link set oshS$$b netns "$NSB" ||
        die "cannot create the two namespace hosts"
    for n in 1 2; do
        ns=$NSA dev=oshS$$a
        [ $n = 2 ] && ns=$NSB dev=oshS$$b
        ip -n "$ns" link set "$dev" name osh0 && ip -n "$ns" addr add "10.213.0.$n/24" dev osh0 &&
            ip -n "$ns" link set osh0 up && ip -n "$ns" link set lo up || die "cannot configure $ns"
        mkdir -p "/etc/netns/$ns"
        printf '127.0.0.1 localhost\n10.213.0.1 hosta\n10.213.0.2 hostb\n' >"/etc/netns/$ns/hosts"
    done
    cat >"$OUT/agent" <<AGENT
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case \$host in hostb) ns=$NSB ;; hosta) ns=$NSA ;; *) echo "agent: unknown host \$host" >&2; exit 1 ;; esac
exec ip netns exec "\$ns" unshare -u sh -c "hostname \$host; exec \$*"
AGENT
    chmod +x "$OUT/agent"
    printf 'hosta slots=2\nhostb slots=2\n' >"$OUT/hostfile"
fi

# mpirun: 2 PEs in a loopback-only namespace, or 4 on the two hosts.
mpirun_job() { # env-assignments... -- program args...
    local xs=() a
    while [ "$1" != -- ]; do xs+=(-x "$1"); shift; done
    shift
    if [ "$HOSTS2" = 1 ]; then
        timeout "$TIMEOUT" ip netns exec "$NSA" unshare -u sh -c 'hostname hosta; exec "$@"' mpirun \
            mpirun --allow-run-as-root --oversubscribe -np 4 --hostfile "$OUT/hostfile" --map-by node \
            --mca plm_rsh_agent "$OUT/agent" --mca oob_tcp_if_include 10.213.0.0/24 --mca btl self \
            -x FI_TCP_IFACE=osh0 -x FI_SOCKETS_IFACE=osh0 "${xs[@]}" "$@"
        return
    fi
    local cmd ns=-n
    cmd=$(printf '%q ' mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self \
        -x FI_TCP_IFACE=lo -x FI_SOCKETS_IFACE=lo "${xs[@]}" "$@")
    [ "$(id -u)" = 0 ] || ns=-rn
    timeout "$TIMEOUT" unshare $ns bash -c "ip link set lo up && exec $cmd"
}
ours() { # prov prog args...
    local prov=$1 p=$2; shift 2
    if [ "$HOSTS2" = 1 ]; then
        mpirun_job SHMEM_OFI_PROVIDER="$prov" LD_LIBRARY_PATH="$PREFIX/lib" -- "$OUT/bin/ours/$p" "$@"
        return
    fi
    env SHMEM_OFI_PROVIDER="$prov" SHMEM_DIRECT=0 "$PREFIX/bin/oshrun" -n 2 --timeout "$TIMEOUT" \
        "$OUT/bin/ours/$p" "$@"
}
sos() { # variant prov prog args...
    local v=$1 prov=$2 p=$3; shift 3
    local pre=$BUILD/sos/$v/prefix
    mpirun_job SHMEM_OFI_PROVIDER="$prov" LD_LIBRARY_PATH="$pre/lib" SHMEM_SYMMETRIC_SIZE=256M -- \
        "$OUT/bin/sos_$v/$p" "$@"
}

# run_one ROUND PROV LIB NAME WANT CMD...: WANT rows (0: any > 0)
run_one() {
    local round=$1 prov=$2 lib=$3 name=$4 want=$5
    shift 5
    local tag="r$round.$prov.$lib.$name"
    local csv=$OUT/runs/$tag.csv log=$OUT/logs/$tag.log t0 rc rows
    : >"$csv"
    t0=$(date +%s.%N)
    "$@" --csv "$csv" --label "$lib" >"$log" 2>&1
    rc=$?
    rows=$(wc -l <"$csv")
    local status=ok
    if [ "$rc" != 0 ] || [ "$rows" = 0 ] || { [ "$want" -gt 0 ] && [ "$rows" -lt "$want" ]; }; then
        status="FAILED (exit $rc, $rows results)"
        FAILED=$((FAILED + 1))
        echo "    $tag: $status (log: $log)"
    fi
    # harness CSV: bench,label,size,metric,value
    awk -F, -v r="$round" -v p="$prov" 'NF { print r "," p "," $2 "," $1 "," $3 "," $4 "," $5 }' \
        "$csv" >>"$OUT/all.csv"
    printf '%-40s %6.1fs  %s\n' "$tag" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" \
        "$status" >>"$OUT/runs.txt"
}

say "results in $OUT ($ROUNDS rounds; load average $LOAD_START)"
ROUNDS_DONE=0
ROUND_T0=$T_START
for round in $(seq 1 "$ROUNDS"); do
    now=$(date +%s)
    if [ "$round" -gt 1 ] && [ $((now - T_START + now - ROUND_T0)) -gt "$BUDGET" ]; then
        say "stopping after $ROUNDS_DONE round(s): another would pass the ${BUDGET} s budget"
        break
    fi
    ROUND_T0=$now
    say "round $round/$ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))"
    for pv in ${PROVS//,/ }; do
        case $pv in
        sockets) prov=sockets; variant=default ;;
        tcp) prov="tcp;ofi_rxm"; variant=basic ;;
        *) die "unknown provider '$pv' (sockets, tcp)" ;;
        esac
        for t in "${ALL_ROWS[@]}"; do
            IFS='|' read -r name want prog <<<"$t"
            case ",$ROWS," in *",$name,"*) ;; *) continue ;; esac
            read -r -a cmd <<<"$prog"
            [ -x "$OUT/bin/ours/${cmd[0]}" ] || continue
            if [ $((round % 2)) = 1 ]; then
                run_one "$round" "$pv" ours "$name" "$want" ours "$prov" "${cmd[@]}"
                run_one "$round" "$pv" sos "$name" "$want" sos "$variant" "$prov" "${cmd[@]}"
            else
                run_one "$round" "$pv" sos "$name" "$want" sos "$variant" "$prov" "${cmd[@]}"
                run_one "$round" "$pv" ours "$name" "$want" ours "$prov" "${cmd[@]}"
            fi
        done
    done
    ROUNDS_DONE=$round
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- medians and ratios ----------------------------------------------------
# Ratio per round (ours / SOS), then the median over rounds; lower is
# better for *_us metrics, higher for bandwidth and rates.
awk -F, '
    function med(k, n,   i, j, t, m) {
        for (i = 1; i <= n; i++) a[i] = V[k, i]
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { key = $2 FS $4 FS $5 FS $6; val[$1 FS $3 FS key] = $7; keys[key] = 1; rounds[$1] = 1 }
    END {
        print "prov,bench,size,metric,ours,sos,ratio,rounds"
        for (key in keys) {
            no = ns = nr = 0
            for (r in rounds) {
                o = val[r FS "ours" FS key]; s = val[r FS "sos" FS key]
                if (o != "") V["o", ++no] = o
                if (s != "") V["s", ++ns] = s
                if (o != "" && s != "" && s + 0 != 0) V["r", ++nr] = o / s
            }
            printf "%s,%s,%s,%s,%d\n", key, no ? med("o", no) : "", ns ? med("s", ns) : "",
                nr ? med("r", nr) : "", nr
        }
    }' "$OUT/all.csv" | { read -r h; echo "$h"; sort -t, -k1,1 -k2,2 -k4,4 -k3,3n; } >"$OUT/medians.csv"

summary() {
    awk -F, -v load0="$LOAD_START" -v load1="$LOAD_END" -v rounds="$ROUNDS_DONE" -v failed="$FAILED" -v hosts2="$HOSTS2" '
    NR > 1 { o[$1 FS $2 FS $3 FS $4] = $5; s[$1 FS $2 FS $3 FS $4] = $6; r[$1 FS $2 FS $3 FS $4] = $7
             if (!($1 in seen)) { seen[$1] = 1; provs[++np] = $1 }
             line[++nl] = $0 }
    function fmt(x) { return x == "" ? "-" : (x < 10 ? sprintf("%.3f", x) : sprintf("%.1f", x)) }
    function row(what, p, b, sz, m, how, lim,   k, v) {
        k = p FS b FS sz FS m
        if (!(k in r) || r[k] == "") { printf "%-34s %10s %10s %7s\n", what, "-", "-", "-"; return }
        v = ""
        if (how != "") {
            ok = how == "le" ? r[k] <= lim : r[k] >= lim
            v = sprintf("%s %s %s", how == "le" ? "<=" : ">=", lim, ok ? "MET" : "MISSED")
            if (ok) met++; else missed++
        }
        printf "%-34s %10s %10s %7.2f  %s\n", what, fmt(o[k]), fmt(s[k]), r[k], v
    }
    END {
        for (i = 1; i <= np; i++) {
            p = provs[i]
            printf "-- %s, %s, ours/SOS = median of per-round ratios\n", p == "tcp" ? "tcp;ofi_rxm" : p, hosts2 ? "4 PEs on two namespace hosts (PE 0 -> PE 1 across them; ours with its defaults)" : "2 PEs on this host (ours: SHMEM_DIRECT=0)"
            printf "%-34s %10s %10s %7s\n", "row", "ours", "SOS", "ratio"
            lim_t = p == "sockets"
            row("put 8 B rate (ops/s)", p, "msg_rate", 8, "rate_ops", "ge", 1.0)
            row("put 8 B + quiet (us)", p, "put_lat", 8, "lat_us", "le", 1.0)
            row("get 8 B (us)", p, "get_lat", 8, "lat_us", "le", 1.0)
            row("long fetch-add (us)", p, "atomic_lat", 8, "long_fetch_add", "le", 1.0)
            row("barrier_all (us)", p, "coll_barrier", 0, "lat_us", "le", 1.0)
            row("put 1 MiB (MB/s)", p, "put_bw", 1048576, "bw_MBps", "ge", p == "sockets" ? 1.42 : "")
            row("get 1 MiB (MB/s)", p, "get_bw", 1048576, "bw_MBps", "ge", p == "sockets" ? 1.11 : "")
            for (j = 1; j <= nl; j++) {
                split(line[j], f, ",")
                if (f[1] != p || (f[2] != "put_bw" && f[2] != "get_bw" && f[2] !~ /^strided/ && f[2] !~ /^busy/) || f[3] == 1048576 && f[2] ~ /_bw$/)
                    continue
                row(f[2] " " f[3] " (" f[4] ")", p, f[2], f[3], f[4], "", "")
            }
            print ""
        }
        printf "%d met, %d missed; medians of %d round(s); failed runs: %d\n", met, missed, rounds, failed
        printf "load average: %s at start, %s at end (2 cores here; above that the figures are noise)\n", load0, load1
        print "targets (issue 30): sockets put 1 MiB >= 1.42x and get 1 MiB >= 1.11x SOS (the OpenSHMEM-X paper), every latency row <= 1.0x"
    }' "$OUT/medians.csv"
}
summary | tee "$OUT/summary.txt"

# ---- plots -----------------------------------------------------------------
if command -v gnuplot >/dev/null; then
    P=$OUT/plotdata
    mkdir -p "$P"
    specs=""
    for pv in ${PROVS//,/ }; do
        for b in put_bw get_bw; do
            awk -F, -v p="$pv" -v b="$b" 'NR > 1 && $1 == p && $2 == b { print $3, $5, $6 }' \
                "$OUT/medians.csv" >"$P/$pv.$b"
            [ -s "$P/$pv.$b" ] || continue
            specs="$specs${specs:+, }'$P/$pv.$b' using 1:2 with linespoints title 'ofishmem ${b%_bw}, $pv', '$P/$pv.$b' using 1:3 with linespoints dt 2 title 'SOS ${b%_bw}, $pv'"
        done
    done
    [ -n "$specs" ] && gnuplot -e "set terminal pngcairo size 1000,650 noenhanced; set logscale x 2;
        set grid; set key left top; set xlabel 'message size (bytes)'; set format x '%.0s%cB';
        set ylabel 'bandwidth (MB/s)'; set output '$OUT/bandwidth.png';
        set title 'ofishmem vs Sandia OpenSHMEM 1.5.3, 2 PEs, 64 x nbi + quiet'; plot $specs" \
        2>>"$OUT/logs/gnuplot.log"
    # Latency rows: ours/SOS ratio bars per provider.
    awk -F, 'NR > 1 && ($2 ~ /_lat$/ && $3 == 8 || $2 == "coll_barrier" || $2 == "atomic_lat") && $7 != "" {
        print $1 "-" $2, $7 }' "$OUT/medians.csv" >"$P/lat_ratio"
    [ -s "$P/lat_ratio" ] && gnuplot -e "set terminal pngcairo size 1000,650 noenhanced;
        set style fill solid 0.5; set boxwidth 0.6; set grid y; set yrange [0:*];
        set ylabel 'ours / SOS (lower is better)'; set xtics rotate by -30;
        set output '$OUT/latency_ratio.png'; set title 'latency, ours / SOS (median of per-round ratios)';
        plot '$P/lat_ratio' using 0:2:xtic(1) with boxes notitle, 1 with lines dt 2 notitle" \
        2>>"$OUT/logs/gnuplot.log"
    say "plots: $(cd "$OUT" && ls -- *.png 2>/dev/null | tr '\n' ' ')"
fi
say "CSV: $OUT/all.csv, $OUT/medians.csv; summary: $OUT/summary.txt; took $(($(date +%s) - T_START)) s"
[ "$FAILED" = 0 ] || exit 1
exit 0
