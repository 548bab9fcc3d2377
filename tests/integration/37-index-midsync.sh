# A mirror mid-sync (issue 38): its bookworm-security InRelease is new, its Packages.xz still the
# old one and by-hash has no copy. mkimage retries within its bound (3 retries, waits W, 2W, 3W:
# MKIMAGE_MIDSYNC_WAIT), then fails naming the suite, its recipe line and the ways out (exit 5);
# one that becomes consistent between retries builds. --allow-stale builds with the last verified
# Release and indexes of the suite (a warning; the report and the lock record it, and the cache's
# expiry keeps them), refuses that Release once expired (exit 3), builds without an -updates or
# -security suite of which nothing was kept (the lock says so and --locked leaves it out again),
# and never without a base suite (exit 5). A real signed repository on 127.0.0.1, native build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"


native_repo
SEC=$T/repo/dists/bookworm-security
PKG=main/binary-amd64/Packages.xz
repo_index "$T/repo" bookworm-security main amd64
repo_sign "$T/repo" bookworm-security
cat >"$T/r.cfg" <<R
name = "t";
architecture = "amd64";
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; },
            { uri = "$SERVER_URL"; suite = "bookworm-security"; keyring = "$KEYRING"; } );
packages = { base = "none"; install = [ $NATIVE_BASE ]; };
R
line=$(grep -n 'bookworm-security' "$T/r.cfg" | cut -d: -f1)
ix() { "$MKIMAGE" --until indexes --cache-dir "$1" "${@:2}" "$T/r.cfg"; }

# The last good state of the security suite: a build verifies it and keeps it.
expect_ok ix "$T/cache"
[ "$(find "$T/cache/releases" -path '*/verified/InRelease' | wc -l)" = 2 ] ||
	fail "the verified Releases were not kept: $(find "$T/cache/releases" -type f)"
cp "$SEC/$PKG" "$T/Packages.xz.v1"
cp "$SEC/Release" "$T/Release.v1"
v1_sha=$(sha256sum "$T/Packages.xz.v1" | cut -d' ' -f1)

# The mirror mid-sync: a new security Release (a new package, by-hash offered) signed and served,
# its Packages.xz still the old one, no by-hash copy.
d=$(deb_new sec-fix 1.0 amd64)
deb_file "$d" usr/share/doc/sec-fix/README "fix"
deb_build "$d" "$T/repo/pool/main" >/dev/null
sleep 1
repo_index "$T/repo" bookworm-security main amd64
sed -i 's/^\(Date: .*\)$/\1\nAcquire-By-Hash: yes/' "$SEC/Release"
repo_sign "$T/repo" bookworm-security
cp "$SEC/$PKG" "$T/Packages.xz.v2"
cp "$T/Packages.xz.v1" "$SEC/$PKG"
size1=$(stat -c %s "$T/Packages.xz.v1")
size2=$(stat -c %s "$T/Packages.xz.v2")
[ "$size1" != "$size2" ] || fail "fixture: both indexes have $size1 bytes"

# Without --allow-stale: retried within the bound (1 + 2 + 3 s here), then the error.
: >"$SRVLOG"
t0=$(date +%s)
MKIMAGE_MIDSYNC_WAIT=1 expect_fail 5 "error: '$SERVER_URL' suite 'bookworm-security' \($T/r.cfg:$line\) looks mid-sync, or its file was tampered with: '$PKG' from '$SERVER_URL/dists/bookworm-security/$PKG' has $size1 bytes, the index says $size2 and by-hash has no copy of it, against its Release dated [^;]+; still so after 3 retries over 6 s; nothing was cached\. Wait and build again; or use another mirror \(--source, or the recipe's sources\); or build with the last verified index of the suite while its Release is valid: --allow-stale=bookworm-security" ix "$T/cache"
[ $(($(date +%s) - t0)) -ge 6 ] || fail "the retries did not wait 1 + 2 + 3 s"
grep -q "warning: .*bookworm-security.*looks mid-sync; fetching the Release and the index again in 3 s (retry 3 of 3)" "$T/err" ||
	fail "no warning before the last retry: $(cat "$T/err")"
[ "$(requests "GET /dists/bookworm-security/$PKG ")" = 4 ] ||
	fail "the index was not fetched 4 times: $(grep Packages "$SRVLOG")"
[ "$(requests "GET /dists/bookworm-security/main/binary-amd64/by-hash/SHA256/")" = 4 ] ||
	fail "by-hash was not tried first in every round"
[ "$(requests "GET /dists/bookworm-security/InRelease ")" = 4 ] ||
	fail "the InRelease was not fetched again in every round"
[ -z "$(find "$T/cache/objects" -name "$(sha256sum "$T/Packages.xz.v2" | cut -d' ' -f1)")" ] ||
	fail "an index of the new Release is in the cache"
no_temp_files "$T/cache"

# Consistent after two retries: built, said at info level (fresh cache: nothing to stand in).
cp "$T/Packages.xz.v1" "$SEC/$PKG.old"
cp "$T/Packages.xz.v2" "$SEC/$PKG"
echo "/dists/bookworm-security/$PKG file dists/bookworm-security/$PKG.old 2" >"$RULES"
expect_ok ix "$T/cache-c"
grep -q "retry 2 of 3" "$T/err" || fail "no second retry: $(cat "$T/err")"
grep -q "info: indexes: consistent after 2 retries" "$T/err" || fail "the retries' end not said"
: >"$RULES"
cp "$T/Packages.xz.v1" "$SEC/$PKG"

