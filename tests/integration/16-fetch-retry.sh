# Transient failures are retried with backoff: 500 then success, a connection reset mid-file
# (resumed with a Range request), a server ignoring Range, a stall (timed out, retried), and a
# stall that never ends (a clear error, exit 5, no partial file).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

export MKIMAGE_STALL_TIMEOUT=1
for i in 1 2 3; do
	d=$(deb_new pkg$i 1.0 armhf)
	deb_file "$d" usr/share/pkg$i/blob "$(head -c 400000 /dev/urandom | base64)"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
fault_serve "$T/repo"
debs_list "$T/repo" "$SERVER_URL" >"$T/list"
url1=$SERVER_URL/pool/main/pkg1_1.0_armhf.deb

fetch() { rm -rf "$T/cache"; : >"$SRVLOG"; "$FETCHDEBS" --cache-dir "$T/cache" <"$T/list"; }
verify_all() {
	paste -d' ' "$T/out" "$T/list" | while read -r path url size sha; do
		[ "$(sha256sum "$path" | cut -d' ' -f1)" = "$sha" ] || fail "$1: '$path' is corrupt"
	done
	no_temp_files "$T/cache"
}

# 500 twice, then the file.
echo "/pool/main/pkg1_* status 500 2" >"$RULES"
expect_ok fetch
grep -q "warning: '$url1': HTTP 500; retrying in 0.5s (attempt 2 of 4)" "$T/err" || fail "no retry warning"
[ "$(requests 'pkg1_.*status=500')" = 2 ] && [ "$(requests 'pkg1_.*status=200')" = 1 ] ||
	fail "500 not retried as expected: $(cat "$SRVLOG")"
verify_all "500"

# Connection reset after 100000 bytes: the retry asks only for the rest.
echo "/pool/main/pkg2_* reset 100000 1" >"$RULES"
expect_ok fetch
grep -q "warning: '$SERVER_URL/pool/main/pkg2_1.0_armhf.deb': .*retrying" "$T/err" || fail "reset not retried"
[ "$(requests 'pkg2_.* range=bytes=100000- status=206')" = 1 ] ||
	fail "the download was not resumed: $(cat "$SRVLOG")"
verify_all "reset"

# The same with a server that ignores Range: the whole file again, still correct.
printf '/pool/main/pkg2_* reset 100000 1\n/pool/main/pkg2_* norange - *\n' >"$RULES"
expect_ok fetch
[ "$(requests 'pkg2_.* range=bytes=100000- status=200')" = 1 ] ||
	fail "expected a full re-download: $(cat "$SRVLOG")"
verify_all "no range"

# A stall after 1000 bytes: timed out, resumed.
echo "/pool/main/pkg3_* stall 1000 1" >"$RULES"
expect_ok fetch
grep -q "warning: '$SERVER_URL/pool/main/pkg3_1.0_armhf.deb': stalled or timed out" "$T/err" ||
	fail "stall not reported"
verify_all "stall"

# A server that always stalls (headers, then nothing): a clear error after the retries, nothing
# half-written. (After some bytes curl's speed window needs ~5 s more to notice; 0 bytes is quick.)
echo "/pool/main/pkg3_* stall 0 *" >"$RULES"
expect_fail 5 "cannot download '$SERVER_URL/pool/main/pkg3_1.0_armhf.deb': stalled or timed out .*giving up after 4 attempts" fetch
[ ! -e "$T/cache/objects/sha256/$(awk 'NR==3 {print substr($3,1,2) "/" $3}' "$T/list")" ] ||
	fail "the stalled file is in the cache"
no_temp_files "$T/cache"

# A 500 that never ends.
echo "/pool/main/pkg1_* status 503 *" >"$RULES"
expect_fail 5 "cannot download '$url1': HTTP 503, giving up after 4 attempts" fetch
[ "$(requests 'pkg1_.*status=503')" = 4 ] || fail "expected 4 attempts: $(cat "$SRVLOG")"
no_temp_files "$T/cache"

# SIGINT while an index download hangs: exit 130, nothing half-written in the cache.
make_repo
write_recipe "$SERVER_URL" "$KEYRING"
echo "*/Packages.xz stall 10 *" >"$RULES"
MKIMAGE_STALL_TIMEOUT=600 "$MKIMAGE" --until indexes --cache-dir "$T/icache" "$T/r.cfg" 2>"$T/err" &
pid=$!
for i in $(seq 1 100); do grep -q "Packages.xz .*stall" "$SRVLOG" && break; sleep 0.1; done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { cat "$T/err" >&2; fail "interrupted download exited $rc, expected 130"; }
grep -q "interrupted by signal 2" "$T/err" || fail "no interruption message"
[ -z "$(find "$T/icache" \( -path '*/objects/*' -o -path '*/indexes/*' \) -type f)" ] ||
	fail "an interrupted download left a file in the cache"
no_temp_files "$T/icache"
