# Verified indexes from a signed repository: InRelease, then reuse with a conditional GET,
# Release + Release.gpg fallback, Acquire-By-Hash, file:// and armored keyrings.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo
write_recipe "$SERVER_URL" "$KEYRING"

# Cold: InRelease and both Packages files are fetched, verified and decompressed into the cache.
expect_ok until_indexes
grep -q "indexes: $SERVER_URL bookworm: signature good, dated .*main/armhf .*main/armel" "$T/err" ||
	fail "no index summary: $(cat "$T/err")"
grep -q "stopped after stage 'indexes'" "$T/err" || fail "--until indexes did not stop there"
[ "$(requests 'GET /dists/bookworm/main/binary-arm(hf|el)/Packages.xz .*status=200')" = 2 ] ||
	fail "expected two Packages.xz downloads: $(cat "$SRVLOG")"
for a in armhf armel; do
	sha=$(sha256sum "$T/repo/dists/bookworm/main/binary-$a/Packages.xz" | cut -d' ' -f1)
	cmp -s "$T/cache/indexes/$sha" "$T/repo/dists/bookworm/main/binary-$a/Packages" ||
		fail "decompressed $a index in the cache differs from the repository's Packages"
done
no_temp_files "$T/cache"

# Warm: InRelease answered 304, nothing else downloaded.
: >"$SRVLOG"
expect_ok until_indexes
[ "$(requests 'GET /dists/bookworm/InRelease .*status=304')" = 1 ] ||
	fail "InRelease was not fetched conditionally: $(cat "$SRVLOG")"
[ "$(requests Packages)" = 0 ] || fail "verified indexes were downloaded again: $(cat "$SRVLOG")"
grep -q "main/armhf [0-9]* KiB (cached)" "$T/err" || fail "summary does not say cached"

# A changed repository is noticed: a new package, re-signed, gives new indexes.
d=$(deb_new extra-test 2.0 armhf)
deb_build "$d" "$T/repo/pool/main" >/dev/null
repo_index "$T/repo" bookworm main armhf armel
resign "$T/repo" bookworm
: >"$SRVLOG"
expect_ok until_indexes
[ "$(requests 'GET /dists/bookworm/InRelease .*status=200')" = 1 ] || fail "new InRelease not fetched"
[ "$(requests 'binary-armhf/Packages.xz .*status=200')" = 1 ] || fail "new armhf index not fetched"

# No InRelease: Release + Release.gpg are used instead.
rm "$T/repo/dists/bookworm/InRelease"
rm -rf "$T/cache"
: >"$SRVLOG"
expect_ok until_indexes
[ "$(requests 'GET /dists/bookworm/Release.gpg .*status=200')" = 1 ] ||
	fail "Release.gpg not fetched: $(cat "$SRVLOG")"
grep -q "signature good" "$T/err" || fail "detached signature not reported good"
repo_sign "$T/repo" bookworm

# Acquire-By-Hash: indexes are fetched by their SHA-256 name.
RELEASE_EXTRA="-o APT::FTPArchive::Release::Acquire-By-Hash=yes" \
	repo_index "$T/repo" bookworm main armhf armel
for a in armhf armel; do
	dir=$T/repo/dists/bookworm/main/binary-$a
	mkdir -p "$dir/by-hash/SHA256"
	for f in Packages Packages.gz Packages.xz; do
		cp "$dir/$f" "$dir/by-hash/SHA256/$(sha256sum "$dir/$f" | cut -d' ' -f1)"
	done
done
repo_sign "$T/repo" bookworm
rm -rf "$T/cache"
: >"$SRVLOG"
expect_ok until_indexes
[ "$(requests 'binary-arm(hf|el)/by-hash/SHA256/[0-9a-f]{64} .*status=200')" = 2 ] ||
	fail "indexes not fetched by hash: $(cat "$SRVLOG")"
# ... and a mirror lacking the by-hash files still works (plain names as a fallback).
rm -rf "$T/repo/dists/bookworm/main/binary-armel/by-hash" "$T/cache"
expect_ok until_indexes

# file:// and an ASCII-armored keyring.
gpg --batch --armor --export >"$T/keys/repo.asc"
write_recipe "file://$T/repo" "$T/keys/repo.asc"
rm -rf "$T/cache"
expect_ok until_indexes
grep -q "indexes: file://$T/repo bookworm: signature good" "$T/err" || fail "file:// source failed"
