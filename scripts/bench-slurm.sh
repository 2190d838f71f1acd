#!/usr/bin/env bash
# Scheduler benchmarks (docs/benchmarks.md, "Schedulers"): the time from "/gpu request" in chat to
# the Slurm job RUNNING on the free test cluster (make slurm-up), and one reconcile pass with
# 5,000 leases against a stubbed squeue --json of 5,000 jobs, and an inventory refresh (a stubbed
# 1,000-node sinfo --json, and the real one-node test cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/slurm-up.sh >/dev/null
# shellcheck disable=SC1091
. .slurm/env && export SLURM_CONF
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go version | cut -d' ' -f3), load:$(uptime | sed 's/.*load average://')"
go test -run '^$' -bench 'RequestToRunning' -benchtime "${BENCH_REQUESTS:-20}x" ./internal/slurm/
go test -run '^$' -bench 'Reconcile5000' -benchtime "${BENCH_PASSES:-10}x" -count "${BENCH_COUNT:-3}" -benchmem ./internal/slurm/
go test -run '^$' -bench 'RefreshInventory' -count "${BENCH_COUNT:-3}" -benchmem ./internal/slurm/
