# test-cost: slow (builds the lean recipe about ten times: run.sh starts it first)
# The layer cache (builder/layer/layer.h) with the lean arm-board set: a rebuild that changes only a
# hook restores the configured tree instead of unpacking and configuring, and makes the image a
# build without the cache makes; another package set or path filter is another layer; a corrupt
# or truncated layer is warned about, never used, and replaced; two builds of one key store one
# layer; --cache-gc removes layers no build holds and keeps one a running build holds; a user
# build stores and reuses its own layer, with the image root's build makes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"

. "$(dirname "$0")/lib-e2e.sh"
e2e_serve arm-board
export SOURCE_DATE_EPOCH=1700000000
flagship_lean arm-board "$T/r"
R=$T/r/recipes
C=$T/cache
mkdir -p "$SHM"
chmod 755 "$T"
cp "$MKIMAGE" "$T/mkimage"

# with_hook NAME: $R/NAME.cfg, the recipe with the inside hook hooks/NAME.sh after its own.
with_hook() {
	local h="{ name = \"$1\"; script = \"../hooks/$1.sh\"; where = \"inside\"; }"
	chmod +x "$T/r/hooks/$1.sh"
	sed "s|^\(  { name = \"service-user\";.*}\)\$|\1,\n  $h|" "$R/arm-board.cfg" >"$R/$1.cfg"
	grep -q "hooks/$1.sh" "$R/$1.cfg" || fail "could not add the hook '$1' to the recipe"
}
# Variants of the recipe: one more hook (after the layer point), and a path filter (before it).
printf '#!/bin/sh\necho "layer test" >/etc/layer69\n' >"$T/r/hooks/hook.sh"
with_hook hook
sed 's|^\(  minimize = true;.*\)$|\1\n  path_exclude = [ "/usr/share/zoneinfo/*" ];|' \
	"$R/arm-board.cfg" >"$R/filter.cfg"
grep -q zoneinfo "$R/filter.cfg" || fail "could not add a path filter to the recipe"

# build NAME RECIPE [OPTIONS]: $T/NAME.ext4 from $R/RECIPE.cfg with the cache $C; stderr in
# $T/NAME.err, wall seconds in $T/NAME.secs.
build() {
	local name=$1 recipe=$2 t0
	shift 2
	t0=$(date +%s.%N)
	TMPDIR=$SHM "$MKIMAGE" --cache-dir "$C" --source "$SRC" --output "$T/$name.ext4" "$@" \
		"$R/$recipe.cfg" 2>"$T/$name.err" || { cat "$T/$name.err" >&2; fail "build '$name' failed"; }
	echo "$(date +%s.%N) - $t0" | bc >"$T/$name.secs"
}
# layer NAME FIELD: the build report's layer_cache.FIELD (outcome, key)
layer() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["layer_cache"][sys.argv[2]])' \
		"$T/$1.report.json" "$2"
}
outcome() { layer "$1" outcome; }
expect_outcome() {
	[ "$(outcome "$1")" = "$2" ] ||
		{ cat "$T/$1.err" >&2; fail "build '$1': layer '$(outcome "$1")', expected '$2'"; }
}
# expect_warning NAME PATTERN: build NAME warned about its layer with PATTERN
expect_warning() {
	grep -q "warning: layer '.*' $2" "$T/$1.err" ||
		{ cat "$T/$1.err" >&2; fail "build '$1': no warning '$2'"; }
}
gc() {
	"$MKIMAGE" --cache-dir "$C" --cache-gc 2>"$T/gc.err" ||
		{ cat "$T/gc.err" >&2; fail "--cache-gc failed"; }
}
sum() { sha256sum <"$T/$1.ext4" | cut -d' ' -f1; }
layers() { find "$C/layers" -maxdepth 1 -type f ! -name '.*' | wc -l; }

# A first build configures and stores the layer; a rebuild with one more hook restores it.
build first arm-board
expect_outcome first stored
[ "$(layers)" = 1 ] || fail "expected one layer after the first build, found $(layers)"
build hook hook
expect_outcome hook reused
grep -q "configured tree restored from layer" "$T/hook.err" || fail "no word of the layer's reuse"
grep -q "dpkg --configure" "$T/hook.err" && fail "the rebuild configured the packages again"
debugfs -R "cat /etc/layer69" "$T/hook.ext4" 2>/dev/null | grep -qx "layer test" ||
	fail "the changed hook did not run on the restored tree"
# Byte-identical to a build of the same recipe that neither uses nor stores a layer.
build hook-off hook --no-layer-cache
expect_outcome hook-off off
[ "$(sum hook)" = "$(sum hook-off)" ] || fail "the image from the layer differs from one without"
e2fsck -fn "$T/hook.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn: problems"; }
[ "$(layers)" = 1 ] || fail "--no-layer-cache stored a layer"
note "full build $(cat "$T/first.secs") s, rebuild with a changed hook $(cat "$T/hook.secs") s" \
	"(load $(cut -d' ' -f1 /proc/loadavg))"

