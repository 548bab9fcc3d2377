# test-cost: slow (the lean arm-board image once, its SDK three times; CMake and Meson builds)
# The cross-building SDK (mkimage --sdk, mkimage(7) "Cross-building"): from arm-board's recipe
# and lock, NAME-sdk.tar.zst for this host holding the armhf and armel cross toolchains and the
# -dev packages at exactly the image's versions. Unpacked elsewhere (moved, so nothing may name
# where it was made), a C program using zlib and libcrypto builds with its CMake toolchain file
# and with its Meson cross file for armhf and armel; each binary's ABI is its architecture's,
# its NEEDED libraries and interpreter are in the image, and `qemu-arm -L` on the image's tree
# runs it. The same recipe, lock and SOURCE_DATE_EPOCH give the same archive cold, warm and as
# an ordinary user. Bad input fails before anything long: no cross toolchain in the archive, a
# -dev missing for one architecture, a lock the repositories do not hold, a missing lock, the
# host's own architecture as a target or another host architecture for the SDK.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
. "$(dirname "$0")/lib-sdk.sh"
. "$TOP/tests/flagship.sh"

sdk_serve qemu-arm-static

# arm-board without what makes it boot (flagship.sh), with libssl3 for both architectures and
# the SDK's -dev packages; readable by the ordinary user below.
chmod 755 "$T"
sdk_recipe "$T/p"
cp "$MKIMAGE" "$T/p/mkimage"
R=$T/p/recipes/arm-board.cfg
mkdir -p "$T/img"
chmod -R a+rX "$T/p"
expect_ok "$T/p/mkimage" -q --source "$SRC_IMG" -o "$T/img/arm-board.ext4" "$R"
LOCK=$T/img/arm-board.lock

# ---- bad input: each refused before anything is downloaded or unpacked ----
mkdir -p "$T/bad"
expect_fail 2 "with --sdk, -o names the SDK's archive, which ends in .tar.zst" \
	"$T/p/mkimage" --sdk="$LOCK" -o "$T/bad/x.tar" "$R"
expect_fail 4 "the image's lock '$T/bad/none.lock' does not exist" \
	"$T/p/mkimage" --sdk="$T/bad/none.lock" -o "$T/bad/x.tar.zst" "$R"
expect_fail 4 "the archive has no cross toolchain for 'armhf, armel' on 'amd64'" \
	"$T/p/mkimage" --sdk="$LOCK" --source "$SRC_IMG" -o "$T/bad/x.tar.zst" "$R"
sed 's/"zlib1g-dev", "libssl-dev", "libc6-dev"/"zlib1g-dev", "libmkimage-none-dev:armel"/' "$R" \
	>"$T/p/recipes/missing-dev.cfg"
expect_fail 4 "'libmkimage-none-dev' has no build for architecture 'armel'" \
	"$T/p/mkimage" --sdk="$LOCK" --source "$SRC_IMG" --source "$SRC_SDK" \
	-o "$T/bad/x.tar.zst" "$T/p/recipes/missing-dev.cfg"
# The image's lock names a zlib1g the repositories do not serve (a security update since?).
sed 's/^\(package: zlib1g:armhf=\)[^ ]*/\11:1.2.13.dfsg-1+mkimage1/' "$LOCK" >"$T/bad/other.lock"
expect_fail 4 "do not hold the image's 'zlib1g:armhf' 1:1.2.13.dfsg-1\\+mkimage1 \\(another version\\)" \
	"$T/p/mkimage" --sdk="$T/bad/other.lock" --source "$SRC_IMG" --source "$SRC_SDK" \
	-o "$T/bad/x.tar.zst" "$R"
sed 's/^architecture = "armhf";/architecture = "amd64";/' "$R" >"$T/p/recipes/amd64.cfg"
expect_fail 1 "an SDK for the build host's own architecture 'amd64' is not yet supported" \
	"$T/p/mkimage" --sdk="$LOCK" -o "$T/bad/x.tar.zst" "$T/p/recipes/amd64.cfg"
sed 's/^sdk = {/sdk = { architecture = "arm64";/' "$R" >"$T/p/recipes/arm64-sdk.cfg"
expect_fail 1 "asks for an SDK running on 'arm64', but this host is 'amd64'" \
	"$T/p/mkimage" --sdk="$LOCK" -o "$T/bad/x.tar.zst" "$T/p/recipes/arm64-sdk.cfg"
