#!/usr/bin/env bash
# Node agent benchmarks (docs/benchmarks.md, "Node agent"): ingest throughput of agent reports on
# PostgreSQL (1,000 nodes, commits waiting for the disk), and the agent's own resident memory and
# CPU at a 1 s interval on a fake DGX A100 (8 GPUs), reporting and scraped.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go version | cut -d' ' -f3), load:$(uptime | sed 's/.*load average://')"
go test -run '^$' -bench 'IngestPostgres' -benchtime "${BENCH_REPORTS:-5000}x" -count "${BENCH_COUNT:-3}" ./internal/ingest/
QM_BENCH_AGENT_SECONDS="${QM_BENCH_AGENT_SECONDS:-60}" go test -run '^$' -bench 'AgentFootprint' -benchtime 1x -count "${BENCH_COUNT:-3}" -timeout 20m ./cmd/quartermaster-agent/
echo "load after:$(uptime | sed 's/.*load average://')"
