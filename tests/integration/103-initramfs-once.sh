# test-cost: slow (eleven whole native builds: run.sh starts it first)
# A kernel's initramfs is built once, by initramfs-tools' trigger, when that is certain to rebuild
# it: the image is byte-identical to the one built dpkg's way (--no-initramfs-once: the kernel's
# postinst builds it, the trigger builds it again). Real amd64 initramfs-tools, busybox, kmod and
# klibc-utils, natively, with a small kernel package whose postinst runs /etc/kernel/postinst.d
# as Debian's does. Where one condition fails (a second kernel, update_initramfs=no, a kernel hook
# that copies the initrd) the shortcut is not taken, says why, and the image is still the same.
# The configured tree in the layer cache holds no shim; an ordinary user's build is the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v debugfs >/dev/null || skip "e2fsprogs missing (make deps)"
command -v gcc >/dev/null || skip "no gcc to build the kernel module fixture (make deps)"

fixture_debs initramfs amd64 amd64 base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	debianutils diffutils findutils perl-base init-system-helpers util-linux gzip initramfs-tools busybox

V=6.1.0-99-mki
# kernel VERSION: linux-image-VERSION, a /boot/vmlinuz, a real (if empty) module, and the
# postinst of Debian's linux-image packages (depmod, then the kernel hooks with the version).
kernel() {
	local v=$1 d
	d=$(deb_new "linux-image-$v" 1.0 amd64 "Depends: kmod, initramfs-tools")
	deb_file "$d" "boot/vmlinuz-$v" "not really a kernel"
	deb_file "$d" "boot/config-$v" "CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
"
	mkdir -p "$d/usr/lib/modules/$v/kernel/drivers/mki"
	printf 'static const char mi[] __attribute__((used, section(".modinfo"))) = "license=GPL\\0name=mki103\\0vermagic=%s SMP mod_unload \\0";\n' "$v" |
		gcc -c -x c - -o "$d/usr/lib/modules/$v/kernel/drivers/mki/mki103.ko"
	deb_file "$d" DEBIAN/postinst "#!/bin/sh -e
version=$v
image_path=/boot/vmlinuz-\$version
[ \"\$1\" = configure ] || exit 0
depmod \$version
if [ -d /etc/kernel/postinst.d ]; then
	DEB_MAINT_PARAMS=\"\$*\" run-parts --report --exit-on-error --arg=\$version \\
		--arg=\$image_path /etc/kernel/postinst.d
fi
" 0755
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}
kernel "$V"
kernel 6.1.0-98-mki
# Changes initramfs-tools' configuration before 'dpkg --configure -a' (its preinst runs first).
d=$(deb_new mki103-no-update 1.0 all "Pre-Depends: initramfs-tools")
deb_file "$d" DEBIAN/preinst '#!/bin/sh
sed -i "s/^update_initramfs=.*/update_initramfs=no/" /etc/initramfs-tools/update-initramfs.conf
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
# A kernel hook that copies the initrd's bytes: it would copy a placeholder.
d=$(deb_new mki103-copy-hook 1.0 all)
deb_file "$d" etc/kernel/postinst.d/zz-mki103-copy '#!/bin/sh
cp "/boot/initrd.img-$1" /boot/mki103-copy
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
fixture_repo "$T/repo" initramfs amd64

export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$T/r"
recipe() { native_recipe "$T/r/$1.cfg" "$1" ", \"perl-base\", \"init-system-helpers\", \"util-linux\", \"gzip\", \"initramfs-tools\", \"busybox\"$2"; }
recipe one ", \"linux-image-$V\""
recipe two ", \"linux-image-$V\", \"linux-image-6.1.0-98-mki\""
recipe noupdate ", \"linux-image-$V\", \"mki103-no-update\""
recipe copy ", \"linux-image-$V\", \"mki103-copy-hook\""

# build NAME WAY [MKIMAGE-OPTIONS...]: $T/WAY/NAME.ext4 and its log.
build() {
	local name=$1 way=$2
	shift 2
	mkdir -p "$T/$way"
	expect_ok "$MKIMAGE" --no-layer-cache "$@" --output "$T/$way/$name.ext4" "$T/r/$name.cfg"
	cp "$T/err" "$T/$way/$name.err"
}
# generated WAY NAME: how many times mkinitramfs ran (update-initramfs says each one).
generated() { grep -c "update-initramfs: Generating /boot/initrd.img-" "$T/$1/$2.log" || true; }
# real_initrd IMAGE VERSION: the image's initrd of VERSION is a compressed cpio, not a placeholder.
real_initrd() {
	debugfs -R "cat /boot/initrd.img-$2" "$1" 2>/dev/null | head -c 4 | od -An -tx1 | tr -d ' ' >"$T/magic"
	case "$(cat "$T/magic")" in
	1f8b*|28b52ffd|30373037) ;;
	*) fail "$(basename "$1"): /boot/initrd.img-$2 is not an initramfs (starts $(cat "$T/magic"))" ;;
	esac
}
# same NAME: the images built both ways are byte-identical, and so are their initrds.
same() {
	[ "$(sha256sum <"$T/once/$1.ext4")" = "$(sha256sum <"$T/twice/$1.ext4")" ] ||
		fail "$1: the image differs with and without the shortcut"
}

