#!/bin/bash
# Run every tests/integration/NN-*.sh (or those named on the command line); the last line is the
# summary CI reads. A test passes when it exits 0; its output is shown only when it fails.
set -u
cd "$(dirname "$0")"
pass=0 failed=0 failures=""
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=([0-9][0-9]-*.sh)
for t in "${tests[@]}"; do
	start=$(date +%s)
	if out=$(bash "$t" 2>&1); then
		pass=$((pass + 1))
		echo "ok   $t ($(($(date +%s) - start))s)"
	else
		failed=$((failed + 1))
		failures="$failures $t"
		echo "FAIL $t ($(($(date +%s) - start))s)"
		echo "$out" | tail -n 40 | sed 's/^/     /'
	fi
done
[ -z "$failures" ] || echo "failed:$failures"
echo "integration: $pass passed, $failed failed"
[ "$failed" = 0 ]
