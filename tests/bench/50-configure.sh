#!/bin/bash
# Configure time for the arm-board set (103 real bookworm packages, armhf + armel): mkimage's
# preinsts + `dpkg --configure -a` with native tools (builder/configure/accel.h) against the same steps with
# every target program under QEMU (--no-native-tools: the target's own dpkg --configure -a
# emulated), on the same plan and tree, from a local signed mirror on 127.0.0.1, warm cache.
# Both builds must give byte-identical images. BENCH_RUNS runs each (default 1), median reported;
# no assertions on time. The recipe without kernel and systemd (tests/flagship.sh): an initramfs
# made with every program emulated takes most of an hour; bench 61 times the bootable build.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /var/tmp/mkimage-bench50.XXXXXX)
. "$TOP/tests/flagship.sh"
flagship_mirror arm-board
flagship_lean arm-board "$W/lean"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$MIRROR/repo" "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$W"' EXIT
sleep 0.5
export SOURCE_DATE_EPOCH=1700000000
RUNS=${BENCH_RUNS:-1}

# build NAME [ARGS]: one build; appends "preinst_s essential_s configure_s" to $W/NAME (the
# essential set's dpkg run, then dpkg --configure -a: mkimage(7), "The essential set first")
build() {
	local name=$1
	shift
	"$TOP/mkimage" -v "$@" --cache-dir "$W/cache" --output "$W/$name.ext4" \
		--source "http://127.0.0.1:$port bookworm main signed-by=$MIRROR/key.gpg" \
		"$W/lean/recipes/arm-board.cfg" 2>"$W/log" || { tail -20 "$W/log" >&2; exit 1; }
	echo "$(sed -En 's/.*preinst scripts: ([0-9.]+) s/\1/p' "$W/log")" \
		"$(sed -En "s/.*'dpkg --configure' of the essential set: [0-9]+ packages: ([0-9.]+) s/\1/p" "$W/log")" \
		"$(sed -En 's/.*dpkg --configure -a: ([0-9.]+) s/\1/p' "$W/log")" >>"$W/$name"
	grep -q "native tools: [0-9]* target programs" "$W/log" && grep "native tools: [0-9]* target programs" "$W/log" | sed 's/^mkimage: info: //' >"$W/what" || true
}
build warmup >/dev/null # fills the cache
for i in $(seq "$RUNS"); do
	build native
	build emulated --no-native-tools
done
cmp -s "$W/native.ext4" "$W/emulated.ext4" || { echo "bench 50: images differ" >&2; exit 1; }
median() { awk '{ print $1 + $2 + $3 }' "$1" | sort -n | sed -n "$(((RUNS + 1) / 2))p"; }
n=$(median "$W/native") e=$(median "$W/emulated")
cat "$W/what"
echo "preinsts + both dpkg runs, native tools:             $n s ($(paste -sd' ' "$W/native"))"
echo "preinsts + both dpkg runs, all under QEMU:           $e s ($(paste -sd' ' "$W/emulated"))"
echo "ratio native tools / QEMU only: $(echo "scale=3; $n / $e" | bc) (images byte-identical)"
