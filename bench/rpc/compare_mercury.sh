#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# compare_mercury.sh [--build-dir DIR] [--build-mercury] [--mercury-prefix DIR]
#                    [--baseline DIR] [--rounds N] [--rows LIST] [--seconds S]
#                    [--out DIR] [--quick] [--selftest]
#
# Side-by-side data-service rates of ofishmem's RPC layer (bench/rpc:
# rpc_rate, bulk_bw) and Mercury 2.4.1's perf programs (hg_perf_server with
# hg_rate, hg_bw_read, hg_bw_write), both busy-polling (ours -b, Mercury -b),
# one client, 8-byte arguments, alternating rounds (ours, then Mercury, per
# row and round). Prints the medians and the median of the per-round ratios
# ours/Mercury, with a gnuplot PNG of the ratios and CSVs (issue #21).
#
# Rows (--rows takes a comma list of these ids; default all):
#   rate_host_1   RPC rate, one host, 1 in flight   ours: default same-host
#   rate_host_16  RPC rate, one host, 16 in flight  transport (-p $OURS_HOST_PROV,
#                 default shm); Mercury: na+sm and ofi shm
#   rate_tcp_1    RPC rate, tcp;ofi_rxm, 1 in flight
#   pull_tcp_1    bulk 1 MiB pull (server reads the client), tcp, 1 in flight
#   pull_tcp_8    same, 8 in flight
#   push_tcp_8    bulk 1 MiB push (server writes the client), tcp, 8 in flight
#   cost_tcp      one tcp;ofi_rxm call with ONE thread driving server and
#                 client (ours: call_cost -p "tcp;ofi_rxm"; Mercury:
#                 bench/rpc/hg_call_cost.c, compiled here against it): the
#                 software path with its system calls and no scheduling, so
#                 it holds on a loaded machine; printed as calls/s (1e9 /
#                 median ns of a whole call), 20000 calls x 5 rounds each
# Bulk rows: ours with the client's registration cache (bulk_bw -m cache),
# like Mercury's perf client, which registers its buffers once; both use one
# 1 MiB buffer per call in flight on each side. Mercury's names are the
# client's view: a pull by the server is hg_bw_write ("Write BW (server bulk
# pull)"), a push hg_bw_read ("Read BW (server bulk push)").
# The tcp rows run ours with SHMEM_RPC_SAME_HOST=0: client and server share
# this host, and the same-host queues would otherwise carry the calls and
# copy the bulk data with process_vm_* (not tcp).
#
#   --build-dir DIR      our CMake build tree (default REPO/build): its
#                        bench/rpc/{rpc_rate,bulk_bw} are run
#   --build-mercury      (re)build Mercury from
#                        /work/shared/peers/mercury-2.4.1.tar.gz (or
#                        $MERCURY_TARBALL) into DIR/mercury/prefix; done
#                        anyway when no hg_perf_server is there yet
#   --mercury-prefix D   use an installed Mercury in D instead
#   --baseline DIR       also run the same programs of another build tree
#                        (e.g. main's, before a change) in every round, right
#                        after ours: rows "ofishmem baseline", ratio ours/it
#   --rounds N           alternating rounds per row (default 5)
#   --seconds S          seconds per rate point of ours (default 2); Mercury's
#                        loop counts: $HG_RATE_LOOPS (host, default 200000),
#                        $HG_TCP_LOOPS (20000), $HG_BW_LOOPS (400 transfers
#                        per run; bulk_bw -n the same)
#   --out DIR            results (default ./mercury-compare/<date-time>)
#   --quick              1 round, short runs: a smoke run of the harness
#   --selftest           only check that the parsers read each program's
#                        output (ctest bench.compare_mercury_parse)
#
# Everything runs inside a loopback-only network namespace (unshare -n; as
# non-root unshare -rn): rxm/tcp listen on 0.0.0.0:1024 whatever -H says.
# Writes OUT/all.csv (round,row,impl,value), OUT/medians.csv,
# OUT/summary.txt (the table, with the load average before and after) and
# OUT/ratios.png; OUT/logs/ holds every run's output. Exit status 1 when a
# run failed or printed no result.
set -u

usage() { sed -n '3,63p' "$0" | sed 's/^# \{0,1\}//'; }

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

