# test-cost: slow (five native builds of disks)
# A verified read-only root, natively (issue 26, deliverables 2, 3 and 5; 94 boots the real one):
# a disk with /boot, a squashfs root, its dm-verity hash partition and /var on a data partition,
# from the native base set, real u-boot-menu and packages made here (a kernel with and without
# the modules, cryptsetup-bin and initramfs-tools stand-ins). The root hash printed beside the
# disk is the one veritysetup verifies, the boot entry on the boot partition carries it, the root
# holds the initramfs hook and script and an fstab mounting /dev/mapper/root read-only; the
# errors come before the long steps: a plan without cryptsetup-bin or initramfs-tools (exit 8,
# nothing fetched), a kernel without dm-verity (exit 8 before configuring), a boot partition
# without a fixed size (exit 2). Two builds and an ordinary user's give the same disk.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

export SOURCE_DATE_EPOCH=1700000000
for tool in veritysetup:cryptsetup-bin rdsquashfs:squashfs-tools-ng sfdisk:fdisk; do
	command -v "${tool%%:*}" >/dev/null || skip "no ${tool%%:*} (${tool#*:}: make test-deps installs it)"
done

fixture_debs bootcfg amd64 amd64 u-boot-menu systemd-boot-efi perl-base
mkdir -p "$T/repo/pool/main"
ln -sf "$MKI_TEST_DEBS/bootcfg/debs/"*.deb "$T/repo/pool/main/"
# kernel NAME MODULES...: /boot/vmlinuz-NAME, its initrd and the modules named (DIR/NAME.ko).
kernel() {
	local v=$1 d m
	shift
	d=$(deb_new "linux-image-$v" 1.0 amd64)
	deb_file "$d" "boot/vmlinuz-$v" "not really a kernel"
	deb_file "$d" "boot/initrd.img-$v" "not really an initrd"
	for m in "$@"; do deb_file "$d" "usr/lib/modules/$v/kernel/$m.ko" "module"; done
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}
kernel 6.1.0-99-test drivers/md/dm-verity fs/squashfs/squashfs
kernel 6.1.0-98-test fs/squashfs/squashfs drivers/md/dm-verity-fec
for p in cryptsetup-bin initramfs-tools; do
	d=$(deb_new "$p" 1.0 amd64)
	deb_file "$d" "usr/share/doc/$p/stand-in" "a stand-in for the real package"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
native_repo

R=$T/r
mkdir -p "$R"
# recipe NAME EXTRA-PACKAGES [BOOT-SIZE-KEY (default: size = "64M";)]
recipe() {
	local size=${3-'size = "64M";'}
	native_recipe "$R/$1.cfg" "$1" ", \"perl-base\", \"u-boot-menu\"$2"
	cat >>"$R/$1.cfg" <<R
disk = {
  bootloader = "extlinux";
  console = "ttyS0,115200";
  partitions = (
    { name = "boot"; type = "linux"; contents = "/boot"; $size },
    { name = "root"; type = "root"; contents = "root"; format = "squashfs"; },
    { name = "root-verity"; type = "root-verity"; contents = "verity:root"; },
    { name = "data"; type = "linux"; contents = "/var"; format = "ext4"; size = "64M"; }
  );
};
R
}
ALL=', "cryptsetup-bin", "initramfs-tools", "linux-image-6.1.0-99-test"'
recipe ro "$ALL"

