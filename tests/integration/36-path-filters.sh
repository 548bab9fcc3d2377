# Path filters (packages.path_exclude / path_include / minimize / locales), as dpkg's
# --path-exclude / --path-include:
# 1. differential: the host's dpkg unpacks the same packages (real bookworm ones and crafted ones
#    without md5sums) with the options read back from the dpkg.cfg.d fragment we wrote; tree and
#    info/ (.list with the filtered paths, generated md5sums without them) must match;
# 2. a whole native build from a signed repository on 127.0.0.1: what is left out is absent from
#    the ext4 (debugfs) and from the manifest-derived report counts, what is re-included is there,
#    the fragment is in the image and the image's own dpkg honours it for a package installed by
#    a hook; the same bytes twice;
# 3. bad input: FILE:LINE and exit 2 for every bad key, exit 6 for a directory excluded by name;
# 4. recipes/arm-board.cfg (minimize = true; without kernel and systemd, tests/flagship.sh) with
#    locales builds from the test mirror and passes e2fsck.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"
UNPACK=${UNPACK:-$TOP/build/tools/unpack}
[ -x "$UNPACK" ] || fail "test driver $UNPACK missing (make tools)"
export SOURCE_DATE_EPOCH=1700000000
FRAG=etc/dpkg/dpkg.cfg.d/mkimage-path-filters

# docs-test: a bit of everything minimize is about, plus a doc directory reached by a symlink,
# an examples directory that only an include's literal head keeps, a hard link, a conffile and a
# filtered conffile (dpkg's configure takes it for one it was asked not to install).
d=$(deb_new docs-test 1.0 all)
deb_file "$d" usr/bin/docs-test "#!/bin/sh" 0755
deb_file "$d" usr/share/doc/docs-test/README "read me"
deb_file "$d" usr/share/doc/docs-test/copyright "licence text"
deb_file "$d" usr/share/doc/docs-test/examples/ex1 "example"
ln -s docs-test "$d/usr/share/doc/docs-test-link"
deb_file "$d" usr/share/man/man1/docs-test.1.gz "manpage"
deb_file "$d" usr/share/man/man1/keep-test.1.gz "kept manpage"
deb_file "$d" usr/share/man/de/man1/docs-test.1.gz "Handbuch"
deb_file "$d" usr/share/info/docs-test.info.gz "info"
deb_file "$d" usr/share/lintian/overrides/docs-test "docs-test: x"
for l in de de_AT fr pt pt_BR dsb sr@latin; do
	deb_file "$d" usr/share/locale/$l/LC_MESSAGES/docs-test.mo "mo $l"
done
deb_file "$d" usr/share/zoneinfo-test/UTC "utc"
ln "$d/usr/share/zoneinfo-test/UTC" "$d/usr/share/zoneinfo-test/Zulu"
deb_file "$d" etc/docs-test.conf "a=1"
deb_file "$d" etc/docs-test-filtered.conf "b=2"
printf '/etc/docs-test.conf\n/etc/docs-test-filtered.conf\n' >"$d/DEBIAN/conffiles"
docs=$(deb_build "$d" "$T/repo/pool/main")
# late-test: installed by a hook with the image's own dpkg, which must read the fragment.
d=$(deb_new late-test 1.0 all)
deb_file "$d" usr/share/doc/late-test/NEWS "news"
deb_file "$d" usr/share/doc/late-test/copyright "late licence"
deb_file "$d" usr/share/man/man8/late-test.8.gz "late manpage"
deb_file "$d" usr/lib/late-test/data "data"
late=$(deb_build "$d" "$T/late")

# The rules of the recipe below, as driver options.
FILTER_OPTS=(--minimize --locale de --locale pt_BR --locale sr@latin
	--path-exclude '/usr/share/zoneinfo-test/*' --path-exclude /etc/docs-test-filtered.conf
	--path-include /usr/share/man/man1 --path-include '/usr/share/man/man1/keep-*')

