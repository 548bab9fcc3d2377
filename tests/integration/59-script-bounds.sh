# test-cost: idle (mostly waits for stalled scripts and the bounds that end them)
# Bounds on maintainer scripts (issue 13 item 6, rows R1 R2): a postinst that hangs is killed at
# the recipe's script_timeout, naming the package and the script, also when it exec'd another
# program (its name gone from its arguments); a fork bomb stops at
# --limit processes with one message and its count, nothing left running; a postinst filling the
# disk stops at --limit staging-size. As root and as an unprivileged user with a subordinate range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
. "$(dirname "$0")/lib-bounds.sh"

run_all() {
	local run=("$@") t0 t

	recipe 5
	with_postinst 'echo started; sleep infinity'
	t0=$(date +%s)
	expect_fail 7 "the postinst script of package 'hello' ran longer than script_timeout \(5 s\)" \
		timeout 120 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	t=$(( $(date +%s) - t0 ))
	[ "$t" -le 20 ] || fail "the hanging postinst was killed after $t s, not about 5"
	[ "$(grep -c 'script_timeout' "$T/err")" = 1 ] || fail "the timeout is not said exactly once"
	nothing_left
	note "hanging postinst killed after $t s (script_timeout 5)"

	# a script that becomes another program is still the script dpkg started: by its
	# environment it is named, without it it is still timed
	with_postinst 'echo started; exec sleep infinity'
	expect_fail 7 "the postinst script of package 'hello' ran longer than script_timeout \(5 s\)" \
		timeout 120 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	nothing_left
	with_postinst 'exec env -i sleep infinity'
	expect_fail 7 "a maintainer script started by dpkg \(its arguments and environment no longer say which\) ran longer than script_timeout \(5 s\)" \
		timeout 120 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	nothing_left
	# the same in a `preinst install` mkimage runs itself (the step's command is the script)
	with_postinst 'exit 0'
	printf '#!/bin/sh\nexec sleep infinity\n' >"$T/tree/var/lib/dpkg/info/hello.preinst"
	chmod 755 "$T/tree/var/lib/dpkg/info/hello.preinst"
	expect_fail 7 "the preinst script of package 'hello' ran longer than script_timeout \(5 s\)" \
		timeout 120 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	rm "$T/tree/var/lib/dpkg/info/hello.preinst"
	nothing_left

	recipe 10
	with_postinst 'sleep 3'
	expect_ok timeout 120 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"

	recipe 600
	with_postinst 'i=0; while [ $i -lt 4000 ]; do sleep 300 & i=$((i+1)); done; wait'
	# Debian 12's qemu-user (7.2) can abort under this many forks on its own TCG assertion
	# ("cpu_exec: assertion failed: (cpu == current_cpu)") before the limit is reached: the
	# emulator's crash, not the build's. The bomb then runs once more; a second crash fails.
	bomb() { timeout 300 "${run[@]}" --recipe "$T/r.cfg" --limit processes=150 "$T/tree"; }
	rc=0
	bomb >"$T/out" 2>"$T/err" || rc=$?
	if grep -q 'cpu_exec: assertion failed' "$T/err"; then
		note "qemu-user aborted on its own TCG assertion (a QEMU bug); the bomb runs again"
		nothing_left
		rc=0
		bomb >"$T/out" 2>"$T/err" || rc=$?
	fi
	[ "$rc" = 7 ] || { cat "$T/err" >&2; fail "the process bomb exited $rc, expected 7"; }
	grep -Eq "'dpkg --configure -a' \(the postinst of package 'hello'\) reached the process limit: [0-9]+ processes were running.*limit 'processes' is 150; raise it with --limit processes=" "$T/err" ||
		{ cat "$T/err" >&2; fail "the process limit is not reported as it should be"; }
	[ "$(grep -c 'process limit' "$T/err")" = 1 ] || fail "the process limit is not said exactly once"
	grep -q 'left .* running' "$T/err" && fail "the leftover warning repeats the bomb's processes"
	nothing_left
	note "$(grep -o '[0-9]* processes were running' "$T/err")"

	local kib
	kib=$(du -sk "$T/tree" | cut -f1)
	with_postinst 'dd if=/dev/zero of=/var/fill bs=1M count=1024 2>/dev/null; echo still here'
	expect_fail 7 "made the staging tree larger than its limit: .*limit 'staging-size' is" \
		timeout 300 "${run[@]}" --recipe "$T/r.cfg" --limit staging-size=$(( kib + 65536 ))K "$T/tree"
	rm -f "$T/tree/var/fill"
	nothing_left
}

fixture_tree arm "$T/tree"
expect_ok "$CONFIGURE" "$T/tree"
run_all "$CONFIGURE"

rm -rf "$T/tree"
fixture_tree arm "$T/tree"
test_user mkibounds59
fixture_shift "$T/tree" mkibounds59
expect_ok as_user mkibounds59 "$CONFIGURE" "$T/tree"
run_all setpriv --reuid mkibounds59 --regid mkibounds59 --clear-groups env HOME=/nonexistent "$CONFIGURE"
