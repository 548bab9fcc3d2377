# Native tools (builder/accel.h) are exact: the arm-board image built with the host-arch twins
# of the plan's shell, coreutils, perl, ... running natively is byte-identical to the one built
# with every target program emulated (--no-native-tools), and leaves no trace in the tree.
. "$(dirname "$0")/lib.sh"

. "$TOP/tests/flagship.sh"
flagship_mirror arm-board
serve "$MIRROR/repo"
SRC="$SERVER_URL bookworm main signed-by=$MIRROR/key.gpg"
export SOURCE_DATE_EPOCH=1700000000
# The recipe without kernel and systemd (flagship.sh): an initramfs made with every program
# emulated alone takes many minutes.
flagship_lean arm-board "$T/r"

expect_ok "$MKIMAGE" -v --cache-dir "$T/cache" --source "$SRC" --output "$T/native.ext4" \
	"$T/r/recipes/arm-board.cfg"
grep -Eq "native tools: [0-9]+ target programs run as their host-architecture build" "$T/err" ||
	{ grep "native tools" "$T/err" >&2; fail "no program ran natively"; }
n=$(sed -En 's/.*native tools: ([0-9]+) target programs.*/\1/p' "$T/err")
[ "$n" -ge 50 ] || fail "only $n programs ran natively"
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debugfs -R "stat /usr/lib/$triplet" "$T/native.ext4" 2>&1 | grep -q "File not found" ||
	fail "the native tools' mount point is left in the image"
[ ! -e "$T/native.ext4.tmp" ] || fail "temporary image left"

expect_ok "$MKIMAGE" -v --no-native-tools --cache-dir "$T/cache" --source "$SRC" \
	--output "$T/emulated.ext4" "$T/r/recipes/arm-board.cfg"
grep -q "native tools" "$T/err" && fail "--no-native-tools still set up native tools"
a=$(sha256sum <"$T/native.ext4") b=$(sha256sum <"$T/emulated.ext4")
[ "$a" = "$b" ] || fail "native tools changed the image: $a vs $b"

# Offline, the twins come from the cache like everything else; a cache filled without them (an
# older mkimage, or --no-native-tools) still builds offline, with everything emulated. (Without the
# layer cache, which would restore the first build's configured tree instead of configuring.)
expect_ok "$MKIMAGE" --offline --no-layer-cache --cache-dir "$T/cache" --source "$SRC" --until hooks \
	--output "$T/x.ext4" "$T/r/recipes/arm-board.cfg"
grep -Eq "native tools: [0-9]+ target programs run" "$T/err" ||
	{ cat "$T/err" >&2; fail "offline: the cached twins were not used"; }
expect_ok "$MKIMAGE" --no-native-tools --cache-dir "$T/cache2" --source "$SRC" --until fetch \
	--output "$T/x.ext4" "$T/r/recipes/arm-board.cfg"
expect_ok "$MKIMAGE" --offline --cache-dir "$T/cache2" --source "$SRC" --until fetch \
	--output "$T/x.ext4" "$T/r/recipes/arm-board.cfg"
grep -q "offline: no host-architecture index in the cache for native tools" "$T/err" ||
	{ cat "$T/err" >&2; fail "offline without the host-arch index: no word about native tools"; }