# --- 1. differential against dpkg ------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	skip_part "dpkg --unpack needs root to set owners: the differential with dpkg is skipped"
else
	mapfile -t DEBS < <("$TOP/tests/integration/unpack_realdebs.sh" | grep -v /libc6_) ||
		fail "cannot get the real package set"
	DEBS+=("$docs")
	mkdir "$T/w"
	expect_ok "$UNPACK" -a armhf -a armel "${FILTER_OPTS[@]}" "$T/w" "${DEBS[@]}"
	W=$T/w/root
	[ -f "$W/$FRAG" ] || fail "no $FRAG in the tree"
	mapfile -t OPTS < <(sed -n 's/^\(path-[a-z]*=\)/--\1/p' "$W/$FRAG")
	[ ${#OPTS[@]} -ge 10 ] || fail "the fragment holds only ${#OPTS[@]} rules"
	K=$T/dpkg
	mkdir -p "$K/var/lib/dpkg/info" "$K/var/lib/dpkg/updates" "$K/usr/bin" "$K/usr/sbin" "$K/usr/lib"
	for l in bin sbin lib; do ln -s usr/$l "$K/$l"; touch -h -d @$SOURCE_DATE_EPOCH "$K/$l"; done
	touch "$K/var/lib/dpkg/status"
	dpkg --root="$K" --add-architecture armhf
	dpkg --root="$K" --add-architecture armel
	dpkg --root="$K" --force-depends "${OPTS[@]}" --unpack "${DEBS[@]}" >"$T/dpkg.log" 2>&1 ||
		{ cat "$T/dpkg.log" >&2; fail "dpkg --unpack failed"; }
	A=$K/var/lib/dpkg B=$W/var/lib/dpkg
	diff <(ls "$A/info") <(ls "$B/info") || fail "info/ holds different files"
	for f in "$A"/info/*; do
		cmp "$f" "$B/info/${f##*/}" || fail "info/${f##*/} differs from dpkg's"
	done
	grep -qx /usr/share/doc/docs-test/README "$B/info/docs-test.list" ||
		fail "a filtered path is missing from the .list (dpkg keeps it)"
	! grep -q README "$B/info/docs-test.md5sums" || fail "the generated md5sums sums a filtered file"
	grep -q usr/share/doc/docs-test/copyright "$B/info/docs-test.md5sums" ||
		fail "the generated md5sums lacks a kept file"
	lst() { # the fragment's directory is ours: no package here ships it
		(cd "$1" && find . -path ./var/lib/dpkg -prune -o -path ./etc/dpkg/dpkg.cfg.d -prune -o \
			\( -type d -printf '%p %y %m %U %G\n' \) -o \
			-printf '%p %y %m %U %G %l %s %T@\n' | sed 's/\.dpkg-new / /' | sort)
	}
	lst "$K" >"$T/dpkg.lst"
	lst "$W" >"$T/ours.lst"
	diff "$T/dpkg.lst" "$T/ours.lst" || fail "tree differs from dpkg's"
	grep -q '^\./usr/share/doc/docs-test/examples d' "$T/ours.lst" ||
		fail "the examples directory an include may need was not kept (dpkg keeps it)"
	n=$(find "$W/usr/share/man" "$W/usr/share/info" -type f | wc -l)
	[ "$n" = 1 ] || fail "$n files under man/ and info/, expected only keep-test.1.gz"
	note "dpkg and mkimage agree on $(wc -l <"$T/ours.lst") paths and ${#OPTS[@]} rules"
fi

# A directory left out leaves the files kept below it nowhere to go: refused (dpkg fails too),
# naming the directory: excluded by its own name, or not kept by an include's literal head.
mkdir "$T/wd" "$T/wd2"
expect_fail 6 "left out its directory '/usr/share/doc'" \
	"$UNPACK" --path-exclude /usr/share/doc "$T/wd" "$docs"
expect_fail 6 "'/usr/share/man/man1/keep-test.1.gz' has nowhere to go: .* directory '/usr/share/man/man1'" \
	"$UNPACK" --minimize --path-include '/usr/share/man/man1/keep-*' "$T/wd2" "$docs"

# --- 2. a whole build -------------------------------------------------------------------------
native_repo
mkdir -p "$T/r/hooks"
cat >"$T/r/hooks/copy-late.sh" <<H
#!/bin/sh
cp "$late" "\$MKIMAGE_ROOT/srv/late-test.deb"
H
cat >"$T/r/hooks/install-late.sh" <<'H'
#!/bin/sh
set -e
dpkg -i /srv/late-test.deb
rm /srv/late-test.deb
H
chmod +x "$T/r/hooks/"*.sh
# recipe FILE [PACKAGES-EXTRA]: the native base plus docs-test with the filters under test.
recipe() {
	cat >"$1" <<R
name = "filters";
architecture = "amd64";
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; } );
packages = {
  base = "none";
  install = [ $NATIVE_BASE, "docs-test" ];
  minimize = true;
  locales = [ "de", "pt_BR", "sr@latin" ];
  path_exclude = [ "/usr/share/zoneinfo-test/*", "/etc/docs-test-filtered.conf" ];
  path_include = [ "/usr/share/man/man1", "/usr/share/man/man1/keep-*" ];
  ${2:-}
};
hooks = (
  { name = "copy-late"; script = "hooks/copy-late.sh"; where = "outside"; },
  { name = "install-late"; script = "hooks/install-late.sh"; where = "inside"; }
);
R
}
recipe "$T/r/f.cfg"
for run in 1 2; do
	mkdir -p "$T/out$run"
	expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/out$run/f.ext4" "$T/r/f.cfg"
