# test-cost: slow (a native build writing a disk with a multi-GiB sparse partition, hashed by sha256sum)
# Hashing in one pass (issue 38, deliverable 5): a package ships a large sparse file (a GNU
# sparse member: a few KiB of .deb) that a `file:` partition holds. The report's sha256 of every
# partition is sha256sum over its byte range, the image's (and the summary line's) is sha256sum
# of the whole file, the bmap lists only the data and bmaptool copy through it gives the image
# back; the build reads well under the file's size (before, the whole disk was read and hashed
# again after the partitions: holes included). As root and as an ordinary user, the same bytes.
# MKIMAGE_TEST_SPARSE_GIB sets the sparse file's size (default 2); MKIMAGE_BEFORE, an older
# mkimage binary, also builds the recipe and must give the same image, report digests and bmap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

for t in sfdisk e2fsck fsck.vfat bmaptool sha256sum; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
export SOURCE_DATE_EPOCH=1700000000
GIB=${MKIMAGE_TEST_SPARSE_GIB:-2}
SIZE=$((GIB << 30))
MiB=1048576

# The sparse payload: data at the start, a MiB across an unaligned offset in the middle, the
# last 4 bytes; the rest holes. GNU tar keeps the holes, dpkg writes them as holes.
src=$T/src/sparse
mkdir -p "$src/data/usr/share/sparse" "$src/ctl"
big=$src/data/usr/share/sparse/big.img
truncate -s "$SIZE" "$big"
printf 'head' | dd of="$big" conv=notrunc status=none
yes 'sparse payload line' | head -c $MiB | dd of="$big" bs=64K seek=$((SIZE / 2 - 4095)) oflag=seek_bytes iflag=fullblock conv=notrunc status=none
printf 'tail' | dd of="$big" bs=1 seek=$((SIZE - 4)) conv=notrunc status=none
printf 'Package: sparse-payload\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: sparse\n' >"$src/ctl/control"
(cd "$src/data" && tar --sparse --format=gnu --owner=0 --group=0 -cJf "$src/data.tar.xz" ./usr)
(cd "$src/ctl" && tar --owner=0 --group=0 -cJf "$src/control.tar.xz" ./control)
echo 2.0 >"$src/debian-binary"
mkdir -p "$T/repo/pool/main"
(cd "$src" && ar rc "$T/repo/pool/main/sparse-payload_1.0_all.deb" debian-binary control.tar.xz data.tar.xz)
d=$(deb_new board-files 1.0 all)
deb_file "$d" boot/efi/EFI/BOOT/BOOTX64.EFI "an efi loader
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R"
native_recipe "$R/sparse.cfg" sparse ', "sparse-payload", "board-files"'
cat >>"$R/sparse.cfg" <<'C'
disk = {
bmap = true;
partitions = (
{ name = "esp"; type = "esp"; contents = "/boot/efi"; label = "EFI"; },
{ name = "root"; type = "root"; contents = "root"; },
{ name = "big"; type = "linux"; contents = "file:/usr/share/sparse/big.img"; },
{ name = "slot"; type = "linux"; size = "4M"; }
);
};
C
LIMITS="--limit disk-size=$((GIB + 2))G --limit deb-data=$((GIB + 1))G"

# io_run OUT CMD...: run CMD; OUT gets the bytes it and its children read (rchar, /proc/PID/io).
io_run() {
	python3 -c '
import subprocess, sys
def rchar():
    for line in open("/proc/self/io"):
        if line.startswith("rchar:"):
            return int(line.split()[1])
a = rchar()
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % (rchar() - a))
sys.exit(rc)' "$@"
}

# build WHO MKIMAGE [as_user USER]: the disk at $T/WHO/sparse.img, with report and bmap.
build() {
	local who=$1 bin=$2 out=$T/$1
	shift 2
	mkdir -p "$out/tmp"
	chmod -R a+rwX "$out"
	TMPDIR=$out/tmp expect_ok "$@" "$bin" --cache-dir "$out/cache" -o "$out/sparse.img" \
		$LIMITS "$R/sparse.cfg"
	cp "$T/out" "$out/summary"
	[ -z "$(ls -A "$out" | grep -v -x -e tmp -e cache -e summary -e 'sparse\.[a-z0-9.]*')" ] ||
		fail "$who: left beside the disk: $(ls -A "$out")"
}

