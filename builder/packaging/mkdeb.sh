#!/bin/bash
# mkdeb.sh OUTDIR: build OUTDIR/mkimage_VERSION_ARCH.deb from a staged `make install` with
# PREFIX=/usr (run by `make deb` after the binaries are built). The version comes from
# `git describe`, made a valid Debian version; Depends from dpkg-shlibdeps plus the run-time tools.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$top/builder/packaging
out=$(cd "${1:-$top}" && pwd)

# v1.2-3-gabc1234 -> 1.2+git3.abc1234; no tag -> 0.0~gitCOUNT.HASH (sorts before any release).
deb_version() {
	local d
	if d=$(git -C "$top" describe --tags --match 'v[0-9]*' 2>/dev/null); then
		d=${d#v}
		[[ $d == *-*-g* ]] && d="${d%%-*}+git$(echo "${d#*-}" | sed 's/-g/./')"
	else
		d="0.0~git$(git -C "$top" rev-list --count HEAD).$(git -C "$top" rev-parse --short HEAD)"
	fi
	git -C "$top" diff --quiet HEAD -- 2>/dev/null || d="$d+dirty"
	echo "$d"
}

version=$(deb_version)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d "${TMPDIR:-/tmp}/mkimage-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/debian/mkimage # where dpkg-shlibdeps expects the package tree
doc=$root/usr/share/doc/mkimage

make -s -C "$top" install DESTDIR="$root" PREFIX=/usr
# A native package (no Debian revision): its changelog is changelog.gz (policy 12.7).
# Debian policy 10.1: binaries stripped; 12.3: manual pages and changelogs compressed, no mtime.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/bin/mkimage" "$root/usr/lib/mkimage/mkimage-exec"
gzip -9n "$root"/usr/share/man/man*/*
install -D -m 0644 "$pkg/copyright" "$doc/copyright"
install -D -m 0644 "$pkg/lintian-overrides" "$root/usr/share/lintian/overrides/mkimage"
{
	echo "mkimage ($version) unstable; urgency=medium"
	echo
	echo "  * Snapshot of $(git -C "$top" rev-parse HEAD)."
	echo
	echo " -- $(sed -n 's/^Maintainer: //p' "$pkg/control")  $(date -R -d "@$(git -C "$top" log -1 --format=%ct)")"
} | gzip -9n >"$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

# dpkg-shlibdeps wants a debian/control naming the package beside it.
mkdir -p "$root/DEBIAN" # how dpkg-shlibdeps recognises a package tree
printf "Source: mkimage\n\nPackage: mkimage\nArchitecture: any\n" >"$stage/debian/control"
shlibs=$(cd "$stage" && dpkg-shlibdeps -O debian/mkimage/usr/bin/mkimage | sed -n 's/^shlibs:Depends=//p')

{
	sed '/^Depends:/d' "$pkg/control"
	echo "Version: $version"
	echo "Architecture: $arch"
	echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
	echo "Depends: $shlibs, $(sed -n 's/^Depends: //p' "$pkg/control")"
} | awk '/^Description:/ { d = 1 } d { desc = desc $0 "\n"; next } { print } END { printf "%s", desc }' \
	>"$root/DEBIAN/control"
chmod -R u+rwX,go+rX,go-w "$root"
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
# Same commit, same package: every time stamp is the commit's.
when=$(git -C "$top" log -1 --format=%ct)
find "$root" -exec touch -h -d "@$when" {} +
export SOURCE_DATE_EPOCH=$when
deb=$out/mkimage_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
