# test-cost: slow (openssh-server and ssl-cert configured twice: natively and emulated)
# ssh-keygen and openssl as twins (builder/configure/execkeys.c): an armhf set with
# openssh-server (three host keys), ssl-cert (the snakeoil certificate) and ca-certificates (its
# hash links), built with native tools and with every program emulated. Keys are random, so no two
# builds share them: every other file of the two trees is byte-identical (owners, modes, times,
# the hash links), and the keys match in kind: the same types and sizes, each private key the
# public one's, the certificate the same subject, lifetime and key size, signed by its own key.
# A question whose answer depends on the machine (`openssl version -a`) stays emulated.
. "$(dirname "$0")/lib.sh"

[ "$(dpkg --print-architecture)" = amd64 ] || skip "needs an amd64 host (the mirror's twins)"
SUITE=${SUITE:-bookworm} # 166 runs it on trixie
MIRROR=${MKIMAGE_TEST_MIRRORS:-/var/tmp/mkimage-mirror}/keys-armhf$([ "$SUITE" = bookworm ] || echo "-$SUITE")
SUITE=$SUITE "$TOP/tests/mkmirror.sh" "$MIRROR" armhf openssh-server ssl-cert ca-certificates
for p in openssh-client openssl; do
	grep -q "^$p:amd64=" "$MIRROR/twins.txt" || fail "the mirror has no amd64 $p of the armhf version"
done
serve "$MIRROR/repo"
SRC="$SERVER_URL $SUITE main signed-by=$MIRROR/key.gpg"
export SOURCE_DATE_EPOCH=1700000000

d=$(deb_new mki165-keys 1.0 all "Depends: openssl")
deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
[ "$1" = configure ] || exit 0
# the platform openssl was built for: the target'"'"'s, however it runs
openssl version -a | grep "^platform:" >/etc/mki165-platform
' 0755
fixture=$(deb_build "$d" "$T/debs")

mkdir -p "$T/r"
cat >"$T/r/keys.cfg" <<EOF
name = "keys165";
architecture = "armhf";
suite = "$SUITE";
merged_usr = true;
packages = {
  base = "essential";
  install = [ "openssh-server", "ssl-cert", "ca-certificates" ];
  local = [ "$fixture" ];
  recommends = false;
};
image = { format = "tar"; };
EOF

build() { # build NAME OPTION...: the set as NAME.tar, its stderr kept as NAME.err
	local name=$1
	shift
	expect_ok "$MKIMAGE" -v --no-layer-cache --cache-dir "$T/cache" --source "$SRC" \
		--output "$T/$name.tar" "$@" "$T/r/keys.cfg"
	cp "$T/err" "$T/$name.err"
}
build native
for p in /usr/bin/ssh-keygen /usr/bin/openssl; do
	grep -Eq "^mkimage: (info|debug):   \| +[0-9]+ +[0-9.]+ +[0-9.]+  native +$p\$" "$T/native.err" ||
		{ grep -A60 "exec profile" "$T/native.err" >&2; fail "$p did not run natively"; }
done
build emulated --no-native-tools

# Every file but the keys, whole; the keys by name, owner and mode, and written out to compare
keys="etc/ssh/ssh_host_rsa_key etc/ssh/ssh_host_ecdsa_key etc/ssh/ssh_host_ed25519_key
etc/ssh/ssh_host_rsa_key.pub etc/ssh/ssh_host_ecdsa_key.pub etc/ssh/ssh_host_ed25519_key.pub
etc/ssl/private/ssl-cert-snakeoil.key etc/ssl/certs/ssl-cert-snakeoil.pem etc/mki165-platform"
# shellcheck disable=SC2086
python3 - "$T" $keys <<'PY' || fail "the trees differ beyond the keys"
import hashlib, os, sys, tarfile

top, keys = sys.argv[1], set(sys.argv[2:])

def members(way):
    out = {}
    with tarfile.open(f"{top}/{way}.tar") as t:
        for m in t.getmembers():
            name = m.name[2:] if m.name.startswith("./") else m.name
            data = t.extractfile(m).read() if m.isfile() else b""
            out[name] = (m.type, m.mode, m.uid, m.gid, m.mtime, m.linkname, len(data),
                         hashlib.sha256(data).hexdigest())
            if name in keys:
                os.makedirs(os.path.dirname(f"{top}/{way}/{name}"), exist_ok=True)
                with open(os.open(f"{top}/{way}/{name}", os.O_WRONLY | os.O_CREAT, 0o600),
                          "wb") as f:  # ssh-keygen reads no private key others may read
                    f.write(data)
    return out

a, b = members("native"), members("emulated")
bad = [f"{n}: in one tree only" for n in sorted(set(a) ^ set(b))]
bad += [f"{k}: missing" for k in sorted(keys) if k not in a or k not in b]
for name in sorted(set(a) & set(b)):
    n = 4 if name in keys else len(a[name])  # random: the same file by kind, owner and mode
    if a[name][:n] != b[name][:n]:
        bad.append(f"{name}: {a[name]} against {b[name]}")
for line in bad[:20]:
    print(line, file=sys.stderr)
print(f"{len(a)} entries, {len(bad)} differ", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
[ "$(cat "$T/native/etc/mki165-platform")" = "platform: debian-armhf" ] ||
	fail "openssl version -a did not run emulated: $(cat "$T/native/etc/mki165-platform")"

# The keys by kind: type and size, the private key the public one's, the certificate's fields
for way in native emulated; do
	for t in rsa ecdsa ed25519; do
		k=$T/$way/etc/ssh/ssh_host_${t}_key
		ssh-keygen -l -f "$k.pub" | awk '{ print $1, $NF }' >>"$T/$way.kinds"
		[ "$(ssh-keygen -y -f "$k" | cut -d' ' -f1-2)" = "$(cut -d' ' -f1-2 "$k.pub")" ] ||
			fail "$way: $t host key: the private key is not the public key's"
	done
	c=$T/$way/etc/ssl/certs/ssl-cert-snakeoil.pem p=$T/$way/etc/ssl/private/ssl-cert-snakeoil.key
	[ "$(openssl x509 -noout -pubkey -in "$c")" = "$(openssl pkey -pubout -in "$p")" ] ||
		fail "$way: the snakeoil certificate is not its key's"
	openssl verify -partial_chain -check_ss_sig -CAfile "$c" "$c" >/dev/null || fail "$way: the snakeoil certificate does not verify"
	openssl x509 -noout -subject -issuer -ext subjectAltName -in "$c" >>"$T/$way.kinds"
	openssl pkey -noout -text -in "$p" | head -1 >>"$T/$way.kinds"
	python3 - "$c" >>"$T/$way.kinds" <<'PY'
import subprocess, sys
from datetime import datetime
out = subprocess.run(["openssl", "x509", "-noout", "-startdate", "-enddate", "-in", sys.argv[1]],
                     capture_output=True, text=True, check=True).stdout.split("\n")
when = [datetime.strptime(l.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z") for l in out[:2]]
print("lifetime", (when[1] - when[0]).days, "days")
PY
done
diff "$T/native.kinds" "$T/emulated.kinds" >&2 || fail "the keys differ in kind"
grep -qx "3072 (RSA)" "$T/native.kinds" || { cat "$T/native.kinds" >&2; fail "no 3072-bit RSA host key"; }
grep -qx "lifetime 3650 days" "$T/native.kinds" || { cat "$T/native.kinds" >&2; fail "no ten-year certificate"; }
