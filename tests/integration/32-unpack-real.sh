# Real bookworm armhf + armel packages: the tree and manifest match what dpkg-deb says the
# packages hold (paths through merged-/usr, types, modes, owners, link targets, contents), and
# dpkg itself accepts the database: --audit reports only "unpacked, not configured", --verify
# finds every file as its md5sums say.
. "$(dirname "$0")/lib.sh"
UNPACK=${UNPACK:-$TOP/build/tools/unpack}
[ -x "$UNPACK" ] || fail "test driver $UNPACK missing (make tools)"
mapfile -t DEBS < <("$TOP/tests/integration/unpack_realdebs.sh") ||
	fail "cannot get the real package set (apt-get download)"
[ ${#DEBS[@]} = 12 ] || fail "expected 12 real packages, got ${#DEBS[@]}"

mkdir "$T/w"
expect_ok "$UNPACK" -a armhf -a armel "$T/w" "${DEBS[@]}"
R=$T/w/root

python3 - "$T/w/manifest" "$R" "${DEBS[@]}" <<'PY' || fail "tree differs from dpkg-deb's view"
import hashlib, os, subprocess, sys, tarfile, urllib.parse

manifest, root, debs = sys.argv[1], sys.argv[2], sys.argv[3:]
MERGED = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib"}

def unescape(s):
    return "" if s == "%" else urllib.parse.unquote(s)

m = {}
for line in open(manifest):
    f = line.rstrip("\n").split("\t")
    m[unescape(f[0])] = dict(type=f[1], mode=int(f[2], 8), uid=int(f[3]), gid=int(f[4]),
                             target=None if f[9] == "-" else unescape(f[9]),
                             owners=set() if f[10] == "-" else set(f[10].split(",")))

def canon(p):
    p = p.lstrip("./").rstrip("/") if p not in ("./", ".") else ""
    top, _, rest = p.partition("/")
    if top in MERGED:
        return MERGED[top] + ("/" + rest if rest else "")
    return p

bad, seen = [], set()
for deb in debs:
    ctl = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Architecture", "Multi-Arch"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    fields = dict(l.split(": ", 1) for l in ctl.splitlines())
    owner = fields["Package"] + (":" + fields["Architecture"] if fields.get("Multi-Arch") == "same" else "")
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE, check=True).stdout
    import io
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        for ti in tf:
            p = canon(ti.name)
            if ti.isdir() and p in ("", "usr/bin", "usr/sbin", "usr/lib") and ti.name.strip("./") in MERGED:
                continue  # ./bin/ etc. stay links to usr/
            e = m.get(p)
            if e is None:
                bad.append("%s: %s missing from the manifest" % (owner, p)); continue
            seen.add(p)
            want = "d" if ti.isdir() else "l" if ti.issym() else "h" if ti.islnk() else "f" if ti.isreg() else "?"
            if e["type"] != want: bad.append("%s: %s type %s, tar %s" % (owner, p, e["type"], want))
            if e["mode"] != ti.mode & 0o7777 and not ti.issym():
                bad.append("%s: %s mode %o, tar %o" % (owner, p, e["mode"], ti.mode))
            if (e["uid"], e["gid"]) != (ti.uid, ti.gid): bad.append("%s: %s owner" % (owner, p))
            if ti.issym() and e["target"] != ti.linkname: bad.append("%s: %s link target" % (owner, p))
            if ti.islnk() and e["target"] != canon(ti.linkname): bad.append("%s: %s hardlink" % (owner, p))
            if not ti.isdir() and owner not in e["owners"]: bad.append("%s: %s not owned" % (owner, p))
            fp = os.path.join(root, p)
            if ti.isreg():
                if hashlib.sha256(open(fp, "rb").read()).digest() != hashlib.sha256(tf.extractfile(ti).read()).digest():
                    bad.append("%s: %s content differs" % (owner, p))
            elif ti.issym() and os.readlink(fp) != ti.linkname:
                bad.append("%s: %s on-disk link differs" % (owner, p))
for p, e in m.items():
    if e["owners"] and p not in seen:
        bad.append("manifest lists %s (%s) that no package holds" % (p, ",".join(e["owners"])))
for b in bad[:30]:
    print(b, file=sys.stderr)
print("compared %d manifest paths with %d packages" % (len(seen), len(debs)), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

DB=$R/var/lib/dpkg
dpkg --admindir="$DB" --audit >"$T/audit" 2>&1 || true
grep -q "unpacked but not yet configured" "$T/audit" || fail "dpkg --audit: $(cat "$T/audit")"
[ "$(grep -c '^The following' "$T/audit")" = 1 ] || fail "dpkg --audit finds more: $(cat "$T/audit")"
[ "$(grep -c '^ [a-z]' "$T/audit")" = 12 ] || fail "dpkg --audit does not list all 12: $(cat "$T/audit")"
dpkg --root="$R" --verify >"$T/verify" 2>&1 || fail "dpkg --verify: $(cat "$T/verify")"
[ ! -s "$T/verify" ] || fail "dpkg --verify reports: $(head "$T/verify")"
dpkg --admindir="$DB" -S /lib/arm-linux-gnueabi/libc.so.6 | grep -qx 'libc6:armel: /lib/arm-linux-gnueabi/libc.so.6' ||
	fail "dpkg -S on the armel libc: $(dpkg --admindir="$DB" -S /lib/arm-linux-gnueabi/libc.so.6 2>&1)"
dpkg --admindir="$DB" -S /usr/share/doc/libc6/copyright | grep -q 'libc6:armhf, libc6:armel' ||
	fail "shared copyright not listed by both libc6 instances"
[ "$(readlink -f "$R/lib/ld-linux-armhf.so.3")" = "$(readlink -f "$R/usr/lib/arm-linux-gnueabihf/ld-linux-armhf.so.3")" ] ||
	fail "/lib/ld-linux-armhf.so.3 does not resolve through lib -> usr/lib"
grep -q $'^usr/bin/mount\tf\t4755\t0\t0' "$T/w/manifest" || fail "mount is not setuid root in the manifest"
grep -q "libc6:armel" "$T/w/multiarch-lint" || fail "multiarch lint has nothing for libc6:armel"

# One worker gives the same manifest and database as two.
mkdir "$T/w1"
expect_ok "$UNPACK" -j 1 -a armhf -a armel "$T/w1" "${DEBS[@]}"
cmp "$T/w/manifest" "$T/w1/manifest" || fail "manifest differs between -j1 and -j2"
diff -r "$DB" "$T/w1/root/var/lib/dpkg" || fail "dpkg database differs between -j1 and -j2"

# Packages too big to decode ahead are streamed by the applying thread: the same result.
mkdir "$T/ws"
MKI_TEST_STREAM_BYTES=0 expect_ok "$UNPACK" -a armhf -a armel "$T/ws" "${DEBS[@]}"
cmp "$T/w/manifest" "$T/ws/manifest" || fail "manifest differs when every package is streamed"
diff -r "$DB" "$T/ws/root/var/lib/dpkg" || fail "dpkg database differs when streamed"

# An ordinary user gets the same manifest: root ownership and setuid bits from the tar headers.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	U=$(mktemp -d /tmp/mki-32-user.XXXXXX)
	chmod 755 "$U"
	cp "${DEBS[@]}" "$U/"
	mkdir "$U/w" && chown 65534:65534 "$U/w"
	udebs=()
	for d in "${DEBS[@]}"; do udebs+=("$U/$(basename "$d")"); done
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$UNPACK" -a armhf -a armel "$U/w" \
		"${udebs[@]}" >"$T/out" 2>"$T/err" || rc=$?
	cmp -s "$T/w/manifest" "$U/w/manifest"; same=$?
	rm -rf "$U"
	[ $rc = 0 ] || { cat "$T/err" >&2; fail "unprivileged unpack exited $rc"; }
	[ $same = 0 ] || fail "unprivileged manifest differs from root's"
fi
