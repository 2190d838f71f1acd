#!/usr/bin/env bash
# Runs the benchmarks whose figures are recorded in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pg-up.sh
for s in scripts/bench-*.sh; do
  [ -f "$s" ] || continue
  echo "== $s"
  bash "$s"
done
