# Repository freshness (issue 13, N1, N2): a validly signed Release that goes back in time at the
# same URL (a replay keeping a fixed package out) is refused, naming both dates, unless the user
# builds from an old snapshot on purpose (--allow-release-rollback); a validly signed Release of
# another suite served as the one asked for (buster as bookworm) is refused, naming both fields.
# Exit 3 each time, nothing cached from the refused Release.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo armhf
dists=$T/repo/dists/bookworm
write_recipe "$SERVER_URL" "$KEYRING"
sed -i 's/auxiliary_architectures = \[ "armel" \];//' "$T/r.cfg"
cp "$dists/Release" "$T/Release.good"
cached() { cat "$T/cache"/releases/*/InRelease; }

# set_release FIELD VALUE...: the good Release with FIELD replaced, signed again.
set_release() {
	cp "$T/Release.good" "$dists/Release"
	while [ $# -gt 0 ]; do
		sed -i "s/^$1: .*/$1: $2/" "$dists/Release"
		shift 2
	done
	resign "$T/repo" bookworm
}

# N1: verified once (now), then the server replays a Release dated 2023: refused.
expect_ok until_indexes
set_release Date "Sun, 01 Jan 2023 00:00:00 UTC"
expect_fail 3 "InRelease of '$SERVER_URL' suite 'bookworm' is dated Sun, 01 Jan 2023 00:00:00 UTC, older than the Release verified from it before .*--allow-release-rollback" until_indexes
cached | grep -q "^Date: Sun, 01 Jan 2023" && fail "the rolled-back Release was cached"
# Offline, the cache still holds the newer, verified Release, and builds from it.
expect_ok until_indexes --offline
grep -q "dated $(sed -n 's/^Date: //p' "$T/Release.good")" "$T/err" || fail "offline did not use the newer Release"
# The same Release again (same Date): fine, it is the one verified.
set_release Date "$(sed -n 's/^Date: //p' "$T/Release.good")"
expect_ok until_indexes
# A snapshot on purpose.
set_release Date "Sun, 01 Jan 2023 00:00:00 UTC"
expect_ok until_indexes --allow-release-rollback
grep -q "warning: .*is dated Sun, 01 Jan 2023 .*accepted because of --allow-release-rollback" "$T/err" ||
	fail "--allow-release-rollback did not warn"
# A Release without Date after a dated one: refused too.
cp "$T/Release.good" "$dists/Release"
sed -i '/^Date: /d' "$dists/Release"
resign "$T/repo" bookworm
expect_fail 3 "has no Date, but the one verified before was dated" until_indexes

# N2: another suite's Release at this URL (fresh cache, so no rollback is involved).
rm -rf "$T/cache"
set_release Suite buster Codename buster
expect_fail 3 "says Suite 'buster' and Codename 'buster', neither of which is the suite 'bookworm' asked for" until_indexes
[ -z "$(find "$T/cache" -path '*/releases/*' -type f)" ] || fail "another suite's Release was cached"
# Suite by name (stable) with the codename asked for: fine; and the other way round.
set_release Suite stable Codename bookworm
expect_ok until_indexes
set_release Suite bookworm Codename trixie
expect_ok until_indexes
