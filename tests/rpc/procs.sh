# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the RPC drivers (tests/rpc/run_rpc.sh, tests/reliability/soak.sh).
# procs_setup PROV NAME: PROVIDER from shm|tcp (tcp;ofi_rxm on loopback), a
# work dir W (mktemp NAME.XXXXXX), and an EXIT trap that stops every PID the
# caller adds to PIDS (only those: TERM, then KILL, then reaped) and removes W
# and the /dev/shm regions that processes which died during the run left.
procs_setup() {
    case $1 in
      # shm and tcp: through the provider only; sq: the same-host queues
      # (server on shm, SHMEM_RPC_SAME_HOST=1).
      shm) PROVIDER=shm; export SHMEM_RPC_SAME_HOST=0 ;;
      tcp) PROVIDER="tcp;ofi_rxm"; export FI_TCP_IFACE=lo SHMEM_RPC_SAME_HOST=0 ;;
      sq) PROVIDER=shm; export SHMEM_RPC_SAME_HOST=1 ;;
      # The contract-checking fabric (tests/fabric) under a provider's
      # profile, over tcp;ofi_rxm on loopback; SHMEM_OFI_LIBRARY comes from ctest.
      fab_*)
        export FABCHECK_PROFILE=${1#fab_} FABCHECK_PROVIDER="tcp;ofi_rxm" FI_TCP_IFACE=lo \
               SHMEM_RPC_SAME_HOST=0
        case $FABCHECK_PROFILE in
          verbs) PROVIDER="verbs;ofi_rxm" ;;
          strict) PROVIDER=fabcheck_strict ;;
          *) PROVIDER=$FABCHECK_PROFILE ;;
        esac
        [ -n "${SHMEM_OFI_LIBRARY:-}" ] || { echo "$1: SHMEM_OFI_LIBRARY is not set"; exit 2; } ;;
      *) echo "unknown provider $1"; exit 2 ;;
    esac
    W=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX") || exit 1
    (cd /dev/shm 2>/dev/null && ls) >"$W/.shm.before"
    PIDS=()
    trap procs_cleanup EXIT
    trap 'exit 1' INT TERM
}

procs_cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.2
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    # A process killed by SIGKILL leaves libfabric shm's /dev/shm/<pid>:* behind:
    # those of our PIDS, and those of processes started under them (a client
    # run as `timeout 100 rpc_client ... die` is not in PIDS) that appeared
    # since procs_setup and whose process is gone.
    for p in "${PIDS[@]}"; do rm -f /dev/shm/"$p":* 2>/dev/null; done
    local f n
    for f in /dev/shm/[0-9]*:*; do
        [ -e "$f" ] || continue
        n=${f#/dev/shm/}
        grep -qxF "$n" "$W/.shm.before" 2>/dev/null && continue
        [ -d "/proc/${n%%:*}" ] || rm -f "$f"
    done
    rm -rf "$W"
}
