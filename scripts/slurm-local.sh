#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for `sassim sweep --slurm` and its end-to-end test
# (crates/experiment/tests/slurm.rs).
#
#   scripts/slurm-local.sh start    install Debian's slurm-wlm and munge (apt-get) if missing,
#                                   write /etc/slurm/slurm.conf, start munged, slurmctld, slurmd,
#                                   and wait until the node accepts jobs
#   scripts/slurm-local.sh status   print sinfo; exit 0 when the node is up
#   scripts/slurm-local.sh stop     stop the three daemons this script started
#
# Needs root (apt-get, the daemons). `start` is idempotent: a running, responsive cluster is left
# as it is. It refuses to replace a /etc/slurm/slurm.conf it did not write. Every failure exits
# non-zero with a message: the test that relies on this script must fail loudly, not skip.
#
# Configuration (one node named after `hostname -s`, all its CPUs, 90% of its memory, partition
# `debug`): proctrack/linuxproc and task/none, so no cgroups are needed; SlurmUser root; state,
# spool and logs under /var/spool/slurm-local and /var/log/slurm-local.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by sassim scripts/slurm-local.sh"
STATE=/var/spool/slurm-local
LOGS=/var/log/slurm-local
NODE=$(hostname -s)

die() { echo "slurm-local: $*" >&2; exit 1; }

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (apt-get and the Slurm daemons need it)"; }

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
    && command -v munged >/dev/null; then
    return
  fi
  command -v apt-get >/dev/null || die "apt-get not found: cannot install slurm-wlm and munge"
  echo "slurm-local: installing slurm-wlm and munge with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed"
  apt-get install -y -qq slurm-wlm munge >/dev/null || die "apt-get install slurm-wlm munge failed"
}

write_conf() {
  if [[ -f $CONF ]] && ! grep -qF "$MARK" "$CONF"; then
    die "$CONF exists and was not written by this script; not replacing it"
  fi
  local cpus mem
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
  mkdir -p /etc/slurm "$STATE/ctld" "$STATE/d" "$LOGS"
  cat > "$CONF.tmp" <<EOF
$MARK
ClusterName=sassim-local
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
MaxArraySize=10001
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$NODE CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

start_munge() {
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    return
  fi
  if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key || die "mungekey failed"
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged || die "munged did not start (see /var/log/munge/munged.log)"
  for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && return
    sleep 0.2
  done
  die "munge does not answer (see /var/log/munge/munged.log)"
}

running() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

node_up() {
  # The node is usable when sinfo lists it idle, mixed or allocated.
  sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)'
}

start() {
  need_root
  install_packages
  write_conf
  start_munge
  if ! running "$STATE/slurmctld.pid"; then
    /usr/sbin/slurmctld || die "slurmctld did not start (see $LOGS/slurmctld.log)"
  fi
  if ! running "$STATE/slurmd.pid"; then
    /usr/sbin/slurmd || die "slurmd did not start (see $LOGS/slurmd.log)"
  fi
  for _ in $(seq 150); do
    if node_up; then
      echo "slurm-local: node $NODE is up (partition debug)" >&2
      return
    fi
    # A node left DOWN/DRAINED by an earlier run comes back with this.
    scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
    sleep 0.2
  done
  sinfo -N >&2 || true
  tail -n 20 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 || true
  die "node $NODE did not come up within 30 s"
}

stop() {
  need_root
  for d in slurmd slurmctld; do
    if running "$STATE/$d.pid"; then
      kill "$(cat "$STATE/$d.pid")"
    fi
  done
  if [[ -f /run/munge/munged.pid ]]; then
    runuser -u munge -- /usr/sbin/munged --stop 2>/dev/null || true
  fi
}

status() {
  sinfo -N || exit 1
  node_up
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|status|stop" >&2; exit 2 ;;
esac
