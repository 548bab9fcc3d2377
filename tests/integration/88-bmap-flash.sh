# What a farm flashes (issue 25, deliverable 5): a sparse disk image with a GPT, a FAT ESP and
# an ext4 root gets a block map in bmap-tools' format and .zst and .xz copies
# (build/tools/bmap-tool drives emit/bmap.c and emit/compress.c). The map lists exactly the ranges
# `bmaptool create` maps, with the same sums; `bmaptool copy` of the image, the .zst and the .xz
# through it gives the image back and checks every range (a byte changed in a mapped range fails
# the copy, one in a hole does not); the listed blocks alone, over garbage, make a disk that
# sfdisk, fsck.vfat and e2fsck find clean. Map and compressed files are the same bytes run after
# run, for any thread count, as root and as an ordinary user. Bad input: exit 8, nothing left.
. "$(dirname "$0")/lib.sh"

TOOL=${BMAP_TOOL:-$TOP/build/tools/bmap-tool}
[ -x "$TOOL" ] || fail "test driver $TOOL missing: run make tools"
for c in bmaptool sfdisk mkfs.vfat fsck.vfat mcopy mdir mke2fs e2fsck zstd xz; do
	command -v "$c" >/dev/null || skip "'$c' missing (make test-deps)"
done
PY=/usr/bin/python3
MiB=1048576

# The disk: 200 MiB, 1 MiB-aligned GPT, p1 a 64 MiB ESP (FAT), p2 a 100 MiB ext4 root, the rest
# unused; each filesystem written straight into its region, so the file keeps its holes.
make_disk() {
	local img=$1 tree=$T/tree
	rm -rf "$tree" && mkdir -p "$tree/etc" "$tree/usr/lib/big"
	echo flash >"$tree/etc/hostname"
	head -c $((2 * MiB)) /dev/urandom >"$tree/usr/lib/big/random"
	yes 'mkimage bmap test line' | head -c $((3 * MiB)) >"$tree/usr/lib/big/text"
	truncate -s 200M "$img"
	printf 'label: gpt\nlabel-id: 5B0C6C4B-1E2A-4F4E-9E4B-8B6E2E1B0E88\nfirst-lba: 2048\n%s\n%s\n' \
		'start=2048, size=64MiB, type=uefi, name=esp' 'size=100MiB, type=linux, name=root' |
		sfdisk -q "$img"
	mkfs.vfat --offset=2048 -i 2588DEAD -n ESP "$img" 65536 >/dev/null 2>&1
	head -c $((300 * 1024)) /dev/urandom >"$T/boot.efi"
	mmd -i "$img@@$MiB" ::EFI ::EFI/BOOT
	mcopy -i "$img@@$MiB" "$T/boot.efi" ::EFI/BOOT/BOOTX64.EFI
	# zeros written as zeros, not fallocated: this disk is data and holes only (see below)
	UNIX_IO_NOZEROOUT=1 mke2fs -q -t ext4 -b 4096 -E offset=$((65 * MiB)),nodiscard \
		-d "$tree" -F "$img" 100M
}

# The <Range> lines of a bmap, one "first-last sum" per line.
ranges() {
	sed -n 's/.*<Range chksum="\([0-9a-f]*\)"> *\([0-9-]*\) *<\/Range>.*/\2 \1/p' "$1"
}

# Check a whole disk: the table, the ESP and its file, the root and its files.
check_disk() {
	local d=$1 what=$2
	sfdisk --verify "$d" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "$what: sfdisk --verify"; }
	grep -q 'No errors detected' "$T/verify" || fail "$what: sfdisk --verify says $(cat "$T/verify")"
	dd if="$d" of="$T/esp" bs=$MiB skip=1 count=64 status=none
	fsck.vfat -n "$T/esp" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$what: fsck.vfat -n"; }
	mcopy -n -i "$d@@$MiB" ::EFI/BOOT/BOOTX64.EFI "$T/efi.back"
	cmp -s "$T/efi.back" "$T/boot.efi" || fail "$what: the ESP's BOOTX64.EFI differs"
	e2fsck -fn "$d?offset=$((65 * MiB))" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$what: e2fsck -fn"; }
	dd if="$d" of="$T/root" bs=$MiB skip=65 count=100 status=none
	debugfs -R "dump /usr/lib/big/random $T/random.back" "$T/root" >/dev/null 2>&1
	cmp -s "$T/random.back" "$T/tree/usr/lib/big/random" || fail "$what: the root's file differs"
}

