# The FAT writer (tests/tools/fat-write over image/fat.c): a subtree of a staging tree becomes a
# FAT12, FAT16 or FAT32 filesystem that fsck.vfat finds clean and mtools reads back byte for
# byte, long names included; the same bytes as root and as an ordinary user, whatever the umask,
# time zone or heap; a partition of a disk written in place without a byte outside it; what FAT
# cannot hold refused with exit 8, the path and what to do, and nothing left at the output.
. "$(dirname "$0")/lib.sh"
FATW=$TOP/build/tools/fat-write
MKFS=$TOP/build/tools/mkfs
SDE=1700000000

command -v fsck.vfat >/dev/null || skip "dosfstools missing (make test-deps)"
command -v mcopy >/dev/null || skip "mtools missing (make test-deps)"
[ -x "$FATW" ] || fail "build/tools/fat-write missing (make tools)"

# make_tree DIR: an ESP under boot/efi (nested directories, long, colliding and non-ASCII names,
# sparse, empty and hard-linked files) and, outside it, what FAT cannot hold.
make_tree() {
	local d=$1 i
	mkdir -p "$d/boot/efi/EFI/BOOT" "$d/boot/efi/EFI/debian" "$d/boot/efi/loader/entries" \
		"$d/etc"
	python3 -c "import random,sys; r=random.Random(25); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(700000)))" \
		>"$d/boot/efi/EFI/BOOT/BOOTX64.EFI"
	ln "$d/boot/efi/EFI/BOOT/BOOTX64.EFI" "$d/boot/efi/EFI/debian/grubx64.efi"
	for i in $(seq 1 60); do
		echo "title Debian $i" >"$d/boot/efi/loader/entries/debian-6.1.0-$i-amd64.conf"
	done
	echo "default debian-*" >"$d/boot/efi/loader/loader.conf"
	# longna~1.txt's short name is LONGNA~1.TXT: the other may not be given it
	echo first >"$d/boot/efi/loader/longname_1.txt"
	echo second >"$d/boot/efi/loader/longna~1.txt"
	printf 'caf\xc3\xa9\n' >"$d/boot/efi/Caf$(printf '\xc3\xa9') menu.txt"
	: >"$d/boot/efi/empty"
	truncate -s 3M "$d/boot/efi/sparse"
	echo tail >>"$d/boot/efi/sparse"
	ln -s /boot/efi/EFI "$d/etc/efi-link"
	find "$d" -exec touch -h -d @1600000000 {} +
}
make_tree "$T/tree"
"$MKFS" "$T/tree" "$T/m.tar" --format tar --save-manifest "$T/manifest" 2>"$T/log" ||
	{ cat "$T/log"; fail "cannot make the manifest"; }

fatw() { # fatw OUT [ARGS]: the ESP of $T/tree
	local out=$1
	shift
	"$FATW" "$T/tree" "$out" --manifest "$T/manifest" --subtree boot/efi --label ESP \
		--volume-id 2a2b2c2d --sde $SDE "$@"
}

