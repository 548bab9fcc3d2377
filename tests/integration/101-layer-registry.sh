# test-cost: slow (some thirty native builds)
# The remote layer cache (builder/layer/layerreg.h): Debian's docker-registry (Distribution) on
# 127.0.0.1 with its own config and storage; "machines" are separate --cache-dir. The first
# builds, stores and pushes its configured tree, signed; a second machine pulls it and makes the
# byte-identical image without configuring. Two machines pushing one key at once both succeed
# and leave one blob. Refused with one warning, the build configuring instead and making the same
# image (e2fsck -fn clean): a layer signed by an unknown key, another layer's manifest under the
# tag, a manifest whose key was rewritten (its signature fails), and from a hostile server
# (faultserver.py): a huge size, a blob longer than its manifest, a blob with another digest, a
# cut transfer, a stalled one, HTTP 500, and a server dripping at 2 bytes/s - the signed
# manifest's blob, the manifest, the HEAD before a push, the upload of a push - each cut at the
# operation's bound (MKIMAGE_REGISTRY_GRACE + size / MKIMAGE_REGISTRY_MIN_RATE, here 3 s);
# a registry that is down; a registry with basic auth without and with credentials (environment,
# auth file), one that wants a bearer token (tokenserver.py) without and with credentials, and
# one whose token realm is on another port: no credentials go there (it is not even asked) unless
# MKIMAGE_REGISTRY_TOKEN_HOSTS names it; --offline contacts nobody. As root and, for the hostile
# registries and a pull, as an ordinary user. (An http realm under an https registry is refused
# too: tests/unit/test_regrealm.c, the suite has no https registry.)
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
# b: a path filter, another layer key
sed 's|name = "a";|name = "b";|; s|install = \[|path_exclude = [ "/usr/share/doc/*" ]; install = [|' "$T/r/a.cfg" >"$T/r/b.cfg"
for k in farm rogue; do
	openssl genpkey -algorithm ed25519 -out "$T/keys/$k.key" 2>/dev/null
	openssl pkey -in "$T/keys/$k.key" -pubout -out "$T/r/keys/$k.pub"
done
chmod -R a+rX "$T/r" "$T/keys"
chmod 755 "$T"

# The recipe's layers group and the options: each mistake a FILE:LINE or usage error (exit 2).
sed 's|layers = { |layers = { registry = "ftp://127.0.0.1/x"; |' "$T/r/a.cfg" >"$T/r/badurl.cfg"
expect_fail 2 "badurl.cfg:[0-9]+: 'registry' must be http\(s\)://HOST" "$MKIMAGE" --check "$T/r/badurl.cfg"
sed 's|keys/farm.pub|keys/missing.pub|' "$T/r/a.cfg" >"$T/r/nokey.cfg"
expect_fail 2 "nokey.cfg:[0-9]+: trusted layer key 'keys/missing.pub' not found" \
	"$MKIMAGE" --check "$T/r/nokey.cfg"
expect_fail 2 "--layer-registry: 'http://127.0.0.1/Up' is no registry repository" \
	"$MKIMAGE" --layer-registry http://127.0.0.1/Up "$T/r/a.cfg"
expect_ok "$MKIMAGE" --check "$T/r/a.cfg"
grep -q 'trusted_keys = \[ ".*/keys/farm.pub" \]' "$T/out" || fail "--check does not show the layers group"

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

