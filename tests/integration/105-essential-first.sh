# test-cost: slow (three native builds of the real base set)
# The essential set is configured before the rest, as apt and mmdebstrap do (issue 28): a package
# whose postinst runs awk without depending on it (samba-common -> ucf -> awk) must find the awk
# alternative that mawk's postinst makes, though mawk is only Priority: required and dpkg alone,
# ordering by declared dependencies, would configure that package first. The order is in the
# -v log; the image is the same as root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

# The test's premise: dpkg --configure -a takes packages in its hash table's order (FNV-1a of the
# name modulo 65521, dpkg's pkg-hash.c), and awk-user's bin comes before mawk's, so one
# 'dpkg --configure -a' would run awk-user's postinst before mawk's.
python3 - <<'PY' || fail "the premise fails: dpkg would configure mawk before awk-user anyway"
def fnv(s):
    h = 0x811c9dc5
    for c in s.encode():
        h = ((h ^ c) * 0x01000193) & 0xffffffff
    return h % 65521
assert fnv("awk-user") < fnv("mawk"), (fnv("awk-user"), fnv("mawk"))
PY
d=$(deb_new awk-user 1.0 amd64)
deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
if [ "$1" = configure ]; then
	second=$(echo 1 2 | awk "{ print \$2 }")
	echo "awk-user: $second" >/var/lib/awk-user.txt
fi
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo # the real base set: mawk comes with it (base-files Pre-Depends on awk)
[ -n "$(ls "$T/repo/pool/main/"mawk_*_amd64.deb 2>/dev/null)" ] || fail "the base set has no mawk"
mkdir -p "$T/r"
native_recipe "$T/r/e.cfg" e ', "awk-user"'
grep -q '^Priority: required' <(dpkg-deb -f "$T/repo/pool/main/"mawk_*_amd64.deb) ||
	fail "mawk is not Priority: required"
grep -q '^Essential: yes' <(dpkg-deb -f "$T/repo/pool/main/"mawk_*_amd64.deb) &&
	fail "mawk is Essential: the test needs a required, non-Essential tool"

mkdir -p "$T/img"
expect_ok "$MKIMAGE" -v --no-layer-cache -o "$T/img/e.ext4" "$T/r/e.cfg"
[ "$(debugfs -R 'cat /var/lib/awk-user.txt' "$T/img/e.ext4" 2>/dev/null)" = "awk-user: 2" ] ||
	fail "awk-user's postinst did not run awk"

# The order at -v: the set and its order, then dpkg setting up mawk before awk-user.
set_line=$(grep "configure: the essential set first" "$T/err") ||
	fail "-v does not say which packages are configured first"
case " ${set_line##*in this order: } " in
*" mawk "*) ;;
*) fail "mawk is not in the essential set: $set_line" ;;
esac
case "$set_line" in *awk-user*) fail "awk-user is in the essential set: $set_line" ;; esac
echo "$set_line" | grep -Eq "of 'amd64', with what they depend on\), [0-9]+ of [0-9]+ packages" ||
	fail "the set's line does not say the architecture and counts: $set_line"
grep -Eq "info: 'dpkg --configure' of the essential set: [0-9]+ packages: [0-9.]+ s" "$T/err" ||
	fail "no timing of the essential set"
grep -Eq "info: dpkg --configure -a: [0-9.]+ s" "$T/err" || fail "no timing of dpkg --configure -a"
order=$(grep -Eo "Setting up (mawk|awk-user) " "$T/err" | awk '{ print $3 }' | paste -sd' ')
[ "$order" = "mawk awk-user" ] || fail "dpkg set up '$order', not 'mawk awk-user'"
# dpkg's own output says in which run each was set up (the build log has every line whole)
grep -q "output: 'dpkg --configure' of the essential set | Setting up mawk " "$T/img/e.log" ||
	fail "mawk was not set up by the essential set's run"
grep -q "output: 'dpkg --configure -a' | Setting up awk-user " "$T/img/e.log" ||
	fail "awk-user was not set up by 'dpkg --configure -a'"

# Same inputs, same bytes: again, and as an ordinary user.
expect_ok "$MKIMAGE" --no-layer-cache -o "$T/img/again.ext4" "$T/r/e.cfg"
cmp "$T/img/e.ext4" "$T/img/again.ext4" || fail "two builds of the same recipe differ"
if [ "$(id -u)" = 0 ]; then
	test_user mkiess105
	mkdir -p "$T/u/tmp" "$T/u/img" "$T/u/cache"
	chown -R mkiess105 "$T/u"
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	TMPDIR=$T/u/tmp expect_ok as_user mkiess105 "$MKIMAGE" --no-layer-cache --cache-dir "$T/u/cache" \
		-o "$T/u/img/e.ext4" "$T/r/e.cfg"
	cmp "$T/img/e.ext4" "$T/u/img/e.ext4" || fail "an ordinary user's image differs from root's"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
true