done
IMG=$T/out1/f.ext4
cmp "$IMG" "$T/out2/f.ext4" || fail "two builds of the same recipe differ"
e2fsck -fn "$IMG" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn reports problems"; }
dbg() { debugfs -R "$1" "$IMG" 2>/dev/null; }
present() { dbg "stat $1" | grep -q "Type: $2" || fail "'$1' is not in the image as $2"; }
absent() { ! dbg "stat $1" | grep -q "Type:" || fail "'$1' is in the image, filtered out"; }
present /usr/share/doc/docs-test/copyright regular
present /usr/share/doc/docs-test-link symlink
present /usr/share/doc/docs-test/examples directory
present /usr/share/man/man1/keep-test.1.gz regular
present /usr/share/locale/de/LC_MESSAGES/docs-test.mo regular
present /usr/share/locale/de_AT/LC_MESSAGES/docs-test.mo regular
present /usr/share/locale/pt_BR/LC_MESSAGES/docs-test.mo regular
present /usr/share/locale/sr@latin/LC_MESSAGES/docs-test.mo regular
present /usr/bin/docs-test regular
present /etc/docs-test.conf regular
absent /etc/docs-test-filtered.conf
dbg "cat /var/lib/dpkg/status" | grep -A1 -x 'Package: docs-test' | grep -qx 'Status: install ok installed' ||
	fail "docs-test is not configured"
for p in /usr/share/doc/docs-test/README /usr/share/doc/docs-test/examples/ex1 \
	/usr/share/man/man1/docs-test.1.gz /usr/share/man/de /usr/share/info/docs-test.info.gz \
	/usr/share/lintian/overrides/docs-test /usr/share/locale/fr /usr/share/locale/pt \
	/usr/share/locale/dsb /usr/share/zoneinfo-test/UTC /usr/share/zoneinfo-test/Zulu \
	/usr/share/doc/dpkg/changelog.Debian.gz /usr/share/man/man1/dpkg.1.gz; do
	absent "$p"
done
present /usr/share/doc/dpkg/copyright regular
# The image's own dpkg read the fragment: the hook's package lost its docs too.
present /usr/share/doc/late-test/copyright regular
present /usr/lib/late-test/data regular
absent /usr/share/doc/late-test/NEWS
absent /usr/share/man/man8/late-test.8.gz
dbg "cat /$FRAG" >"$T/frag"
grep -qx 'path-exclude=/usr/share/doc/\*' "$T/frag" || fail "fragment lacks the doc rule: $(cat "$T/frag")"
grep -qx 'path-include=/usr/share/man/man1/keep-\*' "$T/frag" || fail "fragment lacks the recipe's include"
[ "$(tail -n 1 "$T/frag")" = 'path-include=/usr/share/man/man1/keep-*' ] ||
	fail "the recipe's include is not the last rule"
dbg "cat /var/lib/dpkg/info/docs-test.list" >"$T/docs.list"
grep -qx /usr/share/doc/docs-test/README "$T/docs.list" || fail ".list lacks a filtered path"
grep -qx /usr/share/zoneinfo-test/Zulu "$T/docs.list" || fail ".list lacks a filtered hard link"

