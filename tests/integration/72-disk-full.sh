# Disk full while writing the cache, the staging tree (work dir via TMPDIR) and the image: each on
# a tiny tmpfs mounted in a private mount namespace (nothing leaks to the host; needs root, else
# skipped, exit 77). Each must fail with a clear "No space left" error and its documented exit
# code, leave no temp file, no corrupt cache entry and no partial output; with space again, the
# same build works.
if [ -z "${MKI_IN_NS:-}" ]; then
	if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
		echo "SKIP: $(basename "$0" .sh): needs root and unshare -m for a private tmpfs" >&2
		exit 77
	fi
	MKI_IN_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

MKFS=$TOP/build/tools/mkfs
# The tmpfs mounts go before the temp dir is removed (they vanish with the namespace anyway).
trap 'rc=$(_exit_status $?); for m in cache tmp img; do umount -l "$T/$m" 2>/dev/null || true; done; _cleanup; exit $rc' EXIT
# small DIR SIZE: a tmpfs of SIZE on DIR, private to this namespace.
small() {
	mkdir -p "$1"
	mount -t tmpfs -o size="$2" tmpfs "$1"
}

d=$(deb_new blob-test 1.0 armhf)
mkdir -p "$d/usr/share/blob-test"
head -c 3M /dev/urandom >"$d/usr/share/blob-test/blob"
deb_build "$d" "$T/repo/pool/main" >/dev/null
make_repo armhf
cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; } );
packages = { install = [ "blob-test" ]; };
R
mkdir -p "$T/tmp"

# verify_cache DIR: every object has the checksum it is named by.
verify_cache() {
	local f
	for f in $(find "$1/objects" -type f 2>/dev/null); do
		[ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] ||
			fail "corrupt object in the cache: $f"
	done
}

# --- the cache: room for the indexes, not for the 3 MiB package ---
small "$T/cache" 1M
TMPDIR=$SHM expect_fail 1 "cannot write '.*/cache/.*': No space left on device" "$MKIMAGE" --until fetch --cache-dir "$T/cache" "$T/r.cfg"
note "cache full: $(grep -m1 "No space" "$T/err")"
no_temp_files "$T/cache"
verify_cache "$T/cache"
[ -z "$(ls -A "$SHM")" ] || fail "cache full: work dir left: $(ls -A "$SHM")"
umount "$T/cache"
rm -rf "$T/cache"

# --- the staging tree: the work dir on a tmpfs smaller than the unpacked package ---
small "$T/tmp" 1M
expect_fail 1 "cannot create '/usr/share/blob-test/blob': No space left on device" env TMPDIR="$T/tmp" "$MKIMAGE" --until unpack --cache-dir "$T/cache" "$T/r.cfg"
note "staging full: $(grep -m1 "No space" "$T/err")"
[ -z "$(ls -A "$T/tmp")" ] || fail "staging full: work dir left: $(ls -A "$T/tmp")"
no_temp_files "$T/cache"
verify_cache "$T/cache"
umount "$T/tmp"

# --- the image: the output directory on a tmpfs smaller than the image ---
TMPDIR=$SHM expect_ok "$MKIMAGE" --until unpack --keep-staging --cache-dir "$T/cache" "$T/r.cfg"
mv "$SHM"/* "$T/keep"
small "$T/img" 2M
expect_fail 8 "No space left" "$MKFS" "$T/keep/root" "$T/img/out.ext4"
note "image full: $(grep -m1 "No space" "$T/err")"
[ -z "$(ls -A "$T/img")" ] || fail "image full: left $(ls -A "$T/img")"
umount "$T/img"
expect_ok "$MKFS" "$T/keep/root" "$T/img/out.ext4"
e2fsck -fn "$T/img/out.ext4" >/dev/null 2>&1 || fail "image not clean"

# --- with room again, the build from the same cache works ---
TMPDIR=$T/tmp expect_ok "$MKIMAGE" --until unpack --cache-dir "$T/cache" "$T/r.cfg"
