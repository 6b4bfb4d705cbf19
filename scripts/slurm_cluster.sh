#!/usr/bin/env bash
# Start a single-node SLURM cluster on this Debian machine (root), for jitexp's `slurm` tests and
# for trying hydra/launcher=submitit_slurm locally. Idempotent: a running cluster is left as is.
#   sudo bash scripts/slurm_cluster.sh          # then: sinfo  (partition "debug", one node)
set -euo pipefail

if sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mix|alloc'; then
  echo "slurm: already running"; exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
state=/tmp/slurm-state
mkdir -p /etc/slurm "$state/ctld" "$state/d" /var/log/slurm
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=jitexp
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF

if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/lib/munge /var/log/munge && chown munge:munge /run/munge /var/lib/munge /var/log/munge
pgrep -x munged >/dev/null || su -s /bin/sh munge -c /usr/sbin/munged
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 30); do
  if sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mix|alloc'; then
    sinfo; exit 0
  fi
  scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
  sleep 1
done
echo "slurm: the node did not come up; see /var/log/slurm/" >&2
exit 1
