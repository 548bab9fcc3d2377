# test-cost: slow (four native builds with real u-boot-menu, linux-base, debconf and perl-base)
# A disk's boot configuration (issue 25, deliverables 3 and 4): built from the plan's own
# packages (real bookworm u-boot-menu and systemd-boot-efi, a kernel package made here) into the
# tree after the hooks. extlinux.conf is what u-boot-menu's own u-boot-update writes in the tree
# afterwards, byte for byte; the A/B layout's entry boots slot A by the PARTUUID the recipe
# name and SOURCE_DATE_EPOCH give (recomputed here from the documented derivation); fstab names
# each partition by PARTUUID; systemd-boot's loader, entry, kernel and initrd land on the ESP.
# A missing boot loader package or kernel is exit 8 before any .deb is fetched; a symlink in the
# way is refused; two builds give the same files. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

export SOURCE_DATE_EPOCH=1700000000
command -v python3 >/dev/null || skip "python3 missing"

# The real boot packages and what they depend on, beside the native base set.
fixture_debs bootcfg amd64 amd64 u-boot-menu systemd-boot-efi perl-base
mkdir -p "$T/repo/pool/main"
ln -sf "$MKI_TEST_DEBS/bootcfg/debs/"*.deb "$T/repo/pool/main/"
# A kernel: /boot/vmlinuz-RELEASE and its initrd, as a linux-image-* package ships them.
d=$(deb_new linux-image-6.1.0-99-test 1.0 amd64)
deb_file "$d" boot/vmlinuz-6.1.0-99-test "not really a kernel"
deb_file "$d" boot/initrd.img-6.1.0-99-test "not really an initrd"
deb_file "$d" usr/lib/linux-image-6.1.0-99-test/board.dtb "dtb"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R"
# recipe FILE NAME EXTRA-PACKAGES DISK-KEYS PARTITIONS [HOOKS]
recipe() {
	native_recipe "$1" "$2" ", \"perl-base\"$3" "${6:-}"
	printf 'disk = {\n  %s\n  partitions = (\n    %s\n  );\n};\n' "$4" "$5" >>"$1"
}
AB='{ name = "boot"; type = "linux"; contents = "/boot"; size = "64M"; },
    { name = "rootA"; type = "root"; contents = "root"; },
    { name = "rootB"; type = "root"; size = "256M"; },
    { name = "data"; type = "linux"; format = "ext4"; size = "64M"; }'
EXT='bootloader = "extlinux"; console = "ttyS0,115200";'
recipe "$R/ab.cfg" ab ', "u-boot-menu", "linux-image-6.1.0-99-test"' "$EXT" "$AB"
recipe "$R/ext.cfg" ext ', "u-boot-menu", "linux-image-6.1.0-99-test"' "$EXT" \
	'{ name = "root"; type = "root"; contents = "root"; }'
recipe "$R/sdb.cfg" sdb ', "systemd-boot-efi", "linux-image-6.1.0-99-test"' \
	'bootloader = "systemd-boot"; cmdline = "ro  rootwait quiet";' \
	'{ name = "esp"; type = "esp"; contents = "/boot/efi"; size = "64M"; },
    { name = "root"; type = "root"; contents = "root"; }'