# apply_map BMAP IMAGE TARGET: only the blocks BMAP lists, copied over TARGET (an independent
# reader of the map: ElementTree, no bmap-tools code).
apply_map() {
	"$PY" - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
bmap, image, target = sys.argv[1:]
root = ET.parse(bmap).getroot()
bs = int(root.find("BlockSize").text)
with open(image, "rb") as i, open(target, "r+b") as o:
    for r in root.find("BlockMap").iter("Range"):
        a, _, b = r.text.strip().partition("-")
        first, last = int(a), int(b or a)
        i.seek(first * bs); o.seek(first * bs)
        o.write(i.read((last - first + 1) * bs))
PY
}

# seek_copy SRC DST: SRC's data regions (SEEK_DATA to SEEK_HOLE) copied as they are, zeros
# included, its holes left holes (cp would also punch runs of zeros).
seek_copy() {
	"$PY" - "$@" <<'PY'
import os, sys
src, dst = sys.argv[1:]
i = os.open(src, os.O_RDONLY)
o = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
size = os.fstat(i).st_size
os.ftruncate(o, size)
pos = 0
while pos < size:
    try:
        start = os.lseek(i, pos, os.SEEK_DATA)
    except OSError:
        break
    end = os.lseek(i, start, os.SEEK_HOLE)
    while start < end:
        n = os.pwrite(o, os.pread(i, min(1 << 20, end - start), start), start)
        start += n
    pos = end
os.close(o)
PY
}

img=$T/disk.img
make_disk "$img"
[ "$(du -k "$img" | cut -f1)" -lt 40000 ] || fail "the fixture is not sparse: $(du -k "$img")"
check_disk "$img" "the fixture"

# The map: what bmaptool create maps, range for range and sum for sum; its own checksum is
# checked by bmaptool copy below.
expect_ok "$TOOL" map "$img" "$T/disk.bmap"
bmaptool create -o "$T/ref.bmap" "$img" 2>"$T/err" || { cat "$T/err" >&2; fail "bmaptool create"; }
ranges "$T/disk.bmap" >"$T/ours"
ranges "$T/ref.bmap" >"$T/theirs"
[ "$(wc -l <"$T/ours")" -ge 3 ] || fail "the map has $(wc -l <"$T/ours") ranges"
diff "$T/ours" "$T/theirs" >&2 || fail "the map's ranges differ from bmaptool create's"
for tag in ImageSize BlockSize BlocksCount MappedBlocksCount; do
	a=$(sed -n "s/.*<$tag> *\([0-9]*\) *<.*/\1/p" "$T/disk.bmap")
	b=$(sed -n "s/.*<$tag> *\([0-9]*\) *<.*/\1/p" "$T/ref.bmap")
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "$tag: ours '$a', bmaptool's '$b'"
done
mapped=$(sed -n 's/.*<MappedBlocksCount> *\([0-9]*\).*/\1/p' "$T/disk.bmap")
[ "$mapped" -lt $((40 * MiB / 4096)) ] || fail "$mapped blocks mapped: the holes were not seen"

# Allocated but never written (fallocate; what libext2fs's zeroing leaves on ext4): reads as
# zeros and is left out of the map, also once it was read into the page cache (when SEEK_DATA
# starts calling it data); bmaptool create (FIEMAP) maps it: those blocks are the difference.
seek_copy "$img" "$T/unwritten.img"
fallocate -o $((180 * MiB)) -l $((2 * MiB)) "$T/unwritten.img"
cat "$T/unwritten.img" >/dev/null
expect_ok "$TOOL" map "$T/unwritten.img" "$T/unwritten.bmap"
cmp "$T/unwritten.bmap" "$T/disk.bmap" || fail "an unwritten extent changed the map"
bmaptool create -o "$T/fiemap.bmap" "$T/unwritten.img" 2>"$T/err" ||
	{ cat "$T/err" >&2; fail "bmaptool create"; }
"$PY" - "$T/disk.bmap" "$T/fiemap.bmap" "$T/unwritten.img" <<'PY' ||
import sys, xml.etree.ElementTree as ET
def blocks(path):
    s = set()
    for r in ET.parse(path).getroot().find("BlockMap").iter("Range"):
        a, _, b = r.text.strip().partition("-")
        s.update(range(int(a), int(b or a) + 1))
    return s
ours, theirs = blocks(sys.argv[1]), blocks(sys.argv[2])
extra = theirs - ours
assert ours <= theirs and extra == set(range(180 * 256, 182 * 256)), sorted(extra)[:5]
with open(sys.argv[3], "rb") as f:
    f.seek(180 << 20)
    assert f.read(2 << 20) == bytes(2 << 20)
PY
	fail "bmaptool create did not map exactly the unwritten extent more"

