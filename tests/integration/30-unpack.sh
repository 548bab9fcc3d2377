# Unpack crafted packages: merged-/usr paths, modes and owners from the tar headers, hard and
# symbolic links, device nodes, M-A same co-installation, Replaces, the dpkg database, the
# multiarch lint; the same result with 1 or 2 workers and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
UNPACK=${UNPACK:-$TOP/build/tools/unpack}
[ -x "$UNPACK" ] || fail "test driver $UNPACK missing (make tools)"
export SOURCE_DATE_EPOCH=1700000000
P=$T/debs

# basepkg: setuid binary under /bin (lands in usr/bin), a symlink, a hard link, a conffile,
# a maintainer script, trigger interests, a library under /lib.
d=$(deb_new basepkg 1.0 armhf "Multi-Arch: foreign" "Depends: libx (>= 1.0)" "Essential: yes")
deb_file "$d" bin/tool "#!/bin/sh" 4755
ln -s tool "$d/bin/alias"
ln "$d/bin/tool" "$d/bin/tool2"
deb_file "$d" lib/ld-test.so.3 "elf"
deb_file "$d" etc/basepkg.conf "setting=1"
echo /etc/basepkg.conf >"$d/DEBIAN/conffiles"
printf '#!/bin/sh\nexit 0\n' >"$d/DEBIAN/postinst"; chmod 755 "$d/DEBIAN/postinst"
printf 'interest /usr/lib/foo\ninterest-noawait bar-trigger\n' >"$d/DEBIAN/triggers"
base=$(deb_build "$d" "$P")

# libx:armhf and libx:armel, M-A same: one identical doc file, one library each.
for a in armhf armel; do
	trip=$([ $a = armhf ] && echo arm-linux-gnueabihf || echo arm-linux-gnueabi)
	d=$(deb_new libx 1.0 $a "Multi-Arch: same")
	deb_file "$d" usr/share/doc/libx/NEWS "same text"
	deb_file "$d" usr/lib/$trip/libx.so.1 "lib for $a"
	deb_build "$d" "$P" >/dev/null
done

# first and second: second replaces first's file.
d=$(deb_new first 1.0 armhf); deb_file "$d" usr/share/common/f "one"; deb_file "$d" usr/share/common/g "g"
first=$(deb_build "$d" "$P")
d=$(deb_new second 1.0 armhf "Replaces: first (<< 2)"); deb_file "$d" usr/share/common/f "two"
second=$(deb_build "$d" "$P")

# nodes: a device node, a FIFO and odd owners, hand-made (dpkg-deb would need root for mknod).
python3 "$TOP/tests/integration/unpack_mkdeb.py" <<J
{"out": "$P/nodes.deb",
 "control": "Package: nodes\\nVersion: 1\\nArchitecture: armhf\\nMaintainer: t <t@e.org>\\nDescription: n\\n",
 "data_name": "data.tar.zst", "control_name": "control.tar.gz",
 "members": [{"name": "./", "type": "dir"}, {"name": "./dev/", "type": "dir"},
  {"name": "./dev/null-test", "type": "chr", "major": 1, "minor": 3, "mode": 438},
  {"name": "./dev/fifo-test", "type": "fifo", "mode": 384},
  {"name": "./usr/", "type": "dir"}, {"name": "./usr/games/", "type": "dir", "mode": 1517, "gid": 60},
  {"name": "./usr/games/score", "data": "0", "mode": 1460, "uid": 1000, "gid": 60}]}
J

# utf8: a pax data.tar with UTF-8 names, compressed with bzip2.
python3 "$TOP/tests/integration/unpack_mkdeb.py" <<J
{"out": "$P/utf8.deb", "pax": true, "data_name": "data.tar.bz2",
 "control": "Package: utf8\\nVersion: 1\\nArchitecture: all\\nMaintainer: t <t@e.org>\\nDescription: u\\n",
 "members": [{"name": "./", "type": "dir"}, {"name": "./usr/", "type": "dir"},
  {"name": "./usr/share/", "type": "dir"}, {"name": "./usr/share/caf\u00e9.txt", "data": "x"},
  {"name": "./usr/share/l\u00e9", "type": "symlink", "target": "caf\u00e9.txt", "mode": 420},
  {"name": "./usr/share/tagged", "data": "t", "xattrs": {"user.mki": "hello"}}]}
J

DEBS="$base $P/libx_1.0_armhf.deb $P/libx_1.0_armel.deb $first $second $P/nodes.deb $P/utf8.deb"
mkdir "$T/w"
expect_ok "$UNPACK" -a armhf -a armel "$T/w" $DEBS
R=$T/w/root
[ "$(cat "$T/out")" = "$R" ] || fail "driver printed '$(cat "$T/out")', not the root"
M=$T/w/manifest

