# test-cost: alone (builds a whole recipe; in make check-boots boots a four-core board: run.sh runs it by itself)
# Board profiles (issue 40): recipes/orangepi-pc.cfg, arm-board's system on the Orange Pi PC
# (Allwinner H3, board = "orangepi-pc"), built from a local signed mirror of real bookworm
# packages. Its card is read where the boot ROM reads it: the SPL of the plan's own u-boot-sunxi
# at byte 8192 with a valid eGON.BT0 header and checksum, the GPT's entries ending before it,
# a power-of-two size; the board's device tree and console in /etc/default/u-boot and
# extlinux.conf. Then the disk boots under `qemu-system-arm -M orangepi-pc` with the card alone:
# boot ROM, SPL, U-Boot, extlinux.conf, kernel, a serial login and the boot report. The disk
# is also written with `bmaptool copy` over a card of old bytes and read back there. The boots
# are `make check-boots`' (MKIMAGE_TEST_BOOT_SUITES with bookworm). The board's four cores are
# four host threads: on a host with fewer than six cores the guest spent minutes in soft
# lockups of its stop_machine (even with the machine to itself) and early units failed on
# their timeouts. There the disk booted is the same recipe with two of the four cores online
# (maxcpus=2 added to disk.cmdline), which still brings a secondary core up through U-Boot's
# PSCI; a host with six cores or more boots the flagship's own disk.
FLAGSHIP_SUITE=bookworm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

for t in sfdisk debugfs e2fsck bmaptool; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
SPL=usr/lib/u-boot/orangepi_plus/u-boot-sunxi-with-spl.bin
DTB=sun8i-h3-orangepi-pc.dtb

e2e_build orangepi-pc
sfdisk --json "$DISK" >"$T/pt.json"

