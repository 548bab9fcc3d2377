# test-cost: slow (an A/B appliance and three bundles built, one machine rebooting through them)
# An update that boots (issue 39): arm-board-ab with an update group boots version 1 from slot A
# through Debian's U-Boot and mkimage's A/B selection; RAUC installs version 2's bundle from a
# second disk into slot B; after the reboot version 2 runs from slot B and marks it good; a
# tampered bundle is refused and the device keeps running; version 3, whose root cannot start
# init, is installed into slot A, uses up its boot attempts, and U-Boot falls back to slot B,
# which still runs version 2. One qemu-system-arm machine, its disk written by the guest,
# reboots through all of it; a unit of this test's overlay drives each step from the slot and
# version it booted; a bundle for another compatible, signed by the vendor's key, is refused too.
# The disk and bundles are also checked from outside: the selection
# partition (FAT), system.conf, the keyring, the slot's extlinux.conf, the plan's RAUC.
# FLAGSHIP_SUITE picks the release (116 runs it for trixie); CI boots bookworm's as far as
# version 2 and the refused bundles, and trixie's is checked from outside. Where
# MKIMAGE_TEST_BOOT_SUITES names the release (make check-boots: both), the machine goes on to
# version 3 and the fallback: about five minutes more of emulated boots.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"
. "$(dirname "$0")/lib-rauc.sh"
. "$(dirname "$0")/lib-update.sh"

for t in qemu-system-arm openssl fsck.vfat mcopy debugfs; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
[ -f /usr/lib/u-boot/qemu_arm/u-boot.bin ] || skip "u-boot-qemu missing (make test-deps)"

e2e_serve arm-board-ab
export SOURCE_DATE_EPOCH=1700000000
boot=1 fallback=1 name=$(sed -n 's/^name = "\(.*\)";$/\1/p' "$(flagship_recipe arm-board-ab)")
case " ${MKIMAGE_TEST_BOOT_SUITES:-} " in
*" $FLAGSHIP_SUITE "*) ;;
*) fallback=0; [ "$FLAGSHIP_SUITE" = bookworm ] || boot=0 ;;
esac

# --- the vendor's keys; arm-board-ab's overlays and hooks with this test's steps unit ----------
W=$T/w
update_keys
update_overlay

# recipe VERSION [EXTRA-HOOK]: arm-board-ab, its update group set, boot_attempts 2
recipe() {
	local f=$W/recipes/v$1.cfg
	sed -e 's|{ source = "overlay/serial-ttyAMA0"; destination = "/"; }|&,\n  { source = "overlay/update-steps"; destination = "/"; }|' \
		"$(flagship_recipe arm-board-ab)" >"$f"
	[ -z "${2:-}" ] || sed -i "s|^hooks = (|&\n  { name = \"$2\"; script = \"../hooks/$2.sh\"; where = \"inside\"; timeout = 60; },|" "$f"
	cat >>"$f" <<R
update = {
  compatible = "arm-board";
  version = "$1";
  boot_attempts = 2;
  cert = "keys/signer.cert.pem";
  key = "keys/signer.key.pem";
  keyring = "keys/ca.cert.pem";
};
R
	grep -q update-steps "$f" || fail "the overlay list of arm-board-ab changed: adapt recipe()"
	echo "$f"
}

# --- bad input: no RAUC in the plan ------------------------------------------------------------
sed -e 's|"rauc", "rauc-service",||' "$(recipe 1)" >"$W/recipes/norauc.cfg"
expect_fail 8 "'rauc-service'|'rauc'.*add \"rauc\" and \"rauc-service\" to packages.install" \
	"$MKIMAGE" --source "$SRC" --output "$W/images/norauc.img" "$W/recipes/norauc.cfg"
[ ! -e "$W/images/norauc.img" ] || fail "a refused build left its disk"

# --- version 1: the factory disk; 2 and 3: bundles -------------------------------------------
versions="1 2 3"
[ $fallback = 1 ] || versions="1 2"
[ $boot = 1 ] || versions=1
for v in $versions; do
	hook=
	[ $v != 3 ] || hook=break-init
	# each release built on its own day: the slots keep their ids (update.compatible's)
	SOURCE_DATE_EPOCH=$((1700000000 + v * 86400)) \
		expect_ok "$MKIMAGE" --source "$SRC" --output "$W/images/v$v.img" "$(recipe $v $hook)"
	[ -s "$W/images/v$v.raucb" ] || fail "no bundle v$v.raucb beside the disk"
done
DISK=$W/images/v1.img
sfdisk --verify "$DISK" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify"; }
sfdisk --json "$DISK" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]["partitions"]
assert [p.get("name") for p in t] == ["boot", "root-a", "root-b", "data"], t
assert [p.get("attrs", "") for p in t] == ["LegacyBIOSBootable", "", "", ""], t
' || fail "the layout is not boot (the only legacy-bootable one), root-a, root-b, data"