# mf PATH: the manifest line of PATH, fields TYPE MODE UID GID MTIME MAJ MIN SIZE TARGET OWNERS
mf() { awk -F'\t' -v p="$1" '$1 == p { print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$M"; }
want() { [ "$(mf "$1")" = "$2" ] || fail "manifest '$1': '$(mf "$1")', expected '$2'"; }

want bin "l 0777 0 0 1700000000 0 0 0 usr/bin -"
want lib "l 0777 0 0 1700000000 0 0 0 usr/lib -"
mt=$(awk -F'\t' '$1 == "usr/bin/tool" { print $6 }' "$M")
want usr/bin/tool "f 4755 0 0 $mt 0 0 9 - basepkg"
want usr/bin/alias "l 0777 0 0 $mt 0 0 0 tool basepkg"
want usr/bin/tool2 "h 4755 0 0 $mt 0 0 9 usr/bin/tool basepkg"
want usr/lib/ld-test.so.3 "f 0644 0 0 $mt 0 0 3 - basepkg"
want dev/null-test "c 0666 0 0 1700000000 1 3 0 - nodes"
want dev/fifo-test "p 0600 0 0 1700000000 0 0 0 - nodes"
want usr/games "d 2755 0 60 1700000000 0 0 0 - nodes"
want usr/games/score "f 2664 1000 60 1700000000 0 0 1 - nodes"
want usr/share/doc/libx/NEWS "f 0644 0 0 $(awk -F'\t' '$1 == "usr/share/doc/libx/NEWS" { print $6 }' "$M") 0 0 9 - libx:armhf,libx:armel"
want usr/share/common/f "f 0644 0 0 $(awk -F'\t' '$1 == "usr/share/common/f" { print $6 }' "$M") 0 0 3 - second"
want usr/share/caf%c3%a9.txt "f 0644 0 0 1700000000 0 0 1 - utf8"
want usr/share/l%c3%a9 "l 0777 0 0 1700000000 0 0 0 caf%c3%a9.txt utf8"
[ "$(cat "$R/usr/share/café.txt")" = x ] || fail "UTF-8 name not unpacked"
grep -q $'^usr/share/tagged\tf\t.*\tutf8\tuser.mki=68656c6c6f$' "$M" || fail "xattr not in the manifest"
python3 -c 'import os, sys; sys.exit(os.getxattr(sys.argv[1], "user.mki") != b"hello")' \
	"$R/usr/share/tagged" 2>/dev/null || note "user xattrs not supported on disk here (manifest has it)"
grep -q "^usr/lib/arm-linux-gnueabi/libx.so.1	f	.*	libx:armel	-$" "$M" || fail "armel library not owned by libx:armel"

# The tree itself.
[ "$(readlink "$R/bin")" = usr/bin ] || fail "/bin is not a link to usr/bin"
[ -f "$R/usr/bin/tool" ] && [ ! -e "$R/bin.dpkg-new" ] || fail "tool not in usr/bin"
[ "$(stat -c %i "$R/usr/bin/tool")" = "$(stat -c %i "$R/usr/bin/tool2")" ] || fail "tool2 is not a hard link"
[ "$(cat "$R/usr/share/common/f")" = two ] || fail "Replaces did not overwrite the file"
[ -p "$R/dev/fifo-test" ] || fail "FIFO not created"
if [ "$(id -u)" = 0 ]; then
	[ "$(stat -c %a:%u "$R/usr/bin/tool")" = 4755:0 ] || fail "setuid mode not applied as root"
	[ "$(stat -c %u:%g "$R/usr/games/score")" = 1000:60 ] || fail "owner not applied as root"
fi
[ -z "$(find "$R" -name '*.dpkg-new' -o -name '*.mki-tmp')" ] || fail "temporary files left"

# The dpkg database.
DB=$R/var/lib/dpkg
[ "$(cat "$DB/arch")" = "$(printf 'armhf\narmel')" ] || fail "arch file: $(cat "$DB/arch")"
for f in basepkg.list basepkg.postinst basepkg.conffiles basepkg.triggers libx:armhf.list \
	libx:armel.list first.list second.list nodes.list format; do
	[ -f "$DB/info/$f" ] || fail "info/$f missing"
done
[ ! -e "$DB/info/basepkg:armhf.list" ] || fail "M-A foreign package named with :arch"
[ "$(stat -c %a "$DB/info/basepkg.postinst")" = 755 ] || fail "postinst not executable"
grep -qx /bin/tool "$DB/info/basepkg.list" || fail "list lacks /bin/tool (the package's own path)"
head -1 "$DB/info/basepkg.list" | grep -qx '/\.' || fail "list does not start with /."
grep -qx /usr/share/common/f "$DB/info/first.list" && fail "replaced file still in first.list"
grep -qx /usr/share/common/g "$DB/info/first.list" || fail "first.list lost its other file"
grep -qx /usr/share/common/f "$DB/info/second.list" || fail "second.list lacks the file"
grep -qx '/usr/lib/foo basepkg' "$DB/triggers/File" || fail "file trigger interest missing"
grep -qx 'basepkg/noawait' "$DB/triggers/bar-trigger" || fail "explicit trigger interest missing"
for f in available diversions statoverride triggers/Unincorp; do
	[ -f "$DB/$f" ] || fail "$f missing"
done
md5=$(md5sum <"$R/etc/basepkg.conf" | cut -d' ' -f1)
awk '/^Package: basepkg$/,/^$/' "$DB/status" >"$T/st"
grep -qx "Status: install ok unpacked" "$T/st" || fail "status lacks 'install ok unpacked'"
grep -qx " /etc/basepkg.conf $md5" "$T/st" || fail "Conffiles lacks the real md5"
grep -qx "Multi-Arch: foreign" "$T/st" || fail "status lacks Multi-Arch"
grep -qx "Depends: libx (>= 1.0)" "$T/st" || fail "status lacks Depends"
[ "$(sed -n 2p "$T/st")" = "Essential: yes" ] || fail "status field order differs from dpkg's"
[ "$(grep '^Package:' "$DB/status" | tr '\n' ' ')" = \
	"Package: basepkg Package: first Package: libx Package: libx Package: nodes Package: second Package: utf8 " ] ||
	fail "status not sorted by name"
dpkg --admindir="$DB" --audit >"$T/audit" 2>&1 || true
grep -q "unpacked but not yet configured" "$T/audit" || fail "dpkg --audit: $(cat "$T/audit")"
[ "$(grep -c '^ [a-z]' "$T/audit")" = 7 ] || fail "dpkg --audit lists other problems: $(cat "$T/audit")"
dpkg --admindir="$DB" -L libx:armel | grep -qx /usr/share/doc/libx/NEWS || fail "dpkg -L libx:armel"
dpkg --admindir="$DB" -S /usr/share/doc/libx/NEWS | grep -q 'libx:armhf, libx:armel' ||
	fail "dpkg -S does not see the shared file in both: $(dpkg --admindir="$DB" -S /usr/share/doc/libx/NEWS)"

# Replaces the other way round: the replacing package first, the replaced one keeps nothing.
mkdir "$T/wr"
expect_ok "$UNPACK" -a armhf "$T/wr" "$second" "$first"
[ "$(cat "$T/wr/root/usr/share/common/f")" = two ] || fail "replaced package overwrote the file"
grep -qx /usr/share/common/f "$T/wr/root/var/lib/dpkg/info/first.list" &&
	fail "replaced package lists a file it did not get"
grep -q $'^usr/share/common/f\t.*\tsecond\t-$' "$T/wr/manifest" || fail "owner is not 'second'"

# A replaced file that has hard links: the links keep the old inode, the manifest follows.
d=$(deb_new hl 1.0 armhf); deb_file "$d" usr/share/hl/a "old"
ln "$d/usr/share/hl/a" "$d/usr/share/hl/b"; ln "$d/usr/share/hl/a" "$d/usr/share/hl/c"
a=$(deb_build "$d" "$P")
d=$(deb_new hlnew 1.0 armhf "Replaces: hl"); deb_file "$d" usr/share/hl/a "new"
b=$(deb_build "$d" "$P")
mkdir "$T/wh"
expect_ok "$UNPACK" -a armhf "$T/wh" "$a" "$b"
[ "$(cat "$T/wh/root/usr/share/hl/a")" = new ] && [ "$(cat "$T/wh/root/usr/share/hl/c")" = old ] ||
	fail "hard links after replacement"
grep -q $'^usr/share/hl/b\tf\t.*\t-\thl\t-$' "$T/wh/manifest" || fail "b did not become the group's file"
grep -q $'^usr/share/hl/c\th\t.*\tusr/share/hl/b\thl\t-$' "$T/wh/manifest" || fail "c does not link to b"

# A symlink shipped where a directory is leaves the directory alone, as dpkg does.
d=$(deb_new dirx 1.0 armhf); deb_file "$d" usr/share/x/f "f"
a=$(deb_build "$d" "$P")
d=$(deb_new linkx 1.0 armhf); mkdir -p "$d/usr/share"; ln -s elsewhere "$d/usr/share/x"
b=$(deb_build "$d" "$P")
mkdir "$T/wd"
expect_ok "$UNPACK" -a armhf "$T/wd" "$a" "$b"
[ -d "$T/wd/root/usr/share/x" ] && [ ! -L "$T/wd/root/usr/share/x" ] || fail "directory replaced by a symlink"
grep -qx /usr/share/x "$T/wd/root/var/lib/dpkg/info/linkx.list" || fail "linkx.list lacks /usr/share/x"

# Every compression dpkg accepts, for control.tar and data.tar.
for z in "control.tar data.tar" "control.tar.zst data.tar.gz" "control.tar.gz data.tar.lzma" \
	"control.tar.xz data.tar.zst" "control.tar.zst data.tar.bz2"; do
	set -- $z
	python3 "$TOP/tests/integration/unpack_mkdeb.py" <<J
{"out": "$P/z.deb", "control_name": "$1", "data_name": "$2",
 "control": "Package: z\\nVersion: 1\\nArchitecture: armhf\\nMaintainer: t <t@e.org>\\nDescription: z\\n",
 "members": [{"name": "./", "type": "dir"}, {"name": "./etc/", "type": "dir"}, {"name": "./etc/z", "data": "$2"}]}
J
	rm -rf "$T/wz" && mkdir "$T/wz"
	expect_ok "$UNPACK" "$T/wz" "$P/z.deb"
	[ "$(cat "$T/wz/root/etc/z")" = "$2" ] || fail "$1 + $2: content not unpacked"
done

# The multiarch lint, beside the manifest.
grep -qx "armel	libx:armel	/usr/share/doc/libx/NEWS	shared" "$T/w/multiarch-lint" ||
	fail "lint lacks the shared doc file"
grep -q 'libx.so.1' "$T/w/multiarch-lint" && fail "lint lists a file inside the triplet directory"

# Deterministic: one worker or two, same manifest, same tree, same database bytes.
mkdir "$T/w1"
expect_ok "$UNPACK" -j 1 -a armhf -a armel "$T/w1" $DEBS
cmp "$M" "$T/w1/manifest" || fail "manifest differs between -j1 and -j2"
(cd "$R" && find . -type f -exec sha256sum {} + | sort) >"$T/c2"
(cd "$T/w1/root" && find . -type f -exec sha256sum {} + | sort) >"$T/c1"
cmp "$T/c1" "$T/c2" || fail "file contents differ between -j1 and -j2"
(cd "$R" && find . -printf '%p %y %m %U %G %T@ %l\n' | sort) >"$T/l2"
(cd "$T/w1/root" && find . -printf '%p %y %m %U %G %T@ %l\n' | sort) >"$T/l1"
cmp "$T/l1" "$T/l2" || fail "tree metadata differs between -j1 and -j2"

# Unprivileged: nothing chowned, no device node on disk, the same manifest (root owners kept).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	U=$(mktemp -d /tmp/mki-30-user.XXXXXX)
	chmod 755 "$U"
	cp $DEBS "$U/"
	mkdir "$U/w" && chown 65534:65534 "$U/w"
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$UNPACK" -a armhf -a armel "$U/w" \
		"$U/basepkg_1.0_armhf.deb" "$U/libx_1.0_armhf.deb" "$U/libx_1.0_armel.deb" \
		"$U/first_1.0_armhf.deb" "$U/second_1.0_armhf.deb" "$U/nodes.deb" "$U/utf8.deb" >"$T/out" 2>"$T/err" || rc=$?
	cmp -s "$M" "$U/w/manifest"; same=$?
	[ ! -e "$U/w/root/dev/null-test" ]; nodev=$?
	uid=$(stat -c %u "$U/w/root/usr/bin/tool" 2>/dev/null || echo none)
	rm -rf "$U"
	[ $rc = 0 ] || { cat "$T/err" >&2; fail "unprivileged unpack exited $rc"; }
	[ $same = 0 ] || fail "unprivileged manifest differs from root's"
	[ $nodev = 0 ] || fail "unprivileged run created a device node?"
	[ "$uid" = 65534 ] || fail "unprivileged tree owned by $uid"
	grep -q "1 device node recorded in the manifest only" "$T/err" || fail "no note about the device node"
else
	note "not root: this whole test ran unprivileged"
fi
