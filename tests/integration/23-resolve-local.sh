# Local .deb files (vendor packages) are read with libarchive and resolved with the repository:
# installed, their dependencies pulled in, preferred over a repository package of the same name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

for a in armhf armel; do
	pkg libc 2.0 $a "Multi-Arch: same"
done
pkg vendor-lib 5.0 armhf "Depends: libc"
repo_make armhf armel
mapfile -t PK < <(our_args)
R=("$RESOLVE" --primary armhf --arch armel "${PK[@]}")

d=$(deb_new vendor-tool 1.0 armel "Depends: libc (>= 2.0), vendor-lib:armhf" "Multi-Arch: foreign")
deb_file "$d" usr/bin/vendor-tool "#!/bin/sh\n" 0755
tool=$(deb_build "$d" "$T/debs")
d=$(deb_new vendor-lib 1.0 armhf)
lib=$(deb_build "$d" "$T/debs")
expect_ok "${R[@]}" --local "$tool" --local "$lib" --long
grep -q "^vendor-tool:armel=1.0 foreign $(stat -c %s "$tool") $(sha256sum <"$tool" | cut -d' ' -f1) $tool\$" \
	"$T/out" || { cat "$T/out" >&2; fail "local .deb not in the plan with its size, sha256 and path"; }
grep -q "^libc:armel=2.0 " "$T/out" || fail "the local package's dependency is missing"
grep -q "^vendor-lib:armhf=1.0 .* $lib\$" "$T/out" || fail "the local vendor-lib did not win"
[ "$(wc -l <"$T/out")" = 3 ] || fail "expected 3 packages"

printf 'not a deb' >"$T/junk.deb"
expect_fail 6 "'$T/junk.deb' is not a Debian package|cannot open local package" "${R[@]}" --local "$T/junk.deb"
d=$(deb_new mipsy 1.0 mips)
mips=$(deb_build "$d" "$T/debs")
expect_fail 4 "local package '$mips' is for architecture 'mips', which is not one of the recipe's" \
	"${R[@]}" --local "$mips"
d=$(deb_new needy 1.0 armhf "Depends: nothere")
needy=$(deb_build "$d" "$T/debs")
expect_fail 4 "'needy:armhf=1.0' depends on 'nothere', which no candidate package provides" \
	"${R[@]}" --local "$needy"