# build NAME RECIPE [OPTIONS]: $T/img/NAME.ext4 from $T/r/RECIPE.cfg with the cache $T/c/NAME
# (a machine of its own unless CACHE says which); stderr in $T/img/NAME.err.
# Its wall time in seconds goes to $T/img/NAME.secs.
build() {
	local name=$1 recipe=$2 t0=$SECONDS
	shift 2
	mkdir -p "$T/img" "${CACHE:-$T/c/$name}"
	${RUNNER:-} "$MKIMAGE" --cache-dir "${CACHE:-$T/c/$name}" -o "$T/img/$name.ext4" "$@" \
		"$T/r/$recipe.cfg" 2>"$T/img/$name.err" ||
		{ cat "$T/img/$name.err" >&2; fail "build '$name' failed"; }
	echo $((SECONDS - t0)) >"$T/img/$name.secs"
}
report() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["layer_cache"][sys.argv[2]])' \
		"$T/img/$1.report.json" "$2"
}
expect_outcome() {
	[ "$(report "$1" outcome)" = "$2" ] ||
		{ cat "$T/img/$1.err" >&2; fail "build '$1': layer '$(report "$1" outcome)', expected '$2'"; }
}
# expect_refused NAME PATTERN [OUTCOME]: one warning naming the reason, configured (or the
# layer's OUTCOME), the image of 'first', e2fsck -fn clean, nothing half-written in the cache
expect_refused() {
	local n
	n=$(grep -c "warning: " "$T/img/$1.err" || true)
	[ "$n" = 1 ] || { cat "$T/img/$1.err" >&2; fail "build '$1': $n warnings, expected one"; }
	grep -q "warning: .*$2" "$T/img/$1.err" ||
		{ cat "$T/img/$1.err" >&2; fail "build '$1': the warning does not say '$2'"; }
	expect_outcome "$1" "${3:-stored}"
	cmp -s "$T/img/first.ext4" "$T/img/$1.ext4" || fail "build '$1': the image differs from the first"
	e2fsck -fn "$T/img/$1.ext4" >"$T/fsck.out" 2>&1 ||
		{ cat "$T/fsck.out" >&2; fail "build '$1': the image is not e2fsck -fn clean"; }
	no_temp_files "$T/c/$1/layers"
}
# expect_within NAME SECONDS: the build took less (a registry that drips cannot hold it longer)
expect_within() {
	[ "$(cat "$T/img/$1.secs")" -lt "$2" ] ||
		fail "build '$1' took $(cat "$T/img/$1.secs") s, more than $2 s: its registry held it"
}
manifest() { # REPO_URL TAG
	curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' "${1/\/mkimage/\/v2\/mkimage}/manifests/$2"
}

# --- one machine pushes, another pulls ---------------------------------------------------------
build first a --layer-registry "$REG" --layer-sign-key "$T/keys/farm.key"
expect_outcome first stored
grep -q "layer registry: layer .* pushed to '$REG' as 'layer-" "$T/img/first.err" ||
	{ cat "$T/img/first.err" >&2; fail "the first build pushed nothing"; }
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
grep -q "layer registry: layer ${KA:0:12} pulled from '$REG'" "$T/img/second.err" ||
	{ cat "$T/img/second.err" >&2; fail "the second machine does not say it pulled the layer"; }
grep -q "configured tree restored from layer" "$T/img/second.err" || fail "no restore"
grep -q "dpkg --configure" "$T/img/second.err" && fail "the second machine configured the packages"
cmp "$T/img/first.ext4" "$T/img/second.ext4" || fail "the image from the pulled layer differs"
cmp "$T/c/first/layers/$KA" "$T/c/second/layers/$KA" || fail "the pulled layer differs"
no_temp_files "$T/c/second/layers"
note "a second machine pulls the signed layer and makes the byte-identical image"


# --offline: the registry is not contacted (a machine with the packages but not the layer)
cp -a "$T/c/first" "$T/c/offline"
rm -f "$T/c/offline/layers/$KA"
build offline a --layer-registry "$REG" --offline
expect_outcome offline stored
grep -q "layer registry: --offline, '$REG' is not contacted" "$T/img/offline.err" ||
	{ cat "$T/img/offline.err" >&2; fail "--offline did not say the registry is not contacted"; }
cmp -s "$T/img/first.ext4" "$T/img/offline.ext4" || fail "the offline image differs"

# --- two machines push one key at once: both succeed, one blob ---------------------------------
# Both have the layer from before they shared layers (two configurations of one key may differ
# in a byte of ld.so's aux-cache): each seeds the registry with it, unless the other's push is
# complete before it asks (then it says the registry has it). At least one of them pushes.
build b0 b
KB=$(report b0 key)
cp -a "$T/c/b0" "$T/c/b1"
cp -a "$T/c/b0" "$T/c/b2"
build b1 b --layer-registry "$REG" --layer-sign-key "$T/keys/farm.key" &
p1=$!
build b2 b --layer-registry "$REG" --layer-sign-key "$T/keys/farm.key" &
p2=$!
wait $p1 || fail "the first of two pushers failed"
wait $p2 || fail "the second of two pushers failed"
pushed=0
for n in b1 b2; do
	if grep -q "layer registry: layer .* pushed to" "$T/img/$n.err"; then pushed=$((pushed + 1))
	else
		grep -q "layer registry: layer .* already in '$REG': not pushed again" "$T/img/$n.err" ||
			{ cat "$T/img/$n.err" >&2; fail "build '$n' neither pushed nor found the layer there"; }
	fi