# check IMG TYPE: clean, of TYPE, and every file of the subtree read back identical.
check() {
	local img=$1 type=$2 out
	out=$(fsck.vfat -n "$img" 2>&1) || { echo "$out"; fail "fsck.vfat -n '$img' failed"; }
	[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || { echo "$out"; fail "fsck.vfat -n '$img' complained"; }
	file "$img" | grep -q "FAT ($type bit)" || fail "'$img' is not FAT$type: $(file "$img")"
	rm -rf "$T/back"
	mkdir "$T/back"
	LC_ALL=C.UTF-8 mcopy -s -n -i "$img" '::*' "$T/back/" || fail "mcopy -s from '$img' failed"
	diff -r "$T/tree/boot/efi" "$T/back" || fail "'$img' does not hold the tree's files"
	mdir -i "$img" ::/loader/entries | grep -q 'debian-6.1.0-60-amd64.conf' ||
		fail "'$img' lacks a long name"
	minfo -i "$img" :: | grep -q 'serial number: 2A2B2C2D' || fail "'$img': wrong volume id"
	[ "$(mcopy -n -i "$img" '::loader/longna~1.txt' -)" = second ] &&
		[ "$(mcopy -n -i "$img" '::loader/longname_1.txt' -)" = first ] ||
		fail "'$img': a name finds another file (or two)"
}

# --- FAT12, FAT16, FAT32 -------------------------------------------------------------------
expect_ok fatw "$T/esp12.img"
[ "$(stat -c %s "$T/esp12.img")" = $((5 << 20)) ] || fail "the estimate is not 5 MiB: $(stat -c %s "$T/esp12.img")"
check "$T/esp12.img" 12
expect_ok fatw "$T/esp16.img" --size $((100 << 20))
check "$T/esp16.img" 16
expect_ok fatw "$T/esp32.img" --size $((600 << 20))
check "$T/esp32.img" 32
[ "$(du -k "$T/esp32.img" | cut -f1)" -lt 8192 ] || fail "the 600 MiB FAT32 image is not sparse"

# --- the same bytes: another umask, time zone, cwd and heap, and as an ordinary user --------
(cd / && umask 077 && TZ=Asia/Kolkata MALLOC_PERTURB_=170 fatw "$T/again.img" --size $((100 << 20))) \
	2>/dev/null || fail "the second write failed"
cmp "$T/esp16.img" "$T/again.img" || fail "two writes of one tree differ"
if [ "$(id -u)" = 0 ]; then
	. "$TOP/tests/integration/lib-hooks.sh"
	test_user mki-fat87
	mkdir "$T/user"
	chown mki-fat87 "$T/user"
	chmod 755 "$T"
	as_user mki-fat87 "$FATW" "$T/tree" "$T/user/esp.img" --manifest "$T/manifest" \
		--subtree boot/efi --label ESP --volume-id 2a2b2c2d --sde $SDE --size $((100 << 20)) \
		2>"$T/log" || { cat "$T/log"; fail "the write as an ordinary user failed"; }
	cmp "$T/esp16.img" "$T/user/esp.img" || fail "root's and a user's images differ"
else
	skip_part "not root: no second user to compare with"
fi

# --- a partition of a disk, in place --------------------------------------------------------
python3 - "$T/disk.img" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    f.truncate(64 << 20)
    for off in (0, (1 << 20) - 512, (41 << 20), (64 << 20) - 512):
        f.seek(off)
        f.write(b"\xa5" * 512)
PY
sha_outside() { # the bytes before 1 MiB and from 41 MiB on
	{ head -c $((1 << 20)) "$1"; tail -c +$(((41 << 20) + 1)) "$1"; } | sha256sum
}
before=$(sha_outside "$T/disk.img")
expect_ok fatw "$T/disk.img" --region $((1 << 20)):$((40 << 20)) --size $((40 << 20))
[ "$(sha_outside "$T/disk.img")" = "$before" ] || fail "bytes outside the partition changed"
[ "$(stat -c %s "$T/disk.img")" = $((64 << 20)) ] || fail "the disk changed size"
dd if="$T/disk.img" of="$T/part.img" bs=1M skip=1 count=40 status=none
check "$T/part.img" 16
minfo -i "$T/part.img" :: | grep -q 'hidden sectors: 2048' || fail "hidden sectors are not the offset"
mdir -i "$T/disk.img@@1M" ::/EFI/BOOT | grep -q BOOTX64 || fail "mtools cannot read the partition in place"
expect_fail 8 "does not fit its region" fatw "$T/disk.img" --region $((1 << 20)):$((40 << 20)) \
	--size $((41 << 20))
[ "$(sha_outside "$T/disk.img")" = "$before" ] || fail "a refused write changed the disk"

# --- what FAT cannot hold --------------------------------------------------------------------
no_output() { ! ls "$T"/bad* >/dev/null 2>&1 || fail "something was left at the output: $(ls "$T"/bad*)"; }
expect_fail 8 "'etc/efi-link' is a symbolic link: FAT cannot hold it; leave it out of '/'" \
	"$FATW" "$T/tree" "$T/bad.img" --manifest "$T/manifest"
no_output
expect_fail 8 "directory 'boot/grub' is not in the image tree" fatw "$T/bad.img" --subtree boot/grub
expect_fail 8 "'boot/efi/empty' is not a directory" fatw "$T/bad.img" --subtree boot/efi/empty
expect_fail 8 "does not fit in 2097152 bytes: it needs 5 MiB" fatw "$T/bad.img" --size $((2 << 20))
expect_fail 8 "label 'EFI SYSTEM PART' is not usable" fatw "$T/bad.img" --label "EFI SYSTEM PART"
no_output

bad_name() { # bad_name NAME PATTERN: a file so named in the ESP is refused
	mkdir -p "$T/badtree"
	cp -a "$T/tree/." "$T/badtree/"
	printf x >"$T/badtree/boot/efi/$1"
	"$MKFS" "$T/badtree" "$T/m2.tar" --format tar --save-manifest "$T/m2" 2>/dev/null ||
		fail "cannot make the manifest with '$1'"
	expect_fail 8 "$2" "$FATW" "$T/badtree" "$T/bad.img" --manifest "$T/m2" --subtree boot/efi
	rm -rf "$T/badtree"
	no_output
}
bad_name 'a:b' "the name of 'boot/efi/a:b' holds a character FAT cannot hold"
bad_name 'trailing.' "'boot/efi/trailing\.'.*ends in a dot or a space"
bad_name "$(printf 'bad\033name')" "holds a character FAT cannot hold"
bad_name 'Empty' "'boot/efi/Empty' and 'boot/efi/empty' differ only in case"
bad_name "$(printf 'bad\377')" "holds bytes that are not UTF-8"