# spl_check FILE WHO: the Allwinner boot ROM's view of FILE: the eGON.BT0 header at byte 8192,
# its length and checksum (the 32-bit sum of the SPL's words, the checksum's own word counted as
# 0x5f0a6c39) right, the GPT's entries ending before byte 8192, and the bytes those of the
# plan's u-boot-sunxi ($T/spl.bin).
spl_check() {
	python3 - "$1" "$T/spl.bin" "$T/pt.json" <<'PY' || fail "$2: the boot ROM would not load the SPL"
import json, struct, sys
disk, spl, pt = sys.argv[1:]
want = open(spl, "rb").read()
with open(disk, "rb") as f:
    f.seek(8192)
    got = f.read(len(want))
assert got == want, "the bytes at 8192 are not the package's u-boot-sunxi-with-spl.bin"
assert got[4:12] == b"eGON.BT0", got[4:12]
csum, length = struct.unpack_from("<II", got, 12)
assert 0 < length <= 32768 and length % 4 == 0, length
words = struct.unpack_from("<%dI" % (length // 4), got[:12] + struct.pack("<I", 0x5F0A6C39) + got[16:length])
assert sum(words) & 0xFFFFFFFF == csum, "eGON checksum"
t = json.load(open(pt))["partitiontable"]
assert t["label"] == "gpt" and t["firstlba"] <= 16, t
PY
}

debugfs -R "dump /$SPL $T/spl.bin" "$IMG" 2>/dev/null
[ -s "$T/spl.bin" ] || fail "the root holds no /$SPL (u-boot-sunxi from the plan)"
spl_check "$DISK" "the disk"
size=$(stat -c %s "$DISK")
[ $((size & (size - 1))) = 0 ] || fail "the disk is $size bytes, not a power of two (QEMU's SD card)"
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["partitiontable"]["partitions"]
assert [x["name"] for x in p] == ["root"] and p[0]["start"] == 2048, p
' "$T/pt.json" || fail "the table is not the root alone at 1 MiB (the SPL is outside it)"
dbg "cat /etc/default/u-boot" | grep -qx "U_BOOT_FDT=\"$DTB\"" ||
	fail "/etc/default/u-boot does not set U_BOOT_FDT=\"$DTB\""
dbg "cat /boot/extlinux/extlinux.conf" >"$T/extlinux.conf"
grep -Eq "^[[:space:]]*fdt /usr/lib/linux-image-[^/]+-armmp/$DTB\$" "$T/extlinux.conf" ||
	{ cat "$T/extlinux.conf" >&2; fail "extlinux.conf does not load the board's device tree"; }
grep -q "console=ttyS0,115200" "$T/extlinux.conf" || fail "the kernel's console is not the H3's ttyS0"
e2e_appliance orangepi-pc ttyS0
e2e_kernel armmp
e2e_audit

# The card: old bytes (0xa5) where the map has no data, the disk's blocks where it has.
# make_card FILE DISK: FILE of DISK's size, all old bytes.
make_card() {
	python3 -c '
import os, sys
with open(sys.argv[1], "wb") as f:
    for _ in range(os.path.getsize(sys.argv[2]) >> 20):
        f.write(b"\xa5" * (1 << 20))
' "$1" "$2"
}
make_card "$T/card" "$DISK"
bmaptool copy --bmap "$DISK.bmap" "$DISK" "$T/card" >"$T/bmap.log" 2>&1 ||
	{ cat "$T/bmap.log" >&2; fail "bmaptool copy onto the card"; }
sfdisk --verify "$T/card" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify: the card"; }
spl_check "$T/card" "the card"
(DISK=$T/card; e2e_partition root "$T/card-root.ext4")
e2fsck -fn "$T/card-root.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck: the card's root"; }
rm -f "$T/card-root.ext4"

# boot_disk: the disk the boots use: the flagship's, or on a small host its recipe with two of
# the board's cores online (above), built beside it from the same layer.
boot_disk() {
	BOOT_DISK=$DISK CMDX=
	[ "$(nproc)" -lt 6 ] || return 0
	CMDX=maxcpus=2 BOOT_DISK=$T/w/images/orangepi-pc.img
	mkdir -p "$T/w/recipes" "$T/w/images"
	cp -r "$TOP/recipes/overlay" "$T/w/recipes/"
	cp -r "$TOP/hooks" "$T/w/"
	sed "s|^  cmdline = \"ro rootwait |&$CMDX |" "$(flagship_recipe orangepi-pc)" \
		>"$T/w/recipes/orangepi-pc.cfg"
	grep -q "cmdline = \"ro rootwait $CMDX " "$T/w/recipes/orangepi-pc.cfg" ||
		fail "the recipe's disk.cmdline changed: adapt boot_disk()"
	SOURCE_DATE_EPOCH=1700000000 expect_ok "$MKIMAGE" --source "$SRC" --output "$BOOT_DISK" \
		"$T/w/recipes/orangepi-pc.cfg"
	note "this host has $(nproc) cores: the boots use the recipe with $CMDX"
}

# board_boot FILE WHAT: FILE as the board's SD card, nothing else, to the login and the report.
board_boot() {
	local t0=$SECONDS
	BOOT_MACHINE=orangepi-pc BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "$1" \
		"${BOOT_TIMEOUT:-1200}" 2>"$T/boot.err" ||
		{ cat "$T/boot.err" >&2; fail "$2 did not boot cleanly under qemu-system-arm -M orangepi-pc"; }
	grep -aq "^U-Boot SPL " "$T/console.log" || fail "$2: no SPL on the console: the ROM did not load it"
	grep -aq "Found /boot/extlinux/extlinux.conf" "$T/console.log" || fail "$2: U-Boot found no extlinux.conf"
	grep -aq "Retrieving file: /usr/lib/linux-image-.*/$DTB" "$T/console.log" ||
		fail "$2: U-Boot did not load the board's device tree"
	grep -aiq "Kernel command line:.*root=PARTUUID=$PART_UUID .*$CMDX" "$T/console.log" ||
		fail "$2: the kernel was not booted with root=PARTUUID=$PART_UUID $CMDX"
	grep -aqF "boot-report: hello (armel): Hello, world!" "$T/console.log" ||
		fail "$2: the boot-time unit did not run the armel hello"
	note "$2 booted under qemu-system-arm -M orangepi-pc in $((SECONDS - t0)) s:" \
		"$(grep -o 'login prompt in [0-9]* s' "$T/boot.err")"
}
if ! command -v qemu-system-arm >/dev/null; then
	skip_part "booting: no qemu-system-arm (make test-deps installs it)"
elif [ "${MKIMAGE_TEST_BOOT:-1}" = 0 ]; then
	skip_part "booting: MKIMAGE_TEST_BOOT=0"
else
	case " ${MKIMAGE_TEST_BOOT_SUITES:-trixie} " in
	*" bookworm "*)
		boot_disk
		board_boot "$BOOT_DISK" "the disk"
		if [ "$BOOT_DISK" != "$DISK" ]; then
			make_card "$T/card" "$BOOT_DISK"
			bmaptool copy --bmap "$BOOT_DISK.bmap" "$BOOT_DISK" "$T/card" >"$T/bmap.log" 2>&1 ||
				{ cat "$T/bmap.log" >&2; fail "bmaptool copy of the boot disk onto the card"; }
		fi
		board_boot "$T/card" "the card written by bmaptool" ;;
	*) skip_part "booting the disk and the card: 'make check-boots' (MKIMAGE_TEST_BOOT_SUITES with bookworm)" ;;
	esac
fi
