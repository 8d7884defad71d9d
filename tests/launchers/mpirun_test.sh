#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PE programs under Open MPI's mpirun (4.1: its PMIx server gives the
# library rank, size, local peers and the modex). Everything runs inside a
# loopback-only network namespace: mpirun never listens on a real interface.
#   mpirun_test.sh CASE
source "$(dirname "$0")/common.sh"
CASE=$1
need mpirun openmpi-bin
in_loopback_netns "$@"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/launchers_mpirun.XXXXXX") || exit 1
trap 'reap_jobs; rm -rf "$WORK"' EXIT
export TMPDIR=$WORK FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --timeout 60
        --mca btl self --mca plm_rsh_agent false)

case $CASE in
probe_np2 | probe_np4)
    np=${CASE#probe_np}
    run_job "$WORK/out" env SHMEM_VERSION=1 "${MPIRUN[@]}" -np "$np" "$PROBE" "$np" 1
    expect_ok "probe on $np PEs" "$WORK/out"
    expect_line "probe" "$WORK/out" "launcher_probe: passed .*$np PEs"
    expect_line "probe" "$WORK/out" "^host 0: PEs$(seq -s ' ' -f ' %g' 0 $((np - 1)) | tr -s ' ')$"
    expect_line "no fabric on one host (SHMEM_FABRIC=auto)" "$WORK/out" "$np PEs, provider none"
    ok "mpirun -np $np: rank/size, SHMEM_TEAM_SHARED = all $np PEs, direct path, RMA/AMO"
    ;;
probe_tcp_np2)
    run_job "$WORK/out" env SHMEM_VERSION=1 SHMEM_DIRECT=0 SHMEM_OFI_PROVIDER='tcp;ofi_rxm' \
        "${MPIRUN[@]}" -np 2 "$PROBE" 2 1
    expect_ok "probe on tcp" "$WORK/out"
    expect_line "probe" "$WORK/out" "launcher_probe: passed"
    expect_line "provider" "$WORK/out" "2 PEs, provider tcp;ofi_rxm"
    ok "mpirun -np 2 on tcp;ofi_rxm with the direct path off"
    ;;
ring_np4)
    run_job "$WORK/out" "${MPIRUN[@]}" -np 4 "$RING"
    expect_ok "hello_ring" "$WORK/out"
    expect_line "hello_ring" "$WORK/out" "^ring OK: 4 of 4 PEs received the right data"
    ok "examples/hello_ring under mpirun -np 4"
    ;;
pe_tests)
    for np in 2 4; do
        for t in "$PE_RMA_SIZES" "$PE_BARRIER" "$PE_SETUP_QUERY $np"; do
            # shellcheck disable=SC2086  # $t is a program and its argument
            run_job "$WORK/out" "${MPIRUN[@]}" -np $np $t
            expect_ok "$(basename "${t%% *}") -np $np" "$WORK/out"
            expect_line "$(basename "${t%% *}")" "$WORK/out" "passed .*$np PEs"
            ok "$(basename "${t%% *}") under mpirun -np $np"
        done
    done
    ;;
oshrun_launcher)
    cmd=$("$OSHRUN" --launcher=mpirun -n 3 --timeout 30.5 -x SHMEM_VERSION=1 -x A_B \
          --launcher-arg=--allow-run-as-root --showme prog arg 2>&1) ||
        fail "--showme: $cmd"
    want="mpirun --oversubscribe -np 3 --timeout 31 -x SHMEM_VERSION --allow-run-as-root prog arg"
    [ "$cmd" = "$want" ] || fail "--showme printed '$cmd', expected '$want'"
    ok "oshrun --launcher=mpirun --showme: $cmd"
    run_job "$WORK/out" "$OSHRUN" --launcher=mpirun -n 2 --timeout 60 -x SHMEM_VERSION=1 \
        --launcher-arg=--allow-run-as-root --launcher-arg=--mca \
        --launcher-arg=plm_rsh_agent --launcher-arg=false "$PROBE" 2 1
    expect_ok "oshrun --launcher=mpirun" "$WORK/out"
    expect_line "probe" "$WORK/out" "launcher_probe: passed .*2 PEs"
    expect_line "-x SHMEM_VERSION=1 reached the PEs" "$WORK/out" "2 PEs, provider none"
    ok "oshrun --launcher=mpirun -n 2 ran the probe"
    out=$("$OSHRUN" --launcher=mpi -n 2 prog 2>&1) && fail "an unknown launcher was accepted"
    grep -q "unknown launcher 'mpi'" <<<"$out" || fail "bad launcher message: $out"
    ok "an unknown launcher is refused by name"
    ;;
pe_killed)
    # PE 1 dies by SIGKILL while the others wait in a barrier: the job must
    # end (no hang) with a non-zero status and a message about the death.
    start=$(date +%s)
    run_job "$WORK/out" "${MPIRUN[@]}" -np 3 "$PE_DIES"
    expect_death_ends_job "$WORK/out" "$start" 30
    expect_line "death reported" "$WORK/out" "PE 1|rank 1"
    ok "a killed PE ended the job in ${TOOK}s, status $RC"
    ;;
launcher_killed)
    # Open MPI keeps the job going after a death with --enable-recovery (and
    # 4.1 fails to notify the others): PEs 0 and 2 wait in a barrier for the
    # dead PE 1. Then mpirun itself is killed. Each PE must notice that its
    # PMIx server is gone (PMIX_ERR_LOST_CONNECTION) and end, not hang.
    setsid env PE_WATCHDOG_S=60 "${MPIRUN[@]}" --enable-recovery -np 3 "$PE_DIES" \
        >"$WORK/out" 2>&1 &
    mpid=$!
    BG_PIDS+=("$mpid")
    for _ in $(seq 1 100); do
        grep -q "raising SIGKILL" "$WORK/out" && break
        sleep 0.1
    done
    grep -q "raising SIGKILL" "$WORK/out" || { cat "$WORK/out" >&2; fail "PE 1 never died"; }
    sleep 1 # the others are in the barrier now
    mapfile -t pes < <(pgrep -P "$mpid")
    [ ${#pes[@]} -eq 2 ] || fail "expected 2 live PEs under mpirun, found ${#pes[@]}: ${pes[*]}"
    kill -KILL "$mpid"
    wait "$mpid" 2>/dev/null
    for i in $(seq 1 100); do
        alive=()
        for p in "${pes[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
        [ ${#alive[@]} -eq 0 ] && break
        sleep 0.1
    done
    for p in "${alive[@]}"; do kill -KILL "$p" 2>/dev/null; done
    [ ${#alive[@]} -eq 0 ] || fail "PEs ${alive[*]} still ran 10 s after their launcher died"
    ok "both PEs ended within $((i / 10)).$((i % 10)) s of losing their launcher"
    ;;
*) fail "unknown case '$CASE'" ;;
esac
