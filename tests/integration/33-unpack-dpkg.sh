# Differential: the host's dpkg unpacks the same real packages into a scratch root (--root, its
# own admin dir and architecture list; the host is untouched) with the same merged-/usr links.
# Tree and database must match ours: info/ byte for byte (.list order included), status except
# the conffile hashes (dpkg writes "newconffile" until configuration; we write the real md5 and
# put conffiles in place, which configuration accepts), every path's type, mode, owner, link
# target, size and file mtime. libc6 is left out: its preinst would have to run.
. "$(dirname "$0")/lib.sh"
UNPACK=${UNPACK:-$TOP/build/tools/unpack}
[ -x "$UNPACK" ] || fail "test driver $UNPACK missing (make tools)"
if [ "$(id -u)" != 0 ]; then
	skip "dpkg --unpack needs root to set owners: the differential cannot run for this user"
fi
mapfile -t DEBS < <("$TOP/tests/integration/unpack_realdebs.sh" | grep -v /libc6_) ||
	fail "cannot get the real package set"
[ ${#DEBS[@]} = 10 ] || fail "expected 10 packages, got ${#DEBS[@]}"

K=$T/dpkg
mkdir -p "$K/var/lib/dpkg/info" "$K/var/lib/dpkg/updates" "$K/usr/bin" "$K/usr/sbin" "$K/usr/lib"
for d in bin sbin lib; do ln -s usr/$d "$K/$d"; touch -h -d @1700000000 "$K/$d"; done
export SOURCE_DATE_EPOCH=1700000000 # the time of the links mkimage makes
touch "$K/var/lib/dpkg/status"
dpkg --root="$K" --add-architecture armhf
dpkg --root="$K" --add-architecture armel
dpkg --root="$K" --force-depends --unpack "${DEBS[@]}" >"$T/dpkg.log" 2>&1 ||
	{ cat "$T/dpkg.log" >&2; fail "dpkg --unpack failed"; }

mkdir "$T/w"
expect_ok "$UNPACK" -a armhf -a armel "$T/w" "${DEBS[@]}"
A=$K/var/lib/dpkg B=$T/w/root/var/lib/dpkg

diff <(ls "$A/info") <(ls "$B/info") || fail "info/ holds different files"
for f in $(ls "$A/info"); do
	cmp "$A/info/$f" "$B/info/$f" || fail "info/$f differs from dpkg's"
done
diff <(sed 's/^\( \/.*\) [0-9a-f]\{32\}$/\1 newconffile/' "$B/status") "$A/status" ||
	fail "status differs from dpkg's (beyond conffile hashes)"
grep -q ' /etc/issue [0-9a-f]\{32\}$' "$B/status" || fail "no real conffile md5 in our status"

lst() {
	(cd "$1" && find . -path ./var/lib/dpkg -prune -o \( -type d -printf '%p %y %m %U %G\n' \) -o \
		-printf '%p %y %m %U %G %l %s %T@\n' | sed 's/\.dpkg-new / /' | sort)
}
lst "$K" >"$T/dpkg.lst"
lst "$T/w/root" >"$T/ours.lst"
diff "$T/dpkg.lst" "$T/ours.lst" || fail "tree differs from dpkg's"
[ "$(wc -l <"$T/ours.lst")" -gt 250 ] || fail "suspiciously few paths compared"

# dpkg configures what we unpacked: a conffile in place with its real md5 counts as unmodified.
d=$(deb_new cfp 1.0 "$(dpkg --print-architecture)")
deb_file "$d" etc/cfp.conf "a=1"
echo /etc/cfp.conf >"$d/DEBIAN/conffiles"
deb=$(deb_build "$d" "$T/debs")
mkdir "$T/wc"
expect_ok "$UNPACK" -a "$(dpkg --print-architecture)" "$T/wc" "$deb"
dpkg --root="$T/wc/root" --configure -a >"$T/conf.log" 2>&1 || { cat "$T/conf.log" >&2; fail "dpkg --configure failed"; }
dpkg --admindir="$T/wc/root/var/lib/dpkg" -l cfp | grep -q '^ii  cfp' || fail "cfp not installed after configure"
[ -z "$(find "$T/wc/root/etc" -name '*.dpkg-*')" ] || fail "configure left conffile copies: $(find "$T/wc/root/etc")"
[ "$(cat "$T/wc/root/etc/cfp.conf")" = "a=1" ] || fail "conffile changed by configure"
