#!/usr/bin/env bash
# Runs every Fuzz* target for a while (default 10s each): scripts/fuzz.sh 1m
# A count of executions works too (scripts/fuzz.sh 1000000x), and FUZZ_PARALLEL=1 keeps each
# target to one worker on a busy machine. Crashers are written under the package's
# testdata/fuzz/, where plain `go test` replays them from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
par=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then par=(-parallel "$FUZZ_PARALLEL"); fi
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f for $t"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "${par[@]}" "$pkg"
  done
done
