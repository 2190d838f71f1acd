#!/usr/bin/env bash
# Replays every trace in testdata/traces and the probes made from them (the slices of
# scripts/trace-slices.sh, Alibaba's and MetaCentrum's waits stretched, traces with fields erased) and
# prints, per file, the predictor against the goals of docs/prediction.md: MAE and band accuracy
# against the best baseline, coverage, and tightness against QBETS's at matched coverage. A goal
# missed is named at the end of its line. Usage: bash scripts/trace-probes.sh [DIR]
# (default /tmp/trace-probes; the probes are written there, the results into DIR/results).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/trace-probes}
mkdir -p "$out/results"
bash scripts/trace-slices.sh "$out" >/dev/null
src=testdata/traces
cp "$src"/KTH-SP2-1996-2.1-cln.swf.gz "$src"/METACENTRUM-2009-2.swf.gz \
	"$src"/curie-gpu-partition-2012.csv "$src"/alibaba-gpu-2023.csv "$src"/alibaba-dlrm-2025.csv "$out"/
# Alibaba with every wait stretched k times (start and end moved by k-1 times the wait) ...
for k in 3 10; do
	awk -F, -v k=$k 'BEGIN{OFS=","} NR==1{print;next} $3!=""{w=$3-$2; $3=$2+k*w; if ($4!="") $4+=(k-1)*w} {print}' \
		"$src"/alibaba-gpu-2023.csv >"$out/alibaba-x$k.csv"
done
# ... and with only its waits of a minute or more stretched: most pods still start at once.
for k in 10 30; do
	awk -F, -v k=$k 'BEGIN{OFS=","} NR==1{print;next} $3!=""{w=$3-$2; if (w>=60) {$3=$2+k*w; if ($4!="") $4+=(k-1)*w}} {print}' \
		"$src"/alibaba-gpu-2023.csv >"$out/alibaba-tail$k.csv"
done
# MetaCentrum with every wait three times as long, and a tenth as long (SWF field 3; the run
# times stay, so as many jobs run at once while three times as many wait, or a tenth as many).
zcat "$src"/METACENTRUM-2009-2.swf.gz | awk '/^;/ {print; next} NF==18 {if ($3 > 0) $3 = int($3 * 3); print}' >"$out/META-x3.swf"
zcat "$src"/METACENTRUM-2009-2.swf.gz | awk '/^;/ {print; next} NF==18 {if ($3 > 0) $3 = int($3 / 10); print}' >"$out/META-w10.swf"
# Fields a trace may not record: users (SWF field 12), requested times (field 9), the header.
zcat "$src"/METACENTRUM-2009-2.swf.gz | awk '/^;/ {print; next} NF==18 {$12=-1; print}' >"$out/META-nouser.swf"
zcat "$src"/KTH-SP2-1996-2.1-cln.swf.gz | awk '/^;/ {print; next} NF==18 {$12=-1; $9=-1; print}' >"$out/KTH-nouserreq.swf"
zcat "$src"/KTH-SP2-1996-2.1-cln.swf.gz | awk '!/^;/' >"$out/KTH-nohdr.swf"
awk -F, 'BEGIN{OFS=","} NR==1{print;next} {$6=""; $8=""; print}' "$src"/curie-gpu-partition-2012.csv >"$out/curie-nouserreq.csv"
awk -F, 'BEGIN{OFS=","} NR==1{print;next} {$2=""; print}' "$src"/alibaba-dlrm-2025.csv >"$out/alibaba-dlrm-noapp.csv"

go build -o "$out/quartermaster" ./cmd/quartermaster
table=$out/results/table.tsv
: >"$table"
for f in "$out"/*.swf "$out"/*.swf.gz "$out"/*.csv; do
	name=$(basename "$f")
	"$out/quartermaster" predict eval --json --trace "$f" >"$out/results/$name.json"
	line=$(jq -r '
		(.results | map({(.predictor): .}) | add) as $r
		| [$r.zero, $r.recent100, $r.user_recent, $r.qbets] as $b
		| ($b | map(.mae_minutes) | min) as $mae
		| ($b | map(.band_accuracy) | max) as $band
		| $r.quartermaster as $q
		| $r.qbets.p90_tightness_matched as $qt
		| [ (if $q.mae_minutes > $mae then "MAE" else empty end),
		    (if $q.band_accuracy < $band then "BAND" else empty end),
		    (if $q.p90_coverage < 0.88 then "COVERAGE" else empty end),
		    (if $q.p90_tightness == null or ($qt != null and $q.p90_tightness >= $qt) then "TIGHTNESS" else empty end)
		  ] as $miss
		| "\(.trace)\tMAE \($q.mae_minutes * 1000 | round / 1000) vs \($mae * 1000 | round / 1000)\tband \($q.band_accuracy * 1000 | round / 1000) vs \($band * 1000 | round / 1000)\tcoverage \($q.p90_coverage * 1000 | round / 1000)\ttightness \($q.p90_tightness // "inf" | if type == "number" then (. * 100 | round / 100) else . end) vs \($qt // "-" | if type == "number" then (. * 100 | round / 100) else . end)\t\($miss | join(" "))"
	' "$out/results/$name.json")
	echo "$line" >>"$table"
done
column -t -s $'\t' "$table"
echo "goals missed: $(awk -F'\t' '{n += split($6, a, " ")} END {print n + 0}' "$table")"