done
[ $pushed -ge 1 ] || fail "neither of the two builds pushed the layer"
[ "$KB" != "$KA" ] || fail "recipe b has the layer key of recipe a: the test tests nothing"
expect_outcome b1 reused
manifest "$REG" "layer-$KB" >"$T/mb.json" || fail "no manifest for layer-$KB"
n=$(find "$T/reg/storage/docker/registry/v2/blobs/sha256" -name data -size +1M | wc -l)
[ "$n" = 2 ] || fail "the registry holds $n layer blobs for two layers, expected 2"
note "two machines pushing one key at once both succeed; one blob"
# A third machine with its own copy of the layer finds it there and does not push it again.
cp -a "$T/c/b0" "$T/c/b3"
build b3 b --layer-registry "$REG" --layer-sign-key "$T/keys/farm.key"
grep -q "layer registry: layer .* already in '$REG': not pushed again" "$T/img/b3.err" ||
	{ cat "$T/img/b3.err" >&2; fail "a third machine pushed the layer the registry has"; }

# --- refused: each a warning naming the reason, then configured; the image of 'first' ----------
# A layer signed by a key the recipe does not trust.
build rogue a --layer-registry "$REG_BASE/rogue/layers" --layer-sign-key "$T/keys/rogue.key"
expect_outcome rogue stored
build unknown a --layer-registry "$REG_BASE/rogue/layers"
expect_refused unknown "no key the recipe trusts"

# Another layer's manifest under the tag (re-tagged through the API, blob and all).
put_manifest() { # REPO_URL TAG FILE
	curl -sf -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
		--data-binary "@$3" "${1/\/mkimage/\/v2\/mkimage}/manifests/$2" >/dev/null ||
		fail "cannot put the manifest '$3' as '$2'"
}
put_manifest "$REG" "layer-$KA" "$T/mb.json"
build retag a --layer-registry "$REG"
expect_refused retag "names layer ${KB:0:12}, not this one"
# The same, its key annotation rewritten: the signature no longer verifies.
sed "s/$KB/$KA/g" "$T/mb.json" >"$T/mforged.json"
put_manifest "$REG" "layer-$KA" "$T/mforged.json"
build forged a --layer-registry "$REG"
expect_refused forged "signature by key .* does not verify"
put_manifest "$REG" "layer-$KA" "$T/ma.json"