# ---- parsers (the selftest checks these against captured output) ---------
# rpc_rate: the data line of a 1-client run; column 2 is multi-recv calls/s.
parse_rpc_rate() { awk '$1 == "1" && NF >= 3 && $2 ~ /^[0-9.]+$/ { v = $2 } END { if (v != "") print v }'; }
# bulk_bw: "registration cache   PULL   PUSH   (registrations made N)".
parse_bulk_bw() { # COLUMN (1 pull, 2 push)
    awk -v c="$1" '/^registration cache/ { split($0, f, /  +/); v = f[c + 1] } END { if (v != "") print v + 0 }'
}
# call_cost / hg_call_cost: the whole call's median ns (last field) as calls/s.
parse_cost() { awk '/^whole call, one thread/ && $NF > 0 { v = 1e9 / $NF } END { if (v != "") printf "%.0f\n", v }'; }
# hg_rate / hg_bw_*: the first non-comment line with a value: "SIZE VALUE TIME".
parse_hg() { awk '!/^#/ && NF >= 3 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { v = $2 } END { if (v != "") print v }'; }

selftest() {
    local fail=0 got
    check() { # NAME EXPECTED GOT
        if [ "$2" = "$3" ]; then echo "ok   $1 = $3"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi
    }
    got=$(parse_rpc_rate <<'EOF'
# rpc_rate: provider shm, 8-byte echo, window 1 per client, 2.0 s per point, median of 1 alternating rounds, busy polling
clients  multi-recv (/s)  one-buffer (/s)   ratio  srv CPU us/req  reposts/req mr  reposts/req 1b
                                                       (mr / 1b)
1                 1113455                1 1113455.00     0.85 / 0.00         0.00000         0.00000
EOF
)
    check rpc_rate 1113455 "$got"
    local bw='# bulk_bw: provider tcp;ofi_rxm, 1048576-byte transfers, window 8, 400 per point (MB/s), busy polling
client memory          pull (get)   push (put)
registration cache           5997         6467   (registrations made 8)'
    check bulk_bw.pull 5997 "$(parse_bulk_bw 1 <<<"$bw")"
    check bulk_bw.push 6467 "$(parse_bulk_bw 2 <<<"$bw")"
    got=$(parse_hg <<'EOF'
# Initializing NA in busy wait mode
# RPC rate v2.4.1
# Size               "Rate (ops/s)"              "Time (us)"
8                          1353467                     0.74
EOF
)
    check hg_rate 1353467 "$got"
    got=$(parse_hg <<'EOF'
# Read BW (server bulk push) v2.4.1
# Size           "Bandwidth (MB/s)"              "Time (us)"
1048576                     6134.21                   170.94
EOF
)
    check hg_bw_read 6134.21 "$got"
    check call_cost 57143 "$(parse_cost <<<'whole call, one thread            39350      17500')"
    check hg_call_cost 50000 "$(parse_cost <<<'whole call, one thread            20000')"
    check empty "" "$(parse_hg <<<'# nothing')"
    got=$(printf '1|r|ours|10\n1|r|hg_x|5\n2|r|ours|12\n2|r|hg_x|4\n3|r|ours|11\n3|r|hg_x|5\n' | summarize_rows)
    check summary.median_ratio "r hg_x 11 5 2.2" "$got"
    return $fail
}

# round|row|impl|value lines in; "row impl ours_median peer_median median_ratio" out.
summarize_rows() {
    awk -F'|' '
    function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { v[$2, $3, $1] = $4; if (!(($2, $3) in seen)) { seen[$2, $3] = 1; order[++no] = $2 SUBSEP $3 }
      if ($1 > maxr) maxr = $1 }
    END {
        for (o = 1; o <= no; o++) {
            split(order[o], k, SUBSEP); row = k[1]; impl = k[2]
            if (impl == "ours") continue
            n = 0; m = 0; q = 0
            for (r = 1; r <= maxr; r++) {
                if ((row, impl, r) in v) p[++n] = v[row, impl, r]
                if ((row, "ours", r) in v) u[++m] = v[row, "ours", r]
                if ((row, impl, r) in v && (row, "ours", r) in v && v[row, impl, r] > 0)
                    x[++q] = v[row, "ours", r] / v[row, impl, r]
            }
            if (n == 0 || m == 0) continue
            printf "%s %s %.6g %.6g %.3g\n", row, impl, median(u, m), median(p, n), q ? median(x, q) : 0
            delete p; delete u; delete x
        }
    }'
}

