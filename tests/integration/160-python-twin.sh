# test-cost: slow (python3 and a few python3-* packages byte-compiled twice: natively and emulated)
# python3.X as a twin (builder/configure/accel_python.c): an armhf set with python3, yaml (a C
# extension), setuptools (a .pth that site runs), jinja2 and requests, plus a package of its own
# whose modules fold a float power and a complex product (left to the emulated interpreter), a
# set of constants and big ints (compiled natively), built with native tools and with every
# program emulated: the images, every .pyc in them, are byte-identical; the exec profile shows
# python3.11 native; the report names the one package whose byte code stayed emulated.
. "$(dirname "$0")/lib.sh"

[ "$(dpkg --print-architecture)" = amd64 ] || skip "needs an amd64 host (the mirror's twins)"
MIRROR=${MKIMAGE_TEST_MIRRORS:-/var/tmp/mkimage-mirror}/python-armhf
"$TOP/tests/mkmirror.sh" "$MIRROR" armhf busybox python3 python3-yaml python3-setuptools \
	python3-jinja2 python3-requests
grep -q "^python3.11-minimal:amd64=" "$MIRROR/twins.txt" ||
	fail "the mirror has no amd64 python3.11-minimal of the armhf version"
serve "$MIRROR/repo"
SRC="$SERVER_URL bookworm main signed-by=$MIRROR/key.gpg"
export SOURCE_DATE_EPOCH=1700000000

d=$(deb_new mki160-py 1.0 all "Depends: python3, python3-yaml")
m=usr/lib/python3/dist-packages/mki160
deb_file "$d" $m/__init__.py ""
deb_file "$d" $m/plain.py 'KINDS = {"alpha", "beta", "gamma", "delta", 7, 2.5}


def kind(x):
    return x in {"alpha", "beta", "gamma", 1.5, -3} or x in KINDS


BIG = 2 ** 64 - 1, -2 ** 31, 1e300 * 10, 0.1 + 0.2, 7 // 2, 7 % -3
'
deb_file "$d" $m/folds.py 'ROOT2 = 2 ** 0.5
HALF = 2 ** -1
'
deb_file "$d" $m/cplx.py 'Z = (1 + 2j) * (3 - 4j)
'
deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
[ "$1" = configure ] || exit 0
py3compile -p mki160-py
# a script that imports modules (a C extension among them) stays emulated: its output too
python3 -c "import json, yaml; print(json.dumps(yaml.safe_load(\"a: [1, 2.5]\")))" \
	>/usr/lib/python3/dist-packages/mki160/out.json
' 0755
fixture=$(deb_build "$d" "$T/debs")

mkdir -p "$T/r"
cat >"$T/r/py.cfg" <<EOF
name = "py160";
architecture = "armhf";
suite = "bookworm";
merged_usr = true;
sources = ( { host = true; components = [ "main" ]; } );
packages = {
  base = "required";
  install = [ "busybox", "python3", "python3-yaml", "python3-setuptools", "python3-jinja2",
              "python3-requests" ];
  local = [ "$fixture" ];
  recommends = false;
  minimize = true;
};
EOF

expect_ok "$MKIMAGE" -v --no-layer-cache --cache-dir "$T/cache" --source "$SRC" \
	--output "$T/native.ext4" "$T/r/py.cfg"
grep -Eq "^mkimage: (info|debug):   \| +[0-9]+ +[0-9.]+ +[0-9.]+  native +/usr/bin/python3\.11\$" "$T/err" ||
	{ grep -A40 "exec profile" "$T/err" >&2; fail "python3.11 did not run natively"; }
# (today's bookworm packages fold no such expression themselves: the list is mki160-py alone)
grep -Eq "native tools: python: [0-9]+ files byte-compiled by the emulated interpreter .* of (.*, )?mki160-py(, .*)?\$" "$T/err" ||
	{ grep "python" "$T/err" >&2; fail "no word that mki160-py's folds stayed emulated"; }
jq -e '.native_tools.python_emulated | index("mki160-py") != null' "$T/native.report.json" >/dev/null ||
	{ jq .native_tools "$T/native.report.json" >&2; fail "the report does not name mki160-py"; }
jq -r '.native_tools.python_emulated | join(" ")' "$T/native.report.json" | grep -qx "mki160-py" ||
	note "packages of the mirror's versions left to the emulated python too: $(jq -c .native_tools.python_emulated "$T/native.report.json")"
debugfs -R "cat /usr/lib/python3/dist-packages/mki160/out.json" "$T/native.ext4" 2>/dev/null |
	grep -qx '{"a": \[1, 2.5\]}' || fail "the postinst's python did not run"
n=$(debugfs -R "ls -p /usr/lib/python3.11/__pycache__" "$T/native.ext4" 2>/dev/null | grep -c '\.pyc/')
[ "$n" -ge 100 ] || fail "only $n .pyc files in the stdlib's __pycache__"
cp "$T/err" "$T/native.err" # for KEEP_TMP=1: the exec profile

expect_ok "$MKIMAGE" -v --no-layer-cache --no-native-tools --cache-dir "$T/cache" \
	--source "$SRC" --output "$T/emulated.ext4" "$T/r/py.cfg"
jq -e '.native_tools.python_emulated == []' "$T/emulated.report.json" >/dev/null ||
	{ jq .native_tools "$T/emulated.report.json" >&2; fail "emulated: python_emulated is not empty"; }
a=$(sha256sum <"$T/native.ext4") b=$(sha256sum <"$T/emulated.ext4")
[ "$a" = "$b" ] || {
	mkdir "$T/n" "$T/e"
	debugfs -R "rdump /usr $T/n" "$T/native.ext4" >/dev/null 2>&1 || true
	debugfs -R "rdump /usr $T/e" "$T/emulated.ext4" >/dev/null 2>&1 || true
	diff -rq "$T/n" "$T/e" | head -20 >&2
	fail "the native python changed the image: $a vs $b"
}
