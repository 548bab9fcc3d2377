# Every output bounded (issue 30, rows B3 and B4): a kernel package whose postinst makes its
# kernel, initrd and device tree 1000 MiB sparse files builds under --limit staging-size=1G with
# image.export_boot, and the files beside the image keep the holes (KiB on disk, the report's
# sha256 that of the whole file); past --limit boot-size the export is refused. A postinst that
# creates entries past staging-entries, and an outside hook that writes bytes past staging-size
# (no watchdog sees it), fail the build with exit 7 naming the limit and the directory
# responsible; the flooded tree is not stored in the layer cache either. After a failure nothing is left beside the image, in the work directory or
# running. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

K=6.1.0-85-test
d=$(deb_new big-kernel 1.0 amd64)
deb_file "$d" boot/vmlinuz-$K "kernel $K
"
deb_file "$d" boot/initrd.img-$K "initrd $K
"
deb_file "$d" usr/lib/linux-image-$K/board.dtb "dtb $K
"
cat >"$d/DEBIAN/postinst" <<P
#!/bin/sh
set -e
truncate -s 1000M /boot/vmlinuz-$K /boot/initrd.img-$K /usr/lib/linux-image-$K/board.dtb
P
chmod 755 "$d/DEBIAN/postinst"
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new flood 1.0 all)
cat >"$d/DEBIAN/postinst" <<'P'
#!/bin/sh
set -e
mkdir -p /var/tmp/flood
cd /var/tmp/flood
i=0
while [ $i -lt 20000 ]; do : >f$i; i=$((i + 1)); done
P
chmod 755 "$d/DEBIAN/postinst"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

mkdir -p "$T/r"
cat >"$T/r/fill.sh" <<'H'
#!/bin/sh
mkdir -p "$MKIMAGE_ROOT/srv/fill"
dd if=/dev/urandom of="$MKIMAGE_ROOT/srv/fill/data" bs=1M count=200 2>/dev/null
H
chmod 755 "$T/r/fill.sh"
native_recipe "$T/r/k.cfg" k ', "big-kernel"'
echo 'image = { export_boot = true; };' >>"$T/r/k.cfg"
native_recipe "$T/r/f.cfg" f ', "flood"'
native_recipe "$T/r/h.cfg" h '' '{ name = "fill"; script = "fill.sh"; where = "outside"; }'
LIMITS=(--limit staging-size=1G --limit staging-entries=15000)

# clean DIR WHAT: after a failure, nothing beside the image, no work dir, nothing running.
clean() {
	[ -z "$(left_beside "$1/img")" ] || fail "$2: left beside the image: $(left_beside "$1/img")"
	[ -z "$(ls -A "$1/tmp")" ] || fail "$2: work dir left: $(ls -A "$1/tmp")"
	no_process_under "$1/tmp" "$2"
}

# run_all DIR CMD...: every case with mkimage run as CMD..., cache and outputs under DIR.
run_all() {
	local w=$1 kib
	shift
	b() { TMPDIR=$w/tmp "$@"; }

	expect_ok b "$@" --cache-dir "$w/cache" "${LIMITS[@]}" -o "$w/img/k.ext4" "$T/r/k.cfg"
	for f in vmlinuz initrd.img dtbs/board.dtb; do
		[ "$(stat -c %s "$w/img/k.$f")" = 1048576000 ] || fail "k.$f is not 1000 MiB long"
		kib=$(du -k "$w/img/k.$f" | cut -f1)
		[ "$kib" -lt 1024 ] || fail "k.$f takes $kib KiB beside the image: its holes were copied"
	done
	[ "$(head -c $((7 + ${#K})) "$w/img/k.vmlinuz")" = "kernel $K" ] || fail "k.vmlinuz lost its data"
	python3 - "$w/img/k.report.json" "$w/img/k.vmlinuz" <<'PY' || fail "the report's sha256 is not the file's"
import hashlib, json, sys
h = hashlib.sha256()
with open(sys.argv[2], "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
assert json.load(open(sys.argv[1]))["boot"]["vmlinuz_sha256"] == h.hexdigest()
PY
	note "3 x 1000 MiB sparse boot files: $(du -ck "$w/img/k.vmlinuz" "$w/img/k.initrd.img" "$w/img/k.dtbs" | tail -1 | cut -f1) KiB beside the image, $(du -k "$w/img/k.ext4" | cut -f1) KiB image"
	rm -rf "$w/img/"*

	expect_fail 7 "image.export_boot: the boot files of kernel '$K' are larger than 1500M with '/boot/initrd.img-$K' \(1048576000 bytes, holes included\): refused \(limit 'boot-size' is 1500M" \
		b "$@" --cache-dir "$w/cache" "${LIMITS[@]}" -o "$w/img/k.ext4" --limit boot-size=1500M "$T/r/k.cfg"
	clean "$w" "boot-size"

	expect_fail 7 "the tree holds more than 15000 entries after the maintainer scripts and hooks \(15001 found, most under '/var/tmp/flood' \([0-9]+ entries\).*limit 'staging-entries' is 15000" \
		b "$@" --cache-dir "$w/cache" "${LIMITS[@]}" -o "$w/img/f.ext4" "$T/r/f.cfg"
	clean "$w" "staging-entries"
	grep -q "layer not stored: the configured tree holds more than 15000 entries" "$T/err" ||
		fail "the flooded tree went into the layer cache"
	note "flood: $(grep -o 'the tree holds.*found, most under [^,]*' "$T/err")"

	expect_fail 7 "the tree holds more than 128M of data after the maintainer scripts and hooks \([0-9.]+ MiB allocated found, most under '/srv/fill' \(20[0-9]\.[0-9] MiB\).*limit 'staging-size' is 128M" \
		b "$@" --cache-dir "$w/cache" "${LIMITS[@]}" -o "$w/img/h.ext4" --limit staging-size=128M "$T/r/h.cfg"
	clean "$w" "staging-size"
	note "outside hook: $(grep -o 'the tree holds.*found' "$T/err")"
}

mkdir -p "$T/root/tmp" "$T/root/img"
run_all "$T/root" "$MKIMAGE"

if [ "$(id -u)" = 0 ]; then
	test_user mkibound85
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mkibound85 "$T/u"
	run_all "$T/u" as_user mkibound85 "$MKIMAGE"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
