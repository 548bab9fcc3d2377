# test-cost: alone (builds a whole arm64 recipe; in make check-boots boots a four-core board: run.sh runs it by itself)
# Board profiles (issue 40): recipes/raspberry-pi.cfg, arm64-armhf's system on a Raspberry Pi 3
# or 4 (board = "raspberry-pi"), built from a local signed mirror of real bookworm packages whose
# raspi-firmware comes from the archive's non-free-firmware component. The card is read where
# the Pi's boot ROM and VideoCore firmware read it: an MBR whose first partition is FAT (type
# 0x0c, clean under fsck.vfat -n) holding the package's bootcode.bin, start*.elf and fixup*.dat,
# the kernel's bcm2837-rpi-3-b.dtb and bcm2711-rpi-4-b.dtb, and the config.txt and cmdline.txt
# its hooks wrote: config.txt loads the image's own kernel and initrd (in the partition, the
# bytes of /boot's), cmdline.txt names the disk's root partition by its PARTUUID and the Pi's
# serial console, as /etc/default/raspi-firmware does for the hooks on the board. Then the
# errors: what contradicts the board (exit 2, before any download) and a plan without
# raspi-firmware or a kernel (exit 8, before downloading). `make check-boots`
# (MKIMAGE_TEST_BOOT_SUITES with bookworm) also boots the card under qemu-system-aarch64 -M
# raspi3b with what the firmware would load (tests/bootvm.sh, BOOT_MACHINE=raspberry-pi): the
# kernel mounts root=PARTUUID= of the card, a serial login on ttyS1 and the boot report.
FLAGSHIP_SUITE=bookworm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

for t in sfdisk debugfs e2fsck fsck.vfat mcopy; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done

e2e_build raspberry-pi 2
ROOT_UUID=$PART_UUID
python3 - "$DISK" <<'PY' || fail "the boot ROM would not find the firmware's FAT partition"
import json, struct, subprocess, sys
disk = sys.argv[1]
t = json.loads(subprocess.run(["sfdisk", "--json", disk], capture_output=True, check=True,
                              text=True).stdout)["partitiontable"]
p = t["partitions"]
assert t["label"] == "dos" and len(p) == 2, t
assert p[0]["type"] == "c" and p[0]["start"] == 2048, p[0]  # FAT32 (LBA), the first entry
assert p[1]["type"] == "83", p[1]
with open(disk, "rb") as f:
    mbr = f.read(512)
    f.seek(p[0]["start"] * 512)
    boot = f.read(512)
assert mbr[510:] == b"\x55\xaa" and mbr[446 + 4] == 0x0C, mbr[446:462].hex()
assert struct.unpack_from("<I", mbr, 446 + 8)[0] == p[0]["start"]
# a FAT boot sector: 512-byte sectors, its signature, a FAT file system type
assert boot[510:] == b"\x55\xaa" and struct.unpack_from("<H", boot, 11)[0] == 512, boot[:64].hex()
assert boot[82:87] == b"FAT32" or boot[54:59] in (b"FAT16", b"FAT12"), boot[:90]
PY

(e2e_partition 1 "$T/fat.img")
fsck.vfat -n "$T/fat.img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "fsck.vfat -n: the firmware partition"; }
fat() { MTOOLS_SKIP_CHECK=1 mcopy -n -i "$T/fat.img" "::/$1" "$2"; }
mkdir -p "$T/fat" "$T/root"
for f in bootcode.bin start.elf fixup.dat start4.elf fixup4.dat config.txt cmdline.txt \
	bcm2837-rpi-3-b.dtb bcm2711-rpi-4-b.dtb; do
	fat "$f" "$T/fat/$f" || fail "the firmware partition has no $f"
done
for f in bootcode.bin start.elf start4.elf fixup4.dat; do
	dbg "dump /usr/lib/raspi-firmware/$f $T/root/$f"
	cmp -s "$T/fat/$f" "$T/root/$f" || fail "the firmware partition's $f is not raspi-firmware's"
