# A verified read-only root for arm-board (issue 26's goal: no slower than the usual tools):
# recipes/arm-board-verity.cfg is built once (its configured tree then comes from the layer
# cache), its root read back out of slot A (owners kept: run as root), and that tree written as
# squashfs (zstd, 128 KiB blocks) plus its dm-verity hash tree by mkimage's writers
# (tests/tools/mkfs --format squashfs --verity) against `mksquashfs` + `veritysetup format` on the
# same tree; the squashfs' size against the ext4 image of the same tree; and, for the record,
# the whole disk's image stage (boot, both slots, hash trees, data, table, bmap). Medians of REPS
# runs (default 3), the ratios, the load before and after. Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
MKFS=$TOP/build/tools/mkfs
for t in mksquashfs veritysetup unsquashfs; do
	command -v "$t" >/dev/null || { echo "$t missing (make bench-deps)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "needs root: the tree is read back with its owners"; exit 77; }
W=$(mktemp -d /var/tmp/mkimage-bench-verity-root.XXXXXX)
export XDG_CACHE_HOME=${BENCH_CACHE:-/var/tmp/mkimage-bench-cache}
export SOURCE_DATE_EPOCH=1700000000
. "$TOP/tests/flagship.sh"
flagship_serve arm-board-verity
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$W"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

mkdir -p "$W/o"
for i in $(seq "$REPS"); do
	/usr/bin/time -f %e -o "$W/t" "$TOP/mkimage" --source "$SRC" --output "$W/o/v.img" \
		"$TOP/recipes/arm-board-verity.cfg" >"$W/build.log" 2>&1 || { tail -20 "$W/build.log"; exit 1; }
	cat "$W/t" >>"$W/disk.wall"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"]["image"])' \
		"$W/o/v.report.json" >>"$W/disk.stage"
done

# Slot A's tree, owners and all.
read -r start size < <(sfdisk --json "$W/o/v.img" | python3 -c '
import json, sys
p = [p for p in json.load(sys.stdin)["partitiontable"]["partitions"] if p.get("name") == "root-a"][0]
print(p["start"], p["size"])')
dd if="$W/o/v.img" of="$W/a.part" bs=512 skip="$start" count="$size" status=none
unsquashfs -q -n -d "$W/tree" "$W/a.part" >/dev/null
rm -f "$W/a.part" "$W/o/v.img"
"$MKFS" "$W/tree" "$W/unused.ext4" --save-manifest "$W/m" --sde "$SOURCE_DATE_EPOCH" >/dev/null 2>&1

for i in $(seq "$REPS"); do
	rm -f "$W/a.sqfs" "$W/a.verity" "$W/b.sqfs" "$W/b.verity"
	/usr/bin/time -f %e -a -o "$W/mki" "$MKFS" "$W/tree" "$W/a.sqfs" --manifest "$W/m" \
		--sde "$SOURCE_DATE_EPOCH" --format squashfs --verity "$W/a.verity" >/dev/null
	/usr/bin/time -f %e -a -o "$W/usual" sh -c '
		env -u SOURCE_DATE_EPOCH mksquashfs "$1/tree" "$1/b.sqfs" -comp zstd -b 131072 -no-progress -quiet -noappend \
			-mkfs-time "$2" -all-time "$2" >/dev/null &&
		veritysetup format "$1/b.sqfs" "$1/b.verity" >/dev/null' sh "$W" "$SOURCE_DATE_EPOCH"
done
"$MKFS" "$W/tree" "$W/c.ext4" --manifest "$W/m" --sde "$SOURCE_DATE_EPOCH" >/dev/null

a=$(median <"$W/mki") b=$(median <"$W/usual")
sa=$(stat -c %s "$W/a.sqfs") sb=$(stat -c %s "$W/b.sqfs") se=$(stat -c %s "$W/c.ext4")
echo "tree: slot A of arm-board-verity, $(wc -l <"$W/m") entries, $(du -sm "$W/tree" | cut -f1) MB"
echo "mkimage squashfs + hash tree: median ${a}s of $(tr '\n' ' ' <"$W/mki")"
echo "mksquashfs + veritysetup format: median ${b}s of $(tr '\n' ' ' <"$W/usual")"
echo "whole disk (arm-board-verity), image stage: median $(median <"$W/disk.stage")s; whole run from the layer $(median <"$W/disk.wall")s"
awk -v a="$a" -v b="$b" -v sa="$sa" -v sb="$sb" -v se="$se" 'BEGIN {
	printf "time mkimage/usual: %.2fx (goal: at most 1.00x)\n", (b > 0 ? a / b : 0)
	printf "squashfs: %d bytes (mksquashfs %d, %.3fx); ext4 image of the tree: %d bytes; squashfs/ext4 %.3f\n", sa, sb, sa / sb, se, sa / se }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
