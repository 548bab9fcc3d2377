# A FIFO over /var/lib/dpkg/status does not hang the build (issue 30, rows H1 and H2): a preinst
# replaces the status file by a FIFO; dpkg then blocks opening it, with no script running, and
# the watchdog ends the step as stalled after script_timeout (exit 7), nothing left running.
# mkimage's own reads of such a file (the status check, copyright files, the image writer, the
# layer cache) refuse it without blocking: unit test 'beneath' (regular_never_blocks). As root
# and as an ordinary user with a subordinate range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"

fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
chmod 755 "$T"

cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
script_timeout = 5;
packages = { install = [ "hello:armel" ]; };
R
chmod 644 "$T/r.cfg"

# unpacked: hello "unpacked" again, so that mkimage runs its preinst.
unpacked() {
	sed -i '/^Package: hello$/,/^$/ s/^Status: install ok installed$/Status: install ok unpacked/' \
		"$T/tree/var/lib/dpkg/status"
}

nothing_left() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$T/tree" ] && fail "pid ${p#/proc/} ($(cat "$p/comm")) still runs in the tree"
	done
	true
}

# with_preinst BODY: hello's preinst (which mkimage runs itself before dpkg) becomes BODY.
with_preinst() {
	printf '#!/bin/sh\n%s\n' "$1" >"$T/tree/var/lib/dpkg/info/hello.preinst"
	chmod 755 "$T/tree/var/lib/dpkg/info/hello.preinst"
}

run_all() {
	local run=("$@") t0 t

	# A FIFO over the status file: dpkg blocks opening it, with no script running; the
	# watchdog sees the stall and the build ends, naming it, instead of waiting for ever.
	unpacked
	with_preinst 'cd /var/lib/dpkg && rm -f status && mkfifo status'
	t0=$(date +%s)
	expect_fail 7 "'dpkg --configure -a' stalled: for [0-9]+ s no process of it used CPU time.*past script_timeout \(5 s\)" \
		timeout 300 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	t=$(( $(date +%s) - t0 ))
	[ "$t" -le 120 ] || fail "the build ended $t s after dpkg blocked on the FIFO"
	[ -p "$T/tree/var/lib/dpkg/status" ] || fail "no FIFO over the status file: the test tests nothing"
	nothing_left
	note "dpkg blocked on a FIFO status file: build ended after $t s (script_timeout 5)"
}

fixture_tree arm "$T/tree"
expect_ok "$CONFIGURE" "$T/tree"
run_all "$CONFIGURE"

rm -rf "$T/tree"
fixture_tree arm "$T/tree"
test_user mkififo80
fixture_shift "$T/tree" mkififo80
expect_ok as_user mkififo80 "$CONFIGURE" "$T/tree"
run_all setpriv --reuid mkififo80 --regid mkififo80 --clear-groups env HOME=/nonexistent "$CONFIGURE"
