# test-cost: slow (builds a whole recipe and boots it under TCG: run.sh starts it first)
# End to end: recipes/riscv64.cfg, a Debian 13 (trixie) riscv64 system, built from a local signed
# mirror of real trixie packages (tests/flagship.sh, SUITE=trixie), configured under QEMU, written
# as a GPT disk whose root has the Discoverable Partitions riscv64 type, checked from the outside,
# then booted under qemu-system-riscv64 -M virt through Debian's OpenSBI (fw_jump) and
# supervisor-mode U-Boot (u-boot-qemu), which reads the disk's extlinux.conf, to a serial login
# (tests/bootvm.sh). Its kernel is uncompressed, /boot/vmlinux-*: exported as riscv64.vmlinux.
# riscv64 is a release architecture since trixie: this flagship has no bookworm twin.
FLAGSHIP_SUITE=trixie
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

command -v qemu-riscv64-static >/dev/null || skip "no qemu-riscv64-static (make deps installs qemu-user-static)"
command -v qemu-system-riscv64 >/dev/null ||
	skip "no qemu-system-riscv64 (make test-deps installs qemu-system-misc)"
for f in /usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.elf \
	/usr/lib/u-boot/qemu-riscv64_smode/u-boot.bin; do
	[ -f "$f" ] || skip "no firmware '$f' (make test-deps installs opensbi and u-boot-qemu)"
done

t0=$SECONDS
e2e_build riscv64
note "built in $((SECONDS - t0)) s; $(grep -o "dpkg --configure -a: [0-9.]* s" "$T/err")"
e2e_audit
e2e_appliance riscv64 ttyS0
e2e_kernel riscv64
[ ! -e "$BASE.vmlinuz" ] || fail "an uncompressed kernel exported as riscv64.vmlinuz"
# A RISC-V Linux Image: "RISCV" at 0x30 and "RSC\x05" at 0x38 (the kernel's boot image header).
[ "$(od -An -c -j 48 -N 5 "$BASE.vmlinux" | tr -d ' ')" = RISCV ] ||
	fail "riscv64.vmlinux is not a RISC-V kernel Image"
grep -q '"vmlinuz": "[^"]*/riscv64.vmlinux"' "$BASE.report.json" ||
	fail "the report does not name riscv64.vmlinux"
[ "$(dbg "cat /var/lib/dpkg/arch")" = riscv64 ] || fail "dpkg arch file is not riscv64 alone"
dbg "cat /usr/lib/os-release" | grep -qx 'VERSION_CODENAME=trixie' || fail "the image is not trixie"

# The disk: the root's type says riscv64, U-Boot's distro boot finds it legacy-bootable, and the
# entry boots the uncompressed kernel by the root's PARTUUID, as u-boot-update writes it.
sfdisk --json "$DISK" | grep -qi '"type": *"72ec70a6-cf74-40e6-bd49-4bda08e8f224"' ||
	fail "the root partition's type is not the riscv64 root's"
sfdisk --json "$DISK" | grep -q '"attrs": *"LegacyBIOSBootable"' ||
	fail "the root partition is not legacy-bootable"
ver=$(dbg "ls -p /boot" | awk -F/ '$6 ~ /^vmlinux-/ {print substr($6, 9)}')
dbg "cat /boot/extlinux/extlinux.conf" >"$T/extlinux.conf"
grep -qxF "	linux /boot/vmlinux-$ver" "$T/extlinux.conf" &&
	grep -qxF "	initrd /boot/initrd.img-$ver" "$T/extlinux.conf" &&
	grep -qi "append root=PARTUUID=$PART_UUID console=ttyS0 " "$T/extlinux.conf" ||
	{ cat "$T/extlinux.conf" >&2; fail "extlinux.conf does not boot vmlinux-$ver on the root"; }

mkdir -p "$T/sys" && debugfs -R "rdump /usr $T/sys" "$IMG" >/dev/null 2>&1
ln -s usr/lib "$T/sys/lib"
qemu-riscv64-static -L "$T/sys" "$T/sys/usr/bin/busybox" true || fail "riscv64 busybox does not run"

# It boots: OpenSBI, U-Boot, the kernel from the disk, a serial login, the riscv64 hello run by the
# boot-time unit, no failed unit.
e2e_boot qemu-system-riscv64 riscv64
[ -s "$T/console.log" ] || exit 0 # the boot skipped (MKIMAGE_TEST_BOOT=0), as listed
grep -aq '^OpenSBI v' "$T/console.log" && grep -aq '^U-Boot 20' "$T/console.log" ||
	fail "the console does not show OpenSBI and U-Boot"
grep -aq "Retrieving file: /boot/vmlinux-$ver" "$T/console.log" ||
	fail "U-Boot did not load /boot/vmlinux-$ver from the disk's extlinux.conf"
