# The Debian package installs beside Debian's u-boot-tools, which owns /usr/bin/mkimage and
# mkimage(1) (issue 27, deliverable 7): ours is /usr/bin/mkimage-debian always, and `mkimage`
# (with its manual) only while u-boot-tools is absent, through update-alternatives and a file
# trigger. Both install orders and one apt-get for both; `mkimage -V` is U-Boot's whenever
# u-boot-tools is there, `man` finds both manuals, removing either leaves the other's command
# working; the package's version is --version's. Root only: it installs and removes packages.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "installs packages: root only"
for p in mkimage u-boot-tools; do
	! dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
		skip "'$p' is installed on this machine: the test would remove it"
done
command -v man >/dev/null || skip "man-db missing (make test-deps)"
APT=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300)
"${APT[@]}" install --download-only u-boot-tools >"$T/apt.log" 2>&1 ||
	skip "u-boot-tools cannot be downloaded (no network to the archive?)"

deb=$("$TOP/builder/packaging/mkdeb.sh" "$T")
# man-db's trigger rebuilds the whole manual index after every apt-get (most of this test's time);
# `man -w` searches the files without it. Off while the test runs, as it was afterwards.
if [ -e /var/lib/man-db/auto-update ]; then
	mv /var/lib/man-db/auto-update "$T/man-db-auto-update"
fi
cleanup_pkgs() {
	"${APT[@]}" purge mkimage u-boot-tools >/dev/null 2>&1 || true
	[ ! -e "$T/man-db-auto-update" ] || mv "$T/man-db-auto-update" /var/lib/man-db/auto-update
}
trap '_rc=$(_exit_status $?); cleanup_pkgs; _cleanup; exit $_rc' EXIT

apt_do() { "${APT[@]}" "$@" >"$T/apt.log" 2>&1 || { cat "$T/apt.log" >&2; fail "apt-get $*"; }; }
ours() {
	/usr/bin/mkimage --version 2>/dev/null | grep -qx "mkimage $version" ||
		fail "$1: 'mkimage --version' is not ours: $(/usr/bin/mkimage --version 2>&1 | head -1)"
	[ "$(readlink -f "$(man -w mkimage)")" = /usr/share/man/man1/mkimage-debian.1.gz ] ||
		fail "$1: 'man mkimage' is not ours: $(man -w mkimage)"
}
u_boot() {
	/usr/bin/mkimage -V 2>&1 | grep -q '^mkimage version ' ||
		fail "$1: 'mkimage -V' is not U-Boot's: $(/usr/bin/mkimage -V 2>&1 | head -1)"
	[ "$(dpkg-query -S /usr/bin/mkimage | cut -d: -f1)" = u-boot-tools ] ||
		fail "$1: /usr/bin/mkimage is not u-boot-tools' file"
	[ "$(dpkg-query -S "$(man -w mkimage)" | cut -d: -f1)" = u-boot-tools ] ||
		fail "$1: 'man mkimage' is not U-Boot's: $(man -w mkimage)"
}
# ours_by_name WHEN: mkimage-debian, its manual and the other two manuals, whatever owns mkimage.
ours_by_name() {
	[ "$(/usr/bin/mkimage-debian --version)" = "mkimage $version" ] ||
		fail "$1: mkimage-debian --version says '$(/usr/bin/mkimage-debian --version)', the package $version"
	for m in mkimage-debian mkimage.cfg "7 mkimage"; do
		# shellcheck disable=SC2086
		man -w $m >/dev/null || fail "$1: 'man $m' finds nothing"
	done
}
none() {
	[ ! -e /usr/bin/mkimage ] && [ ! -L /usr/bin/mkimage ] || fail "$1: /usr/bin/mkimage is left"
	! update-alternatives --query mkimage >/dev/null 2>&1 || fail "$1: the alternative is left"
}
version=$(dpkg-deb -f "$deb" Version)

# Ours first, then u-boot-tools; u-boot-tools removed gives `mkimage` back to us.
apt_do install "$deb"
ours "ours alone"
ours_by_name "ours alone"
apt_do install u-boot-tools
u_boot "ours, then u-boot-tools"
ours_by_name "ours, then u-boot-tools"
apt_do remove u-boot-tools
ours "u-boot-tools removed"
apt_do purge mkimage
none "both removed"

# u-boot-tools first, then ours: U-Boot's stays; ours removed leaves it working.
apt_do install u-boot-tools
apt_do install "$deb"
u_boot "u-boot-tools, then ours"
ours_by_name "u-boot-tools, then ours"
grep -q "not replacing /usr/bin/mkimage" "$T/apt.log" || note "update-alternatives said nothing about U-Boot's file"
apt_do purge mkimage
u_boot "ours removed"
[ ! -e /usr/bin/mkimage-debian ] || fail "mkimage-debian is left after its package went"
apt_do purge u-boot-tools
none "both removed"

# Both in one apt-get, as a user types it.
apt_do install "$deb" u-boot-tools
u_boot "one apt-get"
ours_by_name "one apt-get"
apt_do purge mkimage u-boot-tools
none "both removed at once"
