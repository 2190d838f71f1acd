#!/usr/bin/env bash
# Request-to-grant latency and grant throughput on SQLite and PostgreSQL (docs/benchmarks.md, "Core").
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'Grant(SQLite|Postgres)$' -benchtime 3000x -count 3 ./internal/qm/
