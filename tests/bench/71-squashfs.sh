# Writing a squashfs of a realistic tree (BENCH_TREE, default the host's /usr/lib/python3: many
# small files, some large) with mkimage's writer (tests/tools/mkfs --format squashfs: the writer
# alone, from a manifest of the tree) against `mksquashfs` on the same tree (zstd, 128 KiB
# blocks, the same owners: no -all-root), and the image's size against the ext4 image of the same
# tree. Medians of REPS runs (default 3), the ratios, the load before and after. Never asserts.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
TREE=${BENCH_TREE:-/usr/lib/python3}
MKFS=$TOP/build/tools/mkfs
command -v mksquashfs >/dev/null || { echo "mksquashfs missing (make bench-deps)"; exit 77; }
W=$(mktemp -d /var/tmp/mkimage-bench-sqfs.XXXXXX)
trap 'rm -rf "$W"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$MKFS" "$TREE" "$W/unused.ext4" --save-manifest "$W/m" --sde 1700000000 >/dev/null 2>&1 ||
	"$MKFS" "$TREE" "$W/unused.ext4" --save-manifest "$W/m" --sde 1700000000
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in $(seq "$REPS"); do
	rm -f "$W/a.sqfs" "$W/b.sqfs"
	/usr/bin/time -f "%e %U" -a -o "$W/mki" "$MKFS" "$TREE" "$W/a.sqfs" --manifest "$W/m" \
		--sde 1700000000 --format squashfs
	/usr/bin/time -f "%e %U" -a -o "$W/mks" mksquashfs "$TREE" "$W/b.sqfs" -comp zstd -b 131072 \
		-no-progress -quiet -noappend -mkfs-time 1700000000 -all-time 1700000000 >/dev/null
done
"$MKFS" "$TREE" "$W/c.ext4" --manifest "$W/m" --sde 1700000000
a=$(cut -d' ' -f1 "$W/mki" | median); b=$(cut -d' ' -f1 "$W/mks" | median)
ua=$(cut -d' ' -f2 "$W/mki" | median); ub=$(cut -d' ' -f2 "$W/mks" | median)
sa=$(stat -c %s "$W/a.sqfs"); sb=$(stat -c %s "$W/b.sqfs"); se=$(stat -c %s "$W/c.ext4")
echo "tree: $TREE, $(wc -l <"$W/m") entries, $(du -sb "$TREE" | cut -f1) bytes"
echo "mkimage squashfs (zstd): ${a} s wall, ${ua} s user CPU, $sa bytes"
echo "mksquashfs (zstd, 128K): ${b} s wall, ${ub} s user CPU, $sb bytes"
echo "time ratio mkimage/mksquashfs: $(echo "scale=2; $a / $b" | bc)"
echo "size ratio squashfs/mksquashfs: $(echo "scale=3; $sa / $sb" | bc)"
echo "ext4 image (auto size): $se bytes; squashfs/ext4: $(echo "scale=3; $sa / $se" | bc)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
