# The cross-building SDK, side by side: `mkimage --sdk` of the lean arm-board (test 140's recipe
# and mirrors) with a warm cache, against mmdebstrap (root mode, essential variant,
# --architectures=amd64,armhf,armel) installing exactly the packages of the SDK's lock into a
# .tar.zst, from the same two local signed mirrors on 127.0.0.1. mkimage is timed with its layer
# (the configured tree) in the cache and without it (--no-layer-cache: the packages cached, the
# tree unpacked and configured again). Prints medians of REPS runs (default 3; the peer
# PEER_REPS, default 1), peak RSS and the ratios. The machine is shared: the load average is
# printed before and after. Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
PEER_REPS=${PEER_REPS:-1}
W=$(mktemp -d /var/tmp/mkimage-bench.XXXXXX)
. "$TOP/tests/flagship.sh"
[ "$(id -u)" = 0 ] || { echo "84-sdk: mmdebstrap's root mode needs root"; exit 0; }
command -v mmdebstrap >/dev/null || { echo "84-sdk: mmdebstrap missing (make bench-deps)"; exit 0; }
sdk_mirrors
sdk_recipe "$W/p"
R=$W/p/recipes/arm-board.cfg
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT
serve() { # serve DIR: sets URL
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 -m http.server --bind 127.0.0.1 --directory "$1" "$port" >/dev/null 2>&1 &
	pids="$pids $!"
	URL=http://127.0.0.1:$port
	sleep 0.5
}
serve "$SDK_MIRROR_IMG/repo"
URL_IMG=$URL
serve "$SDK_MIRROR_HOST/repo"
URL_SDK=$URL
SRC_IMG="$URL_IMG bookworm main signed-by=$SDK_MIRROR_IMG/key.gpg"
SRC_SDK="$URL_SDK bookworm main signed-by=$SDK_MIRROR_HOST/key.gpg"
export SOURCE_DATE_EPOCH=1700000000 TMPDIR=$W/tmp XDG_CACHE_HOME=$W/cache
mkdir -p "$TMPDIR" "$W/out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

measure() { # measure NAME CMD...: appends "wall maxrss_kb" to $W/NAME.times
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$W/t" "$@" >"$W/$name.log" 2>&1 || { tail -20 "$W/$name.log"; exit 1; }
	cat "$W/t" >>"$W/$name.times"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The image's lock, then one SDK build to warm the cache (packages and layer) and name the set.
"$TOP/mkimage" -q --source "$SRC_IMG" -o "$W/out/arm-board.ext4" "$R" >/dev/null
SDK=(--sdk="$W/out/arm-board.lock" --source "$SRC_IMG" --source "$SRC_SDK"
	-o "$W/out/arm-board-sdk.tar.zst")
"$TOP/mkimage" -q "${SDK[@]}" "$R" >/dev/null
n=$(grep -c '^package: ' "$W/out/arm-board-sdk.lock")
echo "set: $n packages (the SDK's lock), $(du -m "$W/out/arm-board-sdk.tar.zst" | cut -f1) MiB .tar.zst"
for i in $(seq "$REPS"); do
	measure mkimage-warm "$TOP/mkimage" -q "${SDK[@]}" "$R"
	measure mkimage-nolayer "$TOP/mkimage" -q --no-layer-cache "${SDK[@]}" "$R"
done

# The peer: the same packages at the same versions ("name:arch=version"; all: "name=version").
PKGS=$(sed -n 's/^package: \([^ :]*\):\([^=]*\)=\([^ ]*\) .*/\1:\2=\3/p' "$W/out/arm-board-sdk.lock" |
	sed 's/:all=/=/' | tr '\n' ',' | sed 's/,$//')
for i in $(seq "$PEER_REPS"); do
	rm -f "$W/peer.tar.zst"
	measure mmdebstrap mmdebstrap --mode=root --variant=essential --architectures=amd64,armhf,armel \
		--include="$PKGS" bookworm "$W/peer.tar.zst" \
		"deb [signed-by=$SDK_MIRROR_IMG/key.gpg] $URL_IMG bookworm main" \
		"deb [signed-by=$SDK_MIRROR_HOST/key.gpg] $URL_SDK bookworm main"
done
warm=$(cut -d' ' -f1 "$W/mkimage-warm.times" | median)
nolayer=$(cut -d' ' -f1 "$W/mkimage-nolayer.times" | median)
peer=$(cut -d' ' -f1 "$W/mmdebstrap.times" | median)
printf 'mkimage --sdk, warm (layer):     %6.1f s  peak RSS %s MiB\n' "$warm" \
	$(( $(cut -d' ' -f2 "$W/mkimage-warm.times" | sort -n | tail -1) / 1024 ))
printf 'mkimage --sdk, no layer cache:   %6.1f s  peak RSS %s MiB\n' "$nolayer" \
	$(( $(cut -d' ' -f2 "$W/mkimage-nolayer.times" | sort -n | tail -1) / 1024 ))
printf 'mmdebstrap (3 architectures):    %6.1f s  peak RSS %s MiB\n' "$peer" \
	$(( $(cut -d' ' -f2 "$W/mmdebstrap.times" | sort -n | tail -1) / 1024 ))
echo "ratio peer/warm: $(echo "scale=1; $peer / $warm" | bc); peer/no-layer: $(echo "scale=1; $peer / $nolayer" | bc)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "RESULT sdk packages=$n warm=$warm nolayer=$nolayer peer=$peer"
