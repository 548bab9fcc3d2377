#!/bin/bash
# Run every tests/integration/NN-*.sh (or those named on the command line); the last line is the
# summary CI reads. A test passes when it exits 0 and is skipped when it exits 77 (lib.sh's skip,
# which says why); its output is shown only when it fails. Parts of a test skipped with
# skip_part are listed under its "ok" line, so a pass never hides what did not run.
set -u
cd "$(dirname "$0")"
pass=0 failed=0 skipped=0 failures=""
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=([0-9][0-9]-*.sh)
for t in "${tests[@]}"; do
	start=$(date +%s)
	rc=0
	out=$(bash "$t" 2>&1) || rc=$?
	took="($(($(date +%s) - start))s)"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   $t $took"
		grep '^SKIP-PART: ' <<<"$out" | sed 's/^SKIP-PART: [^:]*: /     part skipped: /' || true
	elif [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
		echo "skip $t: $(grep '^SKIP: ' <<<"$out" | tail -n 1 | sed 's/^SKIP: [^:]*: //')"
	else
		failed=$((failed + 1))
		failures="$failures $t"
		echo "FAIL $t $took"
		echo "$out" | tail -n 40 | sed 's/^/     /'
	fi
done
[ -z "$failures" ] || echo "failed:$failures"
echo "integration: $pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
