# Fail before the work (issue 27, deliverable 2): an output directory that cannot take the image
# (missing, a file, not writable) and too little free space for the image are errors (exit 8)
# naming the directory and the numbers, said before any package is downloaded; the default
# images/ is created when missing. Missing keyrings, hook scripts and overlay sources are recipe
# errors at load (tests 02 and 66). A build failing here still leaves its report and log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"
. "$(dirname "$0")/lib-hooks.sh"

# A package whose index says it needs 64 TiB once installed (counted as 1 TiB, the most one
# package counts for): no machine has that free.
d=$(deb_new huge-test 1.0 all "Installed-Size: 68719476736")
deb_file "$d" usr/share/doc/huge-test/README "huge"
deb_build "$d" "$T/repo/pool/main" >/dev/null
make_repo armhf
recipe() {
	cat >"$T/$1.cfg" <<R
name = "$1";
architecture = "armhf";
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; } );
packages = { base = "none"; install = [ $2 ]; };
R
}
recipe small '"hello-test"'
recipe huge '"hello-test", "huge-test"'
debs() { requests 'GET /pool/'; }

# -o in a directory that does not exist: an error naming it, before any download.
expect_fail 8 "the output directory '$T/missing' of '$T/missing/x.ext4' cannot be used: No such file or directory \(create it, or choose another output with -o\)" \
	"$MKIMAGE" --cache-dir "$T/cache" -o "$T/missing/x.ext4" "$T/small.cfg"
[ ! -e "$T/missing" ] || fail "the missing output directory was created"
[ "$(requests 'GET ')" = 0 ] || fail "the repository was contacted before the output was checked"

# ... a file where the directory should be; a directory mkimage cannot write into.
: >"$T/afile"
expect_fail 8 "the output directory '$T/afile' of '$T/afile/x.ext4' is not a directory \(choose another output with -o\)" \
	"$MKIMAGE" --cache-dir "$T/cache" -o "$T/afile/x.ext4" "$T/small.cfg"
mkdir -p "$T/ro"
if [ "$(id -u)" = 0 ]; then
	test_user mki09user
	chmod 755 "$T" "$T/ro"
	chmod -R a+rX "$T/keys" "$T/small.cfg"
	mkdir -p "$T/u"
	chown mki09user "$T/u"
	expect_fail 8 "cannot write into the output directory '$T/ro': Permission denied \(choose another output with -o\)" \
		as_user mki09user "$MKIMAGE" --cache-dir "$T/u/cache" -o "$T/ro/x.ext4" "$T/small.cfg"
else
	chmod 555 "$T/ro"
	expect_fail 8 "cannot write into the output directory '$T/ro': Permission denied" \
		"$MKIMAGE" --cache-dir "$T/cache" -o "$T/ro/x.ext4" "$T/small.cfg"
fi
[ -z "$(ls -A "$T/ro")" ] || fail "something was written into the read-only directory"
[ "$(requests 'GET ')" = 0 ] || fail "the repository was contacted before the output was checked"

# Too little free space for the image: said after resolving, before any package is fetched,
# with the numbers; the default images/ was created and holds the report and the log.
mkdir -p "$T/cwd"
(cd "$T/cwd" && expect_fail 8 "not enough free space for the image in 'images': about 1153433\.6 MiB needed \(the packages' Installed-Size plus a tenth\), [0-9.]+ MiB free; free some space or choose another output with -o" \
	"$MKIMAGE" --cache-dir "$T/cache" "$T/huge.cfg") || exit 1
grep -q "created the output directory 'images'" "$T/err" || fail "images/ was not said to be created"
[ "$(debs)" = 0 ] || fail "packages were downloaded before the free space was checked"
[ "$(ls "$T/cwd/images" | tr '\n' ' ')" = "huge.log huge.report.json " ] ||
	fail "images/ holds $(ls "$T/cwd/images")"
python3 - "$T/cwd/images/huge.report.json" <<'PY' || fail "the report of the early failure is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["status"], r["exit_code"]) == ("failed", 8), r
assert any("not enough free space" in e for e in r["errors"]), r
PY
grep -q 'error: not enough free space' "$T/cwd/images/huge.log" || fail "the log lacks the error"
note "$(grep -o 'not enough free space.*free;' "$T/err")"
