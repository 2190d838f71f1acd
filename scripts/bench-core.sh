#!/usr/bin/env bash
# Request-to-grant latency and grant throughput on SQLite and PostgreSQL (docs/benchmarks.md, "Core"):
# one client, then two clients at once; the floor beside it (one INSERT and a synchronous COMMIT on
# the same PostgreSQL); the round trips a grant takes; then one client on SQLite without and with
# the wait predictor.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
for w in 1 2; do
  echo "clients: $w"
  QM_BENCH_WORKERS=$w go test -run '^$' -bench 'Grant(SQLite|Postgres)$' -benchtime 2000x -count 2 ./internal/qm/
  echo "the floor: one INSERT and a synchronous COMMIT, $w client(s)"
  QM_BENCH_WORKERS=$w go test -run '^$' -bench 'SyncCommitPostgres$' -benchtime 2000x -count 2 ./internal/store/
done
echo "round trips to PostgreSQL per grant and release"
go test -count=1 -run '^TestGrantOnPostgresTakesFiveRoundTrips$' -v ./internal/qm/ | grep -E '^(---|ok|FAIL)'
echo "the wait predictor's share (SQLite, one client)"
QM_BENCH_WORKERS=1 go test -run '^$' -bench 'GrantSQLite(WithWaits)?$' -benchtime 2000x -count 2 ./internal/qm/
uptime