# check WHO: every digest of the report and the summary line against sha256sum; the bmap.
check() {
	local who=$1 out=$T/$1 img=$T/$1/sparse.img whole
	sfdisk --verify "$img" >"$T/verify" 2>&1 && grep -q 'No errors detected' "$T/verify" ||
		{ cat "$T/verify" >&2; fail "$who: sfdisk --verify"; }
	whole=$(sha256sum "$img" | cut -d' ' -f1)
	grep -q "sha256=$whole " "$out/summary" || fail "$who: summary line: $(cat "$out/summary")"
	python3 - "$out/sparse.report.json" "$img" "$whole" "$SIZE" <<'PY' >"$T/parts" ||
import json, sys
r = json.load(open(sys.argv[1]))
assert r["image"]["sha256"] == sys.argv[3], ("image sha256", r["image"]["sha256"], sys.argv[3])
parts = r["disk"]["partitions"]
big = [p for p in parts if p["name"] == "big"][0]
assert big["size"] >= int(sys.argv[4]), big
for p in parts:
    print(p["name"], p["offset"], p["size"], p["sha256"])
PY
		fail "$who: the report's image digest or the big partition"
	while read -r name off size sum; do
		got=$(tail -c +$((off + 1)) "$img" | head -c "$size" | sha256sum | cut -d' ' -f1)
		[ "$got" = "$sum" ] || fail "$who: partition $name: report $sum, sha256sum $got"
		case $name in
		root) e2fsck -fn "$img?offset=$off" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: e2fsck -fn"; } ;;
		esp) dd if="$img" of="$T/esp" bs=$MiB skip=$((off / MiB)) count=$((size / MiB)) status=none
		     fsck.vfat -n "$T/esp" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: fsck.vfat -n"; } ;;
		big) tail -c +$((off + 1)) "$img" | head -c "$SIZE" | cmp -s - "$big" ||
			fail "$who: the big partition does not hold the file" ;;
		esac
	done <"$T/parts"
	mapped=$(sed -n 's/.*<MappedBlocksCount> *\([0-9]*\).*/\1/p' "$out/sparse.img.bmap")
	[ "$mapped" -lt $((512 * MiB / 4096)) ] || fail "$who: $mapped blocks mapped: holes mapped"
	rm -f "$T/copy"
	bmaptool copy --bmap "$out/sparse.img.bmap" "$img" "$T/copy" >"$T/bt" 2>&1 ||
		{ cat "$T/bt" >&2; fail "$who: bmaptool copy through the map"; }
	cmp -s "$T/copy" "$img" || fail "$who: bmaptool's copy is not the disk"
	rm -f "$T/copy"
}

build root "$MKIMAGE" io_run "$T/root.rchar"
check root
read_bytes=$(cat "$T/root.rchar")
note "a $GIB GiB sparse partition: the build read $((read_bytes / MiB)) MiB"
[ "$read_bytes" -lt $((SIZE / 2)) ] ||
	fail "the build read $read_bytes bytes for a disk of $SIZE mostly holes: the holes were read"

if [ -n "${MKIMAGE_BEFORE:-}" ]; then
	build before "$MKIMAGE_BEFORE" io_run "$T/before.rchar"
	note "the same with $MKIMAGE_BEFORE: read $(($(cat "$T/before.rchar") / MiB)) MiB"
	cmp "$T/root/sparse.img" "$T/before/sparse.img" || fail "the disk differs from MKIMAGE_BEFORE's"
	cmp "$T/root/sparse.img.bmap" "$T/before/sparse.img.bmap" || fail "the bmap differs"
	for who in root before; do
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["image"]["sha256"], r["image"]["bytes"], r["disk"]["partitions"])' \
			"$T/$who/sparse.report.json" >"$T/$who.digests"
	done
	cmp "$T/root.digests" "$T/before.digests" || fail "the report's digests differ"
fi

if test_user mki126user 2>/dev/null; then
	chmod a+rx "$T" "$R" && chmod a+r "$R"/*.cfg
	build user "$MKIMAGE" as_user mki126user
	cmp "$T/root/sparse.img" "$T/user/sparse.img" || fail "the user's disk differs from root's"
	cmp "$T/root/sparse.img.bmap" "$T/user/sparse.img.bmap" || fail "the user's bmap differs"
else
	skip_part "no throwaway user (not root)"
fi
