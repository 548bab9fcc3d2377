#!/bin/bash
# mkdeb.sh OUTDIR: build OUTDIR/mkimage_VERSION_ARCH.deb from a staged `make install` with
# PREFIX=/usr (run by `make deb` after the binaries are built). The version is the Makefile's;
# Depends from dpkg-shlibdeps plus the run-time tools. The program is /usr/bin/mkimage-debian;
# /usr/bin/mkimage and mkimage(1) are ours through update-alternatives only while u-boot-tools
# does not ship them (postinst, prerm, triggers).
set -euo pipefail
# Run from make (make deb, make check): its MAKEFLAGS would make the sub-makes print directories
# into the version string and look for a jobserver they were not given.
unset MAKEFLAGS MFLAGS MAKELEVEL
top=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$top/builder/packaging
out=$(cd "${1:-$top}" && pwd)

# The one version string (the Makefile computes it: --version and the SBOM say the same).
version=$(make -s --no-print-directory -C "$top" version)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d "${TMPDIR:-/tmp}/mkimage-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/debian/mkimage # where dpkg-shlibdeps expects the package tree
doc=$root/usr/share/doc/mkimage

make -s -C "$top" install DESTDIR="$root" PREFIX=/usr MKIMAGE_LINK=0
# A native package (no Debian revision): its changelog is changelog.gz (policy 12.7).
# Debian policy 10.1: binaries stripped; 12.3: manual pages and changelogs compressed, no mtime.
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/bin/mkimage-debian" "$root/usr/lib/mkimage/mkimage-exec"
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
shlibs=$(cd "$stage" && dpkg-shlibdeps -O debian/mkimage/usr/bin/mkimage-debian |
	sed -n 's/^shlibs:Depends=//p')

{
	sed '/^Depends:/d' "$pkg/control"
	echo "Version: $version"
	echo "Architecture: $arch"
	echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
	echo "Depends: $shlibs, $(sed -n 's/^Depends: //p' "$pkg/control")"
} | awk '/^Description:/ { d = 1 } d { desc = desc $0 "\n"; next } { print } END { printf "%s", desc }' \
	>"$root/DEBIAN/control"
for f in postinst prerm triggers; do
	install -m "$([ $f = triggers ] && echo 0644 || echo 0755)" "$pkg/$f" "$root/DEBIAN/$f"
done
chmod -R u+rwX,go+rX,go-w "$root"
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
# Same commit, same package: every time stamp is the commit's.
when=$(git -C "$top" log -1 --format=%ct)
find "$root" -exec touch -h -d "@$when" {} +
export SOURCE_DATE_EPOCH=$when
deb=$out/mkimage_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
