# test-cost: idle (mostly waits for stalled scripts and the bounds that end them)
# A stalled dpkg is seen (issue 30, row H2): a postinst SIGSTOPs dpkg and ends, so no script
# runs; the watchdog sees no CPU time used and no process started or ended in the step for
# script_timeout and ends the build with one error naming the stalled step, how long it stood
# still, the stopped process and the key to raise, well before the outer guard; nothing is left
# running. A dpkg that is merely slow between scripts is not stalled. As root and as an ordinary
# user with a subordinate range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
. "$(dirname "$0")/lib-bounds.sh"

run_all() {
	local run=("$@") t0 t

	recipe 5
	# the script stops dpkg and ends: dpkg never reaps it, no script runs any more
	with_postinst 'kill -STOP $PPID; exit 0'
	t0=$(date +%s)
	expect_fail 7 "'dpkg --configure -a' stalled: for [0-9]+ s no process of it used CPU time, started or ended while dpkg ran \([0-9]+ processes, [1-9][0-9]* of them stopped by a signal\), past script_timeout \(5 s\).*raise 'script_timeout'" \
		timeout 300 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	t=$(( $(date +%s) - t0 ))
	[ "$t" -le 120 ] || fail "the stopped dpkg was seen after $t s, not well before the 300 s guard"
	[ "$(grep -c 'stalled' "$T/err")" = 1 ] || fail "the stall is not said exactly once"
	grep -q 'ran longer than script_timeout' "$T/err" && fail "the ended script was timed as running"
	nothing_left
	note "stopped dpkg seen after $t s (script_timeout 5)"

	# a background process of the script stops dpkg; the script ends a moment later
	with_postinst '(kill -STOP $PPID) </dev/null >/dev/null 2>&1 & sleep 1; exit 0'
	expect_fail 7 "'dpkg --configure -a' stalled: .*stopped by a signal" \
		timeout 300 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
	nothing_left

	# busy but under the bound: scripts sleeping 3 s each are neither overdue nor a stall
	recipe 5
	with_postinst 'sleep 3'
	expect_ok timeout 300 "${run[@]}" --recipe "$T/r.cfg" "$T/tree"
}

fixture_tree arm "$T/tree"
expect_ok "$CONFIGURE" "$T/tree"
run_all "$CONFIGURE"

rm -rf "$T/tree"
fixture_tree arm "$T/tree"
test_user mkistall81
fixture_shift "$T/tree" mkistall81
expect_ok as_user mkistall81 "$CONFIGURE" "$T/tree"
run_all setpriv --reuid mkistall81 --regid mkistall81 --clear-groups env HOME=/nonexistent "$CONFIGURE"
