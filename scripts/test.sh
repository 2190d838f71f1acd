#!/usr/bin/env bash
# Every test, against the real services the project starts itself: PostgreSQL, and a one-node Slurm
# with GPUs declared as GRES over files. Under CI=true a test that needs a missing service fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"

bash scripts/pg-up.sh
if [ -f scripts/slurm-up.sh ]; then
  bash scripts/slurm-up.sh
  # shellcheck disable=SC1091
  [ -f .slurm/env ] && . .slurm/env && export SLURM_CONF
fi

go build ./...
go test -race -count=1 -timeout 20m ./...
# The wait predictor's long replays, built without the race detector (see traces_test.go).
go test -count=1 -timeout 10m ./internal/predict/

# A short run of every fuzz target, so the parsers meet random input in CI too.
bash scripts/fuzz.sh "${FUZZTIME:-10s}"
