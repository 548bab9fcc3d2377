# test-cost: slow (builds trixie's bootable arm-board twice: run.sh starts it first)
# Native dracut-install (issue 43): trixie's initramfs-tools copies the kernel's modules into the
# initramfs with /usr/lib/dracut/dracut-install, a native twin in its module mode (mkimage(7),
# "Native tools"). recipes/arm-board-trixie.cfg built with it native and with it alone emulated
# (--no-native-tools=dracut-install) gives the same disk and initramfs, byte for byte; the exec
# profile (-v) shows every call native in the one build and emulated in the other, and the
# initramfs holds the modules it copied. The second build differs from the first only in that
# switch, which is in the layer key: it configures again instead of restoring the first's tree.
. "$(dirname "$0")/lib.sh"
FLAGSHIP_SUITE=trixie
. "$(dirname "$0")/lib-e2e.sh"

e2e_serve arm-board
recipe=$(flagship_recipe arm-board)
export SOURCE_DATE_EPOCH=1700000000

# ran HOW: the exec profile in $T/err has dracut-install's line run HOW (native or emulated).
ran() {
	grep -Eq "^mkimage: (info|debug):   \| +[0-9]+ +[0-9.]+ +[0-9.]+  $1 +/usr/lib/dracut/dracut-install\$" "$T/err"
}

# A program name with a path is no program name (exit 2), before anything is fetched.
expect_fail 2 "takes program names separated by commas" "$MKIMAGE" --no-native-tools=/usr/bin/cp \
	--source "$SRC" --output "$T/x.img" "$recipe"
expect_fail 2 "takes program names separated by commas" "$MKIMAGE" --no-native-tools=cp,, \
	--source "$SRC" --output "$T/x.img" "$recipe"

mkdir -p "$T/native" "$T/emulated"
expect_ok "$MKIMAGE" -v --cache-dir "$T/cache" --source "$SRC" --output "$T/native/arm-board.img" \
	"$recipe"
grep -q "native tools: /usr/lib/dracut/dracut-install$" "$T/err" ||
	{ grep "native tools" "$T/err" >&2; fail "dracut-install has no native twin"; }
ran native || { grep -A30 "exec profile" "$T/err" >&2; fail "dracut-install did not run natively"; }
# initramfs-tools calls it in module mode only: no call fell back to emulation.
! ran emulated || { grep -A30 "exec profile" "$T/err" >&2; fail "a dracut-install call was emulated"; }
grep -Eq "initramfs '/boot/initrd.img-[^']+': [0-9]+ entries, [1-9][0-9]* of the [0-9]+ block device drivers" "$T/err" ||
	fail "the initramfs holds no block device driver"

expect_ok "$MKIMAGE" -v --no-native-tools=dracut-install,mki150-none --cache-dir "$T/cache" \
	--source "$SRC" --output "$T/emulated/arm-board.img" "$recipe"
grep -q "native tools: /usr/lib/dracut/dracut-install stays emulated" "$T/err" ||
	fail "--no-native-tools=dracut-install did not keep it emulated"
ran emulated || { grep -A30 "exec profile" "$T/err" >&2; fail "dracut-install did not run emulated"; }
! ran native || fail "--no-native-tools=dracut-install: dracut-install still ran natively"
grep -Eq "exec profile: [0-9]+ programs started by the scripts \([1-9][0-9]* native\)" "$T/err" ||
	fail "--no-native-tools=dracut-install turned off the other native tools"
grep -q "warning: --no-native-tools=mki150-none: no target program of that name" "$T/err" ||
	fail "a name without a native build gave no warning"

# The same disk and initramfs; the initramfs holds the modules (kernel/drivers/mmc among them).
for f in img initrd.img; do
	cmp -s "$T/native/arm-board.$f" "$T/emulated/arm-board.$f" ||
		fail "native dracut-install changed arm-board.$f: $(sha256sum <"$T/native/arm-board.$f") vs $(sha256sum <"$T/emulated/arm-board.$f")"
done
cpio -it <"$T/native/arm-board.initrd.img" 2>/dev/null >"$T/initrd.list" || true
grep -Eq '/kernel/drivers/mmc/.*\.ko(\.xz|\.zst)?$' "$T/initrd.list" ||
	fail "the initramfs's first archive holds no mmc module"