# A failure leaves its report and log (mkimage(1)), never an archive, lock or SBOM.
[ -z "$(ls "$T/bad" | grep -Ev '^(other\.lock|x\.report\.json|x\.log)$')" ] ||
	fail "a refused SDK left files: $(ls "$T/bad")"

# ---- the SDK, three times: cold, warm, an ordinary user's ----
# sdk DIR UMASK [USER]: an SDK build with its own cwd, TMPDIR, cache and umask.
sdk() {
	local dir=$1 mask=$2 user=${3:-}
	mkdir -p "$dir/tmp" "$dir/cwd" "$dir/cache" "$dir/out"
	[ -z "$user" ] || chown -R "$user" "$dir"
	(cd "$dir/cwd" && umask "$mask" && TMPDIR=$dir/tmp ${user:+as_user "$user"} "$T/p/mkimage" \
		--cache-dir "$dir/cache" --sdk="$LOCK" --source "$SRC_IMG" --source "$SRC_SDK" \
		-o "$dir/out/arm-board-sdk.tar.zst" ${SDK_DIR:+--sdk-dir "$SDK_DIR"} "$R") >"$dir/log" 2>&1 ||
		{ cat "$dir/log" >&2; fail "the SDK build in $dir failed"; }
}
SDK_DIR=$T/a/dir sdk "$T/a" 022                      # the archive and the directory
A=$T/a/out/arm-board-sdk
for f in "$A.tar.zst" "$A.lock" "$A.spdx.json" "$A.report.json" "$A.log"; do
	[ -s "$f" ] || fail "the SDK build left no '$f'"
done
[ ! -e "$A.tar" ] || fail "the uncompressed tar was left beside the SDK"
grep -q "^mkimage: ok $A.tar.zst sha256=" "$T/a/log" || fail "no summary line naming the SDK"
for a in armhf armel; do # configured natively: the targets' programs cannot even be run
	grep -q "info: $a programs are not run in this tree (no emulation)" "$T/a/log" ||
		fail "the SDK's build could run $a programs"
