#!/bin/bash
# Configure time for the arm-board set (103 real bookworm packages, armhf + armel): mkimage's
# preinsts + `dpkg --configure -a` with native tools (builder/configure/accel.h) against the same steps with
# every target program under QEMU (--no-native-tools: the target's own dpkg --configure -a
# emulated), on the same plan and tree, from a local signed mirror on 127.0.0.1, warm cache.
# Both builds must give byte-identical images. BENCH_RUNS runs each (default 1), median reported;
# no assertions on time. The recipe without kernel and systemd (tests/flagship.sh): an initramfs
# made with every program emulated takes most of an hour; bench 61 times the bootable build.
# Each build's CPU (user + sys of mkimage and everything the sandbox ran) is reported beside.
# BEFORE_EXEC=PATH adds, alternating with the others, a build whose native tools go through that
# mkimage-exec instead of this tree's (another revision's dispatcher), for a side-by-side CPU.
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

if [ -n "${BEFORE_EXEC:-}" ]; then
	mkdir "$W/before-exec"
	cp "$TOP/mkimage" "$W/before-exec/mkimage"
	cp "$BEFORE_EXEC" "$W/before-exec/mkimage-exec"
fi

# build NAME [ARGS]: one build; appends "preinst_s essential_s configure_s" to $W/NAME (the
# essential set's dpkg run, then dpkg --configure -a: mkimage(7), "The essential set first"),
# "user sys" to NAME.cpu
build() {
	local name=$1 bin=$TOP/mkimage
	shift
	[ "$name" != before ] || bin=$W/before-exec/mkimage
	# no layer reuse: the key does not change with the dispatcher or between these builds
	/usr/bin/time -f '%U %S' -o "$W/time" "$bin" -v --no-layer-cache "$@" --cache-dir "$W/cache" \
		--output "$W/$name.ext4" \
		--source "http://127.0.0.1:$port bookworm main signed-by=$MIRROR/key.gpg" \
		"$W/lean/recipes/arm-board.cfg" 2>"$W/log" || { tail -20 "$W/log" >&2; exit 1; }
	tail -n 1 "$W/time" >>"$W/$name.cpu"
	echo "$(sed -En 's/.*preinst scripts: ([0-9.]+) s/\1/p' "$W/log")" \
		"$(sed -En "s/.*'dpkg --configure' of the essential set: [0-9]+ packages: ([0-9.]+) s/\1/p" "$W/log")" \
		"$(sed -En 's/.*dpkg --configure -a: ([0-9.]+) s/\1/p' "$W/log")" >>"$W/$name"
	grep -q "native tools: [0-9]* target programs" "$W/log" && grep "native tools: [0-9]* target programs" "$W/log" | sed 's/^mkimage: info: //' >"$W/what" || true
}
build warmup >/dev/null # fills the cache
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$RUNS"); do
	build native
	[ -z "${BEFORE_EXEC:-}" ] || build before
	build emulated --no-native-tools
done
cmp -s "$W/native.ext4" "$W/emulated.ext4" || { echo "bench 50: images differ" >&2; exit 1; }
[ -z "${BEFORE_EXEC:-}" ] || cmp -s "$W/native.ext4" "$W/before.ext4" ||
	{ echo "bench 50: images differ with BEFORE_EXEC" >&2; exit 1; }
cpu() { awk '{ print $1 + $2 }' "$W/$1.cpu" | sort -n | sed -n "$(((RUNS + 1) / 2))p"; }
median() { awk '{ print $1 + $2 + $3 }' "$1" | sort -n | sed -n "$(((RUNS + 1) / 2))p"; }
n=$(median "$W/native") e=$(median "$W/emulated")
cat "$W/what"
runs() { paste -sd' ' "$W/$1"; }
echo "preinsts + both dpkg runs, native tools:   $n s ($(runs native)), CPU $(cpu native) s"
[ -z "${BEFORE_EXEC:-}" ] ||
	echo "the same through BEFORE_EXEC's dispatcher: $(median "$W/before") s ($(runs before))," \
		"CPU $(cpu before) s"
echo "preinsts + both dpkg runs, all under QEMU: $e s ($(runs emulated)), CPU $(cpu emulated) s"
echo "ratio native tools / QEMU only: $(echo "scale=3; $n / $e" | bc) (images byte-identical)"