done
ver=$(dbg "ls -p /boot" | awk -F/ '$6 ~ /^vmlinuz-/ {print substr($6, 9)}')
case $ver in *-arm64) ;; *) fail "no single arm64 kernel in /boot: '$ver'" ;; esac
for f in bcm2837-rpi-3-b.dtb bcm2711-rpi-4-b.dtb; do
	dbg "dump /usr/lib/linux-image-$ver/broadcom/$f $T/root/$f"
	cmp -s "$T/fat/$f" "$T/root/$f" || fail "the firmware partition's $f is not kernel $ver's"
done

# config.txt: 64-bit, the image's own kernel and initrd, which the partition holds.
grep -qx "arm_64bit=1" "$T/fat/config.txt" || fail "config.txt does not start the CPU in 64-bit mode"
grep -qx "kernel=vmlinuz-$ver" "$T/fat/config.txt" && grep -qx "initramfs initrd.img-$ver" "$T/fat/config.txt" ||
	{ cat "$T/fat/config.txt" >&2; fail "config.txt does not load kernel $ver and its initrd"; }
for f in vmlinuz-$ver initrd.img-$ver; do
	fat "$f" "$T/fat/$f" || fail "the firmware partition lacks $f, which config.txt loads"
	dbg "dump /boot/$f $T/root/$f"
	cmp -s "$T/fat/$f" "$T/root/$f" || fail "the firmware partition's $f is not /boot's"
done

# cmdline.txt: the disk's root (its MBR's id and partition number) and the Pi's serial console.
grep -q " root=PARTUUID=$ROOT_UUID " "$T/fat/cmdline.txt" ||
	{ cat "$T/fat/cmdline.txt" >&2; fail "cmdline.txt does not name the root partition PARTUUID=$ROOT_UUID"; }
grep -q "^ console=ttyS1,115200 root=" "$T/fat/cmdline.txt" ||
	{ cat "$T/fat/cmdline.txt" >&2; fail "cmdline.txt does not name the Pi's serial console ttyS1"; }
dbg "cat /etc/default/raspi-firmware" >"$T/defaults"
grep -qx "ROOTPART=\"PARTUUID=$ROOT_UUID\"" "$T/defaults" && grep -qx 'CONSOLES="ttyS1,115200"' "$T/defaults" ||
	fail "/etc/default/raspi-firmware does not set the disk's root and console for the hooks on the board"
dbg "cat /etc/fstab" | grep -Eq "^PARTUUID=${ROOT_UUID%-*}-01[[:space:]]+/boot/firmware[[:space:]]+vfat" ||
	fail "/etc/fstab does not mount the firmware partition at /boot/firmware"
[ -z "$(dbg "ls -p /boot/firmware" | awk -F/ '$6 != "." && $6 != ".." && $6 != ""')" ] ||
	fail "the root partition holds the firmware partition's files (its mount point is not empty)"
e2e_appliance raspberry-pi ttyS1
e2e_kernel arm64
e2e_audit

