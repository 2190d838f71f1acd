#!/usr/bin/env bash
# Load on `quartermaster serve` (docs/benchmarks.md, "Load: signed chat commands against serve"):
# quartermaster-load at each rate of QM_LOAD_RATES (default "200 1000") for QM_LOAD_SECONDS
# (default 60), on PostgreSQL, the floor measured in the same run; it rewrites the table between
# the bench-load markers in docs/benchmarks.md. With QM_LOAD_PROFILE_RATE set, the run at that
# rate also records a CPU profile of serve (perf, 30 s) and prints where its time goes.
set -euo pipefail
cd "$(dirname "$0")/.."
rates="${QM_LOAD_RATES:-200 1000}"
seconds="${QM_LOAD_SECONDS:-60}"
profile_rate="${QM_LOAD_PROFILE_RATE:-}"
dsn="${QM_TEST_POSTGRES_DSN:-postgres://postgres@127.0.0.1:5432/test}"
export PGOPTIONS="--client-min-messages=warning"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/" ./cmd/quartermaster ./cmd/quartermaster-load
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
machine="$(nproc) cores (\`nproc\`), CPU \"$cpu\" (/proc/cpuinfo), $(go version | cut -d' ' -f3), $(psql "$dsn" -Atc 'SHOW server_version' | cut -d' ' -f1) PostgreSQL on the same host (\`synchronous_commit=on\`)"
echo "machine: $machine"
rows=()
for rate in $rates; do
  schema="qm_load_$rate"
  psql -q "$dsn" -c "DROP SCHEMA IF EXISTS $schema CASCADE" -c "CREATE SCHEMA $schema" >/dev/null
  sep='?'; case "$dsn" in *\?*) sep='&';; esac
  before=$(cut -d' ' -f1 /proc/loadavg)
  echo "== $rate/s for ${seconds}s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  args=(--db "$dsn${sep}search_path=$schema" --rate "$rate" --duration "${seconds}s" --json "$work/$rate.json" --serve-log "$work/serve-$rate.log")
  if [ "$rate" = "$profile_rate" ] && command -v perf >/dev/null; then
    "$work/quartermaster-load" "${args[@]}" --pid-file "$work/pid" &
    load=$!
    # The floor runs first; profile serve from a few seconds into its run.
    while [ ! -s "$work/pid" ] && kill -0 "$load" 2>/dev/null; do sleep 0.2; done
    sleep 5
    perf record -F 499 -g -p "$(cat "$work/pid")" -o "$work/perf.data" -- sleep 30 >/dev/null 2>&1 || true
    wait "$load" || true
    echo "-- where serve's CPU time went (perf, self time, top 25):"
    perf report -i "$work/perf.data" --stdio --no-children --sort symbol 2>/dev/null | grep -E '^ +[0-9]' | head -25 || true
    echo "-- by caller (cumulative, top 40):"
    perf report -i "$work/perf.data" --stdio --children --sort symbol -g none 2>/dev/null | grep -E '^ +[0-9]' | head -40 || true
  else
    "$work/quartermaster-load" "${args[@]}" || true
  fi
  after=$(cut -d' ' -f1 /proc/loadavg)
  psql -q "$dsn" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null
  [ -s "$work/$rate.json" ] || { echo "no figures for $rate/s"; tail -20 "$work/serve-$rate.log"; continue; }
  rows+=("$(jq -r --arg before "$before" --arg after "$after" '
    def f: (. * 10 | round / 10 | tostring);
    def answered: if .all_answered_after_s >= 0 then "all, \(.all_answered_after_s | f) s after the last send" else "\(.answered) of \(.serve.sent) within the drain" end;
    def target: if .serve.p99_ms <= 50 and .serve.failed == 0 and .all_answered_after_s >= 0 and .all_answered_after_s <= 1 then "met" else "not met" end;
    "| \(.rate)/s × \(.seconds)s | \(.serve.rate | round)/s | \(.serve.p50_ms | f) / \(.serve.p99_ms | f) / \(.serve.max_ms | round) ms | \(.floor.p50_ms | f) / \(.floor.p99_ms | f) / \(.floor.max_ms | round) ms | \(.serve.failed) | \(.answered_before_stop) of \(.serve.sent) | \(answered) | \(.answer_p50_ms | f) / \(.answer_p99_ms | round) ms | \(.end_state.granted) of \(.end_state.expected_grants) granted, \(.end_state.pending) for approval, \(.end_state.duplicates) duplicates, \(.end_state.over_quota) over quota | \($before) → \($after) | \(target) |"
  ' "$work/$rate.json")")
done

table=$(mktemp)
{
  echo "<!-- bench-load:begin (rewritten by scripts/bench-load.sh) -->"
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') with \`bash scripts/bench-load.sh\` (QM_LOAD_RATES=\"$rates\", QM_LOAD_SECONDS=$seconds) on $machine."
  echo
  echo "| rate × time | sent at | ack p50 / p99 / max | floor p50 / p99 / max | no 200 | answered by the last send | every answer | answer p50 / p99 (from due) | end state in the database | load average before → after | target (p99 ack ≤ 50 ms, every answer within 1 s of the last send) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo "<!-- bench-load:end -->"
} > "$table"
cat "$table"
if grep -q '<!-- bench-load:begin' docs/benchmarks.md; then
  awk -v table="$table" '
    /<!-- bench-load:begin/ { while ((getline line < table) > 0) print line; skip = 1; next }
    /<!-- bench-load:end -->/ { skip = 0; next }
    !skip' docs/benchmarks.md > "$work/benchmarks.md"
  cp "$work/benchmarks.md" docs/benchmarks.md
fi
rm -f "$table"
