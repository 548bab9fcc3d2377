# Fixtures for whole-build tests where emulation is not the point (7x): a signed repository of the
# real amd64 packages of lib-hooks.sh's fixture set "x86" (dpkg, dash, coreutils... 27 packages,
# 12 MiB), plus any synthetic .debs the test adds, served on 127.0.0.1 by faultserver.py (every
# request logged in $SRVLOG). A build of it runs natively and takes a few seconds. fixture_repo
# serves another fixture set (e.g. "arm", for a build under QEMU) the same way.
# Source after lib.sh; sources lib-hooks.sh and faultlib.sh itself. Skips on a non-amd64 host.

. "$(dirname "${BASH_SOURCE[0]}")/lib-hooks.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"
[ "$(dpkg --print-architecture)" = amd64 ] || skip "needs an amd64 host"

# The packages every native recipe installs: enough for the target's dpkg to configure them.
NATIVE_BASE='"dpkg", "base-passwd", "base-files", "dash", "coreutils", "sed", "grep", "diffutils", "findutils", "debianutils", "libc-bin"'

# fixture_repo DIR SET ARCH...: link the .debs of lib-hooks.sh fixture set SET for ARCH... and
# "all" into DIR/pool/main (beside what the test built there with deb_build), index them for
# ARCH..., sign and serve DIR. Sets SERVER_URL, KEYRING, SRVLOG, RULES (server named after DIR).
fixture_repo() {
	local dir=$1 set=$2 a f
	shift 2
	mkdir -p "$dir/pool/main"
	for a in "$@" all; do
		for f in "$MKI_TEST_DEBS/$set/debs/"*_"$a".deb; do
			[ -e "$f" ] && ln -sf "$f" "$dir/pool/main/"
		done
	done
	[ -s "$T/keys/repo.gpg" ] || gpg_key repo
	KEYRING=$T/keys/repo.gpg
	repo_index "$dir" bookworm main "$@"
	repo_sign "$dir" bookworm
	fault_serve "$dir" "$(basename "$dir")"
}

# native_repo: fixture_repo $T/repo of the set "x86" for amd64 (fetched on first use).
native_repo() {
	fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed \
		grep hello:i386 libc6:i386 debianutils diffutils findutils
	fixture_repo "$T/repo" x86 amd64
}

# native_recipe FILE NAME EXTRA-PACKAGES [HOOKS]: a recipe for $SERVER_URL installing the base set
# plus EXTRA-PACKAGES (a quoted, comma-led list such as ', "slow-test"', or ""), with the hooks
# list HOOKS (libconfig groups, paths relative to FILE's directory); for amd64, or RECIPE_ARCH.
native_recipe() {
	cat >"$1" <<R
name = "$2";
architecture = "${RECIPE_ARCH:-amd64}";
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

# processes_under DIR: "PID:COMM:EXE" of every process whose root or working directory is under
# DIR (a command of the sandbox, whose root is a staging tree DIR/*/root after pivot_root - it is
# recognised by that directory's device and inode, as its path is not visible from here - or a
# host process working in there: sh, sleep, qemu, whatever its name; other builds on the machine
# are not looked at).
processes_under() {
	local p link roots id
	roots=" $(find "$1" -mindepth 2 -maxdepth 2 -name root -type d -exec stat -c '%d:%i' {} + 2>/dev/null | tr '\n' ' ') "
	for p in /proc/[0-9]*; do
		id=$(stat -L -c '%d:%i' "$p/root" 2>/dev/null) || id=
		case "$roots" in
		*" ${id:-none} "*)
			echo "${p#/proc/}:$(cat "$p/comm" 2>/dev/null):$(basename "$(readlink "$p/exe" 2>/dev/null)")"
			continue ;;
		esac
		for link in root cwd; do
			case "$(readlink "$p/$link" 2>/dev/null)" in
			"$1"/*)
				echo "${p#/proc/}:$(cat "$p/comm" 2>/dev/null):$(basename "$(readlink "$p/exe" 2>/dev/null)")"
				break ;;
			esac
		done
	done
}

# no_process_under DIR WHAT: fail if processes_under DIR finds any.
no_process_under() {
	local left
	left=$(processes_under "$1" | tr '\n' ' ')
	[ -z "$left" ] || fail "$2: processes still running in $1: $left"
}

# verify_cache DIR: every object in the cache has the checksum it is named by; prints the count.
verify_cache() {
	local f n=0
	while read -r f; do
		[ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] ||
			fail "unverified object in the cache: $f"
		n=$((n + 1))
	done < <(find "$1/objects" -type f 2>/dev/null)
	echo $n
}
