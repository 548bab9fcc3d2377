# Overlays (issue 14): a tree beside the recipe copied into the image after configuration and
# before the hooks - owner root:root (or the overlay's owner), modes kept, times clamped to
# SOURCE_DATE_EPOCH, merged /usr's /lib followed as dpkg follows it, listed in the report, the
# same bytes twice - and every refusal with its FILE:LINE message and exit status 2: a missing
# source, a symlink pointing outside it, a destination with '..', a device node or FIFO unless
# allowed, a file replacing a package's unless 'replace = true'. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v debugfs >/dev/null || skip "debugfs missing (e2fsprogs)"
export SOURCE_DATE_EPOCH=1700000000

# A package owning a file the overlay replaces, and one the overlay would replace by mistake.
d=$(deb_new vendor-conf 1.0 all)
deb_file "$d" etc/vendor.conf "from the package
"
deb_file "$d" usr/share/vendor/data "package data
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R/hooks" "$R/overlay/etc/app" "$R/overlay/lib/systemd/system" "$R/overlay/usr/local/bin" \
	"$R/app/conf"
printf 'app=1\n' >"$R/overlay/etc/app/app.conf"
printf '#!/bin/sh\necho hello from the overlay\n' >"$R/overlay/usr/local/bin/hello-overlay"
chmod 755 "$R/overlay/usr/local/bin/hello-overlay"
printf '[Unit]\nDescription=demo\n' >"$R/overlay/lib/systemd/system/demo.service"
ln -s /lib/systemd/system/demo.service "$R/overlay/etc/app/demo.service"
ln -s app.conf "$R/overlay/etc/app/current.conf"
printf 'overlay wins\n' >"$R/overlay/etc/vendor.conf"
printf 'shared\n' >"$R/overlay/etc/app/shared.conf"
printf 'key=value\n' >"$R/app/conf/settings"
chmod 700 "$R/app/conf"
# Times: one far in the future (clamped to the epoch), one old (kept).
touch -d @4000000000 "$R/overlay/etc/app/app.conf"
touch -d @1500000000 "$R/overlay/usr/local/bin/hello-overlay"
# The hook runs after the overlay: it sees its files.
printf '#!/bin/sh\nset -e\n[ ! -e /etc/app/app.conf ] || cat /etc/app/app.conf >/hook-saw-overlay\n' >"$R/hooks/after.sh"
chmod 755 "$R/hooks/after.sh"
chmod -R a+rX "$R"
chmod 640 "$R/overlay/etc/app/app.conf"
chmod 700 "$R/app/conf"
chmod 664 "$R/overlay/etc/app/shared.conf" # as a checkout under umask 002 leaves it

recipe() { # FILE OVERLAYS [EXTRA-PACKAGES]
	native_recipe "$1" ov "${3:-, \"vendor-conf\"}" \
		'{ name = "after"; script = "hooks/after.sh"; where = "inside"; }'
	printf 'overlays = (\n%s\n);\n' "$2" >>"$1"
}
# /opt/app needs /opt: the packages of the base set do not have it; a first overlay makes it.
GOOD='  { source = "overlay"; destination = "/"; replace = true; },
  { source = "optdir"; destination = "/opt"; },
  { source = "app"; destination = "/opt/app"; owner = "1000:1001"; }'
mkdir -p "$R/optdir"
recipe "$R/ov.cfg" "$GOOD"

