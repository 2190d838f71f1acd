#!/usr/bin/env bash
# slurm-down.sh stops the test cluster that scripts/slurm-up.sh started: slurmd, slurmctld and
# munged, each by the pid file slurm-up wrote under QM_SLURM_DIR (default .slurm/). It stops nothing
# else, so a system Slurm or munge on the same host is left alone. Configuration, key and logs stay
# for the next slurm-up; `rm -rf .slurm` removes them. Running it when nothing is up succeeds.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${QM_SLURM_DIR:-$repo/.slurm}
run=$dir/run
[ -d "$dir" ] || { echo "slurm-down: nothing to stop ($dir does not exist)"; exit 0; }
exec 9>"$dir/.lock"
flock -w 120 9 || { echo "slurm-down: another slurm-up or slurm-down holds $dir/.lock" >&2; exit 1; }

stop() { # stop NAME: the daemon whose pid is in $run/NAME.pid, if that process is still NAME
  local f=$run/$1.pid pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$1" ]; then
    echo "slurm-down: stopping $1 ($pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    if [ -d "/proc/$pid" ]; then
      echo "slurm-down: $1 ($pid) ignored SIGTERM for 10s; sending SIGKILL"
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$f"
}

# Jobs first: their slurmstepd processes would outlive slurmd. Only this cluster's jobs, through
# this cluster's configuration.
conf=$dir/etc/slurm.conf
if [ -s "$run/slurmctld.pid" ] && [ -f "$conf" ] && command -v scancel >/dev/null 2>&1; then
  jobs=$(SLURM_CONF=$conf squeue -h -o %A 2>/dev/null || true)
  if [ -n "$jobs" ]; then
    echo "slurm-down: cancelling $(echo $jobs | wc -w) job(s)"
    SLURM_CONF=$conf scancel $jobs 2>/dev/null || true
    for _ in $(seq 100); do
      pgrep -x slurmstepd >/dev/null 2>&1 || break
      sleep 0.1
    done
  fi
fi

# slurmd next, then the controller.
stop slurmd
stop slurmctld
stop munged
echo "slurm-down: test cluster stopped"
