# Issues 15 and 28's cases in one run, each side by side with mmdebstrap + `mke2fs -d` (60-build.sh):
# (a) the lean arm-board set from a mirror that also carries amd64, as Debian's archive does;
# (b) the same from a mirror of armhf + armel only (native tools from the host's apt sources);
# (c) the bootable arm-board (kernel, systemd, initramfs);
# (d) a rebuild of (a) with one hook changed (against (a)'s peer: the peer has no such cache);
# (e) a large appliance: (c) plus python3, perl, network-manager, ... (tests/flagship.sh
#     LARGE_EXTRA), time per package against (a)'s;
# (f) four different flagship builds at once against one after another (63-farm.sh);
# (g), (h) (a) and (c) on Debian 13 "trixie" (FLAGSHIP_SUITE=trixie): the same sets from a trixie
#     mirror, per package against bookworm's.
# Then the floors for context: every data.tar of (a)'s plan decompressed on both cores, the same
# set configured natively (built for amd64), and (c)'s bootable set built for amd64
# (linux-image-amd64) with every script native. CASES picks some (default "a b c d e f"; "floor":
# none); FLOORS=0 skips the floors; REPS as in 60-build.sh (c and e run once unless REPS_C or
# REPS_E is set; PEER_REPS_C and PEER_REPS_E measure the peer in fewer of those runs). Each case
# waits (up to QUIET_WAIT s, default 900) for the 1-minute load to fall below QUIET (default 0.5;
# 0 starts at once): the issues' figures are for a quiet machine, and a case's own previous runs
# keep the load up for minutes. The load at each case's start is printed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$here/../.." && pwd)
out=$(mktemp -d /var/tmp/mkimage-bench-cases.XXXXXX)
trap 'rm -rf "$out"' EXIT
CASES=${CASES:-a b c d e f g h}
FLOORS=${FLOORS:-1}
: >"$out/results"
run_case() { # run_case LETTER ENV...: the RESULT line of 60-build.sh with those settings
	local c=$1
	shift
	echo "-- case $c: $* (load at start: $(cut -d' ' -f1-3 /proc/loadavg))"
	env "$@" bash "$here/60-build.sh" | tee "$out/$c.log" | grep -v '^RESULT' || true
	grep '^RESULT' "$out/$c.log" | sed "s/^RESULT/$c/" >>"$out/results" ||
		{ echo "62-cases: case $c failed (above)" >&2; failed=1; }
}
# wait_quiet: until the 1-minute load is below $QUIET, or $QUIET_WAIT seconds have passed.
QUIET=${QUIET:-0.5}
QUIET_WAIT=${QUIET_WAIT:-900}
wait_quiet() {
	local waited=0
	[ "$QUIET" != 0 ] || return 0
	while awk -v q="$QUIET" '{ exit !($1 >= q) }' /proc/loadavg && [ "$waited" -lt "$QUIET_WAIT" ]; do
		sleep 10
		waited=$((waited + 10))
	done
	[ "$waited" = 0 ] || echo "-- waited ${waited} s for the load to fall below $QUIET"
}
failed=0
for c in $CASES; do
	wait_quiet
	case $c in
	a) run_case a SET=lean TWINS=1 ;;
	b) run_case b SET=lean TWINS=0 ;;
	c) run_case c SET=bootable TWINS=1 REPS="${REPS_C:-1}" PEER_REPS="${PEER_REPS_C:-}" ;;
	d) run_case d SET=lean TWINS=1 REBUILD=1 PEER=0 ;;
	e) run_case e SET=large TWINS=1 REPS="${REPS_E:-1}" PEER_REPS="${PEER_REPS_E:-}" ;;
	g) run_case g SET=lean TWINS=1 FLAGSHIP_SUITE=trixie ;;
	h) run_case h SET=bootable TWINS=1 FLAGSHIP_SUITE=trixie REPS="${REPS_C:-1}" PEER_REPS="${PEER_REPS_C:-}" ;;
	f)
		echo "-- case f: four flagship builds at once (load at start: $(cut -d' ' -f1-3 /proc/loadavg))"
		bash "$here/63-farm.sh" | tee "$out/f.log" || { echo "62-cases: case f failed" >&2; failed=1; } ;;
	floor) ;; # the floors alone
	*) echo "62-cases: no case '$c' (a, b, c, d, e, f, g, h or floor)" >&2; exit 2 ;;
	esac
done

