# Fixtures for whole-build tests where emulation is not the point (7x): a signed repository of the
# real amd64 packages of lib-hooks.sh's fixture set "x86" (dpkg, dash, coreutils... 27 packages,
# 12 MiB), plus any synthetic .debs the test adds, served on 127.0.0.1 by faultserver.py (every
# request logged in $SRVLOG). A build of it runs natively and takes a few seconds.
# Source after lib.sh; sources lib-hooks.sh and faultlib.sh itself. Skips on a non-amd64 host.

. "$(dirname "${BASH_SOURCE[0]}")/lib-hooks.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"
[ "$(dpkg --print-architecture)" = amd64 ] || { note "needs an amd64 host; skipped"; exit 0; }

# The packages every native recipe installs: enough for the target's dpkg to configure them.
NATIVE_BASE='"dpkg", "base-passwd", "base-files", "dash", "coreutils", "sed", "grep", "diffutils", "findutils", "debianutils", "libc-bin"'

# native_repo: index $T/repo/pool (the fixture's amd64 and all .debs are linked in, beside what the
# test built there with deb_build), sign it and serve it. Sets SERVER_URL, KEYRING, SRVLOG, RULES.
native_repo() {
	local f
	fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed \
		grep hello:i386 libc6:i386 debianutils diffutils findutils
	mkdir -p "$T/repo/pool/main"
	for f in "$MKI_TEST_DEBS"/x86/debs/*_amd64.deb "$MKI_TEST_DEBS"/x86/debs/*_all.deb; do
		[ -e "$f" ] && ln -sf "$f" "$T/repo/pool/main/"
	done
	gpg_key repo
	repo_index "$T/repo" bookworm main amd64
	repo_sign "$T/repo" bookworm
	fault_serve "$T/repo"
}

# native_recipe FILE NAME EXTRA-PACKAGES [HOOKS]: an amd64 recipe installing the base set plus
# EXTRA-PACKAGES (a quoted, comma-led list such as ', "slow-test"', or ""), with the hooks list
# HOOKS (libconfig groups, paths relative to FILE's directory).
native_recipe() {
	cat >"$1" <<R
name = "$2";
architecture = "amd64";
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; } );
packages = { base = "none"; install = [ $NATIVE_BASE $3 ]; };
hooks = ( ${4:-} );
R
}

# no_process PATTERN WHAT: fail if a process whose command line matches PATTERN is running.
no_process() {
	local left
	left=$(pgrep -af -- "$1" | grep -v pgrep || true)
	[ -z "$left" ] || fail "$2: still running: $left"
}

# verify_cache DIR: every object in the cache has the checksum it is named by; prints the count.
verify_cache() {
	local f n=0
	for f in $(find "$1/objects" -type f 2>/dev/null); do
		[ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] ||
			fail "unverified object in the cache: $f"
		n=$((n + 1))
	done
	echo $n
}