if [ "${1:-}" = --selftest ]; then
    selftest
    exit $?
fi

BUILD=$REPO/build
BUILD_MERCURY=0
MPREFIX=
BASE=
ROUNDS=5
ROWS=rate_host_1,rate_host_16,rate_tcp_1,pull_tcp_1,pull_tcp_8,push_tcp_8,cost_tcp
SECS=2
OUT=
QUICK=0
while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) BUILD=${2:?--build-dir needs a directory}; shift 2 ;;
    --build-mercury) BUILD_MERCURY=1; shift ;;
    --mercury-prefix) MPREFIX=${2:?--mercury-prefix needs a directory}; shift 2 ;;
    --baseline) BASE=${2:?--baseline needs a directory}; shift 2 ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
    --rows) ROWS=${2:?--rows needs a list}; shift 2 ;;
    --seconds) SECS=${2:?--seconds needs a number}; shift 2 ;;
    --out) OUT=${2:?--out needs a directory}; shift 2 ;;
    --quick) QUICK=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare_mercury.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
case "$ROUNDS" in *[!0-9]*|''|0) echo "compare_mercury.sh: --rounds wants a number >= 1" >&2; exit 2 ;; esac
for r in ${ROWS//,/ }; do
    case "$r" in
    rate_host_1|rate_host_16|rate_tcp_1|pull_tcp_1|pull_tcp_8|push_tcp_8|cost_tcp) ;;
    *) echo "compare_mercury.sh: unknown row '$r' (--help lists them)" >&2; exit 2 ;;
    esac
done
say() { echo "compare_mercury.sh: $*" >&2; }

BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { say "no build directory '$BUILD' (--build-dir)"; exit 2; }
RPC_RATE=$BUILD/bench/rpc/rpc_rate
BULK_BW=$BUILD/bench/rpc/bulk_bw
for b in "$RPC_RATE" "$BULK_BW" "$BUILD/bench/rpc/call_cost"; do
    [ -x "$b" ] || { say "$b is missing: build the tree first (cmake --build $BUILD)"; exit 2; }
done
if [ -n "$BASE" ]; then
    BASE=$(cd "$BASE" 2>/dev/null && pwd) || { say "no baseline build directory (--baseline)"; exit 2; }
    for b in rpc_rate bulk_bw; do
        [ -x "$BASE/bench/rpc/$b" ] || { say "$BASE/bench/rpc/$b is missing (--baseline)"; exit 2; }
    done
fi

