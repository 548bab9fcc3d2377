# Helpers for end-to-end tests: a recipe from recipes/ built against a local signed mirror of real
# Debian packages (tests/mkmirror.sh), then checked from the outside with e2fsck and debugfs.

. "$TOP/tests/flagship.sh"

# e2e_serve RECIPE: mirror the recipe's package set (tests/flagship.sh) and serve it on
# 127.0.0.1. Sets MIRROR, SERVER_URL and SRC, the --source value naming it with its key.
e2e_serve() {
	flagship_mirror "$1"
	serve "$MIRROR/repo"
	SRC="$SERVER_URL $FLAGSHIP_SUITE $MIRROR_COMPONENTS signed-by=$MIRROR/key.gpg"
}

# e2e_build RECIPE [ROOT]: e2e_serve, then build recipes/RECIPE.cfg into $T/images. A recipe
# with a disk writes DISK=$T/images/RECIPE.img, whose table must pass `sfdisk --verify`, and IMG
# is its partition ROOT (default "root") read out for the checks below; else IMG is the image.
# BASE is the outputs' common prefix ($BASE.lock, $BASE.vmlinuz, ...).
e2e_build() {
	local recipe=$1 out
	e2e_serve "$recipe"
	mkdir -p "$T/images"
	BASE=$T/images/$recipe DISK= IMG=$T/images/$recipe.ext4 out=$T/images/$recipe.ext4
	if grep -q '^disk = {' "$(flagship_recipe "$recipe")"; then
		DISK=$BASE.img out=$BASE.img IMG=$T/images/$recipe.root.ext4
	fi
	SOURCE_DATE_EPOCH=1700000000 expect_ok "$MKIMAGE" --source "$SRC" --output "$out" \
		"$(flagship_recipe "$recipe")"
	if [ -n "$DISK" ]; then
		sfdisk --verify "$DISK" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify: $DISK"; }
		e2e_partition "${2:-root}" "$IMG"
	fi
	e2fsck -fn "$IMG" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn reports problems"; }
	sbom_validate "$BASE.spdx.json"
}

# e2e_partition NAME FILE: partition NAME of $DISK (its GPT name; on an MBR, which names none,
# its number) copied to FILE, holes kept. Sets PART_UUID to its PARTUUID.
e2e_partition() {
	local start size
	read -r start size PART_UUID < <(sfdisk --json "$DISK" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]
for n, p in enumerate(t["partitions"], 1):
    if p.get("name") == sys.argv[1] or (t["label"] == "dos" and str(n) == sys.argv[1]):
        uuid = p.get("uuid") or "%s-%02x" % (t["id"][2:], n)
        print(p["start"], p["size"], uuid.lower())' "$1")
	[ -n "$size" ] || fail "$(basename "$DISK") has no partition named '$1'"
	dd if="$DISK" of="$2" bs=512 skip="$start" count="$size" conv=sparse status=none ||
		fail "cannot read partition '$1' of $DISK"
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

# e2e_appliance NAME TTY: $IMG has what the recipe NAME's keys and overlays give, with or without
# its kernel: /etc/fstab mounting the root by the label NAME (on a disk: by its PARTUUID), NAME as hostname, an empty machine id
# (no id shared by every board, no first-boot prompts), a getty on the serial port TTY and the
# boot-report unit enabled, and no documentation but copyright files (packages.minimize).
e2e_appliance() {
	local name=$1 tty=$2
	if [ -n "${DISK:-}" ]; then
		dbg "cat /etc/fstab" | grep -Eiq "^PARTUUID=$PART_UUID[[:space:]]+/[[:space:]]+ext4" ||
			fail "/etc/fstab does not mount the root by its PARTUUID $PART_UUID"
	else
		dbg "cat /etc/fstab" |
			grep -qxF "$(printf 'LABEL=%s\t/\text4\terrors=remount-ro\t0\t1' "$name")" ||
			fail "/etc/fstab does not mount the root by its label '$name'"
	fi
	[ "$(dbg "cat /etc/hostname")" = "$name" ] || fail "/etc/hostname is not '$name'"
	dbg "cat /etc/hosts" | grep -qx "127.0.1.1[[:space:]]*$name" ||
		fail "/etc/hosts does not name '$name'"
	[ -z "$(dbg "cat /etc/machine-id")" ] ||
		fail "the image carries a machine id every board would share"
	dbg "stat /etc/systemd/system/getty.target.wants/serial-getty@$tty.service" |
		grep -q "Type: symlink" || fail "no getty enabled on the serial port $tty (overlay)"
	dbg "stat /etc/systemd/system/multi-user.target.wants/boot-report.service" |
		grep -q "Type: symlink" || fail "boot-report.service is not enabled (overlay)"
	dbg "stat /usr/local/sbin/boot-report" | grep -q "Mode:  0755" ||
		fail "no executable boot-report (overlay)"
	dbg "stat /usr/share/doc/libc6/copyright" | grep -q "Type: regular" ||
		fail "minimize lost a copyright file"
	! dbg "stat /usr/share/doc/libc6/changelog.Debian.gz" | grep -q "Type:" ||
		fail "the image is not minimized"
}

# e2e_kernel FLAVOUR: $IMG boots with its own kernel: systemd as init, one kernel of FLAVOUR
# (armmp, amd64, arm64, riscv64) and its initrd in /boot, exported beside the image
# (image.export_boot) with the same bytes: /boot/vmlinuz-* as NAME.vmlinuz, riscv64's
# uncompressed /boot/vmlinux-* as NAME.vmlinux.
e2e_kernel() {
	local flavour=$1 ver stem=vmlinuz
	[ "$flavour" != riscv64 ] || stem=vmlinux
	dbg "stat /sbin/init" | grep -q "Type: symlink" || fail "no init (systemd-sysv)"
	ver=$(dbg "ls -p /boot" | awk -F/ -v s="$stem" '$6 ~ "^" s "-" {print substr($6, 9)}')
	case $ver in *-"$flavour") ;; *) fail "no single $flavour kernel /boot/$stem-*: '$ver'" ;; esac
	dbg "dump /boot/$stem-$ver $T/$stem" && dbg "dump /boot/initrd.img-$ver $T/initrd.img"
	[ -s "$T/initrd.img" ] || fail "no initrd for kernel '$ver' in /boot"
	cmp -s "$T/$stem" "${BASE:-${IMG%.ext4}}.$stem" &&
		cmp -s "$T/initrd.img" "${BASE:-${IMG%.ext4}}.initrd.img" ||
		fail "the kernel and initrd beside the image are not /boot's (image.export_boot)"
	e2e_initrd_modules "$ver"
}

