#!/usr/bin/env bash
# Request-to-grant latency and grant throughput on SQLite and PostgreSQL (docs/benchmarks.md, "Core"):
# one client, then two clients at once.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
for w in 1 2; do
  echo "clients: $w"
  QM_BENCH_WORKERS=$w go test -run '^$' -bench 'Grant(SQLite|Postgres)$' -benchtime 2000x -count 2 ./internal/qm/
done
uptime
