#!/bin/bash
# run.sh DIR SECONDS: run every fuzzer in DIR for SECONDS each, on a corpus seeded from real files
# (tests/fuzz/seeds.sh). Prints executions and coverage per harness; fails on any finding.
set -euo pipefail
dir=$1 secs=$2
here=$(cd "$(dirname "$0")" && pwd)
corpus=${FUZZ_CORPUS:-/var/tmp/mkimage-fuzz-corpus}
"$here/seeds.sh" "$corpus"
status=0
for f in "$dir"/fuzz_*; do
	case $f in *.d) continue ;; esac
	name=$(basename "$f")
	mkdir -p "$corpus/$name" "$corpus/$name.crashes"
	log=$(mktemp)
	# NAME.options holds extra libFuzzer flags for one harness, with the reason in a comment.
	opts=$(grep -v '^#' "$here/$name.options" 2>/dev/null || true)
	if "$f" $opts -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
		-artifact_prefix="$corpus/$name.crashes/" "$corpus/$name" >"$log" 2>&1; then
		res=ok
	else
		res=FINDING
		status=1
		grep -E "ERROR|SUMMARY|artifact" "$log" | head -5
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	echo "fuzz $name: $res, ${execs:-0} executions in ${secs}s, ${cov:-cov: ?}"
	rm -f "$log"
done
exit $status
