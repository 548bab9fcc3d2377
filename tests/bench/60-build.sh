# The whole build, side by side: mmdebstrap (root mode, minbase, armhf+armel, same packages and
# hooks) followed by `mke2fs -t ext4 -d`, against mkimage on recipes/arm-board.cfg with a warm
# cache, both from the same local signed mirror of real bookworm packages on 127.0.0.1.
# Prints medians of REPS runs (default 3), per-stage medians for mkimage, peak RSS and ratios.
# SET=lean (default) builds the recipe without kernel and systemd (tests/flagship.sh), the set
# earlier figures were taken with; SET=bootable the whole recipe, kernel and initramfs included
# (61-build-bootable.sh); SET=large the whole recipe plus $LARGE_EXTRA (tests/flagship.sh: python3,
# perl, network-manager, ...), some 500-700 packages from their own mirror. TWINS=0 serves a mirror without the host's architecture (mkimage then
# takes its native tools from the host's apt sources). REBUILD=1 changes one hook before each
# measured mkimage run (the rebuild case); PEER=0 leaves the peer out (62-cases.sh reuses the
# peer figure of the same set); PEER_REPS (default REPS) measures the peer in only the first
# PEER_REPS runs, for sets where one peer run takes half an hour. The load average is printed
# before and after: the machine is shared. The last line, "RESULT ...", is what 62-cases.sh
# tabulates. FLAGSHIP_SUITE=trixie (tests/flagship.sh) measures recipes/arm-board-trixie.cfg from a
# trixie mirror, the peer building trixie too.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
SET=${SET:-lean}
REBUILD=${REBUILD:-0}
PEER=${PEER:-1}
W=$(mktemp -d /var/tmp/mkimage-bench.XXXXXX)
. "$TOP/tests/flagship.sh"
if [ "$SET" = large ]; then flagship_mirror arm-board-large; else flagship_mirror arm-board; fi
# A copy of the recipe beside copies of its overlays and hooks: the rebuild case edits a hook.
flagship_lean arm-board "$W/lean"
case $SET in
lean) RECIPE=$W/lean/recipes/arm-board.cfg ;;
bootable) cp "$(flagship_recipe arm-board)" "$W/lean/recipes/arm-board.cfg" && RECIPE=$W/lean/recipes/arm-board.cfg ;;
large)
	RECIPE=$W/lean/recipes/arm-board.cfg
	sed "s|^\( *\)install = \[|\1install = [ $(printf '"%s", ' $LARGE_EXTRA)|" \
		"$TOP/recipes/arm-board.cfg" >"$RECIPE" ;;
*) echo "60-build: SET is lean, bootable or large, not '$SET'" >&2; exit 2 ;;
esac
LOAD_BEFORE=$(cut -d' ' -f1 /proc/loadavg)
# The peer gets the same packages and runs the same hooks, in the recipe's order and environment.
PKGS=$(sed -n '/^  install = \[/,/\];/p' "$RECIPE" | grep -o '"[^"]*"' | tr -d '"' | tr '\n' ' ')
HOOKS=$(sed -n 's|.*script = "\.\./hooks/\([^"]*\)".*|\1|p' "$RECIPE" | tr '\n' ' ')
OVERLAYS=$(sed -n 's|.*{ source = "\([^"]*\)"; destination = "/";.*|\1|p' "$RECIPE" | tr '\n' ' ')
echo "set: $SET ($PKGS; overlays: $OVERLAYS; hooks: $HOOKS); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

. "$TOP/tests/bench/lib-peer.sh"
peer_serve "$MIRROR"

measure() { # measure NAME CMD...: appends "wall maxrss_kb" to $W/NAME.times
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$W/t" "$@" >"$W/$name.log" 2>&1 || { tail -20 "$W/$name.log"; exit 1; }
	cat "$W/t" >>"$W/$name.times"
}

