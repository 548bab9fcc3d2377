# SIGINT and SIGTERM while an index and while a package is being downloaded: the server stalls
# the transfer; once the request is in the server's log (no timing involved) the build is
# signalled. It must end with exit 130 and "interrupted", remove its work dir (TMPDIR) and every
# temp file, keep only verified objects in the cache, and the next build must work.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo
write_recipe "$SERVER_URL" "$KEYRING"
mkdir -p "$T/tmp"

# wait_for PATTERN PID: poll the server log until a request matching PATTERN arrived.
wait_for() {
	local i
	for i in $(seq 1 600); do
		grep -Eq -- "$1" "$SRVLOG" && return 0
		kill -0 "$2" 2>/dev/null || { cat "$T/err" >&2; fail "mkimage ended before /$1/"; }
		sleep 0.05
	done
	fail "no request matching /$1/"
}

# interrupt SIGNAL UNTIL PATTERN: start a build that stops after UNTIL, signal it once PATTERN
# was requested, check the exit and what is left.
interrupt() {
	local sig=$1 until=$2 pattern=$3 pid rc=0 i
	: >"$SRVLOG"
	TMPDIR=$T/tmp "$MKIMAGE" --until "$until" --cache-dir "$T/cache" "$T/r.cfg" \
		>/dev/null 2>"$T/err" & pid=$!
	wait_for "$pattern" $pid
	kill -"$sig" $pid
	# Bounded wait for the exit (the stall is endless: a missed signal would hang here).
	for i in $(seq 1 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "$sig during $until: still running after 30 s"; }
	wait $pid || rc=$?
	[ "$rc" = 130 ] || { cat "$T/err" >&2; fail "$sig during $until: exit $rc, expected 130"; }
	grep -q "interrupted by signal" "$T/err" || { cat "$T/err" >&2; fail "no 'interrupted' message"; }
	[ -z "$(ls -A "$T/tmp")" ] || fail "$sig during $until: work dir left: $(ls -A "$T/tmp")"
	no_temp_files "$T/cache"
	verify_cache >/dev/null
}

# verify_cache: every object in the cache (objects/sha256/XX/SUM) has the checksum it is named
# by, and every derived index (indexes/SUM: the decompressed object SUM) is exactly its object
# decompressed: nothing unverified or partial was kept. Prints how many objects there are.
verify_cache() {
	local f n=0 obj
	for f in $(find "$T/cache/objects" -type f 2>/dev/null); do
		[ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] ||
			fail "unverified object in the cache: $f"
		n=$((n + 1))
	done
	for f in $(find "$T/cache/indexes" -type f 2>/dev/null); do
		obj=$(find "$T/cache/objects" -name "$(basename "$f")")
		[ -n "$obj" ] || continue # the object may be evicted; the index was checked when made
		(xz -dc "$obj" 2>/dev/null || zstd -dc "$obj" 2>/dev/null || gzip -dc "$obj" 2>/dev/null ||
			cat "$obj") | cmp -s - "$f" || fail "derived index is not its object: $f"
	done
	echo $n
}

for sig in INT TERM; do
	rm -rf "$T/cache"
	echo "*/Packages* stall 10" >"$RULES"
	interrupt "$sig" indexes "GET .*/Packages"
	echo "/pool/* stall 100" >"$RULES"
	interrupt "$sig" fetch "GET /pool/"
	: >"$RULES"
	TMPDIR=$T/tmp expect_ok "$MKIMAGE" --until fetch --cache-dir "$T/cache" "$T/r.cfg"
	[ -z "$(ls -A "$T/tmp")" ] || fail "work dir left after a good build"
	[ "$(verify_cache)" -ge 3 ] || fail "expected two indexes and a package in the cache"
done
