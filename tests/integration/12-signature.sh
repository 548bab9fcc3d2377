# Signatures: unsigned repository, key not in the keyring, tampered InRelease, data outside the
# signed part. Each is refused with exit 3 and a specific message; nothing is cached.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo
good_key=$KEYRING
dists=$T/repo/dists/bookworm
write_recipe "$SERVER_URL" "$good_key"

nothing_cached() {
	[ -z "$(find "$T/cache" -path '*/releases/*' -type f 2>/dev/null)" ] ||
		fail "$1: a refused Release was stored in the cache"
	[ -z "$(find "$T/cache" -path '*/indexes/*' -type f 2>/dev/null)" ] ||
		fail "$1: indexes were used from a refused Release"
	no_temp_files "$T/cache"
}

# Signed by a key that is not in the source's keyring.
gpg_key other
write_recipe "$SERVER_URL" "$KEYRING"
expect_fail 3 "InRelease of '$SERVER_URL' suite 'bookworm' is signed by key [0-9A-F]+, which is not in the source's keyring '$KEYRING'" until_indexes
nothing_cached "wrong key"
write_recipe "$SERVER_URL" "$good_key"

# Tampered: one byte of the signed text changed after signing.
cp "$dists/InRelease" "$T/InRelease.good"
sed -i 's/^Suite: bookworm/Suite: bookwork/' "$dists/InRelease"
expect_fail 3 "InRelease of .* has a BAD signature .*tampered or corrupted" until_indexes
nothing_cached "tampered"

# Data outside the signed part (gpgv accepts the signature, the parser must not read it).
cp "$T/InRelease.good" "$dists/InRelease"
printf 'SHA256:\n %s 1 main/binary-armhf/Packages.xz\n' "$(printf x | sha256sum | cut -d' ' -f1)" \
	>>"$dists/InRelease"
gpgv --keyring "$good_key" "$dists/InRelease" 2>/dev/null || fail "fixture: gpgv should accept it"
expect_fail 3 "is not one well-formed clearsigned message .*refusing it" until_indexes
nothing_cached "trailing data"
cp "$T/InRelease.good" "$dists/InRelease"

# Detached signature that does not match the Release.
rm "$dists/InRelease"
echo "X-Tampered: yes" >>"$dists/Release"
expect_fail 3 "the Release of .* has a BAD signature" until_indexes
nothing_cached "bad Release.gpg"

# Unsigned: neither InRelease nor Release.gpg.
rm "$dists/Release.gpg"
expect_fail 3 "'$SERVER_URL' suite 'bookworm' is not signed: .* has a Release but neither InRelease nor Release.gpg" until_indexes
nothing_cached "unsigned"

# The same unsigned repository is accepted only when the recipe says trusted, with a warning.
cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
sources = ( { uri = "$SERVER_URL"; trusted = true; } );
packages = { install = [ "hello-test" ]; };
R
expect_ok until_indexes
grep -q "warning: .*marked trusted: its indexes are NOT verified" "$T/err" || fail "no trusted warning"
grep -q "NOT verified (trusted)" "$T/err" || fail "summary hides that the source is unverified"

# A suite the repository does not have.
write_recipe "$SERVER_URL" "$good_key"
sed -i 's/name = "t";/name = "t"; suite = "trixie";/' "$T/r.cfg"
expect_fail 3 "suite 'trixie' has neither InRelease nor Release at '$SERVER_URL/dists/trixie/'" until_indexes
