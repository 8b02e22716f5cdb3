#!/bin/sh
# tests/slurm/run.sh BUILD — `make test-slurm`: scripts/slurm-sweep.sh on a
# real Slurm. Starts a single-node cluster on this machine (munged,
# slurmctld and slurmd from Debian's munge and slurm-wlm, every file in a
# temporary folder, free ports, the node's CPUs as the machine has them),
# submits a sharded sweep as a job array with its dependent merge job, waits
# for the merge, and checks that the merged CSV equals the unsharded sweep
# byte for byte. The daemons it started are stopped on exit (by the pids
# they wrote), whatever happens. Needs root (the daemons run as root here)
# and installs the two packages with apt-get when they are missing.
#
# Prints `PASS slurm_real_sweep` or `FAIL slurm_real_sweep: why` (tests/run.sh
# counts them) and exits 1 on failure; where this machine cannot run it (no
# root, or no Slurm and no apt-get) it prints `skip ...: why` and exits 0,
# unless SLURM_REQUIRED=1 (`make test-slurm`), which fails instead.
set -u
build=${1:-build}
specsim=$(cd "$(dirname "$build/specsim")" && pwd)/specsim
root=$(cd "$(dirname "$0")/../.." && pwd)
name=slurm_real_sweep

fail() {
    echo "FAIL $name: $*"
    for f in slurmctld.log slurmd.log munged.log out.merge.log; do
        [ -s "$tmp/$f" ] && { echo "--- $f (tail)"; tail -n 15 "$tmp/$f"; }
    done
    exit 1
}

# What this machine cannot do: `make test-slurm` (SLURM_REQUIRED=1) fails,
# since the user asked for this test; `make test` skips with the reason, as
# its other tests do when a tool is missing (tests/cli/neon-qemu.sh).
cannot() {
    if [ "${SLURM_REQUIRED:-0}" = 1 ]; then echo "FAIL $name: $*"; exit 1; fi
    echo "skip $name: $*"
    exit 0
}
if [ "$(id -u)" -ne 0 ]; then
    cannot "needs root (slurmd and munged run as root in this test)"
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    command -v apt-get >/dev/null || cannot "no Slurm and munge, and no apt-get to install them"
    echo "test-slurm: installing slurm-wlm and munge (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge; } \
        >&2 || cannot "could not install slurm-wlm and munge"
fi

tmp=$(mktemp -d /tmp/specsim-slurm.XXXXXX)
# The daemons' pid files name exactly what this script started.
stop() {
    for p in slurmd slurmctld munged; do
        [ -s "$tmp/$p.pid" ] || continue
        pid=$(cat "$tmp/$p.pid")
        kill "$pid" 2>/dev/null
        k=0
        while kill -0 "$pid" 2>/dev/null && [ $k -lt 50 ]; do sleep 0.1; k=$((k + 1)); done
        kill -9 "$pid" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP
chmod 700 "$tmp"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/run"

# munge: its own key, socket and files, so that no system daemon is needed.
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/munge.key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" \
    --seed-file="$tmp/munged.seed" 2>>"$tmp/munged.log" || fail "munged did not start"

# Two free TCP ports for the controller and the node daemon.
ports=$(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))') || fail "no free ports"
set -- $ports
host=$(hostname -s)
cpus=$(nproc)
cat >"$tmp/slurm.conf" <<EOF
ClusterName=specsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$1
SlurmdPort=$2
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" 2>>"$tmp/slurmctld.log" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" 2>>"$tmp/slurmd.log" || fail "slurmd did not start"

# The node comes up idle within a few seconds.
k=0
until sinfo -h -N -o '%T' 2>/dev/null | grep -q -E '^(idle|mixed|allocated)'; do
    k=$((k + 1))
    [ $k -gt 60 ] && fail "the node did not come up ($(sinfo -h -N -o '%T' 2>&1))"
    sleep 0.5
done

# The sweep (tests/slurm/sweep.yaml): 6 points in 3 shards.
cp "$root/tests/slurm/sweep.yaml" "$tmp/run/s.yaml" || fail "cannot copy the sweep"
"$specsim" sweep "$tmp/run/s.yaml" -j 1 --quiet --out "$tmp/run/ref.csv" ||
    fail "the unsharded sweep failed"

cd "$tmp/run" || fail "no work folder"
SPECSIM="$specsim" sh "$root/scripts/slurm-sweep.sh" -n 3 -c 1 s.yaml out.csv \
    >"$tmp/submit.log" 2>&1 || fail "slurm-sweep.sh failed: $(cat "$tmp/submit.log")"
merge=$(sed -n -E 's/.*merge job ([0-9]+).*/\1/p' "$tmp/submit.log")
[ -n "$merge" ] || fail "no merge job id in: $(cat "$tmp/submit.log")"

# Wait for the merge job to leave the queue (at most two minutes).
k=0
while squeue -h -j "$merge" 2>/dev/null | grep -q .; do
    k=$((k + 1))
    [ $k -gt 240 ] && fail "the merge job $merge did not finish: $(squeue 2>&1)"
    sleep 0.5
done
cp out.merge.log "$tmp/out.merge.log" 2>/dev/null
[ -f out.csv ] || fail "the merge job wrote no out.csv"
cmp -s out.csv ref.csv || fail "the merged CSV differs from the unsharded sweep"
for i in 0 1 2; do
    [ -s "out.part$i.csv" ] || fail "shard $i wrote nothing"
done
echo "PASS $name"
