# dm-verity hash trees: mkimage writing a disk whose raw data partition holds a 512 MiB file of
# the tree and whose root-verity partition after it holds the data's hash tree, against
# `veritysetup format` on the same bytes (the data partition read back out of the disk) with the
# same salt and UUID (the same tree, checked). mkimage's own time for the tree is the span its
# debug log gives the verity partition (`-vv`: each partition's end since the writer started);
# the image stage of the same disk without the verity partition is timed beside it. Medians of
# REPS runs (default 3), the ratio, the load average before and after. Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
MIB=${MIB:-512}
command -v veritysetup >/dev/null || { echo "75-verity: veritysetup missing (make bench-deps)"; exit 0; }
W=$(mktemp -d /var/tmp/mkimage-bench-verity.XXXXXX)
export XDG_CACHE_HOME=${BENCH_CACHE:-/var/tmp/mkimage-bench-cache}
export SOURCE_DATE_EPOCH=1700000000
. "$TOP/tests/flagship.sh"
flagship_serve pc-legacy
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$W"' EXIT

# pc-legacy without what boots it, a local package shipping the data file /srv/data.img
# (uncompressed: random bytes), and two disks: the data partition with its tree, and without.
flagship_lean pc-legacy "$W/r"
mkdir -p "$W/deb/DEBIAN" "$W/deb/srv" "$W/o"
printf 'Package: bench-data\nVersion: 1.0\nArchitecture: all\nMaintainer: bench <bench@localhost>\nDescription: bench data\n' \
	>"$W/deb/DEBIAN/control"
head -c "$((MIB << 20))" /dev/urandom >"$W/deb/srv/data.img"
dpkg-deb --root-owner-group -Znone --build "$W/deb" "$W/r/bench-data.deb" >/dev/null
rm -rf "$W/deb"
sed -i "s|^  base = \"required\";|&\n  local = [ \"$W/r/bench-data.deb\" ];|" "$W/r/recipes/pc-legacy.cfg"
disk() { # NAME EXTRA-PARTITION
	{ cat "$W/r/recipes/pc-legacy.cfg"
	  printf 'disk = { bmap = false; partitions = (\n'
	  printf '  { name = "root"; type = "linux"; contents = "root"; },\n'
	  printf '  { name = "data"; type = "root"; contents = "file:/srv/data.img"; }%s\n' "$2"
	  printf '); };\n'; } >"$W/r/recipes/$1.cfg"
}
disk verity ',
  { name = "data-verity"; type = "root-verity"; contents = "verity:data"; }'
disk plain ''
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$TOP/mkimage" --source "$SRC" --output "$W/o/plain.img" "$W/r/recipes/plain.cfg" >"$W/first.log" 2>&1 ||
	{ tail -20 "$W/first.log"; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
stage() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"]["image"])' "$1"; }
# The verity partition's span in the debug log: its end less the data partition's.
span() {
	sed -n "s/.*disk: partition '\(data\|data-verity\)' at .*(\([0-9.]*\)s)$/\2/p" "$1" |
		awk 'NR == 1 { a = $1 } NR == 2 { printf "%.2f\n", $1 - a }'
}
for i in $(seq "$REPS"); do
	"$TOP/mkimage" -vv --source "$SRC" --output "$W/o/verity.img" "$W/r/recipes/verity.cfg" \
		>"$W/verity.log" 2>&1 || { tail -20 "$W/verity.log"; exit 1; }
	stage "$W/o/verity.report.json" >>"$W/verity.stage"
	span "$W/verity.log" >>"$W/verity.span"
	"$TOP/mkimage" --source "$SRC" --output "$W/o/plain.img" "$W/r/recipes/plain.cfg" \
		>"$W/plain.log" 2>&1 || { tail -20 "$W/plain.log"; exit 1; }
	stage "$W/o/plain.report.json" >>"$W/plain.stage"
done
grep -q "restored from layer" "$W/verity.log" || echo "WARNING: the build did not restore the layer"

# The peer on the same bytes: the data partition out of the disk, the salt and UUID of its tree.
field() {
	python3 -c 'import json,sys
p = [p for p in json.load(open(sys.argv[1]))["disk"]["partitions"] if p["name"] == sys.argv[2]][0]
print(p[sys.argv[3]])' "$W/o/verity.report.json" "$@"
}
dd if="$W/o/verity.img" of="$W/data" bs=1M iflag=skip_bytes,count_bytes skip="$(field data offset)" \
	count="$(field data size)" status=none
dd if="$W/o/verity.img" of="$W/ours" bs=1M iflag=skip_bytes,count_bytes \
	skip="$(field data-verity offset)" count="$(field data-verity size)" status=none
salt=$(veritysetup dump "$W/ours" | awk '/^Salt:/ { print $2 }')
uuid=$(veritysetup dump "$W/ours" | awk '/^UUID:/ { print $2 }')
for i in $(seq "$REPS"); do
	rm -f "$W/theirs"
	/usr/bin/time -f %e -o "$W/t" veritysetup format --salt="$salt" --uuid="$uuid" \
		--data-block-size=4096 --hash-block-size=4096 "$W/data" "$W/theirs" >"$W/fmt"
	cat "$W/t" >>"$W/peer.wall"
done
grep -q "$(field data roothash)" "$W/fmt" || echo "WARNING: veritysetup gives another root hash"
cmp -s -n "$(stat -c %s "$W/theirs")" "$W/theirs" "$W/ours" || echo "WARNING: the trees differ"

v=$(median <"$W/verity.span") p=$(median <"$W/peer.wall")
echo "data partition: $(( $(field data size) >> 20 )) MiB; tree $(stat -c %s "$W/theirs") bytes; $(nproc) CPUs"
echo "mkimage, the tree (verity partition's span): median ${v}s of $(tr '\n' ' ' <"$W/verity.span")"
echo "mkimage, image stage with the tree:    median $(median <"$W/verity.stage")s of $(tr '\n' ' ' <"$W/verity.stage")"
echo "mkimage, image stage without the tree: median $(median <"$W/plain.stage")s of $(tr '\n' ' ' <"$W/plain.stage")"
echo "veritysetup format: median ${p}s of $(tr '\n' ' ' <"$W/peer.wall")"
awk -v v="$v" -v p="$p" 'BEGIN { printf "veritysetup/mkimage: %.2fx (goal: at least 1.00x)\n", (v > 0 ? p / v : 0) }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
