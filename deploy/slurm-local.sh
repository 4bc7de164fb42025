#!/usr/bin/env bash
# Start a throw-away one-node Slurm cluster on this machine (munged,
# slurmctld and slurmd on localhost, all state in one temporary
# directory), submit deploy/slurm-bench.sh as a job array, wait for it and
# stop the cluster again. deploy/slurm_test.go drives it and compares the
# merged shards with an unsharded run; it is also usable by hand:
#
#   deploy/slurm-local.sh BIN RESULTS [SHARDS] [SUITE] [PROFILE]
#
# BIN is a built afin binary, RESULTS the (shared) results directory the
# array appends to. Needs Debian's slurm-wlm and munge; run as root (the
# daemons drop nothing, so every path below stays private to this run).
# The Slurm job logs and the daemons' logs are printed at the end.
set -euo pipefail

BIN="$(realpath "${1:?usage: slurm-local.sh BIN RESULTS [SHARDS] [SUITE] [PROFILE]}")"
mkdir -p "${2:?results directory}"
RESULTS="$(realpath "$2")"
SHARDS="${3:-3}"
SUITE="${4:-synthetic}"
PROFILE="${5:-smoke}"
HERE="$(cd "$(dirname "$0")" && pwd)"

for cmd in munged slurmctld slurmd sbatch squeue; do
  command -v "$cmd" >/dev/null || { echo "slurm-local: $cmd not found (apt-get install -y slurm-wlm munge)" >&2; exit 2; }
done

D="$(mktemp -d /tmp/afin-slurm.XXXXXX)"
mkdir -p "$D/state" "$D/spool" "$D/logs" "$D/munge"
HOST="$(hostname -s)"
# Ports off Slurm's defaults, so a real cluster on the machine is untouched.
CTLD_PORT="${SLURM_LOCAL_PORT:-16817}"
MEM_MB="$(awk '/MemTotal/ {print int($2/1024) - 512}' /proc/meminfo)"
CPUS="$(nproc)"

cleanup() {
  # Stop only the daemons this script started, by their pid files.
  for p in slurmd slurmctld munged; do
    [ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null || true
  done
  sleep 1
  rm -rf "$D"
}
trap cleanup EXIT

# A private munge key and socket: the machine's munged (if any) is left alone.
dd if=/dev/urandom of="$D/munge/munge.key" bs=1 count=128 status=none
chmod 700 "$D/munge"; chmod 400 "$D/munge/munge.key"
munged --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" \
  --pid-file="$D/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge/seed"

# Addresses are pinned to loopback: the host name need not resolve.
cat >"$D/slurm.conf" <<EOF
ClusterName=afinlocal
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((CTLD_PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups in a container: track processes by /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=local Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$D/slurm.conf"

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
# Wait until the node reports idle (a few seconds).
for _ in $(seq 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then break; fi
  sleep 1
done
sinfo

# The array script takes its settings from the environment (sbatch's
# default --export=ALL); logs go to the private directory.
export SUITE PROFILE RESULTS AFIN="$BIN" AFIN_CACHE_DIR="${AFIN_CACHE_DIR:-$RESULTS/.reference-cache}"
start=$(date +%s)
jobid=$(sbatch --parsable --wait --array="0-$((SHARDS - 1))" \
  --output="$D/logs/afin-bench-%A_%a.log" "$HERE/slurm-bench.sh") || status=$?
echo "slurm-local: array job $jobid finished in $(( $(date +%s) - start ))s (sbatch status ${status:-0})"

for f in "$D"/logs/*.log; do
  echo "---- $(basename "$f")"
  cat "$f"
done
echo "---- slurmctld.log (job lines)"
grep -E "sched|_job_complete|array" "$D/slurmctld.log" || true
echo "---- slurmd.log (launches)"
grep -E "batch job|done with job" "$D/slurmd.log" | head -40 || true
exit "${status:-0}"
