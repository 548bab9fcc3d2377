# Native tools (builder/configure/accel.h) are exact: the arm-board image built with the host-arch twins
# of the plan's shell, coreutils, perl, dpkg ... running natively is byte-identical to the one
# built with every target program emulated (--no-native-tools), and leaves no trace in the tree.
# dpkg's programs run natively as twins made to name the target's architecture
# (configure/accel_retarget.c): its database, diversions, alternatives and triggers come out the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"
e2e_serve arm-board
export SOURCE_DATE_EPOCH=1700000000
# The recipe without kernel and systemd (flagship.sh): an initramfs made with every program
# emulated alone takes many minutes.
flagship_lean arm-board "$T/r"
# ... plus a package whose postinst archives a tree with cpio and runs depmod on a module
# directory, as mkinitramfs does: both run natively (the initramfs chain) with the same result;
# and parses options with util-linux's getopt and logs with logger, as many postinsts do.
d=$(deb_new mki65-initramfs 1.0 all "Depends: cpio, kmod")
deb_file "$d" usr/share/mki65/tree/a "alpha"
deb_file "$d" usr/share/mki65/tree/sub/b "beta" 0755
deb_file "$d" usr/lib/modules/0.0-mki65/modules.order ""
deb_file "$d" usr/lib/modules/0.0-mki65/modules.builtin "kernel/fs/ext4/ext4.ko
"
deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
[ "$1" = configure ] || exit 0
cd /usr/share/mki65/tree
find . | LC_ALL=C sort | cpio --quiet --reproducible -R 0:0 -o -H newc >/usr/share/mki65/tree.cpio
depmod 0.0-mki65
getopt -o ab:c:: -l alpha,beta:,gamma:: -n mki65 -- -a -bB --gamma=G x "y z" >/usr/share/mki65/getopt
getopt -T >>/usr/share/mki65/getopt || echo "getopt -T: $?" >>/usr/share/mki65/getopt
logger -t mki65 configured 2>/usr/share/mki65/logger || echo "logger: $?" >>/usr/share/mki65/logger
' 0755
fixture=$(deb_build "$d" "$T/debs")
# ... and one whose postinst asks and changes dpkg's database with every program of dpkg's that
# scripts use, each answer depending on which architecture dpkg takes as its own: armhf the
# native one, armel foreign.
d=$(deb_new mki65-dpkg 1.0 all "Pre-Depends: passwd")
deb_file "$d" usr/share/mki65-dpkg/alt1 "one"
deb_file "$d" usr/share/mki65-dpkg/alt2 "two"
# Its preinst makes a system user with a full name, as mariadb-server's does through adduser
# (useradd, then chfn): chfn needs the PAM configuration libpam-runtime's postinst writes, so the
# preinsts of packages outside the essential set run after it is configured (mkimage(7), "The
# essential set first").
deb_file "$d" DEBIAN/preinst '#!/bin/sh
set -e
getent passwd mki65 >/dev/null ||
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mki65
chfn -f "mki65 user" mki65
' 0755
deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
[ "$1" = configure ] || exit 0
o=/usr/share/mki65-dpkg/answers
mkdir -p $o
dpkg --print-architecture >$o/arch
dpkg --print-foreign-architectures >$o/foreign
dpkg --version | head -n 1 >$o/version
dpkg-query --version | head -n 1 >>$o/version
dpkg-query -W -f "\${binary:Package} \${Architecture} \${Status}\n" >$o/query
dpkg-query -W "libc6:*" >$o/libc6
dpkg -S /usr/share/mki65-dpkg/alt1 >$o/search
dpkg-divert --package mki65-dpkg --divert /usr/share/mki65-dpkg/diverted.real --add /usr/share/mki65-dpkg/diverted
dpkg-divert --list "*mki65*" >$o/diversions
update-alternatives --install /usr/bin/mki65-alt mki65-alt /usr/share/mki65-dpkg/alt1 10
update-alternatives --install /usr/bin/mki65-alt mki65-alt /usr/share/mki65-dpkg/alt2 20
update-alternatives --query mki65-alt >$o/alternatives
dpkg-statoverride --add root root 0640 /usr/share/mki65-dpkg/alt1
dpkg-statoverride --list >$o/statoverride
dpkg-trigger --no-await /usr/share/mki65-dpkg
' 0755
dpkg_fixture=$(deb_build "$d" "$T/debs")
sed -i -e "s|^\( *\)install = \[|\1local = [ \"$fixture\", \"$dpkg_fixture\" ];\n\1install = [ \"cpio\", \"kmod\",|" \
	"$T/r/recipes/arm-board.cfg"
