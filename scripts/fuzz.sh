#!/usr/bin/env bash
# Runs every Fuzz* target for a while (default 10s each): scripts/fuzz.sh 1m
# Packages after the time keep it to their targets: scripts/fuzz.sh 30s ./internal/hostlist
# A count of executions works too (scripts/fuzz.sh 1000000x), and FUZZ_PARALLEL=1 keeps each
# target to one worker on a busy machine; FUZZ_ONE_WORKER_WHILE=PID does so for the targets that
# start while process PID runs (scripts/test.sh fuzzes beside the fault runs, and after them with
# every worker). Crashers are written under the package's testdata/fuzz/, where plain `go test`
# replays them from then on.
#
# FUZZ_BIN_DIR=DIR keeps the fuzzing test binaries in DIR (one per package, made where missing)
# instead of a temporary folder, and `scripts/fuzz.sh --build` only makes them: scripts/test.sh
# builds them while the fault runs wait on Slurm, then fuzzes with them.
#
# Go 1.26's fuzzing coordinator can end a run whose time is up with "context deadline exceeded"
# although nothing failed (golang/go#75804, fixed in Go 1.27): a worker still busy when the time
# runs out. Such a run, which writes no failing input, is run once more; a failing input, or any
# other failure, fails at once.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = "--build" ]; then
  build_only=1
  shift
fi
t=${1:-10s}
[ $# -eq 0 ] || shift
patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || patterns=(./...)
par=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then par=(-test.parallel "$FUZZ_PARALLEL"); fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Each package's test binary is built once, with the fuzzing instrumentation (go test -c -fuzz),
# and runs each of its targets in the package's directory, as go test -fuzz would: a failing
# input goes to testdata/fuzz/ there, and the corpus to go test's cache. go test -fuzz per target
# would link the binary again for every target.
if [ -n "${FUZZ_BIN_DIR:-}" ]; then
  bin=$FUZZ_BIN_DIR
  mkdir -p "$bin"
else
  bin=$(mktemp -d)
  trap 'rm -f "$log"; rm -rf "$bin"' EXIT
fi
cache=$(go env GOCACHE)/fuzz

# fuzz_one PKG DIR TARGET runs one target, once more after the coordinator's deadline race.
fuzz_one() {
  local pkg=$1 dir=$2 f=$3 rc
  for try in 1 2; do
    echo "fuzz $pkg $f for $t"
    set +e
    local p=("${par[@]}")
    if [ -n "${FUZZ_ONE_WORKER_WHILE:-}" ] && kill -0 "$FUZZ_ONE_WORKER_WHILE" 2>/dev/null; then
      p=(-test.parallel 1)
    fi
    (cd "$dir" && "$bin/$(binary "$pkg")" -test.run '^$' -test.fuzz "^$f\$" -test.fuzztime "$t" \
      -test.fuzzcachedir "$cache/$pkg" "${p[@]}" </dev/null) 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -eq 0 ]; then
      return 0
    fi
    if ! grep -q 'context deadline exceeded' "$log" || grep -q 'Failing input written to' "$log"; then
      return "$rc"
    fi
    echo "fuzz: $f stopped on Go's fuzztime deadline race (golang/go#75804) without a failing input"
  done
  echo "fuzz: $f met the deadline race twice without a failing input; nothing failed, so it passes"
}

# binary PKG names the package's fuzzing test binary in $bin.
binary() { echo "${1//\//_}.fuzz.test"; }

mapfile -t pkgs < <(go list -f '{{.ImportPath}} {{.Dir}}' "${patterns[@]}")
for line in "${pkgs[@]}"; do
  pkg=${line%% *} dir=${line#* }
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
  [ -n "$targets" ] || continue
  if [ ! -x "$bin/$(binary "$pkg")" ]; then
    go test -c -fuzz . -o "$bin/$(binary "$pkg")" "$pkg"
  fi
  [ "$build_only" = 0 ] || continue
  for f in $targets; do
    fuzz_one "$pkg" "$dir" "$f"
  done
  # In a temporary folder, a package's binary goes once its targets have run.
  [ -n "${FUZZ_BIN_DIR:-}" ] || rm -f "$bin/$(binary "$pkg")"
done