# partition DISK NAME FILE: its bytes; PART_UUID its PARTUUID.
partition() {
	local start size
	read -r start size PART_UUID < <(sfdisk --json "$1" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    if p.get("name") == sys.argv[1]:
        print(p["start"], p["size"], p.get("uuid", "").lower())' "$2")
	[ -n "$size" ] || fail "$(basename "$1") has no partition '$2'"
	dd if="$1" of="$3" bs=512 skip="$start" count="$size" status=none
}

# check WHO DIR: the disk DIR/ro.img and what lies beside it.
check() {
	local who=$1 out=$2 hash root vuuid
	sfdisk --verify "$out/ro.img" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "$who: sfdisk --verify"; }
	hash=$(cat "$out/ro.roothash")
	[[ $hash =~ ^[0-9a-f]{64}$ ]] || fail "$who: ro.roothash holds '$hash'"
	partition "$out/ro.img" root "$T/root.sqfs"
	root=$PART_UUID
	partition "$out/ro.img" root-verity "$T/root.verity"
	vuuid=$PART_UUID
	veritysetup verify "$T/root.sqfs" "$T/root.verity" "$hash" >"$T/vs" 2>&1 ||
		{ cat "$T/vs" >&2; fail "$who: veritysetup verify refuses the root with ro.roothash"; }
	grep -q "\"roothash\": *\"$hash\"" "$out/ro.report.json" || fail "$who: the report lacks the root hash"
	partition "$out/ro.img" boot "$T/boot.ext4"
	e2fsck -fn "$T/boot.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: e2fsck of /boot"; }
	debugfs -R "cat /extlinux/extlinux.conf" "$T/boot.ext4" 2>/dev/null >"$T/extlinux.conf"
	grep -qx "	append root=/dev/mapper/root rootfstype=squashfs mkimage.verity_data=PARTUUID=$root mkimage.verity_hash=PARTUUID=$vuuid mkimage.roothash=$hash console=ttyS0,115200 ro rootwait" \
		"$T/extlinux.conf" || { cat "$T/extlinux.conf" >&2; fail "$who: the entry does not carry the root hash"; }
	rdsquashfs -c /etc/default/u-boot "$T/root.sqfs" >"$T/u-boot" 2>/dev/null
	grep -qx "U_BOOT_ROOT=\"root=/dev/mapper/root rootfstype=squashfs mkimage.verity_data=PARTUUID=$root mkimage.verity_hash=PARTUUID=$vuuid\"" \
		"$T/u-boot" || { cat "$T/u-boot" >&2; fail "$who: /etc/default/u-boot on the root"; }
	rdsquashfs -c /etc/fstab "$T/root.sqfs" >"$T/fstab" 2>/dev/null
	grep -qx "/dev/mapper/root	/	squashfs	ro	0	0" "$T/fstab" || { cat "$T/fstab" >&2; fail "$who: fstab's root"; }
	grep -q "^tmpfs	/tmp	tmpfs	" "$T/fstab" || fail "$who: no tmpfs at /tmp"
	for f in hooks/mkimage-verity scripts/local-top/mkimage-verity; do
		rdsquashfs -s "/etc/initramfs-tools/$f" "$T/root.sqfs" 2>/dev/null | grep -q "Access: 0755" ||
			fail "$who: no executable /etc/initramfs-tools/$f on the root"
	done
	rdsquashfs -c /etc/initramfs-tools/scripts/local-top/mkimage-verity "$T/root.sqfs" >"$T/script"
	sh -n "$T/script" || fail "$who: the local-top script is not valid sh"
	partition "$out/ro.img" data "$T/data.ext4"
	debugfs -R "stat /lib/dpkg/status" "$T/data.ext4" 2>/dev/null | grep -q "Type: regular" ||
		fail "$who: the dpkg database is not on the data partition"
	SHA=$(sha256sum <"$out/ro.img")
}

# The layer key says the initramfs was extended: a key of its own.
mkdir -p "$T/a"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --output "$T/a/ro.img" "$R/ro.cfg"
grep -q "boots 'vmlinuz-6.1.0-99-test'" "$T/err" || fail "no boot entry written"
check root "$T/a"
sha_a=$SHA
note "the root hash verifies, the entry carries it, the root holds the initramfs support"

