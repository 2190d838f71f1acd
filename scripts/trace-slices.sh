#!/usr/bin/env bash
# Writes three slices of every scorable trace in testdata/traces into DIR (default
# /tmp/trace-slices): the first half of its jobs (-h1), the second half (-h2) and the middle
# half (-mid), each with the file's header, so that `quartermaster predict eval` can replay
# them as traces of their own (a cold start on each). See docs/prediction.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/trace-slices}
mkdir -p "$out"
slice() { # FILE NAME EXT: header lines are those starting with ';' (SWF) or the first line (CSV)
	local src=$1 name=$2 ext=$3
	for part in h1 h2 mid; do
		{ if [[ $src == *.gz ]]; then zcat "$src"; else cat "$src"; fi; } | awk -v part="$part" -v csv="$([[ $ext == csv ]] && echo 1 || echo 0)" '
			(csv && NR == 1) || (!csv && /^;/) { print; next }
			NF { b[n++] = $0 }
			END {
				lo = 0; hi = n
				if (part == "h1") hi = int(n / 2)
				if (part == "h2") lo = int(n / 2)
				if (part == "mid") { lo = int(n / 4); hi = int(3 * n / 4) }
				for (i = lo; i < hi; i++) print b[i]
			}' >"$out/$name-$part.$ext"
	done
}
slice testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz KTH-SP2 swf
slice testdata/traces/METACENTRUM-2009-2.swf.gz METACENTRUM swf
slice testdata/traces/curie-gpu-partition-2012.csv curie csv
slice testdata/traces/alibaba-gpu-2023.csv alibaba csv
# The serving trace's instances are listed by name, not by creation: sliced in creation order,
# without the instances that were there before the trace began (no creation time).
dlrm=$(mktemp)
{ head -1 testdata/traces/alibaba-dlrm-2025.csv; tail -n +2 testdata/traces/alibaba-dlrm-2025.csv | awk -F, '$4 != ""' | sort -t, -k4,4g -s; } >"$dlrm"
slice "$dlrm" alibaba-dlrm csv
rm -f "$dlrm"
ls "$out"
