#!/bin/bash
# Unpack time against the decompression floor: the sum of `dpkg-deb --fsys-tarfile X >/dev/null`
# (serial, and 2-way parallel), as ratios; medians of 3 runs, timed with /usr/bin/time.
# The package set: $MKI_BENCH_DEBS (a directory of .debs), else the local bookworm mirror pool
# of the arm-board bench if present, else the small real set of the unpack tests.
# The staging tree goes to tmpfs (/dev/shm) when there is one, and to $TMPDIR (or /var/tmp),
# whose filesystem's inode allocation may dominate on a busy disk: there the reference is plain
# `tar -x` of every data.tar onto the same disk.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
UNPACK=$TOP/build/tools/unpack
[ -x "$UNPACK" ] || make -C "$TOP" -s tools >/dev/null
dir=${MKI_BENCH_DEBS:-/var/tmp/mkimage-mirror/arm-board/repo/pool/main}
if ls "$dir"/*.deb >/dev/null 2>&1; then
	mapfile -t DEBS < <(ls "$dir"/base-files_*.deb; ls "$dir"/*.deb | grep -v /base-files_)
else
	mapfile -t DEBS < <("$TOP/tests/integration/unpack_realdebs.sh")
fi
W=$(mktemp -d "${TMPDIR:-/var/tmp}/mki-bench-unpack.XXXXXX")
trap 'rm -rf "$W" /dev/shm/mki-bench-unpack.$$' EXIT

# t CMD...: wall seconds of CMD (it must succeed)
t() { /usr/bin/time -f %e -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err" >&2; exit 1; }; cat "$W/time"; }
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
export DEBS_LIST="${DEBS[*]}"
unpack_into() { rm -rf "$1" && mkdir -p "$1" && t "$UNPACK" -q -j2 -a armhf -a armel "$1" "${DEBS[@]}"; }

size=$(du -cb "${DEBS[@]}" | tail -1 | cut -f1)
echo "set: ${#DEBS[@]} packages, $((size / 1048576)) MiB of .debs"
s=() p=() u=()
for i in 1 2 3; do
	s+=("$(t bash -c 'for d in $DEBS_LIST; do dpkg-deb --fsys-tarfile "$d"; done >/dev/null')")
	p+=("$(t bash -c 'printf "%s\n" $DEBS_LIST | xargs -P2 -n1 sh -c "dpkg-deb --fsys-tarfile \"\$0\" >/dev/null"')")
	if [ -d /dev/shm ]; then u+=("$(unpack_into /dev/shm/mki-bench-unpack.$$)"); fi
done
d=$(unpack_into "$W/disk")
# Extraction reference on the same disk: what plain tar pays to create the same inodes.
mkdir "$W/tar"
x=$(t bash -c 'for d in $DEBS_LIST; do dpkg-deb --fsys-tarfile "$d" | tar -x --no-same-owner -C "$0" -f - 2>/dev/null || true; done' "$W/tar")
fs=$(median "${s[@]}") fp=$(median "${p[@]}")
echo "floor, serial:          $fs s"
echo "floor, 2-way parallel:  $fp s"
if [ ${#u[@]} -gt 0 ]; then
	fu=$(median "${u[@]}")
	echo "mkimage unpack (tmpfs): $fu s = $(ratio "$fu" "$fs")x serial floor, $(ratio "$fu" "$fp")x 2-way floor (goal <= 1.25x)"
fi
fst=$(df --output=fstype "$W" | tail -1)
echo "tar -x of every data.tar ($fst disk, serial, 1 run): $x s"
echo "mkimage unpack ($fst disk, 1 run): $d s = $(ratio "$d" "$fp")x 2-way floor, $(ratio "$d" "$x")x serial tar -x"
