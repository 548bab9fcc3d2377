# Release contents: expired Valid-Until (and the override), missing architecture or component,
# malformed fields. Exit 3 with a message naming the repository and the fix.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo armhf
dists=$T/repo/dists/bookworm
write_recipe "$SERVER_URL" "$KEYRING"
cp "$dists/Release" "$T/Release.good"


# Expired.
sed -i 's/^\(Date: .*\)$/\1\nValid-Until: Thu, 01 Jan 2015 00:00:00 UTC/' "$dists/Release"
resign "$T/repo" bookworm
sed -i 's/auxiliary_architectures = \[ "armel" \];//' "$T/r.cfg"
expect_fail 3 "InRelease of '$SERVER_URL' suite 'bookworm' expired on Thu, 01 Jan 2015 00:00:00 UTC \(Valid-Until\).*--ignore-valid-until" until_indexes
[ -z "$(find "$T/cache" -path '*/releases/*' -type f)" ] || fail "an expired Release was cached"
expect_ok until_indexes --ignore-valid-until
grep -q "warning: .*expired on .*accepted because of --ignore-valid-until" "$T/err" ||
	fail "--ignore-valid-until did not warn"

# Valid for a while: fine.
cp "$T/Release.good" "$dists/Release"
sed -i 's/^\(Date: .*\)$/\1\nValid-Until: Fri, 01 Jan 2100 00:00:00 UTC/' "$dists/Release"
resign "$T/repo" bookworm
expect_ok until_indexes
grep -q "valid until Fri, 01 Jan 2100" "$T/err" || fail "summary lacks Valid-Until"

# Malformed Valid-Until.
cp "$T/Release.good" "$dists/Release"
sed -i 's/^\(Date: .*\)$/\1\nValid-Until: someday/' "$dists/Release"
resign "$T/repo" bookworm
expect_fail 3 "has a malformed Valid-Until 'someday'" until_indexes

# Architecture the repository does not have (armel asked, only armhf published).
cp "$T/Release.good" "$dists/Release"
resign "$T/repo" bookworm
write_recipe "$SERVER_URL" "$KEYRING"
expect_fail 3 "suite 'bookworm' has no architecture 'armel' \(its Release lists: armhf\); fix the source's architectures" until_indexes

# Component the repository does not have.
write_recipe "$SERVER_URL" "$KEYRING" 'components = [ "main", "contrib" ];'
sed -i 's/auxiliary_architectures = \[ "armel" \];//' "$T/r.cfg"
expect_fail 3 "has no component 'contrib' \(its Release lists: main\)" until_indexes

# The Release names the component and arch but lists no Packages file for it.
write_recipe "$SERVER_URL" "$KEYRING"
sed -i 's/^Architectures: armhf$/Architectures: armhf armel/' "$dists/Release"
resign "$T/repo" bookworm
expect_fail 3 "lists no 'main/binary-armel/Packages' \(.xz, .zst, .gz or plain\)" until_indexes

# A malformed SHA256 line inside the signed text.
cp "$T/Release.good" "$dists/Release"
sed -i 's/^ \([0-9a-f]\{64\}\) /  nothex /' "$dists/Release"
resign "$T/repo" bookworm
sed -i 's/auxiliary_architectures = \[ "armel" \];//' "$T/r.cfg"
expect_fail 3 "InRelease of .*: line [0-9]+ of the signed text is malformed" until_indexes
