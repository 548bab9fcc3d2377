# Hostile and broken .debs: each is refused with exit 6, a message naming the package and the
# path, and nothing is written outside the staging tree.
. "$(dirname "$0")/lib.sh"
UNPACK=${UNPACK:-$TOP/build/tools/unpack}
[ -x "$UNPACK" ] || fail "test driver $UNPACK missing (make tools)"
OUT=$T/outside
mkdir -p "$OUT" "$T/debs"
touch "$OUT/.keep"

ctl() { printf 'Package: %s\\nVersion: 1.0\\nArchitecture: armhf\\nMaintainer: t <t@example.org>\\nDescription: t\\n' "$1"; }

# mkdeb NAME 'MEMBERS-JSON' [EXTRA-JSON-FIELDS]: a hand-made .deb in $T/debs/NAME.deb
mkdeb() {
	python3 "$TOP/tests/integration/unpack_mkdeb.py" <<J
{"out": "$T/debs/$1.deb", "control": "$(ctl "$1")", "members": $2 ${3:+, $3}}
J
	echo "$T/debs/$1.deb"
}

# refused CASE PATTERN DEB...: unpacking must exit 6 with PATTERN on stderr, and leave the
# outside alone (no stray file anywhere under $T but in that case's staging tree).
refused() {
	local case=$1 pattern=$2 w=$T/w-$1
	shift 2
	mkdir -p "$w"
	expect_fail 6 "$pattern" "$UNPACK" "$w" "$@"
	[ "$(ls -A "$OUT")" = .keep ] || fail "$case: something was written to $OUT"
	[ -z "$(find "$T" -name 'pwned*' -not -path "$T/w-*/root/*" -not -path "$T/src/*")" ] ||
		fail "$case: a file landed outside the staging tree: $(find "$T" -name 'pwned*')"
	note "$case: refused"
}

D='{"name": "./", "type": "dir"}, {"name": "./usr/", "type": "dir"}'

deb=$(mkdeb dotdot "[$D, {\"name\": \"./usr/../../../outside/pwned\", \"data\": \"x\"}]")
refused dotdot "package 'dotdot': path './usr/\.\./\.\./\.\./outside/pwned' climbs out of the root" "$deb"

deb=$(mkdeb absolute "[$D, {\"name\": \"$OUT/pwned\", \"data\": \"x\"}]")
refused absolute "package 'absolute': absolute path '$OUT/pwned' in data.tar" "$deb"

# A symlink in one package, then a file written "through" it by another.
link=$(mkdeb linkrel "[$D, {\"name\": \"./usr/evil\", \"type\": \"symlink\", \"target\": \"../../../outside\"}]")
thru=$(mkdeb through "[$D, {\"name\": \"./usr/evil/\", \"type\": \"dir\"}, {\"name\": \"./usr/evil/pwned\", \"data\": \"x\"}]")
refused symlink-relative "package 'through': 'usr/evil' leads outside the root through a symlink" "$link" "$thru"

# An absolute link means the staging root's /: the host's $OUT is never reached.
link=$(mkdeb linkabs "[$D, {\"name\": \"./usr/abs\", \"type\": \"symlink\", \"target\": \"$OUT\"}]")
thru=$(mkdeb through2 "[$D, {\"name\": \"./usr/abs/pwned\", \"data\": \"x\"}]")
refused symlink-absolute "package 'through2': cannot unpack 'usr/abs/pwned': directory '/[^']*' does not exist" "$link" "$thru"

# ... and when the link's target exists inside the staging root, that is where the file goes.
link=$(mkdeb linketc "[$D, {\"name\": \"./etc/\", \"type\": \"dir\"}, {\"name\": \"./usr/etc\", \"type\": \"symlink\", \"target\": \"/etc\"}]")
thru=$(mkdeb through3 "[$D, {\"name\": \"./usr/etc/pwned-inside\", \"data\": \"x\"}]")
mkdir "$T/w-inside"
expect_ok "$UNPACK" "$T/w-inside" "$link" "$thru"
[ -f "$T/w-inside/root/etc/pwned-inside" ] || fail "file through an absolute link not in the root's /etc"
grep -q $'^etc/pwned-inside\tf\t' "$T/w-inside/manifest" || fail "manifest lacks etc/pwned-inside"
[ ! -e /etc/pwned-inside ] || fail "wrote to the host's /etc"

deb=$(mkdeb loop "[$D, {\"name\": \"./usr/a\", \"type\": \"symlink\", \"target\": \"b\"}, {\"name\": \"./usr/b\", \"type\": \"symlink\", \"target\": \"a\"}, {\"name\": \"./usr/a/pwned\", \"data\": \"x\"}]")
refused symlink-loop "package 'loop': cannot unpack 'usr/a/pwned': too many levels of symlinks" "$deb"

deb=$(mkdeb harddir "[$D, {\"name\": \"./usr/h\", \"type\": \"hardlink\", \"target\": \"./usr\"}]")
refused hardlink-dir "package 'harddir': hard link './usr/h' points to './usr', which the package has not shipped before it as a regular file" "$deb"

deb=$(mkdeb hardout "[$D, {\"name\": \"./usr/h\", \"type\": \"hardlink\", \"target\": \"../../../outside/.keep\"}]")
refused hardlink-outside "package 'hardout': hard link './usr/h' points outside the package" "$deb"

deb=$(mkdeb hardabs "[$D, {\"name\": \"./usr/h\", \"type\": \"hardlink\", \"target\": \"$OUT/.keep\"}]")
refused hardlink-absolute "package 'hardabs': hard link './usr/h' points outside the package" "$deb"

deb=$(mkdeb hardmiss "[$D, {\"name\": \"./usr/h\", \"type\": \"hardlink\", \"target\": \"./usr/nothere\"}]")
refused hardlink-missing "package 'hardmiss': hard link './usr/h' points to './usr/nothere', which the package has not shipped" "$deb"

d=$(deb_new trunc 1.0 armhf)
deb_file "$d" usr/share/trunc/big "$(head -c 200000 /dev/urandom | base64)"
deb=$(deb_build "$d" "$T/debs")
head -c -3000 "$deb" >"$T/debs/trunc-cut.deb"
refused truncated "package 'trunc' \('$T/debs/trunc-cut.deb'\): .*(truncated|Truncated)" "$T/debs/trunc-cut.deb"

deb=$(mkdeb badver "[$D]" '"debian_binary": "3.0\n"')
refused debian-binary "'$deb': unsupported debian-binary format '3.0' \(expected 2.x\)" "$deb"

deb=$(mkdeb lz4 "[$D]" '"data_name": "data.tar.lz4"')
refused compression "package 'lz4' .*member 'data.tar.lz4' uses an unknown compression" "$deb"

deb=$(mkdeb ctlbad "[$D]" '"control_name": "control.tar.bz2"')
refused control-compression "member 'control.tar.bz2' uses an unknown compression" "$deb"

# File vs directory, both ways.
a=$(mkdeb dirpkg "[$D, {\"name\": \"./usr/x/\", \"type\": \"dir\"}]")
b=$(mkdeb filepkg "[$D, {\"name\": \"./usr/x\", \"data\": \"x\"}]")
refused file-over-dir "package 'filepkg' ships a non-directory at '/usr/x', where 'dirpkg' has a directory" "$a" "$b"
refused dir-over-file "package 'dirpkg' ships directory '/usr/x' where 'filepkg' has a non-directory" "$b" "$a"

# A package without the directory entries its files need (dpkg fails the same way).
deb=$(mkdeb noparent "[{\"name\": \"./\", \"type\": \"dir\"}, {\"name\": \"./usr/share/np/file\", \"data\": \"x\"}]")
refused missing-parent "package 'noparent': cannot unpack 'usr/share/np/file': directory '/usr/share' does not exist" "$deb"

# Overlapping files without Replaces.
d=$(deb_new first 1.0 armhf); deb_file "$d" usr/share/common/f "one"
a=$(deb_build "$d" "$T/debs")
d=$(deb_new second 1.0 armhf); deb_file "$d" usr/share/common/f "two"
b=$(deb_build "$d" "$T/debs")
refused overlap "package 'second' tries to overwrite '/usr/share/common/f', which is also in package 'first' \(no Replaces: first\)" "$a" "$b"

# Replaces with a version that does not match is no Replaces at all.
d=$(deb_new second 2.0 armhf "Replaces: first (<< 1.0)"); deb_file "$d" usr/share/common/f "two"
b=$(deb_build "$d" "$T/debs")
refused overlap-old-replaces "package 'second' tries to overwrite '/usr/share/common/f', which is also in package 'first'" "$a" "$b"

# M-A same instances that differ in a shared file.
d=$(deb_new libx 1.0 armhf "Multi-Arch: same"); deb_file "$d" usr/share/doc/libx/NEWS "armhf text"
a=$(deb_build "$d" "$T/debs")
d=$(deb_new libx 1.0 armel "Multi-Arch: same"); deb_file "$d" usr/share/doc/libx/NEWS "armel text"
b=$(deb_build "$d" "$T/debs")
refused ma-same-differ "M-A same packages 'libx:armhf' and 'libx:armel' ship different contents for '/usr/share/doc/libx/NEWS'" "$a" "$b"

# Same bytes but a different mode is a difference too.
d=$(deb_new libx 1.0 armel "Multi-Arch: same"); deb_file "$d" usr/share/doc/libx/NEWS "armhf text" 0755
b=$(deb_build "$d" "$T/debs")
refused ma-same-mode "M-A same packages 'libx:armhf' and 'libx:armel' ship different contents for '/usr/share/doc/libx/NEWS'" "$a" "$b"

# Not a .deb at all.
echo "hello" >"$T/debs/text.deb"
refused not-a-deb "'$T/debs/text.deb': cannot open as a \.deb" "$T/debs/text.deb"

# A package name that would name files outside info/.
python3 "$TOP/tests/integration/unpack_mkdeb.py" <<J
{"out": "$T/debs/badname.deb", "members": [$D],
 "control": "Package: ../../../outside/pwned\\nVersion: 1\\nArchitecture: armhf\\nMaintainer: t <t@e.org>\\nDescription: x\\n"}
J
refused bad-name "invalid package name '\.\./\.\./\.\./outside/pwned'" "$T/debs/badname.deb"

# The dpkg database directory as a symlink out of the tree: refused as it is unpacked, before
# the database could ever be written through it.
deb=$(mkdeb dbevil "[$D, {\"name\": \"./var/\", \"type\": \"dir\"}, {\"name\": \"./var/lib/\", \"type\": \"dir\"}, {\"name\": \"./var/lib/dpkg\", \"type\": \"symlink\", \"target\": \"$OUT\"}]")
refused dpkg-db-symlink "package 'dbevil': '/var/lib/dpkg' is inside dpkg's database directory" "$deb"

# The same refusals when packages are streamed file by file (as packages too big to decode
# ahead are), files copied in chunks straight from data.tar.
MKI_TEST_STREAM_BYTES=0 refused streamed-truncated "package 'trunc' .*(truncated|Truncated)" \
	"$T/debs/trunc-cut.deb"
MKI_TEST_STREAM_BYTES=0 refused streamed-ma-same "M-A same packages 'libx:armhf' and 'libx:armel' ship different contents for '/usr/share/doc/libx/NEWS'" \
	"$T/debs/libx_1.0_armhf.deb" "$T/debs/libx_1.0_armel.deb"
MKI_TEST_STREAM_BYTES=0 refused streamed-dotdot "climbs out of the root" "$T/debs/dotdot.deb"

# Names dpkg refuses (D1, D2): a newline would split the package's .list, so that a later
# `dpkg --purge` on the image deletes the name after it (/etc/shadow), or leaves an empty line
# that breaks every later dpkg run. The name is shown escaped, on one line.
deb=$(mkdeb newline "[$D, {\"name\": \"./usr/b\netc/shadow\", \"data\": \"x\"}]")
refused newline-inside "package 'newline': file name \"\./usr/b\\\\netc/shadow\" in data.tar contains a newline" "$deb"
deb=$(mkdeb newline2 "[$D, {\"name\": \"./usr/b\n\", \"data\": \"x\"}]")
refused newline-trailing "package 'newline2': file name \"\./usr/b\\\\n\" in data.tar contains a newline" "$deb"
[ -z "$(grep -v '^mkimage: ' "$T/err")" ] || fail "the refusal of a newline name spans lines"

# dpkg's database is not package content: a status file, a maintainer script planted in info/,
# or a file reached through a link into var/lib/dpkg are refused; the directories dpkg and
# base-files ship there are fine.
V='{"name": "./var/", "type": "dir"}, {"name": "./var/lib/", "type": "dir"}, {"name": "./var/lib/dpkg/", "type": "dir"}'
deb=$(mkdeb admstatus "[$D, $V, {\"name\": \"./var/lib/dpkg/status\", \"data\": \"Package: x\n\"}]")
refused admin-status "package 'admstatus': '/var/lib/dpkg/status' is inside dpkg's database directory" "$deb"
deb=$(mkdeb adminfo "[$D, $V, {\"name\": \"./var/lib/dpkg/info/\", \"type\": \"dir\"}, {\"name\": \"./var/lib/dpkg/info/base-files.postinst\", \"data\": \"#!/bin/sh\n\", \"mode\": 493}]")
refused admin-info "package 'adminfo': '/var/lib/dpkg/info/base-files.postinst' is inside dpkg's database" "$deb"
deb=$(mkdeb admlink "[$D, $V, {\"name\": \"./var/lib/db\", \"type\": \"symlink\", \"target\": \"dpkg\"}, {\"name\": \"./var/lib/db/available\", \"data\": \"x\"}]")
refused admin-link "package 'admlink': '/var/lib/db/available' \(resolved to '/var/lib/dpkg/available'\) is inside dpkg's database" "$deb"
deb=$(mkdeb admdir "[$D, $V, {\"name\": \"./var/lib/dpkg/alternatives/\", \"type\": \"dir\"}, {\"name\": \"./var/lib/dpkg/parts/\", \"type\": \"dir\"}]")
mkdir -p "$T/w-admdir" && expect_ok "$UNPACK" "$T/w-admdir" "$deb"
deb=$(mkdeb admsub "[$D, $V, {\"name\": \"./var/lib/dpkg/lock-frontend/\", \"type\": \"dir\"}]")
refused admin-subdir "package 'admsub': '/var/lib/dpkg/lock-frontend' is inside dpkg's database" "$deb"