done
! grep -q "through qemu" "$A.log" || fail "the SDK's build ran a program through qemu"
sbom_validate "$A.spdx.json"
python3 - "$A.report.json" <<'PY' || fail "the SDK's report is not a successful build's"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", r["status"]
PY
# Every -dev at its library's version in the image's lock, for both architectures.
ver() { sed -n "s/^package: $1=\\([^ ]*\\) .*/\\1/p" "$2"; }
for pair in zlib1g-dev:armhf=zlib1g:armhf zlib1g-dev:armel=zlib1g:armel \
	libssl-dev:armhf=libssl3:armhf libssl-dev:armel=libssl3:armel \
	libc6-dev:armhf=libc6:armhf libc6-dev:armel=libc6:armel; do
	dev=${pair%%=*} lib=${pair#*=}
	[ -n "$(ver "$lib" "$LOCK")" ] || fail "the image's lock has no $lib"
	[ "$(ver "$dev" "$A.lock")" = "$(ver "$lib" "$LOCK")" ] ||
		fail "$dev is '$(ver "$dev" "$A.lock")' in the SDK, the image has $lib '$(ver "$lib" "$LOCK")'"
	[ "$(ver "$lib" "$A.lock")" = "$(ver "$lib" "$LOCK")" ] || fail "$lib differs from the image's"
done
grep -q '^package: crossbuild-essential-armhf:all=' "$A.lock" || fail "no armhf cross toolchain"
grep -q '^package: crossbuild-essential-armel:all=' "$A.lock" || fail "no armel cross toolchain"
grep -q '^architectures: amd64 armhf armel$' "$A.lock" || fail "the SDK's lock is not amd64's"

mkdir -p "$T/b/cache"
cp -a "$T/a/cache/." "$T/b/cache/"
sdk "$T/b" 077                                       # warm cache (its layer), another umask
cmp -s "$A.tar.zst" "$T/b/out/arm-board-sdk.tar.zst" || fail "the SDK differs between a cold and a warm build"
cmp -s "$A.lock" "$T/b/out/arm-board-sdk.lock" || fail "the SDK's locks differ"
if [ "$(id -u)" = 0 ]; then
	test_user mkisdk140
	chmod 755 "$T/img" && chmod 644 "$LOCK"
	sdk "$T/c" 027 mkisdk140                         # an ordinary user, cold cache
	cmp -s "$A.tar.zst" "$T/c/out/arm-board-sdk.tar.zst" ||
		fail "the SDK differs between an ordinary user's build and root's"
else
	skip_part "not root: the ordinary user's SDK build needs a throwaway user"
fi

# ---- unpacked and moved: nothing names where it was made ----
mkdir -p "$T/unpack"
tar --zstd -C "$T/unpack" -xf "$A.tar.zst" 2>/dev/null || tar --zstd -C "$T/unpack" -xf "$A.tar.zst" --no-same-owner
diff -r --no-dereference "$T/unpack" "$T/a/dir" >/dev/null ||
	fail "--sdk-dir's directory is not the archive unpacked: $(diff -r --no-dereference "$T/unpack" "$T/a/dir" 2>&1 | head -n 3)"
if [ "$(id -u)" = 0 ]; then # tar keeps set-id bits for root; --sdk-dir never writes them
	[ -n "$(find "$T/unpack" -type f -perm -4000 | head -n 1)" ] ||
		fail "the SDK holds no set-user-id program (su, mount) to check --sdk-dir with"
	[ -z "$(find "$T/a/dir" -type f -perm /6000 | head -n 1)" ] ||
		fail "--sdk-dir wrote set-id programs: $(find "$T/a/dir" -type f -perm /6000 | head -n 3)"
fi
expect_fail 2 "--sdk-dir '$T/a/dir' exists" "$T/p/mkimage" --sdk="$LOCK" --sdk-dir "$T/a/dir" "$R"
mv "$T/unpack" "$T/moved"
S=$T/moved
[ -z "$(find "$S" -type l -lname '/*' | head -n 3)" ] ||
	fail "absolute links in the SDK: $(find "$S" -type l -lname '/*' | head -n 3)"
! grep -rIl -e "$T/" -e "/dev/shm/mkimage" "$S/sdk" "$S"/environment-setup-* >/dev/null ||
	fail "an SDK file names a path of the build: $(grep -rIl -e "$T/" "$S/sdk" | head -n 3)"

# The image's tree, for NEEDED and qemu-arm -L.
mkdir -p "$T/imgtree"
debugfs -R "rdump / $T/imgtree" "$T/img/arm-board.ext4" >/dev/null 2>&1
[ -x "$T/imgtree/usr/bin/busybox" ] || fail "the image's tree could not be read out"

sdk_sources "$T/src"
want=$(sdk_expected "$LOCK")

# check BINARY TRIPLET FLOAT: its ABI, its NEEDED and interpreter in the image, its output.
check() {
	local bin=$1 t=$2 float=$3 lib interp out
	[ -x "$bin" ] || fail "$bin was not built"
	readelf -h "$bin" | grep -q "Flags:.*$float-float ABI" || fail "$bin is not $float-float"
	interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	[ -e "$T/imgtree$interp" ] || fail "$bin's interpreter $interp is not in the image"
	for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$T/imgtree/usr/lib/$t/$lib" ] || [ -e "$T/imgtree/lib/$t/$lib" ] ||
			fail "$bin needs $lib, which the image does not have for $t"
	done
	out=$(qemu-arm-static -L "$T/imgtree" "$bin") || fail "$bin did not run under qemu-arm -L"
	[ "$out" = "$want" ] || fail "$bin said '$out', not '$want'"
}

for t in arm-linux-gnueabihf:hard arm-linux-gnueabi:soft; do
	float=${t#*:} t=${t%:*}
	sdk_cmake "$S" "$T/src" "$T/build-cmake-$t" "$t"
	grep -q "Found ZLIB: $S/usr/lib/$t/libz.so" "$T/build-cmake-$t.log" || fail "CMake did not find the SDK's $t libz.so"
	check "$T/build-cmake-$t/sdkhello" "$t" "$float"
	sdk_meson "$S" "$T/src" "$T/build-meson-$t" "$t"
	grep -q "Found pkg-config: $S/sdk/bin/$t-pkg-config" "$T/build-meson-$t.log" || fail "Meson used another pkg-config"
	check "$T/build-meson-$t/sdkhello" "$t" "$float"
done
note "SDK: $(du -h "$A.tar.zst" | cut -f1), $(grep -c '^package: ' "$A.lock") packages"
