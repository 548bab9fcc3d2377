#!/bin/bash
# What a farm flashes (emit/bmap.c, emit/compress.c) on a 1 GiB sparse ext4 image holding about
# 300 MiB: the block map against `bmaptool create`, .zst and .xz against the zstd and xz
# command-line tools at the same level and thread count, in the same run: wall and CPU time,
# peak memory and size. One run each by default (xz takes minutes); never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
MKFS=${MKFS:-$TOP/build/tools/mkfs}
TOOL=${BMAP_TOOL:-$TOP/build/tools/bmap-tool}
RUNS=${RUNS:-1}
DATA_MIB=${DATA_MIB:-300} # a smaller tree for a quick look
[ -x "$MKFS" ] && [ -x "$TOOL" ] || make -C "$TOP" -s tools >/dev/null
for c in bmaptool zstd xz; do
	command -v $c >/dev/null || { echo "45-flash: '$c' missing (make bench-deps)"; exit 0; }
done
T=$(mktemp -d "${TMPDIR:-/var/tmp}/mki-bench-flash.XXXXXX")
trap 'rm -rf "$T"' EXIT

# A tree from a fixed seed, about 300 MiB: a third random bytes (compressed already), a third
# text, a third binary-like (mostly small values and zeros), in files of 64 KiB to 8 MiB.
python3 - "$T/tree" "$DATA_MIB" <<'EOF'
import os, random, sys
root, mib, rnd = sys.argv[1], int(sys.argv[2]), random.Random(45)
words = [''.join(rnd.choices('etaoinshrdlucmfwypvbgkjqxz', k=rnd.randrange(2, 10)))
         for _ in range(5000)]
low = bytes(b if b < 24 else 0 for b in range(256))
def blob(kind, n):
    if kind == 0:
        return rnd.randbytes(n)
    if kind == 1:
        return ' '.join(rnd.choices(words, k=n // 5)).encode()[:n]
    return rnd.randbytes(n).translate(low)
total, i = 0, 0
while total < mib << 20:
    d = os.path.join(root, 'usr', 'lib' if i % 2 else 'share', 'p%02d' % (i % 40))
    os.makedirs(d, exist_ok=True)
    n = rnd.randrange(64 << 10, 8 << 20)
    with open(os.path.join(d, 'f%04d' % i), 'wb') as f:
        f.write(blob(i % 3, n))
    total, i = total + n, i + 1
EOF
"$MKFS" "$T/tree" "$T/disk.img" --size 1G --sde 1700000000 2>/dev/null
rm -rf "$T/tree"
echo "image: 1 GiB, $(du -m "$T/disk.img" | cut -f1) MiB of it allocated; $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"

t=$(nproc)
run() { # NAME OUTPUT CMD...: time CMD RUNS times; print the last run's figures
	local name=$1 out=$2 i
	shift 2
	for i in $(seq "$RUNS"); do
		rm -f "$out"
		/usr/bin/time -f '%e %U %S %M' -o "$T/t" sh -c "$*" >/dev/null 2>&1
	done
	read -r wall user sys rss <"$T/t"
	printf '%-32s %7.1f s wall %7.1f s CPU %5d MiB RSS %9d KiB\n' "$name" "$wall" \
		"$(echo "$user + $sys" | bc)" $((rss / 1024)) $(($(stat -c %s "$out") / 1024))
}
run "bmap_write" "$T/a.bmap" "$TOOL" map "$T/disk.img" "$T/a.bmap"
run "bmaptool create" "$T/b.bmap" bmaptool create -o "$T/b.bmap" "$T/disk.img"
run "compress_file zstd (level 9)" "$T/a.zst" "$TOOL" compress "$T/disk.img" "$T/a.zst" zstd
run "zstd -9 -T$t" "$T/b.zst" zstd -q -9 -T$t -c "$T/disk.img" ">$T/b.zst"
run "compress_file xz (preset 6)" "$T/a.xz" "$TOOL" compress "$T/disk.img" "$T/a.xz" xz
run "xz -6 -T$t" "$T/b.xz" xz -6 -T$t -c "$T/disk.img" ">$T/b.xz"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