mkdir -p "$T/b"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --no-layer-cache --output "$T/b/ro.img" "$R/ro.cfg"
check again "$T/b"
[ "$SHA" = "$sha_a" ] || fail "a second build gave another disk"
cmp -s "$T/a/ro.roothash" "$T/b/ro.roothash" || fail "a second build gave another root hash"

# systemd-boot: the BLS entry on the ESP, written after the root, carries the root hash.
native_recipe "$R/sdb.cfg" sdb ", \"perl-base\", \"systemd-boot-efi\"$ALL"
cat >>"$R/sdb.cfg" <<R
disk = {
  bootloader = "systemd-boot";
  partitions = (
    { name = "esp"; type = "esp"; contents = "/boot/efi"; size = "64M"; },
    { name = "root"; type = "root"; contents = "root"; format = "squashfs"; },
    { name = "root-verity"; type = "root-verity"; contents = "verity:root"; }
  );
};
R
mkdir -p "$T/sdb"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --output "$T/sdb/sdb.img" "$R/sdb.cfg"
hash=$(cat "$T/sdb/sdb.roothash")
partition "$T/sdb/sdb.img" esp "$T/esp.fat"
fsck.vfat -n "$T/esp.fat" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "sdb: fsck.vfat of the ESP"; }
MTOOLS_SKIP_CHECK=1 mtype -i "$T/esp.fat" ::/loader/entries/debian-6.1.0-99-test.conf >"$T/entry" ||
	fail "sdb: no BLS entry on the ESP"
grep -q "^options    root=/dev/mapper/root rootfstype=squashfs .* mkimage.roothash=$hash ro rootwait" "$T/entry" ||
	{ cat "$T/entry" >&2; fail "sdb: the BLS entry does not carry the root hash"; }
note "systemd-boot: the BLS entry on the ESP carries the root hash"

# Errors before the long steps.
recipe nocrypt ', "initramfs-tools", "linux-image-6.1.0-99-test"'
recipe noinitramfs ', "cryptsetup-bin", "linux-image-6.1.0-99-test"'
for c in "nocrypt:initramfs opens it with veritysetup, which the plan does not hold: add \"cryptsetup-bin\"" \
	"noinitramfs:the plan holds no 'initramfs-tools' .dracut is not supported."; do
	: >"$SRVLOG"
	expect_fail 8 "${c#*:}" "$MKIMAGE" --cache-dir "$T/cache-${c%%:*}" --until configure "$R/${c%%:*}.cfg"
	! grep -q '\.deb' "$SRVLOG" || fail "${c%%:*}: a .deb was fetched before the error"
done
recipe nomodule ', "cryptsetup-bin", "initramfs-tools", "linux-image-6.1.0-98-test"'
expect_fail 8 "kernel '6.1.0-98-test' has no 'dm-verity' module" \
	"$MKIMAGE" --cache-dir "$T/cache" --output "$T/nomodule.img" "$R/nomodule.cfg"
! grep -q "preinst scripts" "$T/err" || fail "the missing module was found after configuring"
[ ! -e "$T/nomodule.img" ] || fail "a disk was left after the missing module"
recipe autoboot "$ALL" ''
expect_fail 2 "partition 'boot' holds the boot entry of a root verified by dm-verity and is written after the root" \
	"$MKIMAGE" --check "$R/autoboot.cfg"
note "missing cryptsetup-bin or initramfs-tools, a kernel without dm-verity, an auto /boot: refused early"

if [ "$(id -u)" = 0 ]; then
	test_user mki93user
	chmod 755 "$T"
	chmod -R a+rX "$T/keys" "$R"
	mkdir -p "$T/u"
	chown mki93user "$T/u"
	expect_ok as_user mki93user "$MKIMAGE" --cache-dir "$T/u/cache" --output "$T/u/ro.img" "$R/ro.cfg"
	check user "$T/u"
	[ "$SHA" = "$sha_a" ] || fail "the ordinary user's disk differs from root's"
	note "ordinary user: the same disk and root hash"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
