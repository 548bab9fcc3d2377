# A sparse data.tar member (issue 13, D3): a .deb of a few hundred bytes declaring a 3 GiB GNU
# sparse file used to write 3 GiB to the staging tree and give a 4.4 GB image. Its holes stay
# holes in the tree and in the ext4 image, its content reads back exactly, e2fsck is clean and
# dpkg's md5sum of it is right (its declared size counts against deb-data and staging-size).
. "$(dirname "$0")/lib.sh"
UNPACK=${UNPACK:-$TOP/build/tools/unpack}
MKFS=${MKFS:-$TOP/build/tools/mkfs}

# A hand-made .deb: GNU tar writes the sparse member, ar wraps it.
src=$T/src
mkdir -p "$src/data/usr/share/sparse" "$src/ctl"
truncate -s 3G "$src/data/usr/share/sparse/big"
printf 'head' | dd of="$src/data/usr/share/sparse/big" conv=notrunc status=none
printf 'tail' | dd of="$src/data/usr/share/sparse/big" bs=1 seek=$((3 * 1024 * 1024 * 1024 - 4)) conv=notrunc status=none
printf 'Package: sparse\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: sparse\n' >"$src/ctl/control"
(cd "$src/data" && tar --sparse --format=gnu --owner=0 --group=0 -cJf "$src/data.tar.xz" ./usr)
(cd "$src/ctl" && tar --owner=0 --group=0 -cJf "$src/control.tar.xz" ./control)
echo 2.0 >"$src/debian-binary"
(cd "$src" && ar rc "$T/sparse.deb" debian-binary control.tar.xz data.tar.xz)
[ "$(stat -c %s "$T/sparse.deb")" -lt 4096 ] || fail "the test .deb is not small: $(stat -c %s "$T/sparse.deb")"

mkdir -p "$T/w"
start=$(date +%s)
expect_ok "$UNPACK" "$T/w" "$T/sparse.deb"
f=$T/w/root/usr/share/sparse/big
[ "$(stat -c %s "$f")" = $((3 * 1024 * 1024 * 1024)) ] || fail "wrong size $(stat -c %s "$f")"
used=$(($(stat -c %b "$f") * $(stat -c %B "$f")))
[ "$used" -lt $((1024 * 1024)) ] || fail "the tree file is not sparse: $used bytes allocated"
[ "$(head -c 4 "$f")" = head ] && [ "$(tail -c 4 "$f")" = tail ] || fail "content is wrong"
grep -q "$(md5sum <"$f" | cut -c1-32)  usr/share/sparse/big" "$T/w/root/var/lib/dpkg/info/sparse.md5sums" ||
	fail "the md5sum of the sparse file is not dpkg's"

expect_ok "$MKFS" "$T/w/root" "$T/img.ext4" --manifest "$T/w/manifest" --sde 1700000000
[ "$(stat -c %s "$T/img.ext4")" -lt $((256 * 1024 * 1024)) ] || fail "the image is $(stat -c %s "$T/img.ext4") bytes"
e2fsck -fn "$T/img.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn reports problems"; }
blocks=$(debugfs -R "stat /usr/share/sparse/big" "$T/img.ext4" 2>/dev/null | sed -n 's/.*Blockcount: \([0-9]*\).*/\1/p')
[ -n "$blocks" ] && [ "$blocks" -lt 2048 ] || fail "the image holds the file with $blocks sectors"
debugfs -R "dump /usr/share/sparse/big $T/back" "$T/img.ext4" >/dev/null 2>&1
[ "$(head -c 4 "$T/back")" = head ] && [ "$(tail -c 4 "$T/back")" = tail ] &&
	[ "$(stat -c %s "$T/back")" = $((3 * 1024 * 1024 * 1024)) ] || fail "the image's copy is wrong"
rm -f "$T/back"
note "3 GiB sparse member: $used bytes in the tree, $blocks sectors in the image, $(($(date +%s) - start)) s"