# --allow-stale after a good build: the last verified Release and its index, even after the
# cache's expiry (which keeps what a last verified Release names), in a whole build.
"$MKIMAGE" --cache-gc=0 --cache-dir "$T/cache" 2>"$T/gc.err" || fail "--cache-gc: $(cat "$T/gc.err")"
[ -e "$T/cache/indexes/$v1_sha" ] || fail "the cache's expiry removed the last verified index"
mkdir -p "$T/img"
expect_ok "$MKIMAGE" --cache-dir "$T/cache" --allow-stale=bookworm-security -o "$T/img/t.ext4" "$T/r.cfg"
grep -Eq "warning: '$SERVER_URL' suite 'bookworm-security' looks mid-sync \('$PKG' .*\): built with its last verified Release, dated .*, and its indexes instead \(--allow-stale\)" "$T/err" ||
	fail "no warning for the stale suite: $(cat "$T/err")"
grep -Eq "^source: $SERVER_URL bookworm-security sha256=[0-9a-f]{64} components=main keys=[0-9A-Fa-f,]+ index=stale date=" "$T/img/t.lock" &&
	grep -qF " index=stale date=$(grep '^Date:' "$T/Release.v1" | cut -d' ' -f2-)" "$T/img/t.lock" ||
	fail "the lock does not record the stale suite: $(grep '^source' "$T/img/t.lock")"
python3 - "$T/img/t.report.json" "$SERVER_URL" <<'PY' || fail "the report does not record the stale suite"
import json, sys
r = json.load(open(sys.argv[1]))
ix = r["indexes"]
assert len(ix) == 1 and ix[0]["suite"] == "bookworm-security" and ix[0]["used"] == "last-verified", ix
assert ix[0]["uri"] == sys.argv[2] and ix[0]["release_date"] and ix[0]["served_date"], ix
assert any("last verified Release" in w for w in r["warning_texts"]), r["warning_texts"]
PY
grep -q "error: " "$T/err" && fail "a successful build printed an error: $(grep error "$T/err")"

# A last verified Release past its Valid-Until no longer stands in (exit 3).
cp "$SEC/Release" "$T/Release.v2"
cp "$T/Release.v1" "$SEC/Release"
until=$(date -u -d '+6 sec' '+%a, %d %b %Y %H:%M:%S UTC')
sed -i "s/^\(Date: .*\)$/\1\nValid-Until: $until/" "$SEC/Release"
repo_sign "$T/repo" bookworm-security
expect_ok ix "$T/cache-e"
sleep 7
cp "$T/Release.v2" "$SEC/Release"
repo_sign "$T/repo" bookworm-security
expect_fail 3 "error: the last verified InRelease of '$SERVER_URL' suite 'bookworm-security' expired on $until \(Valid-Until\): it can no longer stand in for the mirror mid-sync; wait and build again, or use another mirror" ix "$T/cache-e" --allow-stale=updates

# A fresh cache and an -updates/-security suite: built without it, and the lock says so.
expect_ok "$MKIMAGE" --cache-dir "$T/cache-f" --allow-stale=updates --lock="$T/f.lock" "$T/r.cfg"
grep -q "warning: '$SERVER_URL' suite 'bookworm-security' looks mid-sync (.*) and no verified Release of it is kept in the cache: built WITHOUT the suite (--allow-stale), as apt does" "$T/err" ||
	fail "no warning for the suite left out: $(cat "$T/err")"
grep -Eq "^source: $SERVER_URL bookworm-security sha256=[0-9a-f]{64} .* index=omitted date=" "$T/f.lock" ||
	fail "the lock does not record the suite left out: $(grep '^source' "$T/f.lock")"
expect_ok "$MKIMAGE" --cache-dir "$T/cache-f" --locked="$T/f.lock" --until resolve "$T/r.cfg"
grep -q "warning: --locked: '$T/f.lock' records that its build left out '$SERVER_URL' suite 'bookworm-security' .*: left out again" "$T/err" ||
	fail "--locked did not leave the suite out again: $(cat "$T/err")"
grep -q "indexes: $SERVER_URL bookworm-security" "$T/err" &&
	fail "--locked fetched the suite the lock left out"

# A base suite is never left out, whatever --allow-stale says (fresh cache: nothing to stand in).
cp "$T/Packages.xz.v2" "$SEC/$PKG"
base=$T/repo/dists/bookworm/$PKG
cp "$base" "$T/base.good"
echo junk >>"$base"
expect_fail 5 "error: '$SERVER_URL' suite 'bookworm' \($T/r.cfg:[0-9]+\) looks mid-sync \(.*\) and no verified Release of it is kept in the cache; --allow-stale leaves out only an -updates or -security suite, never a base one" \
	ix "$T/cache-b" --allow-stale=bookworm,updates,sid
grep -q "warning: --allow-stale names 'sid', which is none of the sources' suites" "$T/err" ||
	fail "a word naming no suite was not said"
cp "$T/base.good" "$base"