# A hostile server: manifests signed with the farm's own key (the builder's key is not the
# question here), serving the real layer or not quite.
SAVED_URL=$SERVER_URL
mkdir -p "$T/evil/v2/mkimage/layers/manifests" "$T/evil/v2/mkimage/layers/blobs"
fault_serve "$T/evil" evil
EVIL=$SERVER_URL/mkimage/layers
EVIL_BASE=$SERVER_URL
RULES_EVIL=$RULES
SERVER_URL=$SAVED_URL
FPR=$(openssl pkey -in "$T/keys/farm.key" -pubout -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)
# evil BLOBFILE SIZE: serve BLOBFILE for layer a, its manifest claiming SIZE bytes, signed
evil() {
	local digest
	digest=sha256:$(sha256sum <"$1" | cut -d' ' -f1)
	cp "$1" "$T/evil/v2/mkimage/layers/blobs/$digest"
	printf 'mkimage layer signature 1\nlayer %s\nblob %s\nsize %s\n' "$KA" "$digest" "$2" >"$T/msg"
	openssl pkeyutl -sign -inkey "$T/keys/farm.key" -rawin -in "$T/msg" -out "$T/sig"
	python3 - "$T/ma.json" "$digest" "$2" "$(base64 -w0 <"$T/sig")" "$FPR" \
		>"$T/evil/v2/mkimage/layers/manifests/layer-$KA" <<'P'
import json, sys
m = json.load(open(sys.argv[1]))
m["layers"][0]["digest"], m["layers"][0]["size"] = sys.argv[2], int(sys.argv[3])
m["annotations"]["org.mkimage.layer.signature"] = sys.argv[4]
m["annotations"]["org.mkimage.layer.signer"] = sys.argv[5]
print(json.dumps(m), end="")
P
}
LAYER=$T/c/first/layers/$KA
SIZE=$(stat -c %s "$LAYER")
# First the real layer from the hostile server: the forged manifests below differ only in one way.
evil "$LAYER" "$SIZE"
build evil-ok a --layer-registry "$EVIL"
expect_outcome evil-ok pulled
cmp -s "$T/img/first.ext4" "$T/img/evil-ok.ext4" || fail "the image from the hostile server's real layer differs"
evil "$LAYER" 1125899906842624
n=$(wc -l <"$SRVLOG")
build huge a --layer-registry "$EVIL"
expect_refused huge "its blob has 1125899906842624 bytes, more than"
tail -n +$((n + 1)) "$SRVLOG" | grep -q "GET /v2/mkimage/layers/blobs" && fail "the huge blob was downloaded"
evil "$LAYER" $((SIZE - 4096))
build longer a --layer-registry "$EVIL"
expect_refused longer "is longer than its manifest says"
cp "$LAYER" "$T/flipped"
printf 'X' | dd of="$T/flipped" bs=1 seek=1000 conv=notrunc 2>/dev/null
evil "$LAYER" "$SIZE"
cp "$T/flipped" "$T/evil/v2/mkimage/layers/blobs/sha256:$(sha256sum <"$LAYER" | cut -d' ' -f1)"
build flipped a --layer-registry "$EVIL"
expect_refused flipped "has SHA-256 .*, not the digest its manifest names"
# A signed blob that is no layer: its own trailer refuses it.
head -c "$SIZE" /dev/zero >"$T/zeros"
evil "$T/zeros" "$SIZE"
build zeros a --layer-registry "$EVIL"
expect_refused zeros "is truncated or not a layer"
evil "$LAYER" "$SIZE"
echo "*/blobs/* reset 1000000" >"$RULES_EVIL"
build cut a --layer-registry "$EVIL"
expect_refused cut "blobs/sha256:"
echo "*/blobs/* stall 1000000" >"$RULES_EVIL"
MKIMAGE_STALL_TIMEOUT=2 build stall a --layer-registry "$EVIL"
expect_refused stall "blobs/sha256:"
echo "*/manifests/* status 500" >"$RULES_EVIL"
build e500 a --layer-registry "$EVIL"
expect_refused e500 "HTTP 500"
: >"$RULES_EVIL"
note "refused with one warning each, configured, the same image: unknown key, another layer under the tag, a rewritten key, a huge size, a longer blob, another digest, no layer, a cut and a stalled transfer, HTTP 500"

