# Debian's 64-bit time_t transition as an image builder meets it, on real .debs in signed
# repositories on 127.0.0.1: "trixie" has libfoo3t64 in place of libfoo3, which Provides libfoo3
# on amd64 (no ABI change there) but not on armhf (time_t grew). A vendor's .deb built against
# libfoo3 is refused on armhf with the rename, the ABI change, the architecture and both ways
# out, and builds on amd64 and from "bookworm"; on armhf with a stand-in providing libfoo3 it
# resolves, and the multiarch lint flags it, not the packages that name libfoo3t64.
. "$(dirname "$0")/lib.sh"

command -v apt-ftparchive >/dev/null || skip "apt-utils missing (make deps)"

# into REPO NAME VERSION ARCH FIELD...: a package with one file into REPO's pool.
into() {
	local repo=$1 d
	shift
	d=$(deb_new "$@")
	deb_file "$d" "usr/share/doc/$1/$3" "$1 $2\n"
	deb_build "$d" "$T/$repo/pool/main" >/dev/null
}

for a in armhf arm64 amd64; do
	into trixie zlib1g 1:1.3 $a "Multi-Arch: same"
	into bookworm zlib1g 1:1.2 $a "Multi-Arch: same"
	into bookworm libfoo3 3.0-1 $a "Multi-Arch: same"
done
t64="Breaks: libfoo3 (<< 3.1-1)"
into trixie libfoo3t64 3.1-1 armhf "Multi-Arch: same" "$t64" "Replaces: libfoo3"
for a in arm64 amd64; do
	into trixie libfoo3t64 3.1-1 $a "Multi-Arch: same" "$t64" "Replaces: libfoo3" \
		"Provides: libfoo3 (= 3.1-1)"
done
gpg_key repo
for s in trixie bookworm; do
	repo_index "$T/$s" $s main armhf arm64 amd64
	repo_sign "$T/$s" $s
	serve "$T/$s"
	eval "URL_$s=\$SERVER_URL"
done

# vendor NAME ARCH DEPENDS: a vendor's .deb outside any repository.
vendor() {
	local d
	d=$(deb_new "$1" 1.0 "$2" "Depends: $3")
	deb_file "$d" "opt/$1/bin/$1" "#!/bin/sh\n" 0755
	deb_build "$d" "$T/vendor"
}
old_hf=$(vendor vendor-app armhf "libfoo3 (>= 3.0), zlib1g")
old_64=$(vendor vendor-app amd64 "libfoo3 (>= 3.0), zlib1g")
both=$(vendor vendor-both armhf "libfoo3 (>= 3.0) | libfoo3t64, zlib1g")
new=$(vendor vendor-new armhf "libfoo3t64 (>= 3.1), zlib1g")

# recipe NAME ARCH[+AUX] SUITE DEB...: a recipe of the vendor's packages alone.
recipe() {
	local name=$1 arch=${2%+*} aux= suite=$3 url
	[ "$arch" = "$2" ] || aux="auxiliary_architectures = [ \"${2#*+}\" ];"
	shift 3
	eval "url=\$URL_$suite"
	cat >"$T/$name.cfg" <<R
name = "$name";
architecture = "$arch";
$aux
suite = "$suite";
sources = ( { uri = "$url"; keyring = "$KEYRING"; } );
packages = { base = "none"; local = [ $(printf '"%s", ' "$@" | sed 's/, $//') ]; };
R
}
build() { "$MKIMAGE" --cache-dir "$T/cache" -o "$T/images" --until unpack "$T/$1.cfg"; }

# armhf: refused, saying why and what to do, with nothing fetched and nothing left but the
# report and the log
recipe hf armhf trixie "$old_hf"
expect_fail 4 "'vendor-app:armhf=1.0' depends on 'libfoo3 \(>= 3.0\)', which no candidate package provides" \
	build hf
[ -z "$(left_beside "$T/images")" ] || fail "the refused build left $(left_beside "$T/images")"
grep -q "GET /pool/" "$T"/http-*.log && fail "a .deb was fetched for a refused build"
for want in "'libfoo3' is 'libfoo3t64' since Debian's 64-bit time_t transition" \
	"on armhf 'libfoo3t64' does not provide 'libfoo3'" \
	"time_t and off_t related structures changed size, so a binary built against the old library can crash or corrupt data with the new one even where it links" \
	"ways out: rebuild 'vendor-app' for this release against 'libfoo3t64'" \
	"or build the image on the release 'vendor-app' was made for \(e.g. suite = \"bookworm\"\)"; do
	grep -qE "$want" "$T/err" || { cat "$T/err" >&2; fail "not said: $want"; }
done

# arm64 with armhf: only armhf, where the new name does not provide the old one, is named
recipe mixed arm64+armhf trixie "$old_hf"
expect_fail 4 "on armhf 'libfoo3t64' does not provide 'libfoo3': time_t" build mixed
grep -q "arm64.*'libfoo3t64' does not provide" "$T/err" && { cat "$T/err" >&2; fail "arm64 named"; }
# --lock resolves only: the same refusal, no lock written
expect_fail 4 "'libfoo3' is 'libfoo3t64' since Debian's 64-bit time_t transition" \
	"$MKIMAGE" --cache-dir "$T/cache" --lock="$T/hf.lock" "$T/hf.cfg"
[ ! -e "$T/hf.lock" ] || fail "a lock was written for a refused request"

# the second way out: the release the package was made for
recipe hf-bookworm armhf bookworm "$old_hf"
expect_ok build hf-bookworm
grep -q "time_t" "$T/err" && fail "bookworm's build mentions time_t"

# amd64: libfoo3t64 provides libfoo3, the ABI did not change; nothing to say
recipe amd amd64 trixie "$old_64"
expect_ok build amd
grep -q "time_t" "$T/err" && { cat "$T/err" >&2; fail "amd64's build mentions time_t"; }
grep -q "unpacked 3 packages" "$T/err" || { cat "$T/err" >&2; fail "amd64: not 3 packages"; }

# armhf with an equivs-style stand-in that Provides libfoo3: it resolves, and the lint flags
# the package that reaches libfoo3t64 only through it; naming the new name as an alternative
# (what a rebuilt library's shlibs write: "liblcmaps0 | liblcmaps0t64") is not flagged
d=$(deb_new libfoo3-compat 1.0 armhf "Provides: libfoo3 (= 3.1-1)")
compat=$(deb_build "$d" "$T/vendor")
recipe alt armhf trixie "$old_hf" "$compat" "$both" "$new"
expect_ok build alt
grep -q "unpacked 6 packages" "$T/err" || { cat "$T/err" >&2; fail "armhf: not 6 packages"; }
grep -q "warning: multiarch lint: 'vendor-app:armhf=1.0' names 'libfoo3' in its Depends, the name of 'libfoo3t64' before Debian's 64-bit time_t transition, met here only by a package providing 'libfoo3': on armhf 'libfoo3t64' does not provide it, time_t and off_t related structures changed size.*; use a build of 'vendor-app' for this release" \
	"$T/err" || { cat "$T/err" >&2; fail "the lint did not flag vendor-app"; }
[ "$(grep -c "multiarch lint: '" "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "the lint flagged more than vendor-app"; }