# The report counts what the packages hold and the rules leave out, computed here independently
# (fnmatch, last match wins, dpkg's directory rule) from the .debs themselves.
counts=$(python3 - "$T/out1/f.report.json" "$T/frag" "$T/cache" <<'PY'
import fnmatch, glob, json, os, subprocess, sys, tarfile
rep = json.load(open(sys.argv[1]))["left_out"]
rules = [(l.startswith("path-include="), l.split("=", 1)[1].rstrip("\n"))
         for l in open(sys.argv[2]) if l.startswith("path-")]
def skips(path, dirlink):
    skip = False
    for inc, g in rules:
        if fnmatch.fnmatchcase(path, g):
            skip = not inc
    if skip and dirlink:
        for inc, g in rules:
            head = g[:min([g.index(c) for c in "*?[\\" if c in g] or [len(g)])].rstrip("/")
            if inc and path.startswith(head):
                return False
    return skip
files = dirs = size = 0
debs = [f for f in glob.glob(sys.argv[3] + "/**/*", recursive=True)
        if os.path.isfile(f) and open(f, "rb").read(8) == b"!<arch>\n"]
assert len(debs) >= 12, debs
for deb in debs:
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, capture_output=True).stdout
    import io
    for m in tarfile.open(fileobj=io.BytesIO(tar)):
        name = "/" + m.name.lstrip("./").rstrip("/") if m.name not in ("./", ".") else ""
        if not name or not skips(name, m.isdir() or m.issym()):
            continue
        if m.isdir():
            dirs += 1
        else:
            files += 1
            size += m.size if m.isreg() else 0
want = {"files": files, "directories": dirs, "bytes": size}
assert rep == want, (rep, want)
print("left out of the build: %(files)d files, %(directories)d directories, %(bytes)d bytes" % want)
PY
) || fail "report counts are wrong"
note "$counts"

# --- 3. bad input -----------------------------------------------------------------------------
# bad KEYS LINE PATTERN: the recipe with its filter keys replaced by KEYS (from line 6) exits 2
# with PATTERN at bad.cfg:LINE, and writes nothing.
bad() {
	recipe "$T/r/good.cfg"
	grep -v 'minimize\|locales\|path_exclude\|path_include' "$T/r/good.cfg" |
		sed "s|^  base = \"none\";|&\n$1|" >"$T/r/bad.cfg"
	expect_fail 2 "bad\.cfg:$2: .*$3" "$MKIMAGE" --cache-dir "$T/cache" -o "$T/bad.ext4" "$T/r/bad.cfg"
	[ ! -e "$T/bad.ext4" ] || fail "an image was written for a bad recipe"
}
bad '  path_exclude = [ "usr/share/doc/*" ];' 6 "'path_exclude': \"usr/share/doc/\\*\" must start with '/'"
bad '  path_include = [ "/ok/*",\n    "/usr/[abc" ];' 7 "unterminated '\\[' class"
bad '  path_exclude = [ "/usr/share/doc/" ];' 6 "ends with '/'"
bad '  path_exclude = 5;' 6 "'path_exclude' must be a list of strings"
bad '  path_include = ( "/a", 5 );' 6 "'path_include' must hold only strings"
bad '  path_exclude = [ "/a\\\\" ];' 6 "lone backslash"
bad '  minimize = "yes";' 6 "'minimize' must be true or false"
bad '  locales = [ "en" ];' 6 "set 'minimize = true'"
bad '  minimize = true;\n  locales = [ "en/*" ];' 7 "'locales': \"en/\\*\" may hold only"
bad '  path_exlcude = [ "/a/*" ];' 6 "did you mean 'path_exclude'"

# --- 4. the flagship recipe, minimized --------------------------------------------------------
. "$TOP/tests/flagship.sh"
flagship_mirror arm-board
serve "$MIRROR/repo"
flagship_lean arm-board "$T/fl"
grep -q '^  minimize = true;' "$T/fl/recipes/arm-board.cfg" || fail "arm-board.cfg is not minimized"
sed -i 's|^  minimize = true;.*|&\n  locales = [ "en" ];|' "$T/fl/recipes/arm-board.cfg"
mkdir -p "$T/arm"
expect_ok "$MKIMAGE" --source "$SERVER_URL bookworm main signed-by=$MIRROR/key.gpg" \
	--output "$T/arm/arm-board.ext4" "$T/fl/recipes/arm-board.cfg"
IMG=$T/arm/arm-board.ext4
e2fsck -fn "$IMG" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "minimized arm-board: e2fsck -fn reports problems"; }
present /usr/share/doc/libc6/copyright regular
absent /usr/share/doc/libc6/changelog.Debian.gz
absent /usr/share/man/man1
dbg "cat /$FRAG" | grep -qx 'path-include=/usr/share/locale/en/\*' || fail "arm-board fragment lacks the kept locale"
counts=$(python3 - "$T/arm/arm-board.report.json" <<'PY'
import json, sys
lo = json.load(open(sys.argv[1]))["left_out"]
assert lo["files"] > 500 and lo["bytes"] > 1 << 20, lo
print("arm-board minimized: %(files)d files, %(directories)d directories, %(bytes)d bytes left out" % lo)
PY
) || fail "arm-board report: too little left out"
note "$counts"