# A registry that replays the signed manifest and then drips at 2 bytes/s, above any stall rule:
# each operation ends at its bound, MKIMAGE_REGISTRY_GRACE seconds plus the blob's size at
# MKIMAGE_REGISTRY_MIN_RATE from its first request (mkimage(7); by default 60 s + 1 s per MiB,
# here 3 s + next to nothing), then the build configures.
export MKIMAGE_REGISTRY_GRACE=3 MKIMAGE_REGISTRY_MIN_RATE=1G
echo "*/blobs/* drip 2" >"$RULES_EVIL"
build dripblob a --layer-registry "$EVIL"
expect_refused dripblob "the pull was not over within its bound of 3 s (3 s, then [0-9.]* MiB at 1 GiB/s; MKIMAGE_REGISTRY_GRACE, MKIMAGE_REGISTRY_MIN_RATE): GET '$EVIL_BASE/v2/mkimage/layers/blobs/sha256:[0-9a-f]*' was not over in time (0 of $SIZE bytes in)"
expect_within dripblob 60
echo "*/manifests/* drip 2" >"$RULES_EVIL"
build dripman a --layer-registry "$EVIL"
expect_refused dripman "the pull was not over within its bound of 3 s (3 s before a manifest gives a size; MKIMAGE_REGISTRY_GRACE): GET '$EVIL_BASE/v2/mkimage/layers/manifests/layer-$KA' was not over in time"
expect_within dripman 60
# A machine with the layer in its cache seeds the registry: the HEAD asking whether it has it drips.
cp -a "$T/c/first" "$T/c/driphead"
build driphead a --layer-registry "$EVIL" --layer-sign-key "$T/keys/farm.key"
expect_refused driphead "layer ${KA:0:12} not pushed to '$EVIL': the push was not over within its bound of 3 s (3 s, then [0-9.]* MiB at 1 GiB/s; MKIMAGE_REGISTRY_GRACE, MKIMAGE_REGISTRY_MIN_RATE): HEAD '$EVIL_BASE/v2/mkimage/layers/manifests/layer-$KA' was not over in time" reused
expect_within driphead 60
# A push to a repository without the layer: the upload is read at 2 bytes/s.
echo "*/uploads/1 drip 2" >"$RULES_EVIL"
build dripput a --layer-registry "$EVIL_BASE/other/layers" --layer-sign-key "$T/keys/farm.key"
expect_refused dripput "layer ${KA:0:12} not pushed to '$EVIL_BASE/other/layers': the push was not over within its bound of 3 s .*: PUT '$EVIL_BASE/v2/other/layers/blobs/uploads/1?digest=sha256:[0-9a-f]*' was not over in time ([0-9]* of $SIZE bytes sent)"
expect_within dripput 60
: >"$RULES_EVIL"
unset MKIMAGE_REGISTRY_GRACE MKIMAGE_REGISTRY_MIN_RATE
note "a registry dripping at 2 bytes/s (blob, manifest, HEAD, upload) is cut at the operation's bound: one warning, configured, the same image"

# A registry that is down: connection refused.
DOWN=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build down a --layer-registry "http://127.0.0.1:$DOWN/mkimage/layers"
expect_refused down "127.0.0.1"

# --- basic auth: refused without credentials, pulled with them ---------------------------------
registry auth htpasswd
AUTH=http://127.0.0.1:$REG_PORT/mkimage/layers
MKIMAGE_REGISTRY_AUTH="farm:s3cret pass" build apush a --layer-registry "$AUTH" \
	--layer-sign-key "$T/keys/farm.key"
grep -q "pushed to '$AUTH'" "$T/img/apush.err" || { cat "$T/img/apush.err" >&2; fail "no push with basic auth"; }
grep -q "s3cret" "$T/img/apush.err" && fail "the password was logged"
build anon a --layer-registry "$AUTH"
expect_refused anon "HTTP 401 (no credentials"
printf '{"auths": {"127.0.0.1:%s": {"auth": "%s"}}}\n' "$REG_PORT" \
	"$(printf 'farm:s3cret pass' | base64 -w0)" >"$T/auth.json"
REGISTRY_AUTH_FILE=$T/auth.json build authfile a --layer-registry "$AUTH"
expect_outcome authfile pulled
cmp -s "$T/img/first.ext4" "$T/img/authfile.ext4" || fail "the image pulled with basic auth differs"
note "basic auth: 401 without credentials (a warning), pulled with an auth file"

# A registry that wants a bearer token (tokenserver.py, the real layer of the hostile server's
# last case): the token is fetched with the credentials, then the layer pulled.
python3 "$TOP/tests/integration/tokenserver.py" "$T/evil" "$T/token.port" "farm:tok pass" \
	2>"$T/token.err" &
_PIDS="$_PIDS $!"
for i in $(seq 1 100); do [ -s "$T/token.port" ] && break; sleep 0.1; done
TOKREG=http://127.0.0.1:$(cat "$T/token.port")/mkimage/layers
build tanon a --layer-registry "$TOKREG"
expect_refused tanon "token service .* answered 401"
MKIMAGE_REGISTRY_AUTH="farm:tok pass" build token a --layer-registry "$TOKREG"
expect_outcome token pulled
cmp -s "$T/img/first.ext4" "$T/img/token.ext4" || fail "the image pulled with a bearer token differs"
note "bearer token: refused without credentials, pulled with them"

