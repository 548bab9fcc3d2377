# test-cost: slow (an armhf build configured under QEMU with native tools)
# What a farm reads (issue 27): --plan and --check as JSON (parsed, and the plan the same as the
# text form), one summary line on stdout, the report's version, epoch, architectures, file
# system UUID, warnings, servers and native tools; the host's apt sources, contacted for native
# tools' twins when the recipe's mirror lacks amd64, named in the output, the lock and the
# report, and never contacted with host_twins = false or --no-host-twins; --locked with a
# changed recipe names the changed key and the packages the change adds and removes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v debugfs >/dev/null || skip "e2fsprogs missing (make deps)"
fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	hello:i386 libc6:i386 debianutils diffutils findutils
fixture_repo "$T/target" arm armhf armel
TARGET_URL=$SERVER_URL TARGET_LOG=$SRVLOG TARGET=${SERVER_URL#http://}
fixture_repo "$T/host" x86 amd64
HOST_URL=$SERVER_URL HOST_LOG=$SRVLOG HOST=${SERVER_URL#http://}
mkdir -p "$T/apt" "$T/img"
echo "deb [signed-by=$KEYRING] $HOST_URL bookworm main" >"$T/apt/sources.list"
export MKIMAGE_APT_ROOT=$T/apt SOURCE_DATE_EPOCH=1700000000

# recipe FILE EXTRA: an armhf recipe of the target mirror; EXTRA is added at its end.
recipe() {
	cat >"$1" <<R
name = "farm";
architecture = "armhf";
sources = ( { uri = "$TARGET_URL"; keyring = "$KEYRING"; } );
packages = { base = "none"; install = [ $NATIVE_BASE, "bash" ]; };
image = { size = "256M"; };
$2
R
}
recipe "$T/farm.cfg" ""

# --check --json: the normalized recipe, keys and types as mkimage.cfg(5) says.
expect_ok "$MKIMAGE" --check --json "$T/farm.cfg"
python3 - "$T/out" <<'P' || fail "--check --json: wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["name"] == "farm" and r["architecture"] == "armhf", r
assert isinstance(r["sources"], list) and isinstance(r["sources"][0], dict), r["sources"]
assert r["sources"][0]["components"] == ["main"], r["sources"]
assert "bash" in r["packages"]["install"] and r["packages"]["base"] == "none", r["packages"]
assert r["packages"]["recommends"] is False and isinstance(r["image"]["margin"], int), r
assert r["image"]["size"] == "268435456" and "host_twins" not in r, r
P
expect_fail 2 "--json changes what --plan and --check print" "$MKIMAGE" --json "$T/farm.cfg"

# --plan --json: the same entries, in the same order, as --plan's text.
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --plan "$T/farm.cfg"
cp "$T/out" "$T/plan.txt"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --plan --json "$T/farm.cfg"
python3 - "$T/out" "$T/plan.txt" <<'P' || fail "--plan --json differs from --plan"
import json, sys
p = json.load(open(sys.argv[1]))
text = [l.split() for l in open(sys.argv[2]) if l.strip()]
assert p["architectures"] == ["armhf"], p["architectures"]
assert p["total"] == len(p["packages"]) == len(text) > 10, (p["total"], len(text))
for e, t in zip(p["packages"], text):
    assert t[0] == "%s:%s=%s" % (e["name"], e["architecture"], e["version"]), (e, t)
    assert isinstance(e["size"], int) and t[1] == str(e["size"]) and t[2] == e["sha256"], (e, t)
    assert e["local"] is False, e
P

# The build: the host's apt sources are contacted for the twins, and say so.
: >"$HOST_LOG"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --no-layer-cache -o "$T/img/farm.ext4" "$T/farm.cfg"
grep -q "info: network: '$TARGET' contacted for indexes" "$T/err" || { cat "$T/err" >&2; fail "the mirror's indexes not named"; }
grep -q "info: network: '$TARGET' contacted for packages" "$T/err" || fail "the mirror's packages not named"
grep -q "info: network: '$HOST' contacted for native tools (the host's apt sources)" "$T/err" ||
	{ grep network "$T/err" >&2; fail "the host's apt sources were not named"; }
[ -s "$HOST_LOG" ] || fail "the host's apt sources were not contacted (the test proves nothing)"
grep "info: network:" "$T/err" | grep -q "http:\|/" && fail "a network line names a URL or path"
# stdout: exactly the summary line, its values the image's.
[ "$(wc -l <"$T/out")" = 1 ] || { cat "$T/out" >&2; fail "stdout holds more than the summary line"; }
sha=$(sha256sum <"$T/img/farm.ext4" | cut -d' ' -f1) size=$(stat -c %s "$T/img/farm.ext4")
grep -Eqx "mkimage: ok $T/img/farm.ext4 sha256=$sha size=$size packages=[0-9]+ seconds=[0-9]+\.[0-9]" \
	"$T/out" || { cat "$T/out" >&2; fail "the summary line is wrong"; }
grep -q "^twins: host hosts=$HOST packages=[1-9][0-9]* bytes=[1-9][0-9]*$" "$T/img/farm.lock" ||
	{ grep twin "$T/img/farm.lock" >&2; fail "the lock does not record the twins' origin"; }
grep -q "^twin: coreutils:amd64=9.1-1 sha256=" "$T/img/farm.lock" || fail "the lock lists no twin"
grep -q "^field: packages.install [0-9a-f]\{64\}$" "$T/img/farm.lock" || fail "the lock has no field lines"
uuid=$(debugfs -R stats "$T/img/farm.ext4" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
[ -n "$uuid" ] || fail "debugfs reads no UUID"
python3 - "$T/img/farm.report.json" "$("$MKIMAGE" --version | cut -d' ' -f2)" "$uuid" "$TARGET" \
	"$HOST" "$T/out" <<'P' || fail "the report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
version, uuid, target, host, out = sys.argv[2:7]
assert r["mkimage_version"] == version and r["source_date_epoch"] == 1700000000, r
assert r["architectures"] == ["armhf"] and r["filesystem_uuid"] == uuid, r
assert isinstance(r["warning_texts"], list) and len(r["warning_texts"]) == r["warnings"], r
net = {n["host"]: n["for"] for n in r["network"]}
assert net[target] == ["indexes", "packages"], net
assert net[host] == ["native tools (the host's apt sources)"], net
nt = r["native_tools"]
assert nt["enabled"] is True and nt["twins_from"] == "host apt sources", nt
assert nt["twin_packages"] > 5 and nt["twin_bytes"] > 1000000 and nt["hosts"] == [host], nt
n = int(open(out).read().split("packages=")[1].split()[0])
assert n == r["packages"]["total"], (n, r["packages"])
P

# host_twins = false and --no-host-twins: nothing but the recipe's mirror is contacted.
recipe "$T/closed.cfg" "host_twins = false;"
: >"$HOST_LOG"
: >"$TARGET_LOG"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/closed.ext4" "$T/closed.cfg"
[ -s "$HOST_LOG" ] && { cat "$HOST_LOG" >&2; fail "host_twins = false: the host's apt sources were contacted"; }
[ -s "$TARGET_LOG" ] || fail "the mirror was not contacted (the test proves nothing)"
grep -q "'host_twins = false' leaves the host's apt sources out" "$T/err" || fail "host_twins = false: not said"
grep -q "network: '$HOST'" "$T/err" && fail "host_twins = false: the host named as contacted"
grep -q "^twin" "$T/img/closed.lock" && fail "host_twins = false: twins in the lock"
cmp "$T/img/farm.ext4" "$T/img/closed.ext4" >/dev/null &&
	note "emulated and native images identical" || true
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["native_tools"]["twins_from"] is None and [n["host"] for n in r["network"]] == [sys.argv[2]], r' \
	"$T/img/closed.report.json" "$TARGET" || fail "host_twins = false: the report"
: >"$HOST_LOG"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --no-host-twins --until fetch "$T/farm.cfg"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --no-host-twins -o "$T/img/x.ext4" "$T/farm.cfg"
[ -s "$HOST_LOG" ] && fail "--no-host-twins: the host's apt sources were contacted"

# --locked with a changed recipe: the key and the packages, not two digests.
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --lock="$T/farm.lock" "$T/farm.cfg"
sed -i 's/"bash" \]/"bash", "busybox" ]/; s/"sed", //' "$T/farm.cfg"
grep -q busybox "$T/farm.cfg" || fail "could not change the recipe"
expect_fail 4 "the recipe changed since '$T/farm.lock' was written: 'packages.install' changed; .*the plan would add 1 \(busybox:armhf 1:1.35.0-4\+deb12u1\+b1\), remove 1 \(sed:armhf 4.9-1\+deb12u1\): run 'mkimage --lock'" \
	"$MKIMAGE" --cache-dir "$T/cache" --locked="$T/farm.lock" --plan "$T/farm.cfg"
grep -q "digest [0-9a-f]\{12\}" "$T/err" && fail "--locked still speaks of digests"
recipe "$T/farm.cfg" 'hostname = "board";'
expect_fail 4 "'hostname' changed; .*the package set stays the same" \
	"$MKIMAGE" --cache-dir "$T/cache" --locked="$T/farm.lock" --plan "$T/farm.cfg"
# an older lock, without field lines, still reads and says what it can
grep -v "^field:" "$T/farm.lock" >"$T/old.lock"
expect_fail 4 "the lock predates the record of each key.*the package set stays the same" \
	"$MKIMAGE" --cache-dir "$T/cache" --locked="$T/old.lock" --plan "$T/farm.cfg"
recipe "$T/farm.cfg" ""
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --locked="$T/old.lock" --plan "$T/farm.cfg"

# An ordinary user's build: the same image, summary line and record of the servers.
if [ "$(id -u)" = 0 ]; then
	test_user mki100user
	chmod 755 "$T"
	chmod -R a+rX "$T/keys" "$T/apt" "$T/farm.cfg"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mki100user "$T/u"
	TMPDIR=$T/u/tmp expect_ok as_user mki100user "$MKIMAGE" --cache-dir "$T/u/cache" \
		-o "$T/u/img/farm.ext4" "$T/farm.cfg"
	grep -Eqx "mkimage: ok $T/u/img/farm.ext4 sha256=$sha size=$size packages=[0-9]+ seconds=[0-9.]+" \
		"$T/out" || { cat "$T/out" >&2; fail "user: the summary line is not root's image's"; }
	grep -q "info: network: '$HOST' contacted for native tools" "$T/err" || fail "user: the host not named"
	grep -q "^twins: host hosts=$HOST " "$T/u/img/farm.lock" || fail "user: the lock does not record the twins"
	note "ordinary user: the same image as root's, the twins' server recorded"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
exit 0