# check WHO IMAGE REPORT
check() {
	local img=$2 rep=$3
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$1: e2fsck finds errors"; }
	dbg() { debugfs -R "$1" "$img" 2>/dev/null; }
	[ "$(dbg "cat /etc/app/app.conf")" = "app=1" ] || fail "$1: overlay file missing"
	dbg "stat /etc/app/app.conf" | grep -q "Mode:  0640" || fail "$1: app.conf lost its mode"
	dbg "stat /etc/app/shared.conf" | grep -q "Mode:  0644" ||
		fail "$1: a checkout's group write bit (umask 002) reached the image"
	dbg "stat /etc/app/app.conf" | grep -qE "User: +0 +Group: +0 " || fail "$1: app.conf not root:root"
	dbg "stat /etc/app/app.conf" | grep -q "mtime: 0x$(printf %x 1700000000)" ||
		fail "$1: app.conf's future time is not clamped to SOURCE_DATE_EPOCH"
	dbg "stat /usr/local/bin/hello-overlay" | grep -q "mtime: 0x$(printf %x 1500000000)" ||
		fail "$1: an old time was not kept"
	dbg "stat /usr/local/bin/hello-overlay" | grep -q "Mode:  0755" || fail "$1: script mode"
	# merged /usr: the overlay's lib/ is the tree's /lib -> usr/lib, followed
	dbg "stat /lib" | grep -q "Type: symlink" || fail "$1: /lib is no longer merged /usr's link"
	[ "$(dbg "cat /usr/lib/systemd/system/demo.service" | head -1)" = "[Unit]" ] ||
		fail "$1: lib/ of the overlay did not land in /usr/lib"
	dbg "stat /etc/app/demo.service" | grep -q 'Fast link dest: "/lib/systemd/system/demo.service"' ||
		fail "$1: absolute symlink not copied as a link"
	dbg "stat /etc/app/current.conf" | grep -q 'Fast link dest: "app.conf"' ||
		fail "$1: relative symlink not copied"
	[ "$(dbg "cat /etc/vendor.conf")" = "overlay wins" ] || fail "$1: replace = true did not replace"
	dbg "stat /opt/app/conf/settings" | grep -qE "User: +1000 +Group: +1001 " ||
		fail "$1: owner = \"1000:1001\" not applied"
	dbg "stat /opt/app/conf" | grep -q "Mode:  0700" || fail "$1: directory mode not kept"
	dbg "stat /opt/app/conf" | grep -qE "User: +1000 +Group: +1001 " || fail "$1: new directory owner"
	dbg "stat /etc" | grep -qE "Mode:  0755" || fail "$1: an existing directory changed mode"
	[ "$(dbg "cat /hook-saw-overlay")" = "app=1" ] || fail "$1: the hook did not see the overlay"
	dbg "ls -l /" | grep -q mkimage-overlay && fail "$1: a temporary file is in the image"
	python3 - "$rep" <<'PY' || fail "$1: the report does not list the overlays"
import json, sys
r = json.load(open(sys.argv[1]))
o = r["overlays"]
assert len(o) == 3, o
assert o[0]["destination"] == "/" and o[0]["files"] == 5 and o[0]["links"] == 2, o[0]
assert o[0]["replaced"] == ["/etc/vendor.conf (vendor-conf)"], o[0]
assert len(o[0]["sha256"]) == 64
assert o[2]["destination"] == "/opt/app" and o[2]["files"] == 1 and o[2]["directories"] == 2, o[2]
PY
}

mkdir -p "$T/img" "$T/tmp"
TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/ov.ext4" "$R/ov.cfg"
check root "$T/img/ov.ext4" "$T/img/ov.report.json"
sum1=$(sha256sum <"$T/img/ov.ext4")
TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/ov.ext4" "$R/ov.cfg"
[ "$(sha256sum <"$T/img/ov.ext4")" = "$sum1" ] || fail "two builds with overlays differ"
note "root: overlays copied as root:root, modes and clamped times kept, same bytes twice"

# A change of the overlay's contents is a change of the recipe (its digest, hence the UUID).
d1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recipe_sha256"])' "$T/img/ov.report.json")
"$MKIMAGE" --check "$R/ov.cfg" >/dev/null || fail "--check refuses the recipe"
printf 'app=2\n' >"$R/overlay/etc/app/app.conf"
TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/ov2.ext4" "$R/ov.cfg"
d2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recipe_sha256"])' "$T/img/ov2.report.json")
[ "$d1" != "$d2" ] || fail "the recipe digest ignores the overlay's contents"
printf 'app=1\n' >"$R/overlay/etc/app/app.conf"
touch -d @4000000000 "$R/overlay/etc/app/app.conf"

# --- refusals: FILE:LINE, exit 2 (a clash with the packages' files before configuring) ------------------------------------------------------------
refuse() { # NAME OVERLAYS PATTERN
	recipe "$R/bad-$1.cfg" "$2"
	TMPDIR=$T/tmp expect_fail 2 "$3" "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/bad.ext4" \
		"$R/bad-$1.cfg"
	[ ! -e "$T/img/bad.ext4" ] || fail "$1: an image was written"
	note "refused: $1"
}
refuse missing '  { source = "nowhere"; destination = "/"; }' \
	"bad-missing.cfg:[0-9]+: overlay source 'nowhere' not found"
