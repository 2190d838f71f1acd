#!/usr/bin/env bash
# slurm-up.sh starts a one-node Slurm cluster on this host for Quartermaster's tests and demos.
#
# Everything it writes lives under one directory (QM_SLURM_DIR, default .slurm/ in the repository):
# its own munge key and munged socket, slurm.conf, gres.conf, the GPU device files, state, logs and
# pid files. It never edits /etc/slurm or /etc/munge and never uses systemd, so it works as root in a
# bare CI container. Slurm's tools find the cluster through SLURM_CONF; source "$QM_SLURM_DIR/env".
#
# The node declares 8 h100 and 4 l40s GPUs as GRES over device files without a driver behind them
# (plain files where the host may not make devices), and the partitions of the
# example policy: interactive (gres gpu:l40s) and train (gres gpu:h100). No accounting. It also
# installs openssh-server, so the default workspace (an SSH server) really runs on the node.
#
# Running it again while the cluster is up changes nothing and succeeds. scripts/slurm-down.sh stops
# exactly the daemons this script started (by the pid files it wrote).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${QM_SLURM_DIR:-$repo/.slurm}
ctld_port=${QM_SLURM_CTLD_PORT:-6917}
slurmd_port=${QM_SLURM_SLURMD_PORT:-6918}
node_cpus=${QM_SLURM_CPUS:-128}
node_mem_mb=${QM_SLURM_MEMORY_MB:-1048576}
wait_s=${QM_SLURM_WAIT:-60}

