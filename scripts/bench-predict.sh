#!/usr/bin/env bash
# Benchmarks of the queue-wait predictor (docs/benchmarks.md, "Queue-wait predictor"):
#  1. `quartermaster predict eval` on a 450,000-job SWF trace made here from the traces in
#     testdata/traces (MetaCentrum four times, then KTH SP2 as often as it takes, the last copy
#     cut short; each copy shifted to start a day after the one before; job numbers renumbered):
#     wall and CPU time, and peak memory (maximum resident set size), with /usr/bin/time;
#  2. a whole-trace replay of KTH SP2, and single predictions with 10,000 running leases, tracked
#     by the predictor and handed over on every call (go test -bench);
#  3. one replay of a synthetic trace whose queue grows 15,000 deep, with its CPU time.
# The load average is shown before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
uptime
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/quartermaster" ./cmd/quartermaster

big="$tmp/stretched-450k.swf"
set +o pipefail # awk stops reading once it has enough jobs
{
  zcat testdata/traces/METACENTRUM-2009-2.swf.gz
  zcat testdata/traces/METACENTRUM-2009-2.swf.gz
  zcat testdata/traces/METACENTRUM-2009-2.swf.gz
  zcat testdata/traces/METACENTRUM-2009-2.swf.gz
  zcat testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz
  zcat testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz
} | awk -v jobs="${BENCH_JOBS:-450000}" '
  /^;/ { next }  # headers of different machines do not apply to the mix
  NF != 18 { next }
  n >= jobs { exit }
  {
    if ($1 < last) { shift = top + 86400 }     # job numbers restart: a new copy
    last = $1
    n++
    $1 = n
    if ($2 >= 0) { $2 += shift; if ($2 > top) top = $2 }
    print
  }' > "$big"
set -o pipefail
echo "generated $(grep -vc '^;' "$big") jobs in $big"
/usr/bin/time -f "predict eval, 450,000 jobs: %e s wall, %U s user, %S s system, %M KB peak resident" \
  "$tmp/quartermaster" predict eval --trace "$big" > "$tmp/big.txt"
cat "$tmp/big.txt"

go test -run '^$' -bench 'ReplayKTH|Predict10kLeases' -benchmem -count "${BENCH_COUNT:-3}" ./internal/predict/
go test -c -o "$tmp/predict.test" ./internal/predict/
/usr/bin/time -f "deep-queue replay: %e s wall, %U s user, %M KB peak resident" \
  "$tmp/predict.test" -test.run '^$' -test.bench 'ReplayDeepQueue' -test.benchtime 1x
uptime
