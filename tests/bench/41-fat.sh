#!/bin/bash
# The FAT writer (image/fat.c through tests/tools/fat-write) against `mkfs.vfat -C` + `mcopy -s`
# on the same ~100 MB tree of 500 files in 10 directories with long names, same image size (the
# writer's estimate), same run; both end with the image on disk (the writer fsyncs it, the peer
# is followed by `sync FILE`). Medians of RUNS runs with /usr/bin/time, the ratio and the load.
# Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
FATW=${FATW:-$TOP/build/tools/fat-write}
MKFS=${MKFS:-$TOP/build/tools/mkfs}
RUNS=${RUNS:-5}
[ -x "$FATW" ] || make -C "$TOP" -s tools >/dev/null
command -v mkfs.vfat >/dev/null && command -v mcopy >/dev/null ||
	{ echo "41-fat: dosfstools or mtools missing (make test-deps)"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/var/tmp}/mki-bench-fat.XXXXXX")
trap 'rm -rf "$T"' EXIT

# 500 files of 150-230 KB from a fixed seed in esp/dirN, named as loader entries are.
python3 - "$T/tree/esp" <<'PY'
import os, random, sys
root = sys.argv[1]
rnd = random.Random(25)
blob = rnd.randbytes(1 << 20)
for d in range(1, 11):
    os.makedirs(os.path.join(root, 'dir%d' % d))
    for f in range(1, 51):
        n = 150000 + (d * 50 + f) * 150
        off = rnd.randrange(0, len(blob) - n)
        with open(os.path.join(root, 'dir%d' % d, 'some_long_file_name_%d.bin' % f), 'wb') as o:
            o.write(blob[off:off + n])
PY
"$MKFS" "$T/tree" "$T/m.tar" --format tar --save-manifest "$T/manifest" >/dev/null 2>&1
rm -f "$T/m.tar"
echo "tree: $(du -sm "$T/tree/esp" | cut -f1) MB, $(find "$T/tree/esp" -type f | wc -l) files"
size=$("$FATW" "$T/tree" - --manifest "$T/manifest" --subtree esp --estimate)
echo "image size: $((size >> 20)) MiB (the writer's estimate, used for both)"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in $(seq "$RUNS"); do
	rm -f "$T/a.img" "$T/b.img"
	/usr/bin/time -f "%e %U %S" -o "$T/t" "$FATW" "$T/tree" "$T/a.img" --manifest "$T/manifest" \
		--subtree esp --size "$size" --sde 1700000000 2>/dev/null
	cat "$T/t" >>"$T/fat.times"
	/usr/bin/time -f "%e %U %S" -o "$T/t" sh -c "mkfs.vfat -C '$T/b.img' $((size >> 10)) >/dev/null &&
		mcopy -s -i '$T/b.img' '$T/tree/esp/'* ::/ && sync '$T/b.img'"
	cat "$T/t" >>"$T/peer.times"
done
fsck.vfat -n "$T/a.img" >/dev/null 2>&1 || echo "WARNING: fsck.vfat reports problems in the writer's image"
m=$(cut -d' ' -f1 "$T/fat.times" | median)
p=$(cut -d' ' -f1 "$T/peer.times" | median)
mc=$(awk '{ print $2 + $3 }' "$T/fat.times" | median)
pc=$(awk '{ print $2 + $3 }' "$T/peer.times" | median)
echo "fat_write:             median ${m}s wall, ${mc}s CPU of $(cut -d' ' -f1 "$T/fat.times" | tr '\n' ' ')"
echo "mkfs.vfat + mcopy -s:  median ${p}s wall, ${pc}s CPU of $(cut -d' ' -f1 "$T/peer.times" | tr '\n' ' ')"
awk -v m="$m" -v p="$p" 'BEGIN { printf "ratio peer/fat_write: %.2fx\n", (m > 0 ? p / m : 0) }'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