# e2e_initrd_modules VERSION: read natively (lsinitramfs: every cpio segment), $T/initrd.img
# holds the virtio block driver wherever the kernel ships it as a module: without it a VM's
# initramfs cannot find the root disk (trixie's armhf initramfs did not, built on ext4).
e2e_initrd_modules() {
	local mod
	mod=$(dbg "ls -p /usr/lib/modules/$1/kernel/drivers/block" | awk -F/ '$6 ~ /^virtio_blk\.ko/ {print $6}')
	[ -n "$mod" ] || return 0
	command -v lsinitramfs >/dev/null || { skip_part "initrd contents: no lsinitramfs (make test-deps)"; return 0; }
	lsinitramfs "$T/initrd.img" >"$T/initrd.list" 2>/dev/null || fail "lsinitramfs cannot read the initrd"
	grep -q "lib/modules/$1/kernel/drivers/block/$mod\$" "$T/initrd.list" ||
		fail "the initrd of '$1' lacks $mod ($(grep -c '\.ko' "$T/initrd.list") modules in all)"
}

# e2e_boots_here QEMU [WHAT]: whether this run boots under QEMU (installed, MKIMAGE_TEST_BOOT
# not 0, FLAGSHIP_SUITE among MKIMAGE_TEST_BOOT_SUITES); else 1 with WHAT (default "booting")
# listed as a skipped part.
e2e_boots_here() {
	local what=${2:-booting}
	command -v "$1" >/dev/null || { skip_part "$what: no $1 (make test-deps installs it)"; return 1; }
	[ "${MKIMAGE_TEST_BOOT:-1}" != 0 ] || { skip_part "$what: MKIMAGE_TEST_BOOT=0"; return 1; }
	case " ${MKIMAGE_TEST_BOOT_SUITES:-trixie} " in *" $FLAGSHIP_SUITE "*) return 0 ;; esac
	skip_part "$what: $FLAGSHIP_SUITE boots in 'make check-boots' (MKIMAGE_TEST_BOOT_SUITES)"
	return 1
}

# e2e_boot QEMU ARCH: boot $DISK through firmware (or $IMG with its kernel) under qemu-system QEMU
# (tests/bootvm.sh) to its serial login; the
# recipe's boot-time unit must report the ARCH `hello` and no failed unit. Skipped in part without
# QEMU, with MKIMAGE_TEST_BOOT=0, or when FLAGSHIP_SUITE is not in MKIMAGE_TEST_BOOT_SUITES
# (default trixie: CI boots each flagship on trixie and checks bookworm's image natively; `make
# check-boots` boots both). BOOT_TIMEOUT (default 1200 s: TCG on a loaded 2-core machine)
# bounds the boot.
e2e_boot() {
	local qemu=$1 arch=$2 t0=$SECONDS
	e2e_boots_here "$qemu" || return 0
	BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "${DISK:-$IMG}" "${BOOT_TIMEOUT:-1200}" \
		2>"$T/boot.err" ||
		{ cat "$T/boot.err" >&2; fail "$(basename "${DISK:-$IMG}") did not boot cleanly under $qemu"; }
	grep -aqF "boot-report: hello ($arch): Hello, world!" "$T/console.log" ||
		{ cat "$T/boot.err" >&2; fail "the boot-time unit did not run the $arch hello"; }
	# Through firmware, the kernel got the command line the disk's boot entry gives.
	# (A verified root names its partition in mkimage.verity_data=PARTUUID=.)
	[ -z "${DISK:-}" ] || grep -aiq "Kernel command line:.*[= ]PARTUUID=$PART_UUID" "$T/console.log" ||
		{ grep -a "Kernel command line" "$T/console.log" >&2; fail "the kernel was not booted with root=PARTUUID=$PART_UUID"; }
	note "booted under $qemu in $((SECONDS - t0)) s:" \
		"$(grep -o 'login prompt in [0-9]* s' "$T/boot.err")"
}
