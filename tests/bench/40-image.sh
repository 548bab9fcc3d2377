#!/bin/bash
# The ext4 writer against `mke2fs -t ext4 -d` on the same generated ~300 MB tree (many small
# files, a few large ones, symlinks, hard links), same image size, same run: the median of
# RUNS runs of each, measured with /usr/bin/time, and the ratio. Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
MKFS=${MKFS:-$TOP/build/tools/mkfs}
RUNS=${RUNS:-3}
[ -x "$MKFS" ] || make -C "$TOP" -s tools >/dev/null
T=$(mktemp -d "${TMPDIR:-/var/tmp}/mki-bench-image.XXXXXX")
trap 'rm -rf "$T"' EXIT

# A rootfs-like tree from a fixed seed: 12 000 files of 0-32 KiB in 300 directories (~190 MB),
# 6 files of 16-24 MiB, 2 000 symlinks, 500 hard links.
python3 - "$T/tree" <<'EOF'
import os, random, sys
root = sys.argv[1]
rnd = random.Random(42)
blob = rnd.randbytes(1 << 20)
dirs = []
for i in range(300):
    d = os.path.join(root, 'usr', 'share' if i % 3 else 'lib', 'pkg%03d' % i, 'sub%d' % (i % 4))
    os.makedirs(d, exist_ok=True)
    dirs.append(d)
files = []
for i in range(12000):
    n = rnd.randrange(0, 32768)
    off = rnd.randrange(0, len(blob) - n)
    p = os.path.join(dirs[i % len(dirs)], 'file%05d.dat' % i)
    with open(p, 'wb') as f:
        f.write(blob[off:off + n])
    files.append(p)
for i in range(6):
    with open(os.path.join(root, 'usr', 'lib', 'big%d.so' % i), 'wb') as f:
        for _ in range(16 + i):
            f.write(blob)
for i in range(2000):
    os.symlink(os.path.relpath(files[i * 5], dirs[i % 7]), os.path.join(dirs[i % 7], 'link%04d' % i))
for i in range(500):
    os.link(files[i * 7 + 1], os.path.join(dirs[(i + 1) % 11], 'hard%03d' % i))
EOF
mb=$(du -sm "$T/tree" | cut -f1)
files=$(find "$T/tree" | wc -l)
echo "tree: $mb MB, $files entries"

# Warm the page cache once so the first timed run is not the only cold one.
"$MKFS" "$T/tree" "$T/size.img" --sde 1700000000 2>/dev/null
size_k=$(($(stat -c %s "$T/size.img") / 1024))
rm -f "$T/size.img"
echo "image size: $((size_k / 1024)) MiB (mkimage's auto size, used for both)"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in $(seq "$RUNS"); do
	rm -f "$T/a.img" "$T/b.img"
	/usr/bin/time -f %e -o "$T/t" "$MKFS" "$T/tree" "$T/a.img" --sde 1700000000 --size "${size_k}K" 2>/dev/null
	cat "$T/t" >>"$T/mkimage.times"
	/usr/bin/time -f %e -o "$T/t" env E2FSPROGS_FAKE_TIME=1700000000 \
		mke2fs -q -F -t ext4 -d "$T/tree" "$T/b.img" "${size_k}k" >/dev/null 2>&1
	cat "$T/t" >>"$T/mke2fs.times"
done
e2fsck -fn "$T/a.img" >/dev/null 2>&1 || echo "WARNING: e2fsck reports problems in mkimage's image"
m=$(median <"$T/mkimage.times")
e=$(median <"$T/mke2fs.times")
echo "mkimage (libext2fs writer): median ${m}s of $(tr '\n' ' ' <"$T/mkimage.times")"
echo "mke2fs -t ext4 -d:          median ${e}s of $(tr '\n' ' ' <"$T/mke2fs.times")"
awk -v m="$m" -v e="$e" 'BEGIN { printf "ratio mke2fs/mkimage: %.2fx\n", (m > 0 ? e / m : 0) }'
