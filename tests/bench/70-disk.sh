# Writing a whole disk: arm-board's disk (GPT, its root partition, extlinux.conf, the bmap)
# against writing its ext4 image alone, both from the same configured tree restored from the
# layer cache (issue 25's goal: within 10%), and against the same disk assembled the usual way
# from that tree: `mke2fs -t ext4 -d` into a file, `sfdisk` on the disk file, `dd` of the
# filesystem into place, `bmaptool create`. Medians of REPS runs (default 3) of mkimage's image
# stage (report.json: the writer alone) and of the whole run (layer restore included), and the
# ratios; the load average before and after. Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
W=$(mktemp -d /var/tmp/mkimage-bench-disk.XXXXXX)
# The layer cache outlives the run: the first build configures the tree (minutes under QEMU).
export XDG_CACHE_HOME=${BENCH_CACHE:-/var/tmp/mkimage-bench-cache}
export SOURCE_DATE_EPOCH=1700000000
. "$TOP/tests/flagship.sh"
flagship_serve arm-board
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$W"' EXIT

# The recipe as it is (disk) and without its disk section (the ext4 image alone): one tree.
mkdir -p "$W/r/recipes" "$W/r/hooks" "$W/o"
cp "$TOP"/hooks/*.sh "$W/r/hooks/" && cp -a "$TOP/recipes/overlay" "$W/r/recipes/"
cp "$TOP/recipes/arm-board.cfg" "$W/r/recipes/disk.cfg"
sed '/^disk = {/,/^};/d' "$TOP/recipes/arm-board.cfg" >"$W/r/recipes/ext4.cfg"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$TOP/mkimage" --source "$SRC" --output "$W/o/ext4.ext4" "$W/r/recipes/ext4.cfg" >"$W/first.log" 2>&1 ||
	{ tail -20 "$W/first.log"; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
stage() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"]["image"])' "$1"; }
run() { # run NAME OUTPUT RECIPE: one build; appends its wall and image stage times
	/usr/bin/time -f %e -o "$W/t" "$TOP/mkimage" --source "$SRC" --output "$2" "$3" >"$W/$1.log" 2>&1 ||
		{ tail -20 "$W/$1.log"; exit 1; }
	cat "$W/t" >>"$W/$1.wall"
	stage "${2%.*}.report.json" >>"$W/$1.stage"
}
for i in $(seq "$REPS"); do
	run ext4 "$W/o/ext4.ext4" "$W/r/recipes/ext4.cfg"
	run disk "$W/o/disk.img" "$W/r/recipes/disk.cfg"
done
grep -q "restored from layer" "$W/disk.log" || echo "WARNING: the disk build did not restore the layer"

# The usual way, from the same tree (read back out of the ext4 image, owners kept: run as root)
# into a disk of the same layout and sizes as mkimage's.
rm -rf "$W/tree" && mkdir "$W/tree"
debugfs -R "rdump / $W/tree" "$W/o/ext4.ext4" >/dev/null 2>&1
read -r start size < <(sfdisk --json "$W/o/disk.img" | python3 -c '
import json, sys
p = json.load(sys.stdin)["partitiontable"]["partitions"][0]
print(p["start"], p["size"])')
disk_bytes=$(stat -c %s "$W/o/disk.img")
usual() {
	rm -f "$W/u.ext4" "$W/u.img"
	E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH mke2fs -q -F -t ext4 -L arm-board -d "$W/tree" \
		"$W/u.ext4" "$((size / 2))k"
	truncate -s "$disk_bytes" "$W/u.img"
	printf 'label: gpt\nstart=%s, size=%s, type=69dad710-2ce4-4e3c-b16c-21a1d49abed3, name=root, attrs=LegacyBIOSBootable\n' \
		"$start" "$size" | sfdisk -q "$W/u.img"
	dd if="$W/u.ext4" of="$W/u.img" bs=1M seek="$((start * 512))" oflag=seek_bytes conv=notrunc,sparse status=none
	bmaptool -q create -o "$W/u.img.bmap" "$W/u.img"
}
export -f usual
export W start size disk_bytes
for i in $(seq "$REPS"); do
	/usr/bin/time -f %e -o "$W/t" bash -c usual
	cat "$W/t" >>"$W/usual.wall"
done

e=$(median <"$W/ext4.stage") d=$(median <"$W/disk.stage") u=$(median <"$W/usual.wall")
echo "tree: $(du -sm "$W/tree" | cut -f1) MB; disk $((disk_bytes >> 20)) MiB, root partition $((size >> 11)) MiB"
echo "ext4 image alone, image stage: median ${e}s of $(tr '\n' ' ' <"$W/ext4.stage"); whole run $(median <"$W/ext4.wall")s"
echo "whole disk, image stage:       median ${d}s of $(tr '\n' ' ' <"$W/disk.stage"); whole run $(median <"$W/disk.wall")s"
echo "usual way (mke2fs -d, sfdisk, dd, bmaptool create): median ${u}s of $(tr '\n' ' ' <"$W/usual.wall")"
awk -v e="$e" -v d="$d" -v u="$u" 'BEGIN {
	printf "disk/ext4: %.2fx (goal: at most 1.10x)\n", (e > 0 ? d / e : 0)
	printf "usual/mkimage disk: %.2fx\n", (d > 0 ? u / d : 0) }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