# Errors the recipe alone shows: exit 2, nothing fetched. The recipe is edited in a copy of
# recipes/ (its overlays and hooks are named relative to it).
mkdir -p "$T/r/recipes" "$T/r/hooks"
cp -a "$TOP/recipes/overlay" "$T/r/recipes/"
cp "$TOP"/hooks/*.sh "$T/r/hooks/"
PI=$(flagship_recipe raspberry-pi)
# The normalized recipe (no disk.cmdline: the hooks write cmdline.txt) reads back the same.
expect_ok "$MKIMAGE" --check "$PI"
cp "$T/out" "$T/r/recipes/normalized.cfg"
! grep -q "cmdline" "$T/r/recipes/normalized.cfg" || fail "the normalized recipe names a disk.cmdline"
expect_ok "$MKIMAGE" --check "$T/r/recipes/normalized.cfg"
cmp -s "$T/out" "$T/r/recipes/normalized.cfg" || fail "the normalized recipe does not read back the same"
bad() { # NAME PATTERN SED-SCRIPT: the recipe edited so
	sed "$3" "$PI" >"$T/r/recipes/$1.cfg"
	expect_fail 2 "$2" "$MKIMAGE" --source "$SRC" --check "$T/r/recipes/$1.cfg"
}
bad gpt "board 'raspberry-pi' needs table = \"mbr\", not \"gpt\": the VideoCore firmware reads" \
	's|^  output = "../images/raspberry-pi.img";|&\n  table = "gpt";|'
bad nofat "board 'raspberry-pi' needs its first partition FAT, holding /boot/firmware: make it" \
	'/name = "firmware"/d'
bad type "type.cfg:$(grep -n 'name = "firmware"' "$PI" | cut -d: -f1): board 'raspberry-pi' needs its first partition FAT, holding /boot/firmware" \
	's|name = "firmware"; type = "0x0c"|name = "firmware"; type = "0x83"|'
bad uboot "board 'raspberry-pi': its firmware boots the kernel, with no boot loader: remove 'bootloader'" \
	's|^  output = "../images/raspberry-pi.img";|&\n  bootloader = "extlinux";|'
bad cmdline "board 'raspberry-pi': /boot/firmware/cmdline.txt is written by raspi-firmware's hooks, which add the parameters of /etc/default/raspi-extra-cmdline" \
	's|^  output = "../images/raspberry-pi.img";|&\n  cmdline = "quiet";|'
bad arch "board 'raspberry-pi' \(Broadcom BCM2711/BCM2837\) runs arm64.*set architecture = \"arm64\", not 'armhf'" \
	's|^architecture = "arm64";|architecture = "armhf";|; /^auxiliary_architectures/d'

# The plan without the firmware or a kernel: exit 8 before any .deb is downloaded.
plan_fail() { # NAME PATTERN PACKAGE
	sed "/^    \"$3\",/d" "$PI" >"$T/r/recipes/$1.cfg"
	expect_fail 8 "$2" "$MKIMAGE" --source "$SRC" --output "$T/$1.img" "$T/r/recipes/$1.cfg"
	! grep -q "^mkimage: info: packages: " "$T/err" || fail "$1: refused only after fetching packages"
	[ ! -e "$T/$1.img" ] || fail "$1: a disk was written"
}
plan_fail nofw "board 'raspberry-pi' boots its firmware from package 'raspi-firmware', which the plan does not hold: add \"raspi-firmware\"" raspi-firmware
plan_fail nokernel "board 'raspberry-pi' boots the kernel raspi-firmware's hooks copy to /boot/firmware, and the plan holds no 'linux-image-\*' package" linux-image-arm64

# The boot (QEMU's raspi3b has no VideoCore firmware: bootvm.sh gives it what config.txt and
# cmdline.txt name, read from the FAT partition).
if e2e_boots_here qemu-system-aarch64 "booting the card under -M raspi3b"; then
	t0=$SECONDS
	BOOT_MACHINE=raspberry-pi BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "$DISK" \
		"${BOOT_TIMEOUT:-1200}" 2>"$T/boot.err" ||
		{ cat "$T/boot.err" >&2; fail "the card did not boot cleanly under qemu-system-aarch64 -M raspi3b"; }
	grep -aq "Kernel command line: .*root=PARTUUID=$ROOT_UUID " "$T/console.log" ||
		fail "the kernel was not booted with cmdline.txt's root=PARTUUID=$ROOT_UUID"
	grep -aq "EXT4-fs (mmcblk0p2): mounted" "$T/console.log" || fail "the card's root partition was not mounted"
	grep -aqF "boot-report: hello (armhf): Hello, world!" "$T/console.log" ||
		fail "the boot-time unit did not run the armhf hello"
	note "booted under qemu-system-aarch64 -M raspi3b in $((SECONDS - t0)) s"
fi
