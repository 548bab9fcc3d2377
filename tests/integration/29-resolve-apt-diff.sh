# The differential test against apt on real bookworm indexes (bookworm, -updates, -security as
# the host's sources list them) for armhf+armel, amd64+i386 and arm64+armhf: a fixed-seed sample
# of random requests (tests/integration/resolve_diff.py), each resolved by mkimage and by
# apt-get -s on the same lists. Every set of mkimage's must pass depcheck.py, mkimage must solve
# whatever apt solves, and the sets must agree (mkimage(7), "How packages are chosen"). The larger run
# is `make bench` (tests/bench/21-resolve-diff.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

DIRS=()
for pair in "armhf armel" "amd64 i386" "arm64 armhf"; do
	# shellcheck disable=SC2086
	d=$("$TOP/tests/bench/resolve-data.sh" $pair 2>"$T/data.err") ||
		skip "no bookworm indexes for $pair (no network to the archive?): $(tail -1 "$T/data.err")"
	DIRS+=("$d")
done
python3 "$TOP/tests/integration/resolve_diff.py" --resolve "$RESOLVE" --seed 18 --count 12 \
	--min-agree 100 "${DIRS[@]}" >"$T/diff.log" 2>&1 ||
	{ cat "$T/diff.log" >&2; fail "mkimage and apt disagree, or a set breaks dpkg's rules"; }
note "$(tail -1 "$T/diff.log")"
