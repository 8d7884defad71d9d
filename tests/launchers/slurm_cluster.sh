# SPDX-License-Identifier: BSD-3-Clause
# Shared by the Slurm tests (sourced): a throw-away munged and slurm.conf in
# the test's work dir $W, and the daemons' teardown. Daemons started go to
# DAEMONS; the caller's EXIT trap calls stop_daemons.

DAEMONS=()

# Skips the test where Slurm, munge or Slurm's PMIx plugin is not installed.
need_slurm() {
    need srun slurm-client
    need slurmctld slurmctld
    need slurmd slurmd
    need munged munge
    ls /usr/lib/*/slurm*/mpi_pmix.so >/dev/null 2>&1 ||
        skip "Slurm's mpi_pmix plugin not found (Debian package slurm-wlm-basic-plugins)"
}

# stop_daemons: TERM every daemon, 2 s to go, then KILL; reaps them.
stop_daemons() {
    local pid
    for pid in "${DAEMONS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${DAEMONS[@]}"; do
        for _ in $(seq 1 20); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
}

# show_logs: the last lines of every log in $W, before a failure.
show_logs() {
    local f
    for f in "$W"/*.log; do
        echo "---- $(basename "$f") (last lines)" >&2
        tail -n 15 "$f" >&2
    done
}

# start_munged: a munged with a fresh key and its socket in $W/munge; waits
# for the socket.
start_munged() {
    mkdir -p "$W/munge"
    chmod 755 "$W/munge"
    head -c 1024 /dev/urandom >"$W/munge/munge.key"
    chmod 600 "$W/munge/munge.key"
    munged --force --foreground --key-file="$W/munge/munge.key" --socket="$W/munge/socket" \
        --pid-file="$W/munge/munged.pid" --seed-file="$W/munge/seed" \
        --log-file="$W/munged.log" 2>>"$W/munged.log" &
    DAEMONS+=($!)
    for _ in $(seq 1 20); do [ -S "$W/munge/socket" ] && break; sleep 0.1; done
    [ -S "$W/munge/socket" ] || { show_logs; fail "munged did not start"; }
}

# write_slurm_conf CLUSTER CONTROLLER NODE:ADDR:CPUS...: $W/slurm.conf for
# one partition of those nodes (exported as SLURM_CONF). Every node has its
# own spool and TmpFS under $W: slurmstepds of one machine would otherwise
# share /tmp, and Slurm's PMIx plugin names its files there by job id.
write_slurm_conf() {
    local cluster=$1 ctl=$2 n name addr cpus
    shift 2
    mkdir -p "$W/state"
    {
        cat <<CONF
ClusterName=$cluster
SlurmctldHost=$ctl
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge/socket
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool/%n
TmpFS=$W/tmp/%n
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd-%n.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmdParameters=config_overrides
KillWait=2
CONF
        for n in "$@"; do
            IFS=: read -r name addr cpus <<<"$n"
            mkdir -p "$W/spool/$name" "$W/tmp/$name"
            echo "NodeName=$name NodeAddr=$addr CPUs=$cpus State=UNKNOWN"
        done
        echo "PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP"
    } >"$W/slurm.conf"
    export SLURM_CONF=$W/slurm.conf
}

# slurm_cluster_up: munged, slurmctld and one slurmd (node0, 8 CPUs) on
# loopback, configured in $W; returns 1 (logs shown) if the node does not
# come up idle. The caller's network namespace needs an address besides
# loopback (Slurm binds with AI_ADDRCONFIG); DAEMONS gets their pids.
slurm_cluster_up() {
    start_munged
    write_slurm_conf ofishmem-test "$(hostname -s)(127.0.0.1)" node0:127.0.0.1:8
    slurmctld -D -i -f "$SLURM_CONF" >>"$W/slurmctld.log" 2>&1 &
    DAEMONS+=($!)
    slurmd -D -N node0 -f "$SLURM_CONF" >>"$W/slurmd-node0.log" 2>&1 &
    DAEMONS+=($!)
    local state=""
    for _ in $(seq 1 100); do
        state=$(sinfo -h -o %T 2>/dev/null)
        [ "$state" = idle ] && break
        sleep 0.2
    done
    [ "$state" = idle ] || { show_logs; return 1; }
    echo "test cluster up: slurmctld, slurmd node0, munged (pids ${DAEMONS[*]})"
}
