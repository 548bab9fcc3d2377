# Helpers for end-to-end tests: a recipe from recipes/ built against a local signed mirror of real
# Debian packages (tests/mkmirror.sh), then checked from the outside with e2fsck and debugfs.

# e2e_build RECIPE ARCHS PACKAGE...: mirror the recipe's package set for ARCHS (primary first),
# serve it, build recipes/RECIPE.cfg into $T/images/RECIPE.ext4. Sets IMG.
e2e_build() {
	local recipe=$1 archs=$2 mirror
	shift 2
	mirror=${MKIMAGE_TEST_MIRRORS:-/var/tmp/mkimage-mirror}/$recipe
	"$TOP/tests/mkmirror.sh" "$mirror" "$archs" "$@"
	serve "$mirror/repo"
	mkdir -p "$T/images"
	IMG=$T/images/$recipe.ext4
	SOURCE_DATE_EPOCH=1700000000 expect_ok "$MKIMAGE" \
		--source "$SERVER_URL bookworm main signed-by=$mirror/key.gpg" --output "$IMG" \
		"$TOP/recipes/$recipe.cfg"
	e2fsck -fn "$IMG" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn reports problems"; }
	sbom_validate "${IMG%.ext4}.spdx.json"
}

dbg() { debugfs -R "$1" "$IMG" 2>/dev/null; }

# e2e_audit: the image's dpkg database says every package is installed and configured.
e2e_audit() {
	local audit
	rm -rf "$T/db" && mkdir -p "$T/db"
	debugfs -R "rdump /var/lib/dpkg $T/db" "$IMG" >/dev/null 2>&1
	audit=$(dpkg --admindir="$T/db/dpkg" --audit 2>&1) || true
	[ -z "$audit" ] || { echo "$audit" >&2; fail "dpkg --audit is not clean"; }
	! grep '^Status:' "$T/db/dpkg/status" | grep -qv 'install ok installed' ||
		fail "some package is not 'install ok installed'"
}
