# test-cost: slow (some twenty native builds)
# The remote layer cache (builder/store/layerreg.h): Debian's docker-registry (Distribution) on
# 127.0.0.1 with its own config and storage; "machines" are separate --cache-dir. The first
# builds, stores and pushes its configured tree, signed; a second machine pulls it and makes the
# byte-identical image without configuring. Two machines pushing one key at once both succeed
# and leave one blob. Refused with one warning, the build configuring instead and making the same
# image: a layer signed by an unknown key, another layer's manifest under the tag, a manifest
# whose key was rewritten (its signature fails), and from a hostile server (faultserver.py): a
# huge size, a blob longer than its manifest, a blob with another digest, a cut transfer, a
# stalled one, HTTP 500; a registry that is down; a registry with basic auth without and with
# credentials (environment, auth file); --offline contacts nobody. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v docker-registry >/dev/null || skip "needs docker-registry (Distribution)"
command -v htpasswd >/dev/null || skip "needs htpasswd (apache2-utils) for the basic-auth case"
export SOURCE_DATE_EPOCH=1700000000

native_repo
REPO_URL=$SERVER_URL
mkdir -p "$T/r/keys" "$T/keys"
native_recipe "$T/r/a.cfg" a ''
cat >>"$T/r/a.cfg" <<'R'
layers = { trusted_keys = [ "keys/farm.pub" ]; };
R
# b: another package set, another layer key
sed 's|name = "a";|name = "b";|; s|"libc-bin"|"libc-bin", "hello:i386"|' "$T/r/a.cfg" >"$T/r/b.cfg"
for k in farm rogue; do
	openssl genpkey -algorithm ed25519 -out "$T/keys/$k.key" 2>/dev/null
	openssl pkey -in "$T/keys/$k.key" -pubout -out "$T/r/keys/$k.pub"
done
chmod -R a+rX "$T/r" "$T/keys"
chmod 755 "$T"

# registry NAME [htpasswd]: docker-registry on a free port with its own storage; sets REG_PORT.
registry() {
	local name=$1 i
	REG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	mkdir -p "$T/$name/storage"
	cat >"$T/$name/config.yml" <<C
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $T/$name/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$REG_PORT
  secret: mkimage-test
C
	if [ -n "${2:-}" ]; then
		htpasswd -Bbn farm "s3cret pass" >"$T/$name/htpasswd" 2>/dev/null
		printf 'auth:\n  htpasswd:\n    realm: mkimage-test\n    path: %s\n' \
			"$T/$name/htpasswd" >>"$T/$name/config.yml"
	fi
	docker-registry serve "$T/$name/config.yml" >"$T/$name/log" 2>&1 &
	_PIDS="$_PIDS $!"
	for i in $(seq 1 100); do
		curl -s -o /dev/null "http://127.0.0.1:$REG_PORT/v2/" && return 0
		sleep 0.1
	done
	fail "docker-registry did not answer: $(cat "$T/$name/log")"
}
registry reg
REG=http://127.0.0.1:$REG_PORT/mkimage/layers
REG_BASE=http://127.0.0.1:$REG_PORT

