# The remote layer cache (issue 29): a second machine's first build of a package set that another
# machine pushed to an OCI registry (docker-registry on 127.0.0.1), against a cold full build
# (unpack and configure) and a local layer hit; and what the push costs the first builder (its
# build with the push against the same build without a registry). The native base set of the
# integration tests (27 amd64 packages, a 51 MiB layer), packages already in each machine's cache
# so that only the layer differs. Medians of REPS runs (default 3); the load before and after.
# Never asserts on time.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${REPS:-3}
. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/lib-native.sh"
command -v docker-registry >/dev/null || { echo "bench: needs docker-registry"; exit 0; }
export SOURCE_DATE_EPOCH=1700000000
native_repo
mkdir -p "$T/r/keys" "$T/c" "$T/o"
native_recipe "$T/r/a.cfg" a ''
echo 'layers = { trusted_keys = [ "keys/farm.pub" ]; };' >>"$T/r/a.cfg"
openssl genpkey -algorithm ed25519 -out "$T/farm.key" 2>/dev/null
openssl pkey -in "$T/farm.key" -pubout -out "$T/r/keys/farm.pub"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%s\n' \
	"$T/storage" "$PORT" >"$T/registry.yml"
docker-registry serve "$T/registry.yml" >"$T/registry.log" 2>&1 &
_PIDS="$_PIDS $!"
for i in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/v2/" && break; sleep 0.1; done

# A machine that has the packages and no layer: the template every timed build starts from.
"$MKIMAGE" --cache-dir "$T/pkgs" -o "$T/o/warm.ext4" --no-layer-cache "$T/r/a.cfg" 2>"$T/warm.log" ||
	{ tail "$T/warm.log"; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# run NAME [OPTIONS]: one build on a fresh copy of the template (CACHE: another cache as it is)
run() {
	local name=$1 cache
	shift
	cache=${CACHE:-$T/c/$name}
	[ -n "${CACHE:-}" ] || { rm -rf "$cache"; cp -a "$T/pkgs" "$cache"; }
	/usr/bin/time -f %e -o "$T/t" "$MKIMAGE" --cache-dir "$cache" -o "$T/o/$name.ext4" "$@" \
		"$T/r/a.cfg" >"$T/$name.log" 2>&1 || { tail -20 "$T/$name.log"; exit 1; }
	cat "$T/t" >>"$T/$name.wall"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REPS"); do
	REG=http://127.0.0.1:$PORT/bench$i/layers     # a repository without the layer: a real push
	run cold                                      # unpack and configure, no registry
	run push --layer-registry "$REG" --layer-sign-key "$T/farm.key"   # the same, and the push
	run pull --layer-registry "$REG"              # another machine: pulled, restored
	CACHE=$T/c/pull run local                     # that machine again: a local layer hit
	grep -q "pulled from" "$T/pull.log" || echo "WARNING: the pull build did not pull"
	grep -q "restored from layer" "$T/local.log" || echo "WARNING: the local build did not restore"
done
c=$(median <"$T/cold.wall") p=$(median <"$T/push.wall") r=$(median <"$T/pull.wall") l=$(median <"$T/local.wall")
echo "layer: $(( $(stat -c %s "$T/c/pull/layers/"*) >> 20 )) MiB"
echo "cold full build:            median ${c}s of $(tr '\n' ' ' <"$T/cold.wall")"
echo "first builder with push:    median ${p}s of $(tr '\n' ' ' <"$T/push.wall")"
echo "second machine, pulled:     median ${r}s of $(tr '\n' ' ' <"$T/pull.wall")"
echo "local layer hit:            median ${l}s of $(tr '\n' ' ' <"$T/local.wall")"
awk -v c="$c" -v p="$p" -v r="$r" -v l="$l" 'BEGIN {
	printf "pulled/local hit: %.2fx (goal: within 2x)\n", (l > 0 ? r / l : 0)
	printf "pulled/cold: %.2fx\n", (c > 0 ? r / c : 0)
	printf "push cost: %.1f%% of the build (goal: under 10%%)\n", (c > 0 ? 100 * (p - c) / c : 0) }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
