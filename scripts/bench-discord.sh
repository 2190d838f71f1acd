#!/usr/bin/env bash
# Acknowledgement latency of signed Discord interactions against `quartermaster serve` (HTTP
# interactions endpoint) on PostgreSQL, over loopback: QM_BENCH_DISCORD_RATE per second (default
# 200) for QM_BENCH_DISCORD_SECONDS (default 60). The figures are recorded in docs/benchmarks.md
# under "Discord".
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version)"
echo "load average before: $(cut -d" " -f1-3 /proc/loadavg)"
QM_BENCH_DISCORD_RATE="${QM_BENCH_DISCORD_RATE:-200}" QM_BENCH_DISCORD_SECONDS="${QM_BENCH_DISCORD_SECONDS:-60}" \
  go test -run '^$' -bench '^BenchmarkDiscordAck$' -benchtime 1x -count "${BENCH_COUNT:-1}" -timeout 10m ./cmd/quartermaster/
echo "load average after: $(cut -d" " -f1-3 /proc/loadavg)"