grep -q mki65-dpkg "$T/r/recipes/arm-board.cfg" || fail "could not add the fixtures to the recipe"

expect_ok "$MKIMAGE" -v --cache-dir "$T/cache" --source "$SRC" --output "$T/native.ext4" \
	"$T/r/recipes/arm-board.cfg"
grep -Eq "native tools: [0-9]+ target programs run as their host-architecture build" "$T/err" ||
	{ grep "native tools" "$T/err" >&2; fail "no program ran natively"; }
n=$(sed -En 's/.*native tools: ([0-9]+) target programs.*/\1/p' "$T/err")
[ "$n" -ge 50 ] || fail "only $n programs ran natively"
# -v: the exec profile, with the initramfs chain native.
grep -Eq "exec profile: [0-9]+ programs started by the scripts \([0-9]+ native\)" "$T/err" ||
	fail "-v printed no exec profile"
for p in cpio depmod getopt logger dpkg dpkg-query dpkg-divert update-alternatives dpkg-statoverride dpkg-trigger; do
	grep -Eq "^mkimage: (info|debug):   \| +[0-9]+ +[0-9.]+ +[0-9.]+  native +/(usr/)?s?bin/$p\$" "$T/err" ||
		{ grep -A200 "exec profile" "$T/err" >&2; fail "'$p' did not run natively"; }
done
grep -Eq "native tools: .*; dpkg's 6 as armhf\)" "$T/err" ||
	{ grep "native tools" "$T/err" >&2; fail "dpkg's programs were not made to name armhf"; }
answers() {
	for f in arch foreign version query libc6 search diversions alternatives statoverride; do
		echo "== $f"
		debugfs -R "cat /usr/share/mki65-dpkg/answers/$f" "$1" 2>/dev/null
	done
	for f in status diversions alternatives/mki65-alt triggers/Unincorp; do
		echo "== /var/lib/dpkg/$f"
		debugfs -R "cat /var/lib/dpkg/$f" "$1" 2>/dev/null
	done
}
answers "$T/native.ext4" >"$T/native.answers"
grep -qx armhf <(sed -n '/^== arch$/{n;p}' "$T/native.answers") &&
	grep -qx armel <(sed -n '/^== foreign$/{n;p}' "$T/native.answers") &&
	grep -q "^Debian 'dpkg' package management program version .* (armhf)\.$" "$T/native.answers" &&
	grep -q "^libc6:armel	" "$T/native.answers" && grep -q "^libc6:armhf	" "$T/native.answers" &&
	grep -q "^dash armhf install ok installed$" "$T/native.answers" &&
	grep -q "^hello:armel armel install ok " "$T/native.answers" &&
	grep -q "^mki65-dpkg: /usr/share/mki65-dpkg/alt1$" "$T/native.answers" &&
	grep -q "^Value: /usr/share/mki65-dpkg/alt2$" "$T/native.answers" &&
	grep -q "^mki65:x:[0-9]*:[0-9]*:mki65 user" <(debugfs -R "cat /etc/passwd" "$T/native.ext4" 2>/dev/null) ||
	{ cat "$T/native.answers" >&2; fail "dpkg's programs answered wrongly in the native build"; }
debugfs -R "cat /usr/share/mki65/tree.cpio" "$T/native.ext4" 2>/dev/null >"$T/tree.cpio"
head -c 6 "$T/tree.cpio" | grep -q 070701 && grep -aq "sub/b" "$T/tree.cpio" &&
	grep -aq 'TRAILER!!!' "$T/tree.cpio" || fail "the fixture's postinst made no newc archive"