# partuuid NAME WHAT: the GPT partition GUID mkimage(7) documents (sha256 of the recipe name and
# the epoch, as a version 4 UUID), computed here independently.
partuuid() {
	python3 - "$1" "$SOURCE_DATE_EPOCH" "$2" <<'PY'
import hashlib, sys
u = bytearray(hashlib.sha256(b"mkimage disk id\0" + sys.argv[1].encode() + b"\0" +
                             sys.argv[2].encode() + b"\0" + sys.argv[3].encode()).digest()[:16])
u[6] = (u[6] & 0x0f) | 0x40
u[8] = (u[8] & 0x3f) | 0x80
h = u.hex()
print("-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:])))
PY
}

# build WHO RECIPE: mkimage --until configure --keep-staging; the kept tree in $TREE.
build() {
	local who=$1 cfg=$2
	shift 2
	rm -rf "$T/keep" && mkdir -p "$T/keep" && chmod 777 "$T/keep"
	TMPDIR=$T/keep expect_ok "$@" "$MKIMAGE" --cache-dir "$CACHE" --until configure --keep-staging \
		"$cfg"
	TREE=$(find "$T/keep" -mindepth 2 -maxdepth 2 -name root -type d | head -1)
	[ -d "$TREE" ] || fail "$who: no staging tree kept in $T/keep"
}

# check_ab WHO: the A/B entry, /etc/default/u-boot and fstab of the tree in $TREE.
check_ab() {
	local who=$1 a b data boot conf
	a=$(partuuid ab partition:rootA)
	b=$(partuuid ab partition:rootB)
	boot=$(partuuid ab partition:boot)
	conf=$TREE/boot/extlinux/extlinux.conf
	[ -f "$conf" ] || fail "$who: no /boot/extlinux/extlinux.conf"
	grep -qx "	linux /vmlinuz-6.1.0-99-test" "$conf" ||
		fail "$who: the kernel is not named from the root of the /boot partition: $(cat "$conf")"
	grep -qx "	initrd /initrd.img-6.1.0-99-test" "$conf" || fail "$who: no initrd line"
	grep -qx "	append root=PARTUUID=$a console=ttyS0,115200 ro rootwait" "$conf" ||
		fail "$who: the entry does not boot slot A ($a): $(grep append "$conf")"
	! grep -q "$b" "$conf" || fail "$who: slot B's PARTUUID in the entry"
	grep -qx "U_BOOT_ROOT=\"root=PARTUUID=$a\"" "$TREE/etc/default/u-boot" ||
		fail "$who: /etc/default/u-boot does not name slot A"
	grep -qx 'U_BOOT_PARAMETERS="console=ttyS0,115200 ro rootwait"' "$TREE/etc/default/u-boot" ||
		fail "$who: U_BOOT_PARAMETERS"
	grep -q '^#U_BOOT_TIMEOUT="50"$' "$TREE/etc/default/u-boot" ||
		fail "$who: the package's own /etc/default/u-boot was not kept around the settings"
	printf 'PARTUUID=%s\t/\text4\terrors=remount-ro\t0\t1\nPARTUUID=%s\t/boot\text4\tdefaults\t0\t2\n' \
		"$a" "$boot" >"$T/fstab.want"
	grep '^PARTUUID=' "$TREE/etc/fstab" | cmp -s - "$T/fstab.want" ||
		fail "$who: fstab: $(cat "$TREE/etc/fstab")"
	[ "$(stat -c %Y "$conf")" = "$SOURCE_DATE_EPOCH" ] || fail "$who: extlinux.conf's mtime"
	[ "$(stat -c %a "$conf")" = 644 ] || fail "$who: extlinux.conf's mode"
}

CACHE=$T/cache
build root "$R/ab.cfg"
check_ab root
sha_ab=$(cd "$TREE" && sha256sum boot/extlinux/extlinux.conf etc/default/u-boot etc/fstab)
note "A/B: the entry boots slot A by PARTUUID; fstab and /etc/default/u-boot agree"

# Determinism: the same files, bytes and times, from a second build.
build root2 "$R/ab.cfg"
[ "$(cd "$TREE" && sha256sum boot/extlinux/extlinux.conf etc/default/u-boot etc/fstab)" = "$sha_ab" ] ||
	fail "two builds wrote different boot configurations"

# /boot on the root: the package's own u-boot-update, run in the tree afterwards (as the kernel
# hook runs it on the device), writes the same bytes.
build ext "$R/ext.cfg"
conf=$TREE/boot/extlinux/extlinux.conf
grep -qx "	linux /boot/vmlinuz-6.1.0-99-test" "$conf" || fail "ext: kernel path on the root"
grep -qx "	fdtdir /usr/lib/linux-image-6.1.0-99-test/" "$conf" || fail "ext: no fdtdir line"
cp "$conf" "$T/ours.conf"
rm "$conf"
"$TOP/build/tools/configure" --exec-only --exec '/usr/sbin/u-boot-update' "$TREE" \
	>"$T/uboot.out" 2>&1 || { cat "$T/uboot.out" >&2; fail "u-boot-update in the tree failed"; }
cmp "$T/ours.conf" "$conf" || { diff -u "$conf" "$T/ours.conf" >&2 || true;
	fail "extlinux.conf differs from what u-boot-update writes"; }
note "extlinux.conf: the same bytes as u-boot-menu's u-boot-update writes in the tree"

# systemd-boot: the loader, its fallback, loader.conf, the BLS entry, kernel and initrd on the ESP.
build sdb "$R/sdb.cfg"
E=$TREE/boot/efi
root=$(partuuid sdb partition:root)
cmp -s "$E/EFI/BOOT/BOOTX64.EFI" "$TREE/usr/lib/systemd/boot/efi/systemd-bootx64.efi" ||
	fail "sdb: no fallback loader EFI/BOOT/BOOTX64.EFI"
cmp -s "$E/EFI/systemd/systemd-bootx64.efi" "$TREE/usr/lib/systemd/boot/efi/systemd-bootx64.efi" ||
	fail "sdb: no EFI/systemd/systemd-bootx64.efi"
cmp -s "$E/debian/6.1.0-99-test/linux" "$TREE/boot/vmlinuz-6.1.0-99-test" || fail "sdb: kernel"
cmp -s "$E/debian/6.1.0-99-test/initrd.img-6.1.0-99-test" "$TREE/boot/initrd.img-6.1.0-99-test" ||
	fail "sdb: initrd"
printf 'title      Debian GNU/Linux 12 (bookworm)\nversion    6.1.0-99-test\nsort-key   debian\noptions    root=PARTUUID=%s ro rootwait quiet\nlinux      /debian/6.1.0-99-test/linux\ninitrd     /debian/6.1.0-99-test/initrd.img-6.1.0-99-test\n' \
	"$root" >"$T/entry.want"
cmp "$T/entry.want" "$E/loader/entries/debian-6.1.0-99-test.conf" ||
	fail "sdb: the BLS entry: $(cat "$E/loader/entries/debian-6.1.0-99-test.conf")"
[ "$(cat "$E/loader/loader.conf")" = "$(printf 'timeout 0\ndefault debian-*')" ] || fail "sdb: loader.conf"
[ "$(cat "$TREE/etc/kernel/cmdline")" = "root=PARTUUID=$root ro rootwait quiet" ] ||
	fail "sdb: /etc/kernel/cmdline"
[ "$(cat "$TREE/etc/kernel/entry-token")" = debian ] || fail "sdb: /etc/kernel/entry-token"
grep -qx "PARTUUID=$(partuuid sdb partition:esp)	/boot/efi	vfat	umask=0077	0	2" "$TREE/etc/fstab" ||
	fail "sdb: the ESP's fstab line"
note "systemd-boot: loader, fallback, BLS entry, kernel and initrd on the ESP"

# Missing packages: exit 8 right after resolving, nothing fetched.
recipe "$R/nomenu.cfg" nomenu ', "linux-image-6.1.0-99-test"' "$EXT" \
	'{ name = "root"; type = "root"; contents = "root"; }'
recipe "$R/nokernel.cfg" nokernel ', "systemd-boot-efi"' 'bootloader = "systemd-boot";' \
	'{ name = "esp"; type = "esp"; contents = "/boot/efi"; }, { name = "root"; type = "root"; contents = "root"; }'
recipe "$R/nosdb.cfg" nosdb ', "linux-image-6.1.0-99-test"' 'bootloader = "systemd-boot";' \
	'{ name = "esp"; type = "esp"; contents = "/boot/efi"; }, { name = "root"; type = "root"; contents = "root"; }'
for c in "nomenu:needs package 'u-boot-menu', which the plan does not hold: add \"u-boot-menu\" to packages.install" \
	"nokernel:needs a kernel, and the plan holds no 'linux-image-\*' package" \
	"nosdb:needs package 'systemd-boot-efi', which the plan does not hold"; do
	: >"$SRVLOG"
	expect_fail 8 "${c#*:}" "$MKIMAGE" --cache-dir "$T/cache-${c%%:*}" --until configure "$R/${c%%:*}.cfg"
	! grep -q '\.deb' "$SRVLOG" || fail "${c%%:*}: a .deb was fetched before the error"
done
note "a boot loader package or kernel missing from the plan: exit 8 before any download"

# A symlink where the configuration goes (a hook, as a package could): refused, nothing written
# through it.
printf '#!/bin/sh\nset -e\nmkdir -p /boot\nln -s /etc /boot/extlinux\n' >"$R/link.sh"
chmod 755 "$R/link.sh"
recipe "$R/link.cfg" link ', "u-boot-menu", "linux-image-6.1.0-99-test"' "$EXT" \
	'{ name = "root"; type = "root"; contents = "root"; }' \
	'{ name = "link"; script = "link.sh"; where = "inside"; }'
expect_fail 8 "cannot write the boot configuration into '/boot/extlinux': '/boot/extlinux' is a symbolic link" \
	"$MKIMAGE" --cache-dir "$CACHE" --until configure "$R/link.cfg"
note "a symlinked /boot/extlinux: refused (exit 8)"

if [ "$(id -u)" = 0 ]; then
	test_user mki99user
	chmod 755 "$T"
	chmod -R a+rX "$T/keys" "$R"
	mkdir -p "$T/u"
	chown mki99user "$T/u"
	CACHE=$T/u/cache
	build user "$R/ab.cfg" as_user mki99user
	check_ab user
	[ "$(cd "$TREE" && sha256sum boot/extlinux/extlinux.conf etc/default/u-boot etc/fstab)" = "$sha_ab" ] ||
		fail "the ordinary user's boot configuration differs from root's"
	note "ordinary user: the same boot configuration as root's"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
