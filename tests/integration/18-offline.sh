# --offline: a cold cache fails clearly (exit 5) without touching the network; a warm cache
# builds the same indexes and packages with no request at all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo
write_recipe "$SERVER_URL" "$KEYRING"
debs_list "$T/repo/pool" "$SERVER_URL/pool" >"$T/list"

# Cold.
expect_fail 5 "the indexes of '$SERVER_URL' suite 'bookworm' are not in the cache and --offline forbids downloading them \(run once without --offline\)" \
	until_indexes --offline
expect_fail 5 "'hello-test_1.0-1_armel.deb' is not in the cache '$T/cache' and --offline forbids downloading it from '$SERVER_URL/pool/main/hello-test_1.0-1_armel.deb'" \
	"$FETCHDEBS" --offline --cache-dir "$T/cache" <"$T/list"
[ ! -s "$SRVLOG" ] || fail "--offline contacted the server: $(cat "$SRVLOG")"
[ -z "$(find "$T/cache" -path '*/objects/*' -type f 2>/dev/null)" ] || fail "objects appeared"

# Warm the cache, then stop the server: offline still works and says the same.
expect_ok until_indexes
cp "$T/err" "$T/online.err"
expect_ok "$FETCHDEBS" --cache-dir "$T/cache" <"$T/list"
cp "$T/out" "$T/online.out"
: >"$SRVLOG"
expect_ok until_indexes --offline
grep -q "indexes: $SERVER_URL bookworm: signature good" "$T/err" || fail "offline summary missing"
expect_ok "$FETCHDEBS" --offline --cache-dir "$T/cache" <"$T/list"
cmp -s "$T/out" "$T/online.out" || fail "offline paths differ"
[ ! -s "$SRVLOG" ] || fail "--offline contacted the server: $(cat "$SRVLOG")"

# Offline still verifies what it reads: a cached InRelease edited on disk is refused.
rel=$(find "$T/cache/releases" -maxdepth 2 -name InRelease) # not verified/: --allow-stale's
sed -i 's/^Suite: bookworm/Suite: bookwork/' "$rel"
expect_fail 3 "has a BAD signature" until_indexes --offline

# A missing cache object is a miss, not a crash.
rm -rf "$T/cache/objects"
expect_fail 5 "is not in the cache .* --offline forbids" \
	"$FETCHDEBS" --offline --cache-dir "$T/cache" <"$T/list"
