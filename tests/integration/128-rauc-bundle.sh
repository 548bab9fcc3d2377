# test-cost: slow (native builds writing A/B disks and their update bundles)
# The update bundle (issue 39): a recipe's `update` group makes NAME.raucb beside an A/B disk,
# in RAUC's verity format, written by mkimage alone. The real `rauc` (Debian's) reads it with a
# CA made here by openssl: `rauc info --keyring` accepts it, a wrong CA is refused, a flipped
# payload byte is refused by `rauc extract` (which checks the hash tree), a compatible edited in
# the signed manifest breaks the signature; the slot image it carries is the disk's root
# partition byte for byte; two builds give the same bytes; veritysetup checks the tree on its
# own; the report and SBOM name the bundle and its sha256. Each bad input - a missing key, a
# certificate not of the key, one the keyring does not trust, an ECDSA key, a slot the layout
# lacks, a slot smaller than the root - is exit 2 with its message and nothing at the output.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

for t in rauc openssl sfdisk e2fsck veritysetup; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
export SOURCE_DATE_EPOCH=1700000000

# --- keys, made here -------------------------------------------------------------------------
K=$T/r/keys
mkdir -p "$K"
# ca NAME: a self-signed CA
ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$K/$1.key" -out "$K/$1.pem" -days 3650 \
		-subj "/O=mkimage tests/CN=$1" -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null || fail "openssl: CA $1"
}
# signer NAME CA [KEYALG]: a signing certificate NAME issued by CA
signer() {
	openssl genpkey -algorithm "${3:-rsa}" ${3:+-pkeyopt ec_paramgen_curve:P-256} \
		-out "$K/$1.key" 2>/dev/null || fail "openssl: key $1"
	openssl req -new -key "$K/$1.key" -subj "/O=mkimage tests/CN=$1" -out "$K/$1.csr" ||
		fail "openssl: csr $1"
	printf 'keyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n' >"$K/ext"
	openssl x509 -req -in "$K/$1.csr" -CA "$K/$2.pem" -CAkey "$K/$2.key" -set_serial 1 \
		-days 3650 -extfile "$K/ext" -out "$K/$1.pem" 2>/dev/null || fail "openssl: cert $1"
}
ca ca
ca other-ca
signer signer ca
signer stranger other-ca
signer ec ca ec

d=$(deb_new board-files 1.0 all)
deb_file "$d" etc/board "root partition file
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
# recipe FILE NAME UPDATE-KEYS [SLOT-B-SIZE]: an A/B disk (root-a holds the root, root-b
# empty, a data partition) and an update group
recipe() {
	native_recipe "$1" "$2" ', "board-files"'
	cat >>"$1" <<R
disk = {
partitions = (
{ name = "root-a"; type = "root"; size = "96M"; contents = "root"; },
{ name = "root-b"; type = "root"; size = "${4:-96M}"; },
{ name = "data"; type = "linux"; size = "8M"; format = "ext4"; }
);
};
update = {
$3
};
R
}
KEYS='cert = "keys/signer.pem"; key = "keys/signer.key"; keyring = "keys/ca.pem";'
recipe "$R/ab.cfg" ab "format = \"rauc\"; compatible = \"mkimage-test-board\"; version = \"1.0\"; $KEYS"

