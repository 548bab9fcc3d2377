# Sources: the host's apt configuration (one-line .list and deb822 .sources, read from
# MKIMAGE_APT_ROOT), the recipe's suite replacing the host's codename and its components asked of
# the host's archives, --source overrides, and
# every malformed input with exit 3 and FILE:LINE.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

make_repo armhf
good_key=$KEYRING
apt=$T/etc/apt
mkdir -p "$apt/sources.list.d" "$apt/trusted.gpg.d"
export MKIMAGE_APT_ROOT=$apt
echo 'VERSION_CODENAME=bookworm' >"$T/etc/os-release"
cp "$good_key" "$apt/trusted.gpg.d/repo.gpg"
inline_key=$(gpg --batch --armor --export | sed 's/^$/./; s/^/ /')

cat >"$apt/sources.list" <<L
# a comment
deb-src http://127.0.0.1:1/debian bookworm main
deb [arch=armhf,arm64 signed-by=$good_key] http://127.0.0.1:1/debian/ bookworm main contrib # trailing
L
printf 'deb http://127.0.0.1:2/x bookworm-updates main\ndeb http://127.0.0.1:6/flat ./\n' \
	>"$apt/sources.list.d/a.list"
echo "deb http://127.0.0.1:9/ignored bookworm main" >"$apt/sources.list.d/not-a-list.disabled"
cat >"$apt/sources.list.d/b.sources" <<S
Types: deb deb-src
URIs: http://127.0.0.1:3/security
Suites: bookworm-security
Components: main
Signed-By:
$inline_key

# disabled
Types: deb
URIs: http://127.0.0.1:4/off
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: http://127.0.0.1:5/amd64-only
Suites: nodistro
Components: main
Architectures: amd64
Signed-By: $good_key
S

host_recipe() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
suite = "${1:-bookworm}";
sources = ( { host = true; components = [ "main" ]; } );
packages = { install = [ "hello-test" ]; };
R
}
until_sources() { "$MKIMAGE" --until sources --cache-dir "$T/cache" "$@" "$T/r.cfg"; }

# The host's sources, with the recipe's suite (trixie) replacing the host's codename.
host_recipe trixie
expect_ok until_sources
grep -q "source: http://127.0.0.1:1/debian trixie \[main\] for armhf, signed ($apt/sources.list:3)" "$T/err" ||
	fail "one-line entry with options not read: $(cat "$T/err")"
grep -q "source: http://127.0.0.1:2/x trixie-updates \[main\] for armhf, signed ($apt/sources.list.d/a.list:1)" "$T/err" ||
	fail "sources.list.d entry not read"
grep -q "source: http://127.0.0.1:3/security trixie-security \[main\] for armhf, signed ($apt/sources.list.d/b.sources:1)" "$T/err" ||
	fail "deb822 entry not read"
grep -Eq "127.0.0.1:(4|5|9)|deb-src" "$T/err" && fail "disabled, foreign-arch or non-source entries used"
[ "$(grep -c 'source: ' "$T/err")" = 3 ] || fail "expected exactly 3 sources"
grep -q "warning: $apt/sources.list.d/a.list:2: flat repository './' is not supported yet; skipped" "$T/err" ||
	fail "flat repository not reported"

# End to end: inline Signed-By key (deb822) and the trusted.gpg.d default both verify a repo.
printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By:\n%s\n' \
	"$SERVER_URL" "$inline_key" >"$apt/sources.list.d/b.sources"
: >"$apt/sources.list"
rm "$apt/sources.list.d/a.list"
host_recipe
expect_ok "$MKIMAGE" --until indexes --cache-dir "$T/cache" "$T/r.cfg"
grep -q "indexes: $SERVER_URL bookworm: signature good" "$T/err" || fail "inline key did not verify"
rm "$apt/sources.list.d/b.sources"
echo "deb $SERVER_URL bookworm main" >"$apt/sources.list"
expect_ok "$MKIMAGE" --until indexes --cache-dir "$T/cache" "$T/r.cfg"
grep -q "signature good" "$T/err" || fail "trusted.gpg.d keys did not verify"
# A host repository lacking one of the recipe's architectures is skipped for it, as apt does
# (a recipe source with a uri fails instead: 13-release.sh).
sed -i 's/architecture = "armhf";/architecture = "armhf"; auxiliary_architectures = [ "armel" ];/' "$T/r.cfg"
expect_ok "$MKIMAGE" --until indexes --cache-dir "$T/cache" "$T/r.cfg"
grep -q "warning: '$SERVER_URL' suite 'bookworm' does not provide architecture 'armel'; skipped ($apt/sources.list:1)" "$T/err" ||
	fail "missing host arch not skipped with a warning: $(cat "$T/err")"
grep -q "main/armhf [0-9]* KiB" "$T/err" || fail "armhf index missing"
# A component the recipe names and the host's entry does not (non-free-firmware beside main) is
# asked of the same archive; a Release without it is skipped for it with a warning.
host_recipe
sed -i 's/components = \[ "main" \]/components = [ "main", "non-free-firmware" ]/' "$T/r.cfg"
expect_ok until_sources
grep -q "source: $SERVER_URL bookworm \[main non-free-firmware\] for armhf" "$T/err" ||
	fail "the recipe's components not asked of the host's archive: $(cat "$T/err")"
expect_ok "$MKIMAGE" --until indexes --cache-dir "$T/cache" "$T/r.cfg"
grep -q "warning: '$SERVER_URL' suite 'bookworm' has no component 'non-free-firmware' (its Release lists: main); skipped ($apt/sources.list:1)" "$T/err" ||
	fail "a component the host's archive lacks not skipped with a warning: $(cat "$T/err")"
