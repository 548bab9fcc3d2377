# Identity files and boot files beside the image (issue 14). image.fstab (the default for ext4)
# writes /etc/fstab with the root by LABEL=, unless the tree has one; hostname writes
# /etc/hostname and the 127.0.1.1 line of /etc/hosts; /etc/machine-id is "uninitialized" (or
# empty) whatever the packages' scripts wrote, and dbus's copy becomes a link to it.
# image.export_boot copies the kernel, initrd and device trees beside the image, listed in the
# report, the same bytes twice; no kernel, several kernels or an unknown image.kernel are
# errors (exit 8) and bad keys are FILE:LINE errors (exit 2).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v debugfs >/dev/null || skip "debugfs missing (e2fsprogs)"
export SOURCE_DATE_EPOCH=1700000000
K=6.1.0-99-test

# A fake kernel package (the bytes do not matter, only where they are), and a package whose
# script does what systemd's and dbus's postinsts do: a fixed machine id, and dbus's copy of it.
d=$(deb_new fake-kernel 1.0 amd64)
deb_file "$d" boot/vmlinuz-$K "kernel image $K
"
deb_file "$d" boot/initrd.img-$K "initramfs $K
"
deb_file "$d" usr/lib/linux-image-$K/vendor/board.dtb "device tree
"
deb_file "$d" usr/lib/linux-image-$K/other.dtb "other tree
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new old-kernel 1.0 amd64)
deb_file "$d" boot/vmlinuz-6.1.0-98-test "older kernel
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new id-maker 1.0 all)
cat >"$d/DEBIAN/postinst" <<'P'
#!/bin/sh
set -e
echo 0123456789abcdef0123456789abcdef >/etc/machine-id
mkdir -p /var/lib/dbus
cp /etc/machine-id /var/lib/dbus/machine-id
# What a script finds while configuring: debootstrap's fstab, no host command line.
cat /etc/fstab >/var/lib/dbus/seen-fstab
cat /proc/cmdline >/var/lib/dbus/seen-cmdline
P
chmod 755 "$d/DEBIAN/postinst"
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new fstab-pkg 1.0 all)
deb_file "$d" etc/fstab "# the package's own
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R" "$T/img" "$T/tmp"
recipe() { # FILE EXTRA-PACKAGES TOP-LEVEL IMAGE-KEYS
	native_recipe "$1" t "$2"
	printf '%s\nimage = { label = "t67"; %s };\n' "$3" "$4" >>"$1"
}
build() { TMPDIR=$T/tmp "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/$1.ext4" "$R/$1.cfg"; }
dbg() { debugfs -R "$2" "$T/img/$1.ext4" 2>/dev/null; }

recipe "$R/t.cfg" ', "fake-kernel", "id-maker"' 'hostname = "board-67";' 'export_boot = true;'
expect_ok build t
e2fsck -fn "$T/img/t.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck finds errors"; }
dbg t "cat /etc/fstab" | grep -qE '^LABEL=t67[[:space:]]+/[[:space:]]+ext4[[:space:]]+errors=remount-ro[[:space:]]+0[[:space:]]+1$' ||
	fail "/etc/fstab does not mount LABEL=t67 on /: $(dbg t "cat /etc/fstab")"
[ "$(dbg t "cat /etc/hostname")" = board-67 ] || fail "/etc/hostname is not the recipe's"
dbg t "cat /etc/hosts" | grep -qP '^127\.0\.1\.1\tboard-67$' || fail "/etc/hosts lacks 127.0.1.1 board-67"
dbg t "cat /etc/hosts" | grep -qP '^127\.0\.0\.1\tlocalhost$' || fail "/etc/hosts lacks localhost"
[ "$(dbg t "cat /etc/machine-id")" = uninitialized ] ||
	fail "/etc/machine-id is '$(dbg t "cat /etc/machine-id")', not 'uninitialized'"
dbg t "stat /var/lib/dbus/machine-id" | grep -q 'Fast link dest: "/etc/machine-id"' ||
	fail "/var/lib/dbus/machine-id is not the link to /etc/machine-id"
dbg t "stat /etc/fstab" | grep -qE "User: +0 +Group: +0 " || fail "/etc/fstab is not root's"
[ "$(dbg t "cat /var/lib/dbus/seen-fstab")" = "# UNCONFIGURED FSTAB FOR BASE SYSTEM" ] ||
	fail "scripts did not find debootstrap's placeholder /etc/fstab: '$(dbg t "cat /var/lib/dbus/seen-fstab")'"
dbg t "stat /var/lib/dbus/seen-cmdline" | grep -q "Size: 0" ||
	fail "a script read the build host's kernel command line: '$(dbg t "cat /var/lib/dbus/seen-cmdline")'"
note "fstab by label, hostname and hosts, machine-id uninitialized, dbus's id linked;" \
	"scripts saw the placeholder fstab and an empty /proc/cmdline"

