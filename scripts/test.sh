#!/usr/bin/env bash
# Every test, against the real services the project starts itself: PostgreSQL, and a one-node Slurm
# with GPUs declared as GRES over files. Under CI=true a test that needs a missing service fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"

bash scripts/pg-up.sh
# promtool (Debian's prometheus package) lints the service's and the node agent's /metrics; under
# CI=true their tests fail without it.
if ! command -v promtool >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "test: installing prometheus (for promtool)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
  else
    echo "test: promtool is missing and installing it needs root; the /metrics lint will skip (and fail under CI=true)"
  fi
fi
if [ -f scripts/slurm-up.sh ]; then
  bash scripts/slurm-up.sh
  # shellcheck disable=SC1091
  [ -f .slurm/env ] && . .slurm/env && export SLURM_CONF
fi

go build ./...
# At least three packages at a time (Go's default is one per core): internal/slurm spends most of
# its minutes waiting on slurmctld, and on two cores a third slot keeps both busy meanwhile. The
# packages whose tests take longest are named first, so that they start first rather than after
# the quick ones (go test runs packages in the order named, each once).
go test -race -count=1 -timeout 20m -p "$(( $(nproc) > 2 ? $(nproc) : 3 ))" \
  ./cmd/quartermaster/ ./internal/slurm/ ./bot/slack/ ./...
# The long fault runs (docs/reliability.md): kill -9 on Slurm, PostgreSQL restarted under load,
# three replicas, the agent's service unreachable. They mostly wait on Slurm, PostgreSQL and the
# processes they kill, so meanwhile, one after the other: the wait predictor's long replays, built
# without the race detector (see traces_test.go; one goroutine of arithmetic), the fuzzing test
# binaries' build, then a short run of every fuzz target, so the parsers meet random input in CI
# too: with one worker each while the fault runs go on (they have the other core), with every
# worker once they have ended. Their output follows the fault runs'.
side_log=$(mktemp)
fuzz_bin=$(mktemp -d)
trap 'rm -f "$side_log"; rm -rf "$fuzz_bin"' EXIT
make test-faults &
faults_pid=$!
(
  predict_rc=0 fuzz_rc=0
  go test -count=1 -timeout 10m ./internal/predict/ || predict_rc=$?
  # A binary that fails to build here is built again, and its error shown, by the fuzzing below.
  FUZZ_BIN_DIR=$fuzz_bin bash scripts/fuzz.sh --build || true
  FUZZ_BIN_DIR=$fuzz_bin FUZZ_ONE_WORKER_WHILE=$faults_pid bash scripts/fuzz.sh "${FUZZTIME:-3s}" || fuzz_rc=$?
  if [ "$predict_rc" -ne 0 ] || [ "$fuzz_rc" -ne 0 ]; then
    echo "test: the predictor's replays exited $predict_rc, the fuzzing $fuzz_rc" >&2
    exit 1
  fi
) >"$side_log" 2>&1 &
side_pid=$!
faults_rc=0
wait "$faults_pid" || faults_rc=$?
side_rc=0
wait "$side_pid" || side_rc=$?
cat "$side_log"
if [ "$faults_rc" -ne 0 ] || [ "$side_rc" -ne 0 ]; then
  echo "test: make test-faults exited $faults_rc, the predictor's replays and the fuzzing $side_rc" >&2
  exit 1
fi