# The peer does what the recipe's keys make mkimage do, in mkimage's order: minimize's dpkg path
# filters (the globs mkimage.cfg(5), PATH FILTERS, lists), the hostname and fstab, the overlays, the hooks,
# then the empty machine id.
peer() {
	local steps=() h o
	local ident="echo arm-board >\"\$1/etc/hostname\";
		printf 'LABEL=arm-board\t/\text4\terrors=remount-ro\t0\t1\n' >\"\$1/etc/fstab\""
	for h in /usr/share/doc/'*' /usr/share/man/'*' /usr/share/info/'*' \
		/usr/share/lintian/overrides/'*' /usr/share/locale/'*'; do
		steps+=("--dpkgopt=path-exclude=$h")
	done
	steps+=(--dpkgopt=path-include=/usr/share/doc/'*'/copyright
		--dpkgopt=path-include=/usr/share/locale/locale.alias
		"--customize-hook=$ident")
	for o in $OVERLAYS; do
		steps+=("--customize-hook=cp -a $(dirname "$RECIPE")/$o/. \"\$1/\"")
	done
	for h in $HOOKS; do
		steps+=("--customize-hook=chroot \"\$1\" env MKIMAGE_NAME=arm-board MKIMAGE_ARCH=armhf \
			sh < $TOP/hooks/$h")
	done
	steps+=("--customize-hook=: >\"\$1/etc/machine-id\"")
	rm -rf "$W/tree" "$W/peer.ext4"
	mmdebstrap --quiet --mode=root --variant=minbase --architectures=armhf,armel \
		--include="$(echo $PKGS | tr ' ' ',')" --keyring="$MIRROR/key.gpg" "${steps[@]}" \
		"$FLAGSHIP_SUITE" "$W/tree" "deb [signed-by=$MIRROR/key.gpg] $URL $FLAGSHIP_SUITE main" &&
	size=$(du -sm "$W/tree" | cut -f1) &&
	mke2fs -q -t ext4 -d "$W/tree" "$W/peer.ext4" "$((size * 13 / 10 + 64))M"
}

# A warm download cache; the configured tree is reused (the layer cache) only in the rebuild case.
layer=--no-layer-cache
[ "$REBUILD" = 0 ] || layer=
ours() {
	"$TOP/mkimage" -q $layer --cache-dir "$W/cache" --source "$URL $FLAGSHIP_SUITE main signed-by=$MIRROR/key.gpg" \
		--output "$W/ours.ext4" "$RECIPE" && cp "$W/ours.report.json" "$W/report.$1.json"
}

# The rebuild case: a hook that differs from the previous build's by one line, as an engineer's
# edit would (and the image with it).
touch_hook() {
	local h
	h=$(dirname "$RECIPE")/../hooks/$(set -- $HOOKS && echo "$1")
	echo "echo rebuild $1 >/dev/null" >>"$h"
}

export SOURCE_DATE_EPOCH=1700000000
ours warmup >/dev/null  # fills the cache: the measured runs are warm
for i in $(seq 1 "$REPS"); do
	[ "$REBUILD" = 0 ] || touch_hook "$i"
	[ "$PEER" = 0 ] || [ "$i" -gt "${PEER_REPS:-$REPS}" ] || measure peer bash -c "$(declare -f peer); W=$W FLAGSHIP_SUITE=$FLAGSHIP_SUITE PKGS='$PKGS' HOOKS='$HOOKS' OVERLAYS='$OVERLAYS' \
		RECIPE=$RECIPE MIRROR=$MIRROR TOP=$TOP URL=$URL; peer"
	measure ours bash -c "$(declare -f ours); W=$W FLAGSHIP_SUITE=$FLAGSHIP_SUITE MIRROR=$MIRROR TOP=$TOP URL=$URL RECIPE=$RECIPE \
		layer=$layer; ours $i"
done

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W" "$REPS" "$LOAD_BEFORE" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, os, statistics, sys
w, reps, load0, load1 = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def times(name):
    if not os.path.exists(f"{w}/{name}.times"):
        return None, None
    rows = [l.split() for l in open(f"{w}/{name}.times")]
    return statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows) / 1024
pw, prss = times("peer")
ow, orss = times("ours")
print(f"{'':34}{'median s':>10}{'peak RSS MiB':>14}")
if pw:
    print(f"{'mmdebstrap + mke2fs -d':34}{pw:10.2f}{prss:14.1f}")
print(f"{'mkimage (warm cache)':34}{ow:10.2f}{orss:14.1f}")
if pw:
    print(f"whole build: mkimage is {pw / ow:.1f}x faster (ratio mkimage/peer = {ow / pw:.3f})")
stages = {}
for i in range(1, reps + 1):
    for k, v in json.load(open(f"{w}/report.{i}.json"))["stages"].items():
        stages.setdefault(k, []).append(v)
med = {k: statistics.median(v) for k, v in stages.items()}
print("mkimage per stage (median s): " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
split = " ".join(f"{k}={v:.2f}" for k, v in med.items())
pkgs = json.load(open(f"{w}/report.1.json"))["packages"]["total"]
print(f"{pkgs} packages: mkimage {ow / pkgs * 1000:.0f} ms per package"
      + (f", the peer {pw / pkgs * 1000:.0f} ms" if pw else ""))
print(f"RESULT peer={pw or 0:.2f} ours={ow:.2f} peer_rss={prss or 0:.0f} ours_rss={orss:.0f} "
      f"load={load0}->{load1} pkgs={pkgs} {split}")
PY