# ---- Mercury ---------------------------------------------------------------
build_mercury() {
    local tarball=${MERCURY_TARBALL:-/work/shared/peers/mercury-2.4.1.tar.gz}
    local top=$BUILD/mercury
    [ -f "$tarball" ] || { say "no Mercury tarball at $tarball (MERCURY_TARBALL)"; return 1; }
    if [ ! -f /usr/include/boost/preprocessor.hpp ]; then
        say "Boost preprocessor headers missing: installing libboost-dev"
        local sudo=
        [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            libboost-dev >"$top.apt.log" 2>&1 || { say "apt-get failed: $top.apt.log"; return 1; }
    fi
    mkdir -p "$top" && rm -rf "$top/src" "$top/obj" && mkdir "$top/src" || return 1
    tar xzf "$tarball" -C "$top/src" --strip-components=1 || return 1
    say "building Mercury into $top/prefix (log: $top/build.log)"
    { cmake -S "$top/src" -B "$top/obj" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=ON -DNA_USE_OFI=ON -DNA_USE_SM=ON \
        -DBUILD_TESTING=ON -DBUILD_TESTING_UNIT=OFF -DBUILD_TESTING_PERF=ON \
        -DMERCURY_USE_BOOST_PP=ON -DMERCURY_USE_SYSTEM_BOOST=ON \
        -DCMAKE_INSTALL_PREFIX="$top/prefix" &&
      cmake --build "$top/obj" -j "${JOBS:-2}" --target install; } >"$top/build.log" 2>&1 ||
        { say "Mercury build failed: $top/build.log"; return 1; }
}
if [ -z "$MPREFIX" ]; then
    MPREFIX=$BUILD/mercury/prefix
    if [ "$BUILD_MERCURY" = 1 ] || [ ! -x "$MPREFIX/bin/hg_perf_server" ]; then
        build_mercury || exit 2
    fi
fi
MPREFIX=$(cd "$MPREFIX" 2>/dev/null && pwd) || { say "no Mercury prefix directory (--mercury-prefix)"; exit 2; }
HG=$MPREFIX/bin
for p in hg_perf_server hg_rate hg_bw_read hg_bw_write; do
    [ -x "$HG/$p" ] || { say "$HG/$p is missing (--build-mercury)"; exit 2; }
done
# The one-thread Mercury call (row cost_tcp), compiled against this Mercury.
HG_COST=$MPREFIX/bin/hg_call_cost
if [[ ",$ROWS," == *,cost_tcp,* ]] && { [ ! -x "$HG_COST" ] || [ "$HERE/hg_call_cost.c" -nt "$HG_COST" ]; }; then
    ${CC:-cc} -O2 -std=gnu11 -o "$HG_COST" "$HERE/hg_call_cost.c" -I"$MPREFIX/include" \
        -L"$MPREFIX/lib" -Wl,-rpath,"$MPREFIX/lib" -lmercury -lna -lmercury_util ||
        { say "could not compile $HERE/hg_call_cost.c against $MPREFIX"; exit 2; }
fi

# ---- into a loopback-only network namespace --------------------------------
if [ -z "${OFISHMEM_CMP_NETNS:-}" ]; then
    command -v unshare >/dev/null || { say "unshare (util-linux) is needed"; exit 2; }
    uflag=-n
    [ "$(id -u)" = 0 ] || uflag=-rn
    args=(--build-dir "$BUILD" --mercury-prefix "$MPREFIX" --rounds "$ROUNDS" --rows "$ROWS"
          --seconds "$SECS")
    [ -n "$BASE" ] && args+=(--baseline "$BASE")
    [ -n "$OUT" ] && args+=(--out "$OUT")
    [ "$QUICK" = 1 ] && args+=(--quick)
    OFISHMEM_CMP_NETNS=1 exec unshare $uflag bash -c 'ip link set lo up && exec "$0" "$@"' \
        "$0" "${args[@]}"
fi
if ip -o link show | grep -qv ': lo:'; then
    say "not in a loopback-only network namespace: refusing to run"; exit 2
fi

export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo FI_OFI_RXM_USE_SRX=0
TCP="tcp;ofi_rxm"
HOSTPROV=${OURS_HOST_PROV:-shm}
RATE_LOOPS=${HG_RATE_LOOPS:-200000}
TCP_LOOPS=${HG_TCP_LOOPS:-20000}
BW_LOOPS=${HG_BW_LOOPS:-400}
COST_CALLS=20000
if [ "$QUICK" = 1 ]; then
    ROUNDS=1; SECS=0.5; RATE_LOOPS=20000; TCP_LOOPS=2000; BW_LOOPS=50; COST_CALLS=2000
fi
OUT=${OUT:-$PWD/mercury-compare/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" "$OUT/run" || exit 2
OUT=$(cd "$OUT" && pwd)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$OUT/all.csv"
FAILED=0
RUN_TIMEOUT=${RUN_TIMEOUT:-300}

# ours ROW ROUND [TREE NAME]: prints the value of our program for that row
# (of build tree TREE, default ours; its logs named NAME).
ours() {
    local log=$OUT/logs/$1.${4:-ours}.$2.log
    local RPC_RATE=${3:-$BUILD}/bench/rpc/rpc_rate BULK_BW=${3:-$BUILD}/bench/rpc/bulk_bw
    case "$1" in
    rate_host_1) timeout "$RUN_TIMEOUT" "$RPC_RATE" -p "$HOSTPROV" -c 1 -w 1 -t "$SECS" -r 1 -m mr -b ;;
    rate_host_16) timeout "$RUN_TIMEOUT" "$RPC_RATE" -p "$HOSTPROV" -c 1 -w 16 -t "$SECS" -r 1 -m mr -b ;;
    rate_tcp_1) SHMEM_RPC_SAME_HOST=0 timeout "$RUN_TIMEOUT" "$RPC_RATE" -p "$TCP" -c 1 -w 1 -t "$SECS" -r 1 -m mr -b ;;
    pull_tcp_1) SHMEM_RPC_SAME_HOST=0 timeout "$RUN_TIMEOUT" "$BULK_BW" -p "$TCP" -w 1 -n "$BW_LOOPS" -m cache -b ;;
    pull_tcp_8|push_tcp_8) SHMEM_RPC_SAME_HOST=0 timeout "$RUN_TIMEOUT" "$BULK_BW" -p "$TCP" -w 8 -n "$BW_LOOPS" -m cache -b ;;
    cost_tcp) timeout "$RUN_TIMEOUT" "${3:-$BUILD}/bench/rpc/call_cost" -p "$TCP" -n "$COST_CALLS" -r 5 ;;
    esac >"$log" 2>&1
    case "$1" in
    cost_*) grep -q "through $TCP" "$log" && parse_cost <"$log" ;; # (a call_cost without -p: none)
    rate_*) parse_rpc_rate <"$log" ;;
    pull_*) parse_bulk_bw 1 <"$log" ;;
    push_*) parse_bulk_bw 2 <"$log" ;;
    esac
}