[ "$(cat "$T/img/t.vmlinuz")" = "kernel image $K" ] || fail "t.vmlinuz is not the image's kernel"
[ "$(cat "$T/img/t.initrd.img")" = "initramfs $K" ] || fail "t.initrd.img is not the image's initrd"
[ "$(cat "$T/img/t.dtbs/vendor/board.dtb")" = "device tree" ] || fail "the device trees are missing"
[ "$(stat -c %Y "$T/img/t.vmlinuz")" = 1700000000 ] || fail "t.vmlinuz's time is not the epoch"
ls "$T/img" | grep -q tmp && fail "temporary files left beside the image: $(ls "$T/img")"
python3 - "$T/img/t.report.json" "$T/img" <<'PY' || fail "the report does not list the boot files"
import hashlib, json, sys
b = json.load(open(sys.argv[1]))["boot"]
assert b["kernel"] == "6.1.0-99-test", b
assert b["vmlinuz"].endswith("/t.vmlinuz") and b["initrd"].endswith("/t.initrd.img"), b
assert b["vmlinuz_sha256"] == hashlib.sha256(open(sys.argv[2] + "/t.vmlinuz", "rb").read()).hexdigest()
assert b["dtb_files"] == 2, b
PY
sums1=$(cd "$T/img" && sha256sum t.ext4 t.vmlinuz t.initrd.img t.dtbs/vendor/board.dtb)
expect_ok build t
[ "$(cd "$T/img" && sha256sum t.ext4 t.vmlinuz t.initrd.img t.dtbs/vendor/board.dtb)" = "$sums1" ] ||
	fail "a second build gives other bytes"
# The replaced device trees are removed beside the outputs' writing, and waited for.
leftover=$(cd "$T/img" && ls -a | grep -e '\.tmp' || true)
[ -z "$leftover" ] || fail "the second build left temporaries beside the image: $leftover"
note "kernel, initrd and device trees beside the image, in the report, same bytes twice"

# Several kernels: an error naming them and the key; image.kernel picks one (without initrd
# and device trees, so the earlier build's are removed, not left to be mistaken for its own).
recipe "$R/t.cfg" ', "fake-kernel", "old-kernel"' '' 'export_boot = true;'
expect_fail 8 "the image has 2 kernels \('6.1.0-98-test', '6.1.0-99-test'\): name the one to export with image.kernel" build t
[ "$(cat "$T/img/t.vmlinuz")" = "kernel image $K" ] || fail "a failed build changed t.vmlinuz"
recipe "$R/t.cfg" ', "fake-kernel", "old-kernel"' '' 'export_boot = true; kernel = "6.1.0-98-test";'
expect_ok build t
grep -q "has no '/boot/initrd.img-6.1.0-98-test'" "$T/err" || fail "no warning about the missing initrd"
[ "$(cat "$T/img/t.vmlinuz")" = "older kernel" ] || fail "image.kernel did not pick the kernel"
[ ! -e "$T/img/t.initrd.img" ] && [ ! -e "$T/img/t.dtbs" ] || fail "the earlier build's initrd or dtbs are left"
recipe "$R/t.cfg" ', "fake-kernel"' '' 'export_boot = true; kernel = "5.10.0-1-test";'
expect_fail 8 "image.kernel: the image has no kernel '5.10.0-1-test'" build t
recipe "$R/t.cfg" '' '' 'export_boot = true;'
expect_fail 8 "image.export_boot: the image has no kernel \(/boot/vmlinuz-\* or /boot/vmlinux-\*\)" build t
note "no kernel, several kernels and an unknown image.kernel refused (exit 8); image.kernel picks"

# A package's /etc/fstab is kept; an overlay's replaces the written one; machine_id = "empty".
recipe "$R/p.cfg" ', "fstab-pkg", "id-maker"' 'machine_id = "empty";' ''
expect_ok build p
[ "$(dbg p "cat /etc/fstab")" = "# the package's own" ] || fail "a package's /etc/fstab was replaced"
dbg p "stat /etc/machine-id" | grep -q "Size: 0" || fail "machine_id = \"empty\": not empty"
mkdir -p "$R/ov/etc"
printf 'LABEL=mine / ext4 defaults 0 1\n' >"$R/ov/etc/fstab"
recipe "$R/o.cfg" '' '' ''
printf 'overlays = ( { source = "ov"; destination = "/"; } );\n' >>"$R/o.cfg"
expect_ok build o
[ "$(dbg o "cat /etc/fstab")" = "LABEL=mine / ext4 defaults 0 1" ] || fail "the overlay's /etc/fstab lost"
recipe "$R/n.cfg" '' '' 'fstab = false;'
expect_ok build n
debugfs -R "stat /etc/fstab" "$T/img/n.ext4" 2>&1 | grep -q "File not found" || fail "fstab = false still wrote /etc/fstab"
note "a package's and an overlay's fstab win; fstab = false; machine_id = \"empty\""

# Recipe errors: FILE:LINE, exit 2, before anything is built.
bad() { # NAME TOP-LEVEL IMAGE-KEYS PATTERN
	recipe "$R/$1.cfg" '' "$2" "$3"
	expect_fail 2 "$4" "$MKIMAGE" --check "$R/$1.cfg"
}
bad h1 'hostname = "bad_name";' '' "h1.cfg:[0-9]+: 'hostname' must be letters, digits and '-'"
bad h2 'hostname = "-lead";' '' "'hostname' must be"
bad h3 "hostname = \"$(printf 'a%.0s' $(seq 65))\";" '' "'hostname' must be"
bad m1 'machine_id = "0123456789abcdef0123456789abcdef";' '' \
	"m1.cfg:[0-9]+: 'machine_id' must be \"uninitialized\" \(first boot semantics\) or \"empty\""
bad f1 '' 'format = "tar"; fstab = true;' "f1.cfg:[0-9]+: 'fstab = true' names the root by its ext4 label"
bad k1 '' 'export_boot = true; kernel = "../vmlinuz";' "k1.cfg:[0-9]+: 'kernel' is a kernel release"
bad e1 '' 'export_boot = "yes";' "'export_boot' must be true or false"
note "bad hostname, machine_id, fstab for tar and kernel refused with FILE:LINE (exit 2)"