say() { echo "slurm-up: $*"; }
die() { echo "slurm-up: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root: the test cluster runs munged, slurmctld and slurmd as root (SlurmUser=root)."

# --- packages ---------------------------------------------------------------------------------
# openssh-server: the default workspace (the ssh-shell template) runs /usr/sbin/sshd on the node.
need=()
for bin in munged:munge slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client /usr/sbin/sshd:openssh-server; do
  command -v "${bin%%:*}" >/dev/null 2>&1 || need+=("${bin##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Keep the packages from starting their system daemons (a system sshd on port 22, a slurmctld
  # on the default ports): a policy-rc.d that refuses, for the install only, where there is none.
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  [ "$own_policy" = 0 ] || rm -f /usr/sbin/policy-rc.d
fi
# Jobs on the test cluster run as root, and a root sshd wants its privilege separation directory,
# which systemd would make at boot.
mkdir -p -m 0755 /run/sshd

# --- layout -----------------------------------------------------------------------------------
dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
# Several `make test` runs in one working tree may start at once: one sets up, the others wait.
# The daemons must not inherit the lock (9>&- below), or it would stay held while they run.
exec 9>"$dir/.lock"
flock -w 120 9 || die "another slurm-up or slurm-down holds $dir/.lock"
etc=$dir/etc run=$dir/run log=$dir/log dev=$dir/dev
mkdir -p "$etc" "$run" "$log" "$dev" "$dir/munge" "$dir/state/ctld" "$dir/state/slurmd"
chmod 700 "$dir/munge"
sock=$dir/munge/munge.socket.2
# A unix socket path is limited to 107 bytes.
[ ${#sock} -lt 100 ] || die "munge socket path too long ($sock); set QM_SLURM_DIR to a shorter directory."

node=$(hostname -s)
conf=$etc/slurm.conf

# The GPUs are character devices with NVIDIA's major number (195) and no driver behind them: only
# for a device does Slurm tell a job which GPUs it holds (CUDA_VISIBLE_DEVICES and its siblings); a
# plain file it logs as "not a valid character or block device" and sets none. Where this host may
# not make devices, plain files still let Slurm count and allocate the GPUs, without those variables.
for i in $(seq 0 11); do
  f=$dev/nvidia$i
  [ -c "$f" ] && continue
  rm -f "$f"
  mknod -m 0666 "$f" c 195 "$i" 2>/dev/null || : >"$f"
done

[ -s "$dir/munge/munge.key" ] || {
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
}

cat >"$etc/gres.conf.new" <<EOF
# Written by scripts/slurm-up.sh: GPUs as device files without a driver, so Slurm counts them without hardware.
NodeName=$node Name=gpu Type=h100 File=$dev/nvidia[0-7]
NodeName=$node Name=gpu Type=l40s File=$dev/nvidia[8-11]
EOF

cat >"$conf.new" <<EOF
# Written by scripts/slurm-up.sh: a one-node test cluster for Quartermaster. Do not edit; rerun the script.
ClusterName=quartermaster
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state/ctld
SlurmdSpoolDir=$dir/state/slurmd
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$log/slurmctld.log
SlurmdLogFile=$log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# The node declares more CPUs and memory than this host has, so many small jobs run at once.
SlurmdParameters=config_overrides
GresTypes=gpu
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# The main scheduling loop and backfill run every second rather than every 60 and 30 s: on a
# one-node cluster a pass costs nothing, and a job that becomes eligible (a begin time reached, a
# drained node's queue) is started or given its reason within a second, not up to a minute later.
SchedulerParameters=sched_interval=1,bf_interval=1
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
DefMemPerCPU=64
NodeName=$node NodeAddr=127.0.0.1 CPUs=$node_cpus RealMemory=$node_mem_mb Gres=gpu:h100:8,gpu:l40s:4 State=UNKNOWN
PartitionName=interactive Nodes=$node MaxTime=INFINITE State=UP OverSubscribe=NO
PartitionName=train Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF

# A changed configuration means the daemons must restart to read it.
changed=0
for f in "$conf" "$etc/gres.conf"; do
  if ! cmp -s "$f.new" "$f"; then mv "$f.new" "$f"; changed=1; else rm -f "$f.new"; fi
done

cat >"$dir/env" <<EOF
# Source this file to talk to the test cluster started by scripts/slurm-up.sh.
export SLURM_CONF=$conf
export QM_SLURM_DIR=$dir
EOF
export SLURM_CONF=$conf

# --- daemons ----------------------------------------------------------------------------------
# running PIDFILE NAME: the pid in PIDFILE is alive and is NAME.
running() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}

stop() { # stop PIDFILE NAME
  local pid
  running "$1" "$2" || { rm -f "$1"; return 0; }
  pid=$(cat "$1")
  kill "$pid"
  for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  rm -f "$1"
}

if [ "$changed" = 1 ]; then
  stop "$run/slurmd.pid" slurmd
  stop "$run/slurmctld.pid" slurmctld
fi

if ! running "$run/munged.pid" munged; then
  say "starting munged"
  munged --force --socket="$sock" --key-file="$dir/munge/munge.key" --pid-file="$run/munged.pid" \
    --log-file="$log/munged.log" --seed-file="$dir/munge/munged.seed" 9>&-
fi

if ! running "$run/slurmctld.pid" slurmctld; then
  say "starting slurmctld"
  # -c: a fresh test cluster each start, no jobs left over from an earlier run.
  slurmctld -c -f "$conf" 9>&-
fi

if ! running "$run/slurmd.pid" slurmd; then
  say "starting slurmd"
  slurmd -f "$conf" 9>&-
fi

# --- wait until the node takes jobs ----------------------------------------------------------
state=""
for i in $(seq $((wait_s * 2))); do
  state=$(sinfo -h -N -n "$node" -o '%T' 2>/dev/null | head -1 || true)
  case "$state" in
    idle|mixed|allocated|completing) break ;;
    down*|drain*|fail*|unknown*)
      # A node that was down (an earlier run, a changed configuration) comes back by hand.
      [ $((i % 4)) -eq 0 ] && scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true ;;
  esac
  sleep 0.5
  state=""
done
if [ -z "$state" ]; then
  echo "slurm-up: the node did not become idle within ${wait_s}s; logs in $log" >&2
  tail -n 20 "$log"/*.log >&2 || true
  exit 1
fi

say "cluster up: node $node is $state; partitions interactive (gpu:l40s x4) and train (gpu:h100 x8)"
echo "SLURM_CONF=$conf"
echo "slurm-up: source $dir/env to use it"
