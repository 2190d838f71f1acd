#!/usr/bin/env bash
# Placement: one decision on 1,000 nodes × 8 GPUs (wall time and the calling thread's CPU time,
# p50 and p99), and the fragmentation against first fit over 1,000 seeded requests. The figures
# are recorded in docs/benchmarks.md under "Placement by topology", with the load before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
go test -run '^$' -bench 'Place1000x8' -benchmem -benchtime 5000x -count "${BENCH_COUNT:-3}" ./internal/qm/
go test -count=1 -run '^TestFragmentationBelowFirstFit$' -v ./internal/qm/ | grep -E 'fragmentation|multi-GPU|^(ok|FAIL|---)'
uptime