build() { # DIR: build ab.cfg into DIR/ab.img
	mkdir -p "$1/tmp"
	(cd "$1" && TMPDIR=$1/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$1/ab.img" \
		"$R/ab.cfg")
}
build "$T/a"
B=$T/a/ab.raucb
[ -s "$B" ] || fail "no bundle beside the disk: $(ls "$T/a")"
[ "$(stat -c %a "$B")" = 644 ] || fail "the bundle's mode is $(stat -c %a "$B")"
[ -z "$(ls -A "$T/a/tmp")" ] || fail "work files left: $(ls -A "$T/a/tmp")"

# --- RAUC reads it ---------------------------------------------------------------------------
rauc info --keyring="$K/ca.pem" --output-format=shell "$B" >"$T/info" 2>"$T/info.err" ||
	{ cat "$T/info.err" >&2; fail "rauc info refused the bundle"; }
grep -qx "RAUC_MF_COMPATIBLE='mkimage-test-board'" "$T/info" || fail "compatible: $(cat "$T/info")"
grep -qx "RAUC_MF_VERSION='1.0'" "$T/info" || fail "version: $(cat "$T/info")"
grep -qx "RAUC_IMAGE_CLASS_0='rootfs'" "$T/info" || fail "slot class: $(cat "$T/info")"
grep -qx "RAUC_IMAGE_NAME_0='rootfs.ext4'" "$T/info" || fail "image name: $(cat "$T/info")"
if rauc info --keyring="$K/other-ca.pem" "$B" >"$T/o" 2>&1; then
	fail "rauc info accepted the bundle with another CA"
fi
grep -q "signature verification failed" "$T/o" || fail "wrong CA: $(cat "$T/o")"

# the slot image: the disk's root partition, byte for byte
sfdisk --json "$T/a/ab.img" >"$T/pt.json"
start=$(python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["partitiontable"]
p = [p for p in t["partitions"] if p.get("name") == "root-a"][0]
print(p["start"], p["size"])' "$T/pt.json")
set -- $start
dd if="$T/a/ab.img" of="$T/root-a" bs=512 skip="$1" count="$2" status=none
rauc extract --trust-environment --keyring="$K/ca.pem" "$B" "$T/x" >"$T/o" 2>&1 ||
	{ cat "$T/o" >&2; fail "rauc extract refused the bundle"; }
cmp -s "$T/x/rootfs.ext4" "$T/root-a" || fail "the slot image is not the root partition"
e2fsck -fn "$T/x/rootfs.ext4" >/dev/null 2>&1 || fail "e2fsck of the slot image"
grep -qx 'compatible=mkimage-test-board' "$T/x/manifest.raucm" || fail "the inner manifest"
! grep -q verity-hash "$T/x/manifest.raucm" || fail "the inner manifest holds the verity fields"

# the hash tree, as veritysetup reads it: no superblock, right after the squashfs
size=$(stat -c %s "$B")
sig=$(tail -c 8 "$B" | od -An -tu8 --endian=big | tr -d ' ')
rauc info --keyring="$K/ca.pem" --output-format=shell "$B" >/dev/null
openssl cms -verify -binary -inform der -noverify -in <(head -c $((size - 8)) "$B" |
	tail -c "$sig") -out "$T/signed.raucm" 2>/dev/null || fail "openssl cms cannot read the signature"
grep -qx 'format=verity' "$T/signed.raucm" || fail "format: $(cat "$T/signed.raucm")"
vsize=$(sed -n 's/^verity-size=//p' "$T/signed.raucm")
vhash=$(sed -n 's/^verity-hash=//p' "$T/signed.raucm")
vsalt=$(sed -n 's/^verity-salt=//p' "$T/signed.raucm")
data=$((size - 8 - sig - vsize))
[ $((data % 4096)) = 0 ] && [ "$data" -gt 4096 ] || fail "payload of $data bytes"
veritysetup verify --no-superblock --hash-offset="$data" --data-blocks=$((data / 4096)) \
	--salt="$vsalt" "$B" "$B" "$vhash" >/dev/null 2>&1 || fail "veritysetup: the hash tree"
openssl asn1parse -inform der -in <(head -c $((size - 8)) "$B" | tail -c "$sig") >"$T/asn1"
! grep -q signingTime "$T/asn1" || fail "the signature has a signing time"

# --- tampering -------------------------------------------------------------------------------
flip() { # FILE OFFSET OUT: OUT is FILE with the byte at OFFSET inverted
	cp "$1" "$3"
	printf "$(printf '\\%03o' $(( $(od -An -tu1 -j "$2" -N1 "$1") ^ 255 )))" |
		dd of="$3" bs=1 seek="$2" conv=notrunc status=none
}
flip "$B" 8192 "$T/payload.raucb"
if rauc extract --trust-environment --keyring="$K/ca.pem" "$T/payload.raucb" "$T/x2" \
	>"$T/o" 2>&1; then
	fail "rauc extract accepted a flipped payload byte"
fi
grep -q "payload is corrupted" "$T/o" || fail "flipped payload: $(cat "$T/o")"
off=$(grep -boa 'compatible=mkimage-test-board' "$B" | tail -1 | cut -d: -f1)
[ -n "$off" ] || fail "no signed manifest in the bundle"
cp "$B" "$T/compat.raucb"
printf 'compatible=mkimage-test-bored' | dd of="$T/compat.raucb" bs=1 seek="$off" conv=notrunc status=none
if rauc info --keyring="$K/ca.pem" "$T/compat.raucb" >"$T/o" 2>&1; then
	fail "rauc info accepted a bundle whose signed compatible was changed"
fi
grep -q "signature verification failed" "$T/o" || fail "changed compatible: $(cat "$T/o")"

# --- report and SBOM -------------------------------------------------------------------------
sha=$(sha256sum "$B" | cut -d' ' -f1)
python3 - "$T/a/ab.report.json" "$B" "$sha" <<'PY' || fail "the report's update member"
import json, sys
u = json.load(open(sys.argv[1]))["update"]
assert u["format"] == "rauc" and u["path"] == sys.argv[2] and u["sha256"] == sys.argv[3], u
assert u["compatible"] == "mkimage-test-board" and u["version"] == "1.0", u
assert u["slots"] == ["root-a", "root-b"], u
PY
grep -q "\"$sha\"" "$T/a/ab.spdx.json" || fail "the SBOM lacks the bundle's sha256"
grep -q '"ab.raucb"' "$T/a/ab.spdx.json" || fail "the SBOM lacks the bundle's name"
sbom_validate "$T/a/ab.spdx.json"

# the lock pins what the bundle is made of: the update group's keys, the certificate by content
for k in format compatible version slots cert keyring; do
	grep -q "^field: update.$k [0-9a-f]\{64\}$" "$T/a/ab.lock" || fail "the lock lacks update.$k"
done
! grep -q "^field: update.key " "$T/a/ab.lock" || fail "the lock records the private key"

# --- reproducible ----------------------------------------------------------------------------
build "$T/b"
cmp -s "$B" "$T/b/ab.raucb" || fail "two builds gave different bundles"

# --- signed offline: the build writes the content and the manifest; a signing station with only
# openssl and perl signs and appends (mkimage(7), Updates) --------------------------------------
recipe "$R/off.cfg" ab "compatible = \"mkimage-test-board\"; version = \"1.0\"; sign = \"offline\"; keyring = \"keys/ca.pem\";"
mkdir -p "$T/off/tmp"
(cd "$T/off" && TMPDIR=$T/off/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/off/ab.img" "$R/off.cfg")
[ -s "$T/off/ab.raucb.unsigned" ] && [ -s "$T/off/ab.raucb.manifest" ] && [ ! -e "$T/off/ab.raucb" ] ||
	fail "sign = offline: not ab.raucb.unsigned and ab.raucb.manifest alone: $(ls "$T/off")"
grep -q '^verity-hash=[0-9a-f]\{64\}$' "$T/off/ab.raucb.manifest" || fail "the manifest to sign lacks verity-hash"
python3 - "$T/off/ab.report.json" <<'PY' || fail "the report does not say the bundle is unsigned"
import json, sys
u = json.load(open(sys.argv[1]))["update"]
assert u["signed"] is False and u["manifest"].endswith("ab.raucb.manifest") and u["cert"] is None, u
PY
openssl cms -sign -binary -nodetach -noattr -outform DER -in "$T/off/ab.raucb.manifest" \
	-signer "$K/signer.pem" -inkey "$K/signer.key" -out "$T/off/sig.der" || fail "openssl cms -sign"
{ cat "$T/off/ab.raucb.unsigned" "$T/off/sig.der"
  perl -e 'print pack("Q>", -s $ARGV[0])' "$T/off/sig.der"; } >"$T/off/ab.raucb"
rauc info --keyring="$K/ca.pem" "$T/off/ab.raucb" >"$T/o" 2>&1 ||
	{ cat "$T/o" >&2; fail "rauc info refused the bundle signed offline"; }
rauc extract --trust-environment --keyring="$K/ca.pem" "$T/off/ab.raucb" "$T/xo" >"$T/o" 2>&1 ||
	{ cat "$T/o" >&2; fail "rauc extract refused the bundle signed offline"; }
dd if="$T/off/ab.img" of="$T/off-root" bs=512 skip="$1" count="$2" status=none
cmp -s "$T/xo/rootfs.ext4" "$T/off-root" || fail "offline: the slot image is not the root partition"
rm -rf "$T/xo" "$T/off-root" "$T/off/ab.img"

# --- bad input: exit 2, nothing written ------------------------------------------------------
# bad NAME PATTERN UPDATE-KEYS [SLOT-B-SIZE]
C='compatible = "x"; version = "1";'
bad() {
	recipe "$R/$1.cfg" "$1" "$3" "${4:-}"
	mkdir -p "$T/bad/$1"
	(cd "$T/bad/$1" && expect_fail 2 "$2" "$MKIMAGE" --cache-dir "$T/cache" \
		-o "$T/bad/$1/x.img" "$R/$1.cfg")
	[ -z "$(left_beside "$T/bad/$1")" ] || fail "$1: left $(left_beside "$T/bad/$1")"
}
bad nokey "keys/missing.key" "$C "'cert = "keys/signer.pem"; key = "keys/missing.key"; keyring = "keys/ca.pem";'
bad mismatch "is not the private key of the certificate" \
	"$C "'cert = "keys/signer.pem"; key = "keys/stranger.key"; keyring = "keys/ca.pem";'
bad untrusted "is not trusted by the keyring" \
	"$C "'cert = "keys/stranger.pem"; key = "keys/stranger.key"; keyring = "keys/ca.pem";'
bad ecdsa "not yet supported: a id-ecPublicKey key|not yet supported: a EC key" \
	"$C "'cert = "keys/ec.pem"; key = "keys/ec.key"; keyring = "keys/ca.pem";'
bad noslot "update slot 'root-c' is not a partition of the disk's layout" \
	"$C slots = [ \"root-a\", \"root-c\" ]; $KEYS"
bad small "update slot 'root-b' \\([0-9]+ bytes\\) is smaller than the root partition" "$C $KEYS" 80M
bad nocompat "'update' needs 'compatible'" "version = \"1\"; $KEYS"
bad offkey "'update.(cert|key)' with sign = \"offline\"" "$C sign = \"offline\"; $KEYS"
bad signhow "'update.sign' \"later\"" "$C sign = \"later\"; $KEYS"