host_recipe

# Malformed host files: exit 3 with FILE:LINE.
src_err() { printf '%s\n' "$2" >"$1"; expect_fail 3 "$3" until_sources; rm -f "$1"; }
: >"$apt/sources.list"
src_err "$apt/sources.list" "deb http://127.0.0.1:1/x" "$apt/sources.list:1: expected 'deb \[options\] URI SUITE \[COMPONENT...\]'"
src_err "$apt/sources.list" "deb [arch=armhf http://127.0.0.1:1/x bookworm main" "$apt/sources.list:1: '\[' of the options is never closed"
src_err "$apt/sources.list" "rpm http://127.0.0.1:1/x bookworm main" "$apt/sources.list:1: unknown type 'rpm'"
src_err "$apt/sources.list" "deb [signed-by] http://127.0.0.1:1/x bookworm main" "option 'signed-by' lacks '=value'"
# Found by fuzz_sources (the first value leaked): which key counts would be a guess.
src_err "$apt/sources.list" "deb [signed-by=/a.gpg signed-by=/b.gpg] http://127.0.0.1:1/x bookworm main" \
	"$apt/sources.list:1: option 'signed-by' given twice; keep one"
src_err "$apt/sources.list" "deb ftp://127.0.0.1/x bookworm main" "$apt/sources.list:1: unsupported uri 'ftp://127.0.0.1/x'"
src_err "$apt/sources.list" "deb [signed-by=/nonexistent.gpg] http://127.0.0.1:1/x bookworm main" \
	"$apt/sources.list:1: cannot read keyring '/nonexistent.gpg'"
src_err "$apt/sources.list" "deb [signed-by=ABCDEF0123456789] http://127.0.0.1:1/x bookworm main" \
	"Signed-By 'ABCDEF0123456789' is a key fingerprint"
src_err "$apt/sources.list.d/c.sources" "$(printf 'Types: deb\nSuites: bookworm\nComponents: main')" \
	"$apt/sources.list.d/c.sources:1: a deb822 source needs Types, URIs and Suites"
src_err "$apt/sources.list.d/c.sources" "$(printf 'Types: deb\nthis is not a field')" \
	"$apt/sources.list.d/c.sources:2: expected 'Field: value'"
# Nothing usable on the host.
echo "deb [arch=amd64 signed-by=$good_key] http://127.0.0.1:1/x bookworm main" >"$apt/sources.list"
expect_fail 3 "r.cfg:4: the host's apt sources .* offer no repository for suite 'bookworm'" until_sources
# No Signed-By and no trusted keys at all.
rm "$apt/trusted.gpg.d/repo.gpg"
echo "deb http://127.0.0.1:1/x bookworm main" >"$apt/sources.list"
expect_fail 3 "$apt/sources.list:1: no Signed-By and no keys in" until_sources

# --source replaces the recipe's sources (here a host source that would fail).
cp "$good_key" "$T/relative.gpg"
in_T() { (cd "$T" && "$@"); }
expect_ok in_T until_sources --source "$SERVER_URL bookworm main signed-by=relative.gpg" \
	--source "$SERVER_URL/ other main contrib [signed-by=$good_key arch=armhf]"
grep -q "source: $SERVER_URL bookworm \[main\] for armhf, signed (--source)" "$T/err" || fail "--source 1"
grep -q "source: $SERVER_URL other \[main contrib\] for armhf, signed (--source)" "$T/err" || fail "--source 2"
expect_fail 3 "--source '$SERVER_URL bookworm main': name the repository's key with signed-by=KEYRING" \
	until_sources --source "$SERVER_URL bookworm main"
expect_fail 3 "--source '$SERVER_URL bookworm': expected 'URI SUITE COMPONENT... \[signed-by=KEYRING\]'" \
	until_sources --source "$SERVER_URL bookworm"
expect_fail 3 "none of its architectures is one of the recipe's" \
	until_sources --source "$SERVER_URL bookworm main signed-by=$good_key arch=amd64"
expect_fail 3 "keyring 'missing.gpg': No such file" \
	until_sources --source "$SERVER_URL bookworm main signed-by=missing.gpg"
expect_ok until_sources --source "$SERVER_URL bookworm main trusted=yes"
grep -q "warning: .*trusted=yes: the indexes of '$SERVER_URL' are NOT verified" "$T/err" ||
	fail "trusted=yes without a warning"
# One image, one Debian release: bookworm's updates and a vendor's suite go with bookworm, trixie
# does not (exit 3, before anything is fetched).
expect_ok until_sources --source "$SERVER_URL bookworm main signed-by=$good_key" \
	--source "$SERVER_URL bookworm-updates main signed-by=$good_key" \
	--source "$SERVER_URL/ nodistro main signed-by=$good_key"
expect_fail 3 "--source: suite 'trixie-security' is Debian's trixie, but --source names 'bookworm' \(bookworm\): an image holds one release's packages" \
	until_sources --source "$SERVER_URL bookworm main signed-by=$good_key" \
	--source "$SERVER_URL trixie-security main signed-by=$good_key"
# ... and builds from it end to end.
expect_ok "$MKIMAGE" --until indexes --cache-dir "$T/cache" \
	--source "$SERVER_URL bookworm main signed-by=$good_key" "$T/r.cfg"
grep -q "indexes: $SERVER_URL bookworm: signature good" "$T/err" || fail "--source build failed"
