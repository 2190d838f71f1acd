#!/usr/bin/env bash
# Benchmarks of the queue-wait predictor: a whole-trace replay of KTH SP2 (needs
# ../shared/data/traces beside the repository), single predictions with 10,000 running leases,
# tracked by the predictor and handed over on every call, and one replay of a synthetic trace whose
# queue grows 15,000 deep. The figures are recorded in
# docs/benchmarks.md under "Queue-wait predictor", with the load shown before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
go test -run '^$' -bench 'ReplayKTH|Predict10kLeases' -benchmem -count "${BENCH_COUNT:-3}" ./internal/predict/
go test -run '^$' -bench 'ReplayDeepQueue' -benchtime 1x ./internal/predict/
uptime
