#!/usr/bin/env bash
# Ack latency of signed /gpu slash commands against `quartermaster serve` on PostgreSQL, over
# loopback: QM_BENCH_SLACK_RATE per second (default 200) for QM_BENCH_SLACK_SECONDS (default 60).
# The figures are recorded in docs/benchmarks.md under "Slack".
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version)"
echo "load average before: $(cut -d" " -f1-3 /proc/loadavg)"
QM_BENCH_SLACK_RATE="${QM_BENCH_SLACK_RATE:-200}" QM_BENCH_SLACK_SECONDS="${QM_BENCH_SLACK_SECONDS:-60}" \
  go test -run '^$' -bench '^BenchmarkSlackAck$' -benchtime 1x -count "${BENCH_COUNT:-1}" -timeout 10m ./cmd/quartermaster/
echo "load average after: $(cut -d" " -f1-3 /proc/loadavg)"