# tokenserver.py as a registry whose token realm is another instance, on another port: another
# server (any user of a shared host can listen on a port). The credentials go there only when
# MKIMAGE_REGISTRY_TOKEN_HOSTS names it; unlisted, it is not even asked.
token_server() { # NAME [REALM]: sets PORT
	python3 "$TOP/tests/integration/tokenserver.py" "$T/evil" "$T/$1.port" "farm:tok pass" \
		"${2:-}" "$T/$1.log" 2>"$T/$1.err" &
	_PIDS="$_PIDS $!"
	for i in $(seq 1 100); do [ -s "$T/$1.port" ] && break; sleep 0.1; done
	PORT=$(cat "$T/$1.port")
}
token_server realm
REALM_PORT=$PORT
token_server foreign "http://127.0.0.1:$REALM_PORT/token"
FOREIGN=http://127.0.0.1:$PORT/mkimage/layers
MKIMAGE_REGISTRY_AUTH="farm:tok pass" build realm a --layer-registry "$FOREIGN"
expect_refused realm "the http registry sends its token requests to 'http://127.0.0.1:$REALM_PORT/token', not to its own host '127.0.0.1:$PORT': its credentials are not sent there (MKIMAGE_REGISTRY_TOKEN_HOSTS=127.0.0.1:$REALM_PORT sends them"
[ ! -s "$T/realm.log" ] || fail "the token service on another port was asked: $(cat "$T/realm.log")"
grep -q "tok pass" "$T/img/realm.err" && fail "the password was logged"
MKIMAGE_REGISTRY_TOKEN_HOSTS="127.0.0.1:1 127.0.0.1:$REALM_PORT" MKIMAGE_REGISTRY_AUTH="farm:tok pass" \
	build realmok a --layer-registry "$FOREIGN"
expect_outcome realmok pulled
cmp -s "$T/img/first.ext4" "$T/img/realmok.ext4" || fail "the image pulled through the listed realm differs"
[ "$(cat "$T/realm.log")" = "token auth=basic" ] ||
	fail "the listed token service did not get the credentials once: $(cat "$T/realm.log")"
# Without credentials nothing is given away: the realm is asked anonymously, and refuses.
: >"$T/realm.log"
build realmanon a --layer-registry "$FOREIGN"
expect_refused realmanon "the token service 'http://127.0.0.1:$REALM_PORT/token' answered 401"
[ "$(cat "$T/realm.log")" = "token auth=none" ] || fail "the anonymous token request: $(cat "$T/realm.log")"
note "a token realm on another port gets the credentials only when MKIMAGE_REGISTRY_TOKEN_HOSTS names it"

# --- an ordinary user's machine pulls what root pushed -----------------------------------------
if [ "$(id -u)" = 0 ]; then
	test_user mkireg101
	mkdir -p "$T/c/user" && chown mkireg101 "$T/c/user" "$T/img"
	RUNNER="as_user mkireg101" build user a --layer-registry "$REG"
	expect_outcome user pulled
	cmp "$T/img/first.ext4" "$T/img/user.ext4" || fail "the ordinary user's image from the layer differs"
	note "an ordinary user's build pulls root's layer: the same image"
	# The hostile registries above, as the ordinary user: one warning, configured, root's image.
	ubuild() { # NAME ARGS...
		mkdir -p "$T/c/$1" && chown mkireg101 "$T/c/$1"
		RUNNER="as_user mkireg101" build "$@"
	}
	echo "*/blobs/* drip 2" >"$RULES_EVIL"
	MKIMAGE_REGISTRY_GRACE=3 MKIMAGE_REGISTRY_MIN_RATE=1G ubuild udrip a --layer-registry "$EVIL"
	expect_refused udrip "the pull was not over within its bound of 3 s .*GET '$EVIL_BASE/v2/mkimage/layers/blobs/sha256:[0-9a-f]*' was not over in time"
	expect_within udrip 60
	: >"$RULES_EVIL"
	: >"$T/realm.log"
	MKIMAGE_REGISTRY_AUTH="farm:tok pass" ubuild urealm a --layer-registry "$FOREIGN"
	expect_refused urealm "sends its token requests to 'http://127.0.0.1:$REALM_PORT/token', not to its own host"
	[ ! -s "$T/realm.log" ] || fail "the ordinary user's build asked the token service on another port"
	note "as an ordinary user: the dripping registry cut at its bound, the foreign realm refused"
else
	skip_part "not root: the ordinary user's build needs a throwaway user"
fi
