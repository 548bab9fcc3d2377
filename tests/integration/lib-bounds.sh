# The fixture of the script-bound tests (59, 81): a configured armhf + armel tree of a few
# packages, hello:armel's postinst the script under test. Sourced after lib.sh and lib-hooks.sh.
fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
chmod 755 "$T"

# recipe SCRIPT_TIMEOUT: a recipe with only that key set (the tree gives the package set).
recipe() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
script_timeout = $1;
packages = { install = [ "hello:armel" ]; };
R
	chmod 644 "$T/r.cfg"
}

# with_postinst BODY: hello's postinst becomes BODY and hello "unpacked" again.
with_postinst() {
	sed -i '/^Package: hello$/,/^$/ s/^Status: install ok installed$/Status: install ok unpacked/' \
		"$T/tree/var/lib/dpkg/status"
	printf '#!/bin/sh\n%s\n' "$1" >"$T/tree/var/lib/dpkg/info/hello.postinst"
	chmod 755 "$T/tree/var/lib/dpkg/info/hello.postinst"
}

# nothing_left: no process runs with its root in the tree.
nothing_left() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$T/tree" ] && fail "pid ${p#/proc/} ($(cat "$p/comm")) still runs in the tree"
	done
	true
}