# Compressed after the map; what zstd -d and xz -d give back is the image.
expect_ok "$TOOL" compress "$img" "$img.zst" zstd
expect_ok "$TOOL" compress "$img" "$img.xz" xz
zstd -q -dc "$img.zst" | cmp -s - "$img" || fail "zstd -d of the .zst is not the image"
xz -dc "$img.xz" | cmp -s - "$img" || fail "xz -d of the .xz is not the image"
[ "$(stat -c %s "$img.zst")" -lt $((12 * MiB)) ] || fail "the .zst is $(stat -c %s "$img.zst") bytes"

# The same bytes again: map and compression rerun, one thread and three, on a copy.
seek_copy "$img" "$T/copy.img"
expect_ok "$TOOL" map "$T/copy.img" "$T/copy.bmap"
cmp "$T/copy.bmap" "$T/disk.bmap" || fail "the map of the same bytes differs"
for t in 1 3; do
	expect_ok "$TOOL" compress "$T/copy.img" "$T/copy.zst" zstd $t
	cmp "$T/copy.zst" "$img.zst" || fail "zstd with $t threads: other bytes"
done
expect_ok "$TOOL" compress "$T/copy.img" "$T/copy.xz" xz 1
cmp "$T/copy.xz" "$img.xz" || fail "xz with 1 thread: other bytes"

# bmaptool copy through the map, from each file: the image back (a regular file target is
# truncated by bmaptool, so its unmapped blocks read as zeros, as the image's holes do).
for src in "$img" "$img.zst" "$img.xz"; do
	rm -f "$T/target"
	bmaptool copy --bmap "$T/disk.bmap" "$src" "$T/target" >"$T/out" 2>&1 ||
		{ cat "$T/out" >&2; fail "bmaptool copy ${src##*/}"; }
	cmp -s "$T/target" "$img" || fail "bmaptool copy of ${src##*/}: not the image"
done

# Only the listed blocks, over garbage: a disk the tools find clean, and an unlisted block still
# garbage (the map is what was applied).
head -c $((200 * MiB)) /dev/urandom >"$T/garbage"
cp "$T/garbage" "$T/target"
apply_map "$T/disk.bmap" "$img" "$T/target"
check_disk "$T/target" "the mapped blocks over garbage"
cmp -s <(tail -c $((4 * MiB)) "$T/target" | head -c $((2 * MiB))) \
	<(tail -c $((4 * MiB)) "$T/garbage" | head -c $((2 * MiB))) ||
	fail "an unmapped range of the target was written"

# bmaptool itself over garbage: a loop device (root), since it truncates a regular file.
if [ "$(id -u)" = 0 ] && loop=$(losetup -f --show "$T/garbage" 2>/dev/null); then
	rc=0
	bmaptool copy --bmap "$T/disk.bmap" "$img.zst" "$loop" >"$T/out" 2>&1 || rc=$?
	losetup -d "$loop"
	[ $rc = 0 ] || { cat "$T/out" >&2; fail "bmaptool copy onto $loop"; }
	check_disk "$T/garbage" "bmaptool copy onto a garbage device"
else
	skip_part "bmaptool onto a garbage-filled device: needs root and a loop device"
fi

# A byte changed in a mapped range: bmaptool copy fails on that range's sum, from the image and
# from its .zst. One in a hole: not in the map, the copy passes.
read -r first _ < <(sed -n 2p "$T/ours")
off=$((${first%-*} * 4096 + 100))
cp "$img" "$T/bad.img"
printf 'X' | dd of="$T/bad.img" bs=1 seek=$off conv=notrunc status=none
expect_ok "$TOOL" compress "$T/bad.img" "$T/bad.img.zst" zstd
for src in "$T/bad.img" "$T/bad.img.zst"; do
	rc=0
	bmaptool copy --bmap "$T/disk.bmap" "$src" "$T/target" >"$T/out" 2>&1 || rc=$?
	[ $rc != 0 ] && grep -qi 'checksum mismatch' "$T/out" ||
		{ cat "$T/out" >&2; fail "bmaptool copy of ${src##*/} with a changed byte passed"; }
done
cp "$img" "$T/hole.img"
printf 'X' | dd of="$T/hole.img" bs=1 seek=$((199 * MiB)) conv=notrunc status=none
bmaptool copy --bmap "$T/disk.bmap" "$T/hole.img" "$T/target" >"$T/out" 2>&1 ||
	{ cat "$T/out" >&2; fail "a byte in a hole failed the copy"; }
