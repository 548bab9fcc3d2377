# test-cost: slow (arm-board built twice, its SDK, two cross builds and a boot under TCG)
# The SDK's payoff, end to end (mkimage(7), "Cross-building"): the bootable arm-board, with
# libssl3 for armhf and armel, from a local signed mirror of real bookworm packages; its SDK made
# from the image's lock; lib-sdk.sh's program built for armhf with the SDK's CMake toolchain file
# and for armel with its Meson cross file; both put into the image by an overlay (in
# /usr/local/libexec/boot-report, whose programs the boot-report unit runs); the disk rebuilt;
# and the disk booted under qemu-system-arm through Debian's U-Boot, where the boot report shows
# both programs' output. Test 140 checks the SDK itself (reproducible, relocatable, bad input).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-sdk.sh"
. "$TOP/tests/flagship.sh"

[ "${MKIMAGE_TEST_BOOT:-1}" != 0 ] || skip "MKIMAGE_TEST_BOOT=0: this test is a boot"
sdk_serve qemu-system-arm

sdk_recipe "$T/p" boot
R=$T/p/recipes/arm-board.cfg
mkdir -p "$T/img" "$T/sdk"
expect_ok "$MKIMAGE" -q --source "$SRC_IMG" -o "$T/img/arm-board.img" "$R"
LOCK=$T/img/arm-board.lock
expect_ok "$MKIMAGE" -q --sdk="$LOCK" --source "$SRC_IMG" --source "$SRC_SDK" \
	-o "$T/sdk/arm-board-sdk.tar.zst" "$R"
mkdir -p "$T/s"
tar --zstd -C "$T/s" -xf "$T/sdk/arm-board-sdk.tar.zst"

# The programs, one per architecture and build system, into an overlay the recipe gains.
sdk_sources "$T/src"
sdk_cmake "$T/s" "$T/src" "$T/build-armhf" arm-linux-gnueabihf
sdk_meson "$T/s" "$T/src" "$T/build-armel" arm-linux-gnueabi
O=$T/p/recipes/overlay/sdk-programs/usr/local/libexec/boot-report
mkdir -p "$O"
install -m 0755 "$T/build-armhf/sdkhello" "$O/sdkhello-armhf"
install -m 0755 "$T/build-armel/sdkhello" "$O/sdkhello-armel"
readelf -h "$O/sdkhello-armel" | grep -q "Flags:.*soft-float ABI" || fail "the Meson build is not armel's"
sed -i 's|^overlays = (|overlays = (\n  { source = "overlay/sdk-programs"; destination = "/"; },|' "$R"
grep -q 'overlay/sdk-programs' "$R" || fail "the recipe did not gain the programs' overlay"
# The recipe changed (its overlays), so its lock is written again: the same packages.
grep '^package: ' "$LOCK" >"$T/sdk.pkgs"
expect_ok "$MKIMAGE" -q --source "$SRC_IMG" -o "$T/img/arm-board.img" "$R"
grep '^package: ' "$LOCK" | cmp -s - "$T/sdk.pkgs" ||
	fail "the rebuilt image's packages are not those its SDK was made from"

BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "$T/img/arm-board.img" "${BOOT_TIMEOUT:-900}" \
	2>"$T/boot.err" || { cat "$T/boot.err" >&2; fail "arm-board with the SDK's programs did not boot cleanly"; }
want=$(sdk_expected "$LOCK")
for a in armhf armel; do
	grep -aqF "boot-report: run sdkhello-$a: $want" "$T/console.log" || {
		grep -a "boot-report: run" "$T/console.log" >&2
		fail "the booted image did not run the $a program built with the SDK ('$want')"
	}
done
note "both SDK-built programs ran on the booted arm-board: $want"