# Another package set or path filter is another layer.
sed 's|"hello:armel", ||' "$R/arm-board.cfg" >"$R/fewer.cfg"
cmp -s "$R/fewer.cfg" "$R/arm-board.cfg" && fail "could not drop a package from the recipe"
n=1
for v in fewer filter; do
	build "$v" "$v"
	expect_outcome "$v" stored
	n=$((n + 1))
	[ "$(layers)" = $n ] || fail "recipe '$v': expected $n layers, found $(layers)"
done
L=$C/layers/$(layer hook key)
[ -f "$L" ] || fail "no layer named by the report's key"
rm "$C/layers/$(layer fewer key)" "$C/layers/$(layer filter key)"

# A truncated layer, or one with a flipped byte, is detected, never used, and replaced.
cp "$L" "$T/good-layer"
truncate -s -100 "$L"
build trunc hook
expect_warning trunc "is truncated"
expect_outcome trunc stored
[ "$(sum trunc)" = "$(sum hook)" ] || fail "the image after a truncated layer differs"
size=$(stat -c %s "$L")
for byte in '\x55' '\xaa'; do # whichever differs from the byte there
	printf "$byte" | dd of="$L" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
	cmp -s "$L" "$T/good-layer" || break
done
build flipped hook
expect_warning flipped "is corrupt"
expect_outcome flipped stored
[ "$(sum flipped)" = "$(sum hook)" ] || fail "the image after a corrupt layer differs"
build again hook
expect_outcome again reused
[ "$(sum again)" = "$(sum hook)" ] || fail "the replaced layer gives another image"
[ "$(layers)" = 1 ] || fail "expected one layer, found $(layers)"

# Two builds of one new key at once: both succeed, one layer (another SOURCE_DATE_EPOCH is
# another key).
SOURCE_DATE_EPOCH=1700000100 build c1 arm-board & p1=$!
SOURCE_DATE_EPOCH=1700000100 build c2 arm-board & p2=$!
wait $p1 || fail "concurrent build 1 failed"
wait $p2 || fail "concurrent build 2 failed"
[ "$(layers)" = 2 ] || fail "two concurrent builds of one key left $(layers) layers, not 2"
[ "$(sum c1)" = "$(sum c2)" ] || fail "the concurrent builds made different images"
case "$(outcome c1) $(outcome c2)" in
"stored present" | "present stored" | "stored not stored" | "not stored stored") ;;
*) fail "concurrent builds: layer outcomes '$(outcome c1)' and '$(outcome c2)'" ;;
esac
[ -z "$(find "$C/layers" -name '.*' -type f)" ] || fail "a temp file is left in the layer cache"

# --cache-gc: a running build that reused a layer holds it; the other layer goes.
cat >"$T/r/hooks/wait.sh" <<'EOF'
#!/bin/sh
touch /var/tmp/mki69-waiting
i=0
while [ ! -e /var/tmp/mki69-go ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
EOF
with_hook wait
TMPDIR=$SHM "$MKIMAGE" --cache-dir "$C" --source "$SRC" \
	--output "$T/wait.ext4" "$R/wait.cfg" 2>"$T/wait.err" & pid=$!
_PIDS="$_PIDS $pid"
i=0
until [ -n "$(find "$SHM" -path '*/root/var/tmp/mki69-waiting')" ] || [ $i -ge 600 ]; do
	kill -0 $pid 2>/dev/null || { cat "$T/wait.err" >&2; fail "the waiting build ended early"; }
	sleep 0.5
	i=$((i + 1))
done
[ $i -lt 600 ] || fail "the waiting build never reached its hook"
grep -q "configured tree restored" "$T/wait.err" || fail "the waiting build did not reuse the layer"
gc
[ -f "$L" ] || fail "--cache-gc removed the layer a running build holds"
[ "$(layers)" = 1 ] || fail "--cache-gc kept a layer no build holds ($(layers) left)"
touch "$(find "$SHM" -path '*/root/var/tmp' -type d | head -1)/mki69-go"
wait $pid || { cat "$T/wait.err" >&2; fail "the waiting build failed"; }
rm -rf "$SHM"/*
gc
[ "$(layers)" = 0 ] || fail "--cache-gc kept a layer after its build ended"

# An ordinary user's build stores and reuses its own layer (ids mapped, not shifted), and makes
# the image root's builds make.
[ "$(id -u)" = 0 ] ||
	{ skip_part "an ordinary user's build: the test runs as that user already"; exit 0; }
test_user mki69user
U=$T/user
mkdir -p "$U/tmp"
cp -a "$T/r" "$U/r"
chown -R mki69user: "$U"
ubuild() {
	(cd "$U" && as_user mki69user env TMPDIR="$U/tmp" SOURCE_DATE_EPOCH=1700000000 "$T/mkimage" \
		--cache-dir "$U/cache" --source "$SRC" --output "$U/$1.ext4" "$U/r/recipes/$2.cfg") \
		2>"$T/u$1.err" || { cat "$T/u$1.err" >&2; fail "user build '$1' failed"; }
}
ubuild first arm-board
grep -q "configured tree stored as layer" "$T/ufirst.err" || fail "the user build stored no layer"
ubuild hook hook
grep -q "configured tree restored from layer" "$T/uhook.err" ||
	fail "the user build did not reuse its layer"
[ "$(sha256sum <"$U/hook.ext4" | cut -d' ' -f1)" = "$(sum hook)" ] ||
	fail "the user's image from its layer differs from root's"