# hg IMPL ROW ROUND: one Mercury server + client; prints the client's value.
hg() {
    local impl=$1 row=$2 k=$3 na client loops x size
    if [ "$row" = cost_tcp ]; then
        timeout "$RUN_TIMEOUT" "$HG_COST" -i "ofi+tcp://127.0.0.1" -n "$COST_CALLS" -r 5 \
            >"$OUT/logs/$row.$impl.$k.log" 2>&1
        parse_cost <"$OUT/logs/$row.$impl.$k.log"
        return
    fi
    case "$impl" in
    hg_sm) na=(-c na -p sm) ;;
    hg_ofishm) na=(-c ofi -p shm) ;;
    hg_tcp) na=(-c ofi -p tcp -H 127.0.0.1) ;;
    esac
    case "$row" in
    rate_host_*) client=hg_rate; x=${row##*_}; loops=$(( RATE_LOOPS / x )); size=(-y 8 -z 8) ;;
    rate_tcp_*) client=hg_rate; x=${row##*_}; loops=$(( TCP_LOOPS / x )); size=(-y 8 -z 8) ;;
    pull_*) client=hg_bw_write; loops=$(( BW_LOOPS / ${row##*_} )); x=${row##*_}
            size=(-y 1048576 -z 1048576 -w 1 -M) ;;
    push_*) client=hg_bw_read; loops=$(( BW_LOOPS / ${row##*_} )); x=${row##*_}
            size=(-y 1048576 -z 1048576 -w 1 -M) ;;
    esac
    local dir=$OUT/run/$impl.$row.$k log=$OUT/logs/$row.$impl.$k.log
    mkdir -p "$dir"
    (
        cd "$dir" || exit 1
        timeout "$RUN_TIMEOUT" "$HG/hg_perf_server" "${na[@]}" -b >server.log 2>&1 &
        srv=$!
        for _ in $(seq 600); do [ -s port.cfg ] && break; kill -0 $srv 2>/dev/null || break; sleep 0.05; done
        [ -s port.cfg ] || { echo "hg_perf_server wrote no port.cfg"; cat server.log; kill $srv 2>/dev/null; wait $srv; exit 1; }
        timeout "$RUN_TIMEOUT" "$HG/$client" "${na[@]}" -b -l "$loops" "${size[@]}" -x "$x"
        rc=$?
        # The server exits after its one client; make sure of it.
        for _ in $(seq 100); do kill -0 $srv 2>/dev/null || break; sleep 0.05; done
        kill $srv 2>/dev/null
        wait $srv
        cat server.log >&2
        exit $rc
    ) >"$log" 2>&1
    rm -rf "$dir"
    parse_hg <"$log"
}

record() { # ROUND ROW IMPL VALUE
    if [ -z "$4" ]; then
        say "round $1: $2 ($3) printed no result: see $OUT/logs/$2.*$3*.$1.log"
        FAILED=1
        return
    fi
    echo "$1|$2|$3|$4" >>"$OUT/all.csv"
}

peers_of() { case "$1" in rate_host_*) echo hg_sm hg_ofishm ;; *) echo hg_tcp ;; esac; }

T0=$(date +%s)
for ((k = 1; k <= ROUNDS; k++)); do
    for row in ${ROWS//,/ }; do
        # push_tcp_8 comes from the same bulk_bw run as pull_tcp_8 when both are asked.
        if [ "$row" = push_tcp_8 ] && [[ ",$ROWS," == *,pull_tcp_8,* ]]; then
            record "$k" "$row" ours "$(parse_bulk_bw 2 <"$OUT/logs/pull_tcp_8.ours.$k.log")"
            [ -n "$BASE" ] && record "$k" "$row" base \
                "$(parse_bulk_bw 2 <"$OUT/logs/pull_tcp_8.base.$k.log")"
        else
            record "$k" "$row" ours "$(ours "$row" "$k")"
            [ -n "$BASE" ] && record "$k" "$row" base "$(ours "$row" "$k" "$BASE" base)"
        fi
        for p in $(peers_of "$row"); do
            record "$k" "$row" "$p" "$(hg "$p" "$row" "$k")"
        done
    done
    say "round $k/$ROUNDS done ($(( $(date +%s) - T0 )) s, load $(cut -d' ' -f1-3 /proc/loadavg))"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- table -------------------------------------------------------------------
label() {
    case "$1" in
    rate_host_1) echo "RPC rate, one host, 1 in flight (/s)" ;;
    rate_host_16) echo "RPC rate, one host, 16 in flight (/s)" ;;
    rate_tcp_1) echo "RPC rate, tcp;ofi_rxm, 1 in flight (/s)" ;;
    pull_tcp_1) echo "bulk 1 MiB pull, tcp, 1 in flight (MB/s)" ;;
    pull_tcp_8) echo "bulk 1 MiB pull, tcp, 8 in flight (MB/s)" ;;
    push_tcp_8) echo "bulk 1 MiB push, tcp, 8 in flight (MB/s)" ;;
    cost_tcp) echo "one-thread tcp call (1e9/median ns)" ;;
    esac
}
implname() {
    case "$1" in hg_sm) echo "Mercury na+sm" ;; hg_ofishm) echo "Mercury ofi shm" ;; hg_tcp) echo "Mercury ofi tcp;ofi_rxm" ;;
                 base) echo "ofishmem baseline" ;; esac
}
summarize_rows <"$OUT/all.csv" >"$OUT/medians.raw"
{
    echo "# ofishmem RPC vs Mercury 2.4.1, both busy-polling; $ROUNDS alternating round(s);"
    echo "# ours on one host: provider $HOSTPROV; medians, ratio = median of per-round ours/Mercury"
    [ -n "$BASE" ] && echo "# baseline: $BASE (rows 'ofishmem baseline': ratio ours/baseline)"
    echo "# load average: start $LOAD_START, end $LOAD_END ($(nproc) CPUs); $(date -u +%FT%TZ)"
    printf '%-42s %-24s %12s %12s %7s\n' row "against" ours them ratio
    while read -r row impl o p q; do
        printf '%-42s %-24s %12.0f %12.0f %7.2f\n' "$(label "$row")" "$(implname "$impl")" "$o" "$p" "$q"
    done <"$OUT/medians.raw"
} | tee "$OUT/summary.txt"
{
    echo "row,mercury,ours_median,mercury_median,ratio"
    tr ' ' ',' <"$OUT/medians.raw"
} >"$OUT/medians.csv"
sed -i '1i round|row|impl|value' "$OUT/all.csv"
tr '|' ',' <"$OUT/all.csv" >"$OUT/all.csv.tmp" && mv "$OUT/all.csv.tmp" "$OUT/all.csv"

if command -v gnuplot >/dev/null && [ -s "$OUT/medians.raw" ]; then
    awk '{ printf "\"%s\\n%s\" %s\n", $1, $2, $5 }' "$OUT/medians.raw" >"$OUT/ratios.dat"
    gnuplot -e "set terminal pngcairo size 1000,600 noenhanced; set output '$OUT/ratios.png';
        set title 'ofishmem RPC / Mercury 2.4.1, both busy-polling (median of per-round ratios)';
        set style data histograms; set style fill solid 0.6; set boxwidth 0.7; set grid ytics;
        set yrange [0:*]; set ylabel 'ours / Mercury'; set xtics font ',9';
        plot '$OUT/ratios.dat' using 2:xtic(1) title 'ratio', 1 with lines lw 2 title 'parity'" \
        2>"$OUT/logs/gnuplot.log" || say "gnuplot failed: $OUT/logs/gnuplot.log"
    rm -f "$OUT/ratios.dat"
else
    say "gnuplot not found: no plot (apt-get install gnuplot-nox)"
fi
rm -rf "$OUT/run" "$OUT/medians.raw"
say "results in $OUT"
exit $FAILED