# The selection partition: FAT, boot.scr a U-Boot script image, rauc.env slot A first.
e2e_partition boot "$T/select.vfat"
fsck.vfat -n "$T/select.vfat" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "fsck.vfat: the selection partition"; }
mcopy -i "$T/select.vfat" ::rauc.env "$T/rauc.env" && mcopy -i "$T/select.vfat" ::boot.scr "$T/boot.scr" ||
	fail "no rauc.env or boot.scr on the selection partition"
[ "$(cat "$T/rauc.env")" = "$(printf 'BOOT_ORDER=A B\nBOOT_A_LEFT=2\nBOOT_B_LEFT=0')" ] ||
	{ cat "$T/rauc.env" >&2; fail "rauc.env is not slot A first with 2 attempts, empty B none"; }
python3 - "$T/boot.scr" <<'PY' || fail "boot.scr is not a valid U-Boot script image"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
magic, hcrc, _, size, _, _, dcrc, os_, arch, typ, comp = struct.unpack(">IIIIIIIBBBB", d[:32])
assert magic == 0x27051956 and typ == 6 and comp == 0 and arch == 2, (magic, typ, comp, arch)
assert zlib.crc32(d[:4] + b"\0" * 4 + d[8:64]) == hcrc, "header CRC"
assert len(d) == 64 + size and zlib.crc32(d[64:]) == dcrc, "data CRC"
n, zero = struct.unpack(">II", d[64:72])
assert zero == 0 and n == size - 8, (n, zero)
text = d[72:].decode()
assert "sysboot ${devtype} ${devnum}:${mkimage_slot_part}" in text
assert "env import -t ${ramdisk_addr_r} ${filesize} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT" in text
PY
# Slot A: RAUC configured, its own extlinux.conf naming the root through boot.scr's variables.
e2e_partition root-a "$T/root-a.ext4"
IMG=$T/root-a.ext4
e2fsck -fn "$IMG" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck: slot A"; }
dbg "cat /etc/rauc/system.conf" >"$T/system.conf"
grep -qx "compatible=arm-board" "$T/system.conf" && grep -qx "bootloader=custom" "$T/system.conf" &&
	[ "$(grep -c '^bootname=[AB]$' "$T/system.conf")" = 2 ] &&
	[ "$(grep -c '^device=/dev/disk/by-partuuid/' "$T/system.conf")" = 2 ] ||
	{ cat "$T/system.conf" >&2; fail "system.conf does not name slots A and B by PARTUUID"; }
a_uuid=$PART_UUID
grep -qix "device=/dev/disk/by-partuuid/$a_uuid" "$T/system.conf" || fail "system.conf: slot A is not root-a"
dbg "cat /etc/rauc/keyring.pem" | cmp -s - "$K/ca.cert.pem" || fail "the keyring is not the recipe's CA"
dbg "cat /boot/extlinux/extlinux.conf" >"$T/extlinux.conf"
grep -q 'append root=PARTUUID=${mkimage_slot_partuuid} .*rauc.slot=${mkimage_slot} panic=10' \
	"$T/extlinux.conf" || { cat "$T/extlinux.conf" >&2; fail "the slot's extlinux.conf does not take the root from boot.scr"; }
dbg "cat /usr/lib/os-release" | grep -qx 'IMAGE_VERSION="1"' || fail "os-release: no IMAGE_VERSION 1"
dbg "cat /etc/fstab" | grep -q "^/dev/root	/	ext4" || fail "fstab names a slot for the root"
rauc info --keyring="$K/ca.cert.pem" "$W/images/v1.raucb" >/dev/null 2>&1 || fail "rauc info refuses v1.raucb"
if [ $boot = 0 ]; then
	skip_part "the update boot: $FLAGSHIP_SUITE's runs in 'make check-boots' (MKIMAGE_TEST_BOOT_SUITES)"
	exit 0
fi

# --- the steps disk: version 2, its forged, tampered and alien copies [, version 3] ------------
update_steps_disk arm-board

# --- the machine: A (v1) -> B (v2) -> refusals [-> A (v3) twice -> B (v2)] --------------------
cp --sparse=always "$DISK" "$T/device.img"
BOOT_WRITE=1 BOOT_DISK2=$T/steps.img BOOT_DONE=$(update_done) \
	BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "$T/device.img" "${BOOT_TIMEOUT:-2400}" ||
	{ grep -a -E 'mkimage-ab:|boot-report:|update-step:|Kernel panic' "$T/console.log" | tr -d '\r' >&2 || true
	  fail "the update did not go A -> B$([ $fallback = 0 ] || echo ' -> fallback to B')"; }
grep -a -E 'mkimage-ab: booting|boot-report: slot|update-step:|Kernel panic|Attempted to kill init' \
	"$T/console.log" | tr -d '\r' | sed 's/^.*\(mkimage-ab:\|boot-report:\|update-step:\|Kernel panic\|Attempted\)/\1/' >"$T/story"
sed 's/^/  | /' "$T/story" >&2
boots=$(sed -n 's/^mkimage-ab: booting slot \([AB]\) .*/\1/p' "$T/story" | tr '\n' ' ')
update_story "$T/story" "$name" "$boots" || fail "the update's story is not what it must be (above)"
