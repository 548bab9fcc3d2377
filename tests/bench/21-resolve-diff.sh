#!/bin/bash
# Agreement with apt on random requests: tests/integration/resolve_diff.py over the real bookworm
# indexes of armhf+armel, amd64+i386 and arm64+armhf (tests/bench/resolve-data.sh), 150 requests,
# seed 18 (MKI_DIFF_COUNT, MKI_DIFF_SEED to change; MKI_DIFF_BASELINE=BIN also resolves each
# request with another build, e.g. main's, and reports its agreement on the same requests). Prints
# every difference, the agreement where apt solves and the median resolve-time ratio against
# apt-get -s (one run each, same machine, same run).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RESOLVE=$TOP/build/tools/resolve
[ -x "$RESOLVE" ] || make -C "$TOP" -s tools
DIRS=()
for pair in "armhf armel" "amd64 i386" "arm64 armhf"; do
	# shellcheck disable=SC2086
	DIRS+=("$("$TOP/tests/bench/resolve-data.sh" $pair)")
done
python3 "$TOP/tests/integration/resolve_diff.py" --resolve "$RESOLVE" \
	${MKI_DIFF_BASELINE:+--baseline "$MKI_DIFF_BASELINE"} --seed "${MKI_DIFF_SEED:-18}" \
	--count "${MKI_DIFF_COUNT:-150}" "${DIRS[@]}" |
	grep -v '^same ' || true
