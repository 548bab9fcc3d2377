#!/bin/bash
# Hashing a disk with a large sparse partition (issue 38, deliverable 5): a package ships a GIB
# GiB sparse file (default 64; a few MiB of data) that a `file:` partition holds, beside an ESP,
# the root and an empty slot, with a bmap. One build with this mkimage and, when MKIMAGE_BEFORE
# names an older binary, one with that, from the same warm layer cache: wall and CPU time, the
# bytes the build read (rchar of mkimage and its children, /proc/PID/io), and the report's
# image stage (which now computes every digest and the bmap). The load average before and after. Never asserts on time; needs root (a native build) and an amd64 host.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/lib-native.sh"
set +e
GIB=${GIB:-64}
SIZE=$((GIB << 30))
MiB=1048576
export SOURCE_DATE_EPOCH=1700000000

src=$T/src/sparse
mkdir -p "$src/data/usr/share/sparse" "$src/ctl" "$T/repo/pool/main"
big=$src/data/usr/share/sparse/big.img
truncate -s "$SIZE" "$big"
printf 'head' | dd of="$big" conv=notrunc status=none
yes 'sparse payload line' | head -c $((4 * MiB)) |
	dd of="$big" bs=64K seek=$((SIZE / 2 - 4095)) oflag=seek_bytes iflag=fullblock conv=notrunc status=none
printf 'tail' | dd of="$big" bs=1 seek=$((SIZE - 4)) conv=notrunc status=none
printf 'Package: sparse-payload\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: sparse\n' >"$src/ctl/control"
(cd "$src/data" && tar --sparse --format=gnu --owner=0 --group=0 -cJf "$src/data.tar.xz" ./usr)
(cd "$src/ctl" && tar --owner=0 --group=0 -cJf "$src/control.tar.xz" ./control)
echo 2.0 >"$src/debian-binary"
(cd "$src" && ar rc "$T/repo/pool/main/sparse-payload_1.0_all.deb" debian-binary control.tar.xz data.tar.xz)
rm -f "$big"
d=$(deb_new board-files 1.0 all)
deb_file "$d" boot/efi/EFI/BOOT/BOOTX64.EFI "an efi loader
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

native_recipe "$T/sparse.cfg" sparse ', "sparse-payload", "board-files"'
cat >>"$T/sparse.cfg" <<'C'
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
LIMITS="--limit disk-size=$((2 * GIB + 2))G --limit deb-data=$((GIB + 1))G"
CACHE=$T/cache

# One build: wall, CPU, bytes read, the report's stages.
measure() { # NAME MKIMAGE
	local name=$1 bin=$2 out=$T/$1
	mkdir -p "$out"
	rm -f "$out"/sparse.*
	/usr/bin/time -f '%e %U %S' -o "$T/time" python3 -c '
import subprocess, sys
def rchar():
    for line in open("/proc/self/io"):
        if line.startswith("rchar:"):
            return int(line.split()[1])
a = rchar()
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1] + ".log", "w"))
open(sys.argv[1], "w").write("%d\n" % (rchar() - a))
sys.exit(rc)' "$T/$name.rchar" "$bin" --cache-dir "$CACHE" -o "$out/sparse.img" $LIMITS "$T/sparse.cfg" ||
		{ tail -5 "$T/$name.rchar.log"; return 1; }
	read -r wall user sys <"$T/time"
	python3 - "$out/sparse.report.json" "$name" "$wall" "$user" "$sys" "$(cat "$T/$name.rchar")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name, wall, user, sys_, rchar = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
st = r["stages"]
disk = r["disk"]
print("%-8s disk %6.1f GiB  wall %6.1f s  CPU %6.1f s  read %8.1f MiB  image stage %6.1f s"
      % (name, disk["bytes"] / 2**30, wall, user + sys_, rchar / 2**20, st.get("image", 0)))
PY
}

echo "$GIB GiB sparse partition; $(nproc) CPUs; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
grep -q sha_ni /proc/cpuinfo && echo "CPU: SHA extensions (sha_ni)" || echo "CPU: no SHA extensions"
# Warm the layer cache: both measured builds restore the same configured tree.
"$MKIMAGE" --cache-dir "$CACHE" -o "$T/warm.img" --until configure $LIMITS "$T/sparse.cfg" >/dev/null 2>&1 ||
	echo "warning: the warm-up build failed"
rm -rf "$T"/warm.*
if [ -n "${MKIMAGE_BEFORE:-}" ]; then
	measure before "$MKIMAGE_BEFORE"
fi
measure after "$MKIMAGE"
if [ -n "${MKIMAGE_BEFORE:-}" ]; then
	cmp -s "$T/before/sparse.img" "$T/after/sparse.img" && cmp -s "$T/before/sparse.img.bmap" "$T/after/sparse.img.bmap" &&
		echo "before and after: the same disk and bmap" || echo "WARNING: before and after differ"
fi
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
