#!/usr/bin/env bash
# Building one week's showback from a year of history (docs/benchmarks.md, "Showback"): 50 teams,
# 1,000 people, 200,000 leases with their hourly usage and predicted waits, on PostgreSQL and on
# SQLite. The first run seeds both (minutes; kept in the schema qm_bench_showback and in
# $QM_BENCH_DIR); later runs reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
export QM_BENCH_DIR="${QM_BENCH_DIR:-${TMPDIR:-/tmp}/qm-bench-showback}"
uptime
# In the process: Service.Report (the week and the week before: queries and computation), with
# the live heap's peak above what was live before.
go test -run '^$' -bench 'ShowbackWeek(Postgres|SQLite)$' -benchtime 5x -count 2 -timeout 60m ./internal/store/
# The whole command as a user runs it, a process of its own: wall time and peak resident memory.
go build -o "$QM_BENCH_DIR/quartermaster" ./cmd/quartermaster
base="${QM_TEST_POSTGRES_DSN:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5}"
sep='?'; [[ "$base" == *\?* ]] && sep='&'
for db in "postgres|${base}${sep}search_path=qm_bench_showback" "sqlite|sqlite:$QM_BENCH_DIR/showback.db"; do
  name=${db%%|*}; url=${db#*|}
  for _ in 1 2 3; do
    /usr/bin/time -f "quartermaster report on $name: %e s wall, %U s user + %S s system CPU, %M KB peak resident" \
      "$QM_BENCH_DIR/quartermaster" report --policy "$QM_BENCH_DIR/policy.yaml" --db "$url" \
      --week 2026-W48 --now 2026-11-30T15:00:00Z --format json > /dev/null
  done
done
uptime
