#!/bin/bash
# seeds.sh CORPUS: seed each harness's corpus from real inputs made at run time (no binaries are
# committed): the project's recipes, real .deb control data and Packages stanzas where available.
set -euo pipefail
c=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$c/fuzz_recipe"
cp "$top"/recipes/*.cfg "$c/fuzz_recipe/" 2>/dev/null || true

# deb822: real stanzas in small files (a few per seed, so that mutations stay fast): the dpkg
# status file and the host's Packages lists; Release-format text from the host's InRelease files.
# The clearsign splitter gets the InRelease files whole.
d=$c/fuzz_deb822
mkdir -p "$d" "$c/fuzz_clearsign"
split_stanzas() { # split_stanzas PREFIX: stdin -> PREFIX.N, 4 stanzas each, at most 40 files
	awk -v p="$1" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= 160 { print > (p "." int((NR - 1) / 4)) }'
}
[ -r /var/lib/dpkg/status ] && split_stanzas "$d/status" </var/lib/dpkg/status
n=0
for f in /var/lib/apt/lists/*_Packages /var/lib/apt/lists/*_Packages.lz4; do
	[ -r "$f" ] || continue
	n=$((n + 1))
	case $f in
	*.lz4) command -v lz4 >/dev/null && lz4 -dc "$f" 2>/dev/null | split_stanzas "$d/packages$n" || true ;;
	*) split_stanzas "$d/packages$n" <"$f" ;;
	esac
done
for f in /var/lib/apt/lists/*_InRelease; do
	[ -r "$f" ] || continue
	n=$((n + 1))
	cp "$f" "$c/fuzz_clearsign/inrelease$n"
	sed -n '/^$/,/^-----BEGIN PGP SIGNATURE/p' "$f" | sed '1d;$d' | head -c 65536 >"$d/release$n" || true
done

# fuzz_dep5: the host's machine-readable copyright files (at most 40, the smaller first).
d=$c/fuzz_dep5
mkdir -p "$d"
n=0
for f in $(ls -Sr /usr/share/doc/*/copyright 2>/dev/null); do
	[ "$n" -lt 40 ] || break
	head -1 "$f" | grep -q '^Format: .*copyright-format/1.0' || continue
	n=$((n + 1))
	cp "$f" "$d/copyright$n"
done

# fuzz_deb: real .debs made with dpkg-deb (every compressor, files, links, dirs, scripts) and a few
# small real packages from the host's apt cache.
d=$c/fuzz_deb
mkdir -p "$d"
if command -v dpkg-deb >/dev/null; then
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/p/DEBIAN" "$t/p/usr/bin" "$t/p/etc/fuzz" "$t/p/usr/share/doc/fuzz"
	printf 'Package: fuzz\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: d\n' \
		>"$t/p/DEBIAN/control"
	printf '#!/bin/sh\nexit 0\n' >"$t/p/DEBIAN/postinst"
	chmod 755 "$t/p/DEBIAN/postinst"
	echo /etc/fuzz/conf >"$t/p/DEBIAN/conffiles"
	echo 'key=value' >"$t/p/etc/fuzz/conf"
	printf '#!/bin/sh\necho hi\n' >"$t/p/usr/bin/fuzz"
	chmod 755 "$t/p/usr/bin/fuzz"
	ln -s fuzz "$t/p/usr/bin/fuzz-link"
	ln "$t/p/usr/bin/fuzz" "$t/p/usr/bin/fuzz-hard"
	echo copyright >"$t/p/usr/share/doc/fuzz/copyright"
	for z in xz gzip zstd none; do
		dpkg-deb --root-owner-group -Z"$z" -b "$t/p" "$d/built-$z.deb" >/dev/null 2>&1 || true
	done
	rm -rf "$t/p/usr" "$t/p/etc" "$t/p/DEBIAN/conffiles"
	dpkg-deb --root-owner-group -Znone -b "$t/p" "$d/built-empty.deb" >/dev/null 2>&1 || true
fi
find /var/cache/apt/archives -maxdepth 1 -name '*.deb' -size -24k 2>/dev/null | awk 'NR <= 8' |
	while read -r f; do cp "$f" "$d/"; done

# fuzz_relation: the relation fields of the dpkg status file (one value a seed,
# at most 200).
d=$c/fuzz_relation
mkdir -p "$d"
{ cat /var/lib/dpkg/status 2>/dev/null || true; } |
	sed -n 's/^\(Depends\|Pre-Depends\|Provides\|Conflicts\|Breaks\|Replaces\|Recommends\): //p' |
	awk -v d="$d" 'NR <= 200 { f = d "/rel" NR; printf "%s", $0 > f; close(f) }'