# ... and a map whose text was changed is refused by its own checksum.
sed 's/<MappedBlocksCount> \([0-9]*\)/<MappedBlocksCount> 1\1/' "$T/disk.bmap" >"$T/edited.bmap"
rc=0
bmaptool copy --bmap "$T/edited.bmap" "$img" "$T/target" >"$T/out" 2>&1 || rc=$?
[ $rc != 0 ] && grep -q 'checksum mismatch for bmap file' "$T/out" ||
	{ cat "$T/out" >&2; fail "an edited map was accepted"; }

# Bad input: exit 8 naming the file, nothing written or left.
expect_fail 8 "cannot read the image '$T/none.img' to map its blocks: No such file" \
	"$TOOL" map "$T/none.img" "$T/none.bmap"
expect_fail 8 "cannot read the image '$T/none.img' to compress it: No such file" \
	"$TOOL" compress "$T/none.img" "$T/none.zst" zstd
mkfifo "$T/fifo.img"
expect_fail 8 "cannot map the blocks of '$T/fifo.img': not a regular file" \
	"$TOOL" map "$T/fifo.img" "$T/none.bmap"
expect_fail 8 "cannot compress '$T/fifo.img': not a regular file" \
	"$TOOL" compress "$T/fifo.img" "$T/none.xz" xz
expect_fail 8 "cannot write the block map '$T/no/dir.bmap': No such file or directory" \
	"$TOOL" map "$img" "$T/no/dir.bmap"
expect_fail 8 "cannot create '$T/no/dir.zst.tmp-[0-9]+': No such file or directory; check" \
	"$TOOL" compress "$img" "$T/no/dir.zst" zstd
ls "$T" | grep -E '^none\.|tmp-' && fail "a failed run left a file"

# Interrupted while compressing a large image: exit 130, no output, no temporary file.
truncate -s 8G "$T/large.img"
dd if="$img" of="$T/large.img" bs=$MiB count=80 conv=notrunc,sparse status=none
"$TOOL" compress "$T/large.img" "$T/large.img.xz" xz 1 2>"$T/err" &
pid=$!
for _ in $(seq 600); do
	ls "$T"/large.img.xz.tmp-* >/dev/null 2>&1 && [ -s "$(ls "$T"/large.img.xz.tmp-*)" ] && break
	sleep 0.05
done
kill -TERM $pid
rc=0
wait $pid || rc=$?
[ $rc = 130 ] || { cat "$T/err" >&2; fail "the interrupted compression exited $rc"; }
grep -q "interrupted: the unfinished '$T/large.img.xz' is removed" "$T/err" || fail "no word of it"
ls "$T" | grep -E '^large\.img\.xz' && fail "the interrupted compression left a file"

# An ordinary user: the same map and the same compressed bytes; a directory not theirs refused.
if [ "$(id -u)" = 0 ]; then
	. "$(dirname "$0")/lib-hooks.sh"
	test_user mkibmap88
	mkdir "$T/u" && chown mkibmap88 "$T/u" && chmod 755 "$T"
	seek_copy "$img" "$T/u/disk.img" && chown mkibmap88 "$T/u/disk.img"
	expect_ok as_user mkibmap88 "$TOOL" map "$T/u/disk.img" "$T/u/disk.bmap"
	expect_ok as_user mkibmap88 "$TOOL" compress "$T/u/disk.img" "$T/u/disk.img.zst" zstd
	expect_ok as_user mkibmap88 "$TOOL" compress "$T/u/disk.img" "$T/u/disk.img.xz" xz
	cmp "$T/u/disk.bmap" "$T/disk.bmap" || fail "the user's map differs from root's"
	cmp "$T/u/disk.img.zst" "$img.zst" || fail "the user's .zst differs from root's"
	cmp "$T/u/disk.img.xz" "$img.xz" || fail "the user's .xz differs from root's"
	expect_ok as_user mkibmap88 bmaptool copy "$T/u/disk.img.zst" "$T/u/target"
	grep -q "discovered bmap file '$T/u/disk.bmap'" "$T/err" || fail "bmaptool did not find the map"
	cmp -s "$T/u/target" "$img" || fail "the user's bmaptool copy (bmap found beside) differs"
	expect_fail 8 "cannot write the block map '$T/root.bmap': Permission denied" \
		as_user mkibmap88 "$TOOL" map "$T/u/disk.img" "$T/root.bmap"
	expect_fail 8 "cannot create '$T/root.zst.tmp-[0-9]+': Permission denied; check" \
		as_user mkibmap88 "$TOOL" compress "$T/u/disk.img" "$T/root.zst" zstd
	ls "$T" | grep -E '^root\.' && fail "the refused user left a file"
else
	skip_part "the same bytes as an ordinary user: needs root to make one"
fi
exit 0
