# Issue 15's four cases in one run, each side by side with mmdebstrap + `mke2fs -d` (60-build.sh):
# (a) the lean arm-board set from a mirror that also carries amd64, as Debian's archive does;
# (b) the same from a mirror of armhf + armel only (native tools from the host's apt sources);
# (c) the bootable arm-board (kernel, systemd, initramfs);
# (d) a rebuild of (a) with one hook changed (against (a)'s peer: the peer has no such cache).
# Then the floor for context: every data.tar of (a)'s plan decompressed on both cores.
# CASES picks some (default "a b c d"); REPS as in 60-build.sh (c runs once unless REPS_C is set).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$here/../.." && pwd)
out=$(mktemp -d /var/tmp/mkimage-bench-cases.XXXXXX)
trap 'rm -rf "$out"' EXIT
CASES=${CASES:-a b c d}
: >"$out/results"
run_case() { # run_case LETTER ENV...: the RESULT line of 60-build.sh with those settings
	local c=$1
	shift
	echo "-- case $c: $*"
	env "$@" bash "$here/60-build.sh" | tee "$out/$c.log" | grep -v '^RESULT' || true
	grep '^RESULT' "$out/$c.log" | sed "s/^RESULT/$c/" >>"$out/results" ||
		{ echo "62-cases: case $c failed (above)" >&2; failed=1; }
}
failed=0
for c in $CASES; do
	case $c in
	a) run_case a SET=lean TWINS=1 ;;
	b) run_case b SET=lean TWINS=0 ;;
	c) run_case c SET=bootable TWINS=1 REPS="${REPS_C:-1}" ;;
	d) run_case d SET=lean TWINS=1 REBUILD=1 PEER=0 ;;
	*) echo "62-cases: no case '$c' (a, b, c or d)" >&2; exit 2 ;;
	esac
done

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

echo
echo "case  peer s  mkimage s  ratio  load         stages (median s)"
peer_a=$(sed -n 's/^a .*peer=\([0-9.]*\).*/\1/p' "$out/results")
while read -r c rest; do
	peer=$(sed 's/.*peer=\([0-9.]*\).*/\1/' <<<"$rest")
	ours=$(sed 's/.*ours=\([0-9.]*\).*/\1/' <<<"$rest")
	load=$(sed 's/.*load=\([^ ]*\).*/\1/' <<<"$rest")
	stages=$(grep -o '[a-z_]*=[0-9.]*' <<<"$rest" | grep -Ev '^(peer|ours|peer_rss|ours_rss|load)=' | tr '\n' ' ')
	[ "$c" != d ] || [ -z "$peer_a" ] || peer=$peer_a
	printf '%-5s %7s %10s %6s  %-12s %s\n' "$c" "$peer" "$ours" \
		"$(python3 -c "print(f'{$peer/$ours:.1f}x' if $peer else '-')")" "$load" "$stages"
done <"$out/results"
echo "goals on a quiet machine (load below 0.5): a >= 10x, b >= 6x, c >= 6x, d under 3 s"
[ "$failed" = 0 ]