refuse notdir '  { source = "hooks/after.sh"; destination = "/"; }' "is not a directory"
refuse dotdot '  { source = "app"; destination = "/opt/../etc"; }' \
	"bad-dotdot.cfg:[0-9]+: an overlay needs 'destination', an absolute path of the image without '..'"
refuse relative '  { source = "app"; destination = "opt"; }' "absolute path of the image"
refuse owner '  { source = "app"; destination = "/opt/app"; owner = "root:root"; }' \
	"'owner' must be numeric \"UID:GID\""
refuse key '  { source = "app"; destination = "/"; replaces = true; }' "did you mean 'replace'"
mkdir -p "$R/escape/etc"
ln -s ../../../../etc/shadow "$R/escape/etc/shadow"
refuse escape '  { source = "escape"; destination = "/"; }' \
	"bad-escape.cfg:[0-9]+: overlay '.*/escape': the symlink 'etc/shadow' points outside the overlay"
mkdir -p "$R/fifo"
mkfifo "$R/fifo/pipe"
refuse fifo '  { source = "fifo"; destination = "/"; }' \
	"overlay '.*/fifo': 'pipe' is a FIFO: set 'devices = true'"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$R/dev/dev"
	mknod "$R/dev/dev/ttyX" c 4 70
	refuse device '  { source = "dev"; destination = "/"; }' \
		"'dev/ttyX' is a device node: set 'devices = true'"
else
	skip_part "not root: cannot make a device node for the refusal"
fi
mkdir -p "$R/clash/etc"
printf 'mine\n' >"$R/clash/etc/vendor.conf"
refuse package '  { source = "clash"; destination = "/"; }' \
	"bad-package.cfg:[0-9]+: overlay '.*/clash': 'etc/vendor.conf' would replace '/etc/vendor.conf' of package 'vendor-conf': set 'replace = true'"
grep -q "dpkg --configure -a:" "$T/err" && fail "package: refused only after configuring"
mkdir -p "$R/ondir/usr/share"
printf 'x\n' >"$R/ondir/usr/share/vendor"
refuse ondir '  { source = "ondir"; destination = "/"; }' \
	"'usr/share/vendor' would replace the directory '/usr/share/vendor' of the tree"
# Both are seen in the unpacked tree: said before the packages are configured, not after.
grep -q "dpkg --configure -a:" "$T/err" && fail "ondir: refused only after configuring"
refuse noparent '  { source = "app"; destination = "/nonexistent/app"; }' \
	"the directory holding '/nonexistent/app' does not exist in the tree"

# Allowed special files: a FIFO in the tree and a device node in the image (manifest only).
if [ "$(id -u)" = 0 ]; then
	recipe "$R/dev.cfg" '  { source = "dev"; destination = "/"; devices = true; },
  { source = "fifo"; destination = "/"; devices = true; }'
	TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/dev.ext4" "$R/dev.cfg"
	debugfs -R "stat /dev/ttyX" "$T/img/dev.ext4" 2>/dev/null | grep -q "Type: character special" ||
		fail "devices = true: the device node is not in the image"
	debugfs -R "stat /pipe" "$T/img/dev.ext4" 2>/dev/null | grep -q "Type: FIFO" ||
		fail "devices = true: the FIFO is not in the image"
	note "devices = true: device node and FIFO in the image"
fi

if [ "$(id -u)" = 0 ]; then
	test_user mki66user
	chmod 755 "$T"
	chmod -R a+rX "$T/keys"
	chown -R mki66user "$R" # the source's owner does not matter: the overlay's owner does
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mki66user "$T/u"
	TMPDIR=$T/u/tmp expect_ok as_user mki66user "$MKIMAGE" --cache-dir "$T/u/cache" \
		-o "$T/u/img/ov.ext4" "$R/ov.cfg"
	check user "$T/u/img/ov.ext4" "$T/u/img/ov.report.json"
	[ "$(sha256sum <"$T/u/img/ov.ext4")" = "$sum1" ] || fail "the ordinary user's image differs from root's"
	note "ordinary user: the same image as root's"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
