# A FIFO where mkimage reads a file of the tree never hangs the build (issue 30, deliverable 1, end
# to end): a postinst replaces its kernel or its initrd by a FIFO under image.export_boot; the
# build fails at once with exit 8 naming the file and what it is, nothing left beside the image,
# no work directory, nothing running. A postinst that replaces its copyright file by a FIFO does
# not hang the build either: the SBOM declares the licence the package shipped (read before any
# script ran) and the image holds the FIFO. A package that ships a FIFO as its copyright file
# gets NOASSERTION and a warning naming the file and the package. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

K=6.1.0-91-test
# fifo-kernel NAME FILE: a kernel package whose postinst replaces /boot/FILE by a FIFO.
fifo_kernel() {
	local d
	d=$(deb_new "$1" 1.0 amd64)
	deb_file "$d" boot/vmlinuz-$K "kernel $K
"
	deb_file "$d" boot/initrd.img-$K "initrd $K
"
	deb_file "$d" DEBIAN/postinst "#!/bin/sh
set -e
rm -f /boot/$2
mkfifo /boot/$2
" 0755
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}
fifo_kernel fifo-vmlinuz "vmlinuz-$K"
fifo_kernel fifo-initrd "initrd.img-$K"

DEP5="Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/

Files: *
Copyright: 2024 The Authors
License: Apache-2.0
"
d=$(deb_new fifo-copyright 1.0 all)
deb_file "$d" usr/share/doc/fifo-copyright/copyright "$DEP5"
deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
rm -f /usr/share/doc/fifo-copyright/copyright
mkfifo /usr/share/doc/fifo-copyright/copyright
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new shipped-fifo 1.0 all)
mkdir -p "$d/usr/share/doc/shipped-fifo"
mkfifo "$d/usr/share/doc/shipped-fifo/copyright"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

mkdir -p "$T/r"
for p in fifo-vmlinuz fifo-initrd; do
	native_recipe "$T/r/$p.cfg" t ", \"$p\""
	echo 'image = { export_boot = true; };' >>"$T/r/$p.cfg"
done
native_recipe "$T/r/copyright.cfg" t ', "fifo-copyright", "shipped-fifo"'
chmod -R a+rX "$T/r"

# licence SBOM PACKAGE
licence() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(*[p.get("licenseDeclared") for p in d["packages"] if p.get("name") == sys.argv[2]])' "$1" "$2"
}

# run_all WHO DIR [RUNNER...]
run_all() {
	local who=$1 dir=$2 p file t0 t
	shift 2
	mkdir -p "$dir/tmp" "$dir/cache" "$dir/img"
	[ -z "${1:-}" ] || chown -R "$2" "$dir"
	for p in fifo-vmlinuz fifo-initrd; do
		file=vmlinuz-$K
		[ $p = fifo-vmlinuz ] || file=initrd.img-$K
		t0=$(date +%s)
		TMPDIR=$dir/tmp expect_fail 8 "image.export_boot: '/boot/$file' \(package '$p'\) is a FIFO, not a regular file" \
			"$@" timeout 300 "$MKIMAGE" --cache-dir "$dir/cache" --no-layer-cache \
			-o "$dir/img/t.ext4" "$T/r/$p.cfg"
		t=$(( $(date +%s) - t0 ))
		[ "$t" -lt 120 ] || fail "$who: $p: the build took $t s"
		[ -z "$(left_beside "$dir/img")" ] || fail "$who: $p: left beside the image: $(left_beside "$dir/img")"
		[ -z "$(ls -A "$dir/tmp")" ] || fail "$who: $p: work dir left: $(ls -A "$dir/tmp")"
		no_process_under "$dir/tmp" "$who: $p"
		note "$who: $p: $(grep -m1 -o "error: .*" "$T/err" | cut -c1-160)"
	done

	TMPDIR=$dir/tmp expect_ok "$@" timeout 300 "$MKIMAGE" --cache-dir "$dir/cache" \
		--no-layer-cache -o "$dir/img/t.ext4" "$T/r/copyright.cfg"
	debugfs -R "stat /usr/share/doc/fifo-copyright/copyright" "$dir/img/t.ext4" 2>/dev/null |
		grep -q "Type: FIFO" || fail "$who: the image does not hold the postinst's FIFO: the test tests nothing"
	sbom_validate "$dir/img/t.spdx.json"
	[ "$(licence "$dir/img/t.spdx.json" fifo-copyright)" = Apache-2.0 ] ||
		fail "$who: the SBOM declares '$(licence "$dir/img/t.spdx.json" fifo-copyright)' for fifo-copyright, not the shipped Apache-2.0"
	[ "$(licence "$dir/img/t.spdx.json" shipped-fifo)" = NOASSERTION ] ||
		fail "$who: the SBOM declares '$(licence "$dir/img/t.spdx.json" shipped-fifo)' for shipped-fifo"
	grep -Eq "warning: .*'/usr/share/doc/shipped-fifo/copyright' of package 'shipped-fifo' is a FIFO" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who: no warning names the shipped FIFO and its package"; }
	rm -f "$dir/img/"*
	note "$who: a FIFO copyright: shipped licence declared, shipped FIFO warned about"
}

run_all root "$T/root"
if [ "$(id -u)" = 0 ]; then
	test_user mkififo91
	chmod 755 "$T"
	run_all user "$T/user" as_user mkififo91
else
	skip_part "not root: the ordinary user's builds need a throwaway user"
fi
