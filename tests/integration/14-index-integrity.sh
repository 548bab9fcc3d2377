# Packages files are checked against the signed Release (size and SHA-256) before use: a mismatch
# is fetched again (a mirror mid-sync, 37-index-midsync.sh), then exits 5, names the file and
# keeps nothing in the cache.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo armhf
bin=$T/repo/dists/bookworm/main/binary-armhf
write_recipe "$SERVER_URL" "$KEYRING"
sed -i 's/auxiliary_architectures = \[ "armel" \];//' "$T/r.cfg"
cp "$bin/Packages.xz" "$T/Packages.xz.good"
size=$(stat -c %s "$bin/Packages.xz")

nothing_kept() {
	[ -z "$(find "$T/cache" \( -path '*/objects/*' -o -path '*/indexes/*' \) -type f)" ] ||
		fail "$1: a file that failed verification is in the cache: $(find "$T/cache" -type f)"
	no_temp_files "$T/cache"
}

# Same size, other bytes.
head -c "$size" /dev/urandom >"$bin/Packages.xz"
expect_fail 5 "'$SERVER_URL' suite 'bookworm' \($T/r.cfg:[0-9]+\) looks mid-sync, or its file was tampered with: 'main/binary-armhf/Packages.xz' from '$SERVER_URL/dists/bookworm/main/binary-armhf/Packages.xz' has SHA-256 [0-9a-f]{64}, the index says [0-9a-f]{64}, against its Release dated [^;]+; still so after 3 retries over 0 s; nothing was cached" until_indexes
nothing_kept "hash mismatch"

# Longer than the Release says.
cp "$T/Packages.xz.good" "$bin/Packages.xz"
echo junk >>"$bin/Packages.xz"
expect_fail 5 "is larger than the $size bytes the index promises" until_indexes
nothing_kept "too long"

# Shorter than the Release says.
head -c $((size - 10)) "$T/Packages.xz.good" >"$bin/Packages.xz"
expect_fail 5 "has $((size - 10)) bytes, the index says $size" until_indexes
nothing_kept "too short"

# The compressed file matches but decompresses to something else than the signed plain Packages.
cp "$T/Packages.xz.good" "$bin/Packages.xz"
echo "Package: smuggled" | xz >"$bin/Packages.xz"
plain_sha=$(sha256sum "$bin/Packages" | cut -d' ' -f1)
new_sha=$(sha256sum "$bin/Packages.xz" | cut -d' ' -f1)
new_size=$(stat -c %s "$bin/Packages.xz")
old_sha=$(sha256sum "$T/Packages.xz.good" | cut -d' ' -f1)
sed -i "s/^ $old_sha  *[0-9]* main\/binary-armhf\/Packages.xz$/ $new_sha $new_size main\/binary-armhf\/Packages.xz/" \
	"$T/repo/dists/bookworm/Release"
grep -q "$new_sha" "$T/repo/dists/bookworm/Release" || fail "fixture: Release not edited"
resign "$T/repo" bookworm
expect_fail 5 "decompresses to [0-9]+ bytes with SHA-256 [0-9a-f]{64}, but the Release says [0-9]+ bytes, $plain_sha for 'main/binary-armhf/Packages'" until_indexes
[ -z "$(find "$T/cache" -path '*/indexes/*' -type f)" ] || fail "a mismatching index was kept"
no_temp_files "$T/cache"

# 404 for an index the Release lists.
rm "$bin/Packages.xz"
sed -i "/main\/binary-armhf\/Packages.xz$/d" "$T/repo/dists/bookworm/Release" # back to .gz
rm "$bin/Packages.gz"
resign "$T/repo" bookworm
expect_fail 5 "'main/binary-armhf/Packages.gz' is not on the server \(HTTP 404 at '$SERVER_URL/dists/bookworm/main/binary-armhf/Packages.gz'\)" until_indexes