note "one kernel: the initramfs built once, the same image as dpkg's way"
build one once -v
grep -q "initramfs: built once for $V, by initramfs-tools' trigger" "$T/once/one.err" ||
	fail "the shortcut was not said: $(grep -i initramfs "$T/once/one.err")"
grep -q "update-initramfs: mkimage: /boot/initrd.img-$V left to initramfs-tools' trigger" \
	"$T/once/one.log" || fail "the shim's line is not in the build log"
[ "$(generated once one)" = 1 ] || fail "mkinitramfs ran $(generated once one) times, not once"
build one twice --no-initramfs-once
[ "$(generated twice one)" = 2 ] || fail "dpkg's way built the initramfs $(generated twice one) times"
grep -q "built once" "$T/twice/one.err" && fail "--no-initramfs-once took the shortcut"
same one
real_initrd "$T/once/one.ext4" "$V"
# (newc cpio archives, gzip-compressed as mkinitramfs falls back to without zstd)
debugfs -R "cat /boot/initrd.img-$V" "$T/once/one.ext4" 2>/dev/null >"$T/initrd"
python3 - "$T/initrd" <<'PY' | grep -q "usr/lib/modules/$V/modules.dep" || fail "the initrd holds no modules.dep of $V"
import gzip, sys
data, names, i = gzip.open(sys.argv[1]).read(), [], 0
while data[i:i + 6] == b"070701":
    size, nlen = int(data[i + 54:i + 62], 16), int(data[i + 94:i + 102], 16)
    name = data[i + 110:i + 110 + nlen - 1].decode()
    if name == "TRAILER!!!":
        break
    names.append(name)
    i = (i + 110 + nlen + 3) & ~3
    i = (i + size + 3) & ~3
print("\n".join(names))
PY
# Nothing of the diversion is left: the package's own update-initramfs, no shim, no record.
debugfs -R "ls -l /usr/sbin" "$T/once/one.ext4" 2>/dev/null | grep -q mkimage &&
	fail "a file of the diversion is left in /usr/sbin"
deb=$(ls "$MKI_TEST_DEBS/initramfs/debs/"initramfs-tools_*_all.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/sbin/update-initramfs >"$T/pkg-update"
debugfs -R "cat /usr/sbin/update-initramfs" "$T/once/one.ext4" 2>/dev/null >"$T/img-update"
cmp -s "$T/pkg-update" "$T/img-update" || fail "/usr/sbin/update-initramfs is not the package's"

note "where a condition fails: built twice, said why, the same image"
for c in "two:not the only kernel in /boot" \
	"noupdate:update-initramfs.conf gives 'no:/boot'" \
	"copy:the kernel hook '/etc/kernel/postinst.d/zz-mki103-copy' may read the initrd"; do
	name=${c%%:*}
	build "$name" once
	build "$name" twice --no-initramfs-once
	grep -q "update-initramfs: mkimage: building the initramfs now: ${c#*:}" "$T/once/$name.log" ||
		fail "$name: the shim does not say '${c#*:}': $(grep mkimage: "$T/once/$name.log")"
	grep -q "built once" "$T/once/$name.err" && fail "$name: the shortcut was taken"
	[ "$(generated once "$name")" = "$(generated twice "$name")" ] ||
		fail "$name: $(generated once "$name") initramfs runs against dpkg's $(generated twice "$name")"
	same "$name"
	real_initrd "$T/once/$name.ext4" "$V"
done
real_initrd "$T/once/two.ext4" 6.1.0-98-mki
debugfs -R "cat /boot/mki103-copy" "$T/once/copy.ext4" 2>/dev/null | head -c 64 |
	grep -q "mkimage initramfs placeholder" && fail "the kernel hook copied a placeholder"

note "the layer cache: the tree stored without the shim, restored into the same image"
mkdir -p "$T/layer"
for i in 1 2; do
	expect_ok "$MKIMAGE" --cache-dir "$T/layer/cache" --output "$T/layer/one$i.ext4" "$T/r/one.cfg"
done
grep -q "from the layer cache\|layer cache: .*restored" "$T/err" || fail "the second build did not restore the layer"
cmp -s "$T/layer/one1.ext4" "$T/once/one.ext4" || fail "the image with a layer stored differs"
cmp -s "$T/layer/one2.ext4" "$T/once/one.ext4" || fail "the image from the layer differs"

if [ "$(id -u)" = 0 ]; then
	note "an ordinary user's build: the same image"
	test_user mki103user
	mkdir -p "$T/user"
	chmod 755 "$T" && chmod -R a+rX "$T/r" "$T/keys" && chown mki103user "$T/user"
	(cd "$T/user" && as_user mki103user env TMPDIR="$T/user" XDG_CACHE_HOME="$T/user/cache" \
		"$MKIMAGE" --no-layer-cache --output "$T/user/one.ext4" "$T/r/one.cfg") \
		>"$T/user.log" 2>&1 || { cat "$T/user.log" >&2; fail "the ordinary user's build failed"; }
	grep -q "initramfs: built once for $V" "$T/user.log" || fail "the user's build built twice"
	cmp -s "$T/user/one.ext4" "$T/once/one.ext4" || fail "the ordinary user's image differs"
else
	skip_part "not root: the ordinary user's build needs a throwaway user"
fi
true