# build NAME RECIPE [OPTIONS]: $T/out/NAME.ext4 from $T/r/RECIPE.cfg with the cache $T/c/NAME
# (a machine of its own unless CACHE says which); stderr in $T/out/NAME.err.
build() {
	local name=$1 recipe=$2
	shift 2
	mkdir -p "$T/out" "${CACHE:-$T/c/$name}"
	${RUNNER:-} "$MKIMAGE" --cache-dir "${CACHE:-$T/c/$name}" -o "$T/out/$name.ext4" "$@" \
		"$T/r/$recipe.cfg" 2>"$T/out/$name.err" ||
		{ cat "$T/out/$name.err" >&2; fail "build '$name' failed"; }
}
report() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["layer_cache"][sys.argv[2]])' \
		"$T/out/$1.report.json" "$2"
}
expect_outcome() {
	[ "$(report "$1" outcome)" = "$2" ] ||
		{ cat "$T/out/$1.err" >&2; fail "build '$1': layer '$(report "$1" outcome)', expected '$2'"; }
}
# expect_refused NAME PATTERN: one warning naming the reason, configured, the image of 'first'
expect_refused() {
	local n
	n=$(grep -c "warning: layer registry: layer .* not used: " "$T/out/$1.err" || true)
	[ "$n" = 1 ] || { cat "$T/out/$1.err" >&2; fail "build '$1': $n registry warnings, expected one"; }
	grep -q "warning: layer registry: .*$2" "$T/out/$1.err" ||
		{ cat "$T/out/$1.err" >&2; fail "build '$1': the warning does not say '$2'"; }
	expect_outcome "$1" "${3:-not stored}"
	grep -q "dpkg --configure\|configur" "$T/out/$1.err" || true
	cmp -s "$T/out/first.ext4" "$T/out/$1.ext4" || fail "build '$1': the image differs from the first"
}
manifest() { # REPO_URL TAG
	curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' "${1/\/mkimage/\/v2\/mkimage}/manifests/$2"
}

# --- one machine pushes, another pulls ---------------------------------------------------------
build first a --layer-registry "$REG" --layer-sign-key "$T/keys/farm.key"
expect_outcome first stored
grep -q "layer registry: layer .* pushed to '$REG' as 'layer-" "$T/out/first.err" ||
	{ cat "$T/out/first.err" >&2; fail "the first build pushed nothing"; }
KA=$(report first key)
manifest "$REG" "layer-$KA" >"$T/ma.json" || fail "no manifest tagged layer-$KA in the registry"
python3 - "$T/ma.json" "$KA" "$T/c/first/layers/$KA" <<'P' || fail "the manifest is not what it should be"
import hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
assert m["mediaType"] == "application/vnd.oci.image.manifest.v1+json", m
assert m["artifactType"] == "application/vnd.mkimage.layer.v1", m
assert m["config"]["mediaType"] == "application/vnd.oci.empty.v1+json", m
(l,) = m["layers"]
assert l["mediaType"] == "application/vnd.mkimage.layer.v1", l
data = open(sys.argv[3], "rb").read()
assert l["digest"] == "sha256:" + hashlib.sha256(data).hexdigest() and l["size"] == len(data), l
assert m["annotations"]["org.mkimage.layer.key"] == sys.argv[2], m
assert len(m["annotations"]["org.mkimage.layer.signature"]) == 88, m
P
if command -v skopeo >/dev/null; then
	skopeo inspect --raw --tls-verify=false "docker://127.0.0.1:$REG_PORT/mkimage/layers:layer-$KA" \
		>"$T/skopeo.json" 2>"$T/skopeo.err" || fail "skopeo cannot inspect the layer: $(cat "$T/skopeo.err")"
	cmp -s "$T/skopeo.json" "$T/ma.json" || fail "skopeo sees another manifest"
	skopeo copy --all --src-tls-verify=false "docker://127.0.0.1:$REG_PORT/mkimage/layers:layer-$KA" \
		"oci:$T/mirror:layer-$KA" >/dev/null 2>"$T/skopeo.err" ||
		fail "skopeo cannot mirror the layer: $(cat "$T/skopeo.err")"
	note "skopeo inspects and mirrors the layer (oci layout)"
else
	skip_part "no skopeo: the air-gap mirror is not tried"
fi

build second a --layer-registry "$REG"
expect_outcome second pulled
grep -q "layer registry: layer ${KA:0:12} pulled from '$REG'" "$T/out/second.err" ||
	{ cat "$T/out/second.err" >&2; fail "the second machine does not say it pulled the layer"; }
grep -q "configured tree restored from layer" "$T/out/second.err" || fail "no restore"
grep -q "dpkg --configure" "$T/out/second.err" && fail "the second machine configured the packages"
cmp "$T/out/first.ext4" "$T/out/second.ext4" || fail "the image from the pulled layer differs"
cmp "$T/c/first/layers/$KA" "$T/c/second/layers/$KA" || fail "the pulled layer differs"
no_temp_files "$T/c/second/layers"
note "a second machine pulls the signed layer and makes the byte-identical image"