debugfs -R "cat /usr/share/mki65/getopt" "$T/native.ext4" 2>/dev/null | tr '\n' '|' |
	grep -qx " -a -b 'B' --gamma 'G' -- 'x' 'y z'|getopt -T: 4|" ||
	fail "getopt answered wrongly: $(debugfs -R "cat /usr/share/mki65/getopt" "$T/native.ext4" 2>/dev/null)"
debugfs -R "stat /usr/lib/modules/0.0-mki65/modules.dep.bin" "$T/native.ext4" 2>&1 |
	grep -q "Type: regular" || fail "depmod wrote no modules.dep.bin"
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debugfs -R "stat /usr/lib/$triplet" "$T/native.ext4" 2>&1 | grep -q "File not found" ||
	fail "the native tools' mount point is left in the image"
[ ! -e "$T/native.ext4.tmp" ] || fail "temporary image left"

expect_ok "$MKIMAGE" -v --no-native-tools --cache-dir "$T/cache" --source "$SRC" \
	--output "$T/emulated.ext4" "$T/r/recipes/arm-board.cfg"
grep -q "native tools" "$T/err" && fail "--no-native-tools still set up native tools"
answers "$T/emulated.ext4" >"$T/emulated.answers"
diff -u "$T/emulated.answers" "$T/native.answers" >&2 ||
	fail "dpkg's answers or database differ between the emulated and the native build"
a=$(sha256sum <"$T/native.ext4") b=$(sha256sum <"$T/emulated.ext4")
[ "$a" = "$b" ] || fail "native tools changed the image: $a vs $b"

# 145 runs the comparison above on trixie (dpkg 1.22); what follows does not depend on the release.
[ "$FLAGSHIP_SUITE" = bookworm ] || exit 0

# The dispatcher linked with glibc instead of musl (the Makefile's EXEC_CC; musl only starts
# faster): the same image. mkimage finds mkimage-exec beside itself.
glibc_exec=$TOP/build/glibc/mkimage-exec
[ -x "$glibc_exec" ] || fail "no glibc-linked mkimage-exec: run 'make tools'"
mkdir "$T/glibc"
cp "$MKIMAGE" "$glibc_exec" "$T/glibc/"
if cmp -s "$glibc_exec" "$TOP/mkimage-exec"; then
	echo "note: mkimage-exec is linked with glibc too (no musl-gcc): both builds use glibc" >&2
fi
expect_ok "$T/glibc/${MKIMAGE##*/}" -v --cache-dir "$T/cache" --source "$SRC" --no-layer-cache \
	--output "$T/glibc.ext4" "$T/r/recipes/arm-board.cfg"
grep -Eq "exec profile: [0-9]+ programs started by the scripts \([1-9][0-9]* native\)" "$T/err" ||
	fail "the glibc-linked dispatcher ran nothing natively"
c=$(sha256sum <"$T/glibc.ext4")
[ "$a" = "$c" ] || fail "the dispatcher's libc changed the image: $a (musl) vs $c (glibc)"

# Offline, the twins come from the cache like everything else; a cache filled without them (an
# older mkimage, or --no-native-tools) still builds offline, with everything emulated. (Without the
# layer cache, which would restore the first build's configured tree instead of configuring.)
expect_ok "$MKIMAGE" --offline --no-layer-cache --cache-dir "$T/cache" --source "$SRC" --until configure \
	--output "$T/x.ext4" "$T/r/recipes/arm-board.cfg"
grep -Eq "native tools: [0-9]+ target programs run" "$T/err" ||
	{ cat "$T/err" >&2; fail "offline: the cached twins were not used"; }
expect_ok "$MKIMAGE" --no-native-tools --cache-dir "$T/cache2" --source "$SRC" --until fetch \
	--output "$T/x.ext4" "$T/r/recipes/arm-board.cfg"
expect_ok "$MKIMAGE" --offline --cache-dir "$T/cache2" --source "$SRC" --until fetch \
	--output "$T/x.ext4" "$T/r/recipes/arm-board.cfg"
grep -q "offline: no host-architecture index in the cache for native tools" "$T/err" ||
	{ cat "$T/err" >&2; fail "offline without the host-arch index: no word about native tools"; }
