# .deb downloads through fetch_plan (tests/tools/fetchdebs): a hash or size mismatch and a 404
# exit 5 with the file named; the cache never keeps a bad or partial file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

for i in 1 2 3; do
	d=$(deb_new pkg$i 1.0 armhf)
	deb_file "$d" usr/share/pkg$i/blob "$(head -c 200000 /dev/urandom | base64)"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
fault_serve "$T/repo"
debs_list "$T/repo" "$SERVER_URL" >"$T/list"

# Packages "Filename:" values with an epoch colon and '+' are percent-encoded on the wire.
d=$(deb_new odd 1:2.0+b1 armhf)
f=$(deb_build "$d" "$T/repo/pool/odd")
echo "pool/odd/$(basename "$f") $(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1)" >"$T/odd"
expect_ok "$FETCHDEBS" --cache-dir "$T/cache" --base "$SERVER_URL/" <"$T/odd"
grep -q "GET /pool/odd/odd_1%3A2.0%2Bb1_armhf.deb .*status=200" "$SRVLOG" ||
	fail "file name not encoded as apt does: $(cat "$SRVLOG")"
rm -rf "$T/cache" "$T/repo/pool/odd"
: >"$SRVLOG"

objects() { find "$T/cache" -path '*/objects/*' -type f 2>/dev/null | wc -l; }

# Good: every file lands in the cache under its SHA-256, in plan order.
expect_ok "$FETCHDEBS" --cache-dir "$T/cache" <"$T/list"
[ "$(wc -l <"$T/out")" = 3 ] || fail "expected 3 paths"
paste -d' ' "$T/out" "$T/list" | while read -r path url size sha; do
	[ "$(basename "$path")" = "$sha" ] || fail "'$path' is not named by its SHA-256"
	[ "$(sha256sum "$path" | cut -d' ' -f1)" = "$sha" ] || fail "'$path' has the wrong content"
done
grep -q "packages: 3 downloaded" "$T/err" || fail "no download summary"
# Warm: nothing downloaded again.
: >"$SRVLOG"
expect_ok "$FETCHDEBS" --cache-dir "$T/cache" <"$T/list"
grep -q "packages: 0 downloaded (0.0 MiB), 3 from the cache" "$T/err" || fail "cache not used"
[ ! -s "$SRVLOG" ] || fail "cached files were requested again"
rm -rf "$T/cache"

# The server's file differs from what the plan says (same size): refused, not cached.
bad=$(head -n 1 "$T/list" | awk '{print $1, $2, "0000000000000000000000000000000000000000000000000000000000000000"}')
echo "$bad" >"$T/bad"
expect_fail 5 "'pkg1_1.0_armhf.deb' from '$SERVER_URL/pool/main/pkg1_1.0_armhf.deb' has SHA-256 [0-9a-f]{64}, the index says 0{64}: .*nothing was cached" \
	"$FETCHDEBS" --cache-dir "$T/cache" <"$T/bad"
[ "$(objects)" = 0 ] || fail "a file with the wrong hash was cached"
no_temp_files "$T/cache"

# Size mismatch (the plan says one byte more).
head -n 1 "$T/list" | awk '{print $1, $2 + 1, $3}' >"$T/bad"
expect_fail 5 "'pkg1_1.0_armhf.deb' from .* has [0-9]+ bytes, the index says [0-9]+" \
	"$FETCHDEBS" --cache-dir "$T/cache" <"$T/bad"
[ "$(objects)" = 0 ] || fail "a short file was cached"
no_temp_files "$T/cache"

# 404: the file is gone from the mirror; the others still arrive, the run fails.
echo "/pool/main/pkg2_* status 404" >"$RULES"
expect_fail 5 "'pkg2_1.0_armhf.deb' is not on the server \(HTTP 404 at '$SERVER_URL/pool/main/pkg2_1.0_armhf.deb'\): the index is out of date" \
	"$FETCHDEBS" --cache-dir "$T/cache" <"$T/list"
[ "$(requests 'pkg2_.*status=404')" = 1 ] || fail "a 404 was retried"
no_temp_files "$T/cache"

# A non-transient HTTP error (403) is not retried either.
echo "/pool/main/pkg3_* status 403" >"$RULES"
: >"$SRVLOG"
rm -rf "$T/cache"
expect_fail 5 "cannot download '$SERVER_URL/pool/main/pkg3_1.0_armhf.deb': HTTP 403 \(check" \
	"$FETCHDEBS" --cache-dir "$T/cache" <"$T/list"
[ "$(requests 'pkg3_.*status=403')" = 1 ] || fail "a 403 was retried"

# Nobody listening.
: >"$RULES"
sed "s|$SERVER_URL|http://127.0.0.1:9|" "$T/list" >"$T/dead"
rm -rf "$T/cache"
expect_fail 5 "cannot download 'http://127.0.0.1:9/pool/main/pkg1_1.0_armhf.deb': .*giving up after 4 attempts" \
	"$FETCHDEBS" --cache-dir "$T/cache" <"$T/dead"
[ "$(objects)" = 0 ] || fail "something was cached from a dead server"
no_temp_files "$T/cache"
