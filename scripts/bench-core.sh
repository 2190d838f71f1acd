#!/usr/bin/env bash
# Request-to-grant latency and grant throughput on SQLite and PostgreSQL (docs/benchmarks.md, "Core"):
# one client, then two clients at once; then one client on SQLite without and with the wait predictor.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
for w in 1 2; do
  echo "clients: $w"
  QM_BENCH_WORKERS=$w go test -run '^$' -bench 'Grant(SQLite|Postgres)$' -benchtime 2000x -count 2 ./internal/qm/
done
echo "the wait predictor's share (SQLite, one client)"
QM_BENCH_WORKERS=1 go test -run '^$' -bench 'GrantSQLite(WithWaits)?$' -benchtime 2000x -count 2 ./internal/qm/
uptime