floors() {
# The decompression floor: the lean plan's data.tar members, decompressed to nowhere, 2 at a time.
. "$TOP/tests/flagship.sh"
flagship_mirror arm-board >/dev/null
w=$(mktemp -d /var/tmp/mkimage-bench-floor.XXXXXX)
flagship_lean arm-board "$w"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$MIRROR/repo" "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out" "$w"' EXIT
sleep 0.5
"$TOP/mkimage" -q --cache-dir "$w/cache" --lock="$w/x.lock" \
	--source "http://127.0.0.1:$port bookworm main signed-by=$MIRROR/key.gpg" "$w/recipes/arm-board.cfg"
sed -n 's/^package: \([^:]*\):\([^=]*\)=\([^ ]*\) .*/\1 \2 \3/p' "$w/x.lock" | while read -r n a v; do
	ls "$MIRROR/repo/pool/main/${n}_${v/*:/}_$a.deb" 2>/dev/null ||
		ls "$MIRROR/repo/pool/main/${n}_$(echo "$v" | sed 's/:/%3a/')_$a.deb"
done >"$w/debs"
/usr/bin/time -f "%e %U %S" -o "$w/t" sh -c \
	"xargs -P2 -I{} sh -c 'dpkg-deb --fsys-tarfile \"{}\" >/dev/null' <'$w/debs'"
read -r fw fu fs <"$w/t"
echo "floor: $(wc -l <"$w/debs") data.tar decompressed in ${fw} s wall (${fu} s user, ${fs} s sys)"

# The configure floor: the same set without its armel side, built for amd64 from the host's apt
# sources, so that every maintainer script and hook runs natively. The second of two builds is
# timed (the first fills the cache); its configure stage (dpkg + hooks) is what (a)'s compares to.
native=$w/native/recipes/arm-board.cfg
flagship_lean arm-board "$w/native"
sed -i -e 's/^architecture = "armhf";/architecture = "amd64";/' -e '/^auxiliary_architectures/d' \
	-e 's/:armel"/"/g' "$native"
if "$TOP/mkimage" -q --no-layer-cache --cache-dir "$w/cache" --output "$w/native.ext4" "$native" &&
	"$TOP/mkimage" -q --no-layer-cache --cache-dir "$w/cache" --output "$w/native.ext4" "$native"; then
	python3 - "$w/native.report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["stages"]
print(f"floor: the set built natively for amd64 ({r['packages']['total']} packages): "
      f"configure {s['configure']:.2f} s, unpack {s['unpack']:.2f} s")
PY
else
	echo "floor: the amd64 build from the host's apt sources failed (above); no configure floor"
fi

# (c)'s native floor: the bootable recipe for amd64 (linux-image-amd64, no armel side), every
# maintainer script native, the initramfs built as in (c); configure + hooks of the second build.
# Its ext4 image, not arm-board's armhf disk: the stage compared is the one before the image.
boot=$w/boot/recipes/arm-board.cfg
mkdir -p "$w/boot/recipes"
cp -a "$TOP/hooks" "$w/boot/" && cp -a "$TOP/recipes/overlay" "$w/boot/recipes/"
sed -e 's/^architecture = "armhf";/architecture = "amd64";/' -e '/^auxiliary_architectures/d' \
	-e 's/:armel"/"/g' -e 's/"linux-image-armmp"/"linux-image-amd64"/' -e '/^disk = {/,/^};/d' \
	"$TOP/recipes/arm-board.cfg" >"$boot"
wait_quiet
echo "-- floor: the bootable set for amd64 (load at start: $(cut -d' ' -f1-3 /proc/loadavg))"
if "$TOP/mkimage" -q --no-layer-cache --cache-dir "$w/cache" --output "$w/boot.ext4" "$boot" &&
	"$TOP/mkimage" -q --no-layer-cache --cache-dir "$w/cache" --output "$w/boot.ext4" "$boot"; then
	python3 - "$w/boot.report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["stages"]
print(f"floor: the bootable set built natively for amd64 ({r['packages']['total']} packages): "
      f"configure {s['configure']:.2f} s, unpack {s['unpack']:.2f} s")
PY
else
	echo "floor: the bootable amd64 build from the host's apt sources failed (above); no floor for (c)"
fi
}
[ "$FLOORS" = 0 ] || { wait_quiet && floors; }

echo
echo "case  peer s  mkimage s  ratio  ms/pkg (peer/ours)  peak RSS MiB (peer/ours)  load         stages (median s)"
peer_a=$(sed -n 's/^a .*peer=\([0-9.]*\).*/\1/p' "$out/results")
while read -r c rest; do
	peer=$(sed 's/.*peer=\([0-9.]*\).*/\1/' <<<"$rest")
	ours=$(sed 's/.*ours=\([0-9.]*\).*/\1/' <<<"$rest")
	load=$(sed 's/.*load=\([^ ]*\).*/\1/' <<<"$rest")
	rss="$(sed 's/.*peer_rss=\([0-9]*\).*/\1/' <<<"$rest")/$(sed 's/.*ours_rss=\([0-9]*\).*/\1/' <<<"$rest")"
	pkgs=$(sed -n 's/.* pkgs=\([0-9]*\).*/\1/p' <<<"$rest")
	stages=$(grep -o '[a-z_]*=[0-9.]*' <<<"$rest" | grep -Ev '^(peer|ours|peer_rss|ours_rss|load|pkgs)=' | tr '\n' ' ')
	[ "$c" != d ] || [ -z "$peer_a" ] || peer=$peer_a
	printf '%-5s %7s %10s %6s  %-19s %-25s %-12s %s\n' "$c" "$peer" "$ours" \
		"$(python3 -c "print(f'{$peer/$ours:.1f}x' if $peer else '-')")" \
		"$(python3 -c "print(f'{$peer/${pkgs:-1}*1000:.0f}/{$ours/${pkgs:-1}*1000:.0f}' if '$pkgs' else '-')")" \
		"$rss" "$load" "$stages"
done <"$out/results"
grep -h '^RESULT' "$out/f.log" 2>/dev/null || true
echo "goals on a quiet machine (load below 0.5): a >= 12x, b >= 10x, c >= 15x and configure within"
echo "2x of the bootable floor, d under 2 s, e's ratio at least a's and its ms/pkg no worse, f's wall"
echo "at most 0.6x the serial builds'"
[ "$failed" = 0 ]
