# test-cost: idle (mostly waits for stalled scripts and the bounds that end them)
# A hook that stops making progress is ended at the stall bound, not only at its own timeout
# (issue 30, deliverable 2 for hooks): a hook that SIGSTOPs itself, or sleeps with no CPU time
# used and no process started or ended, inside or outside the tree, is killed with everything it
# started once script_timeout (the bound on time without progress) has passed, long before its
# own 'timeout'; the error names the hook, how long it stood still and the key to raise. A hook
# that keeps starting processes (a loop of short sleeps) for longer than the bound passes. As
# root and as an ordinary user with a subordinate range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
. "$(dirname "$0")/lib-bounds.sh"

mkdir -p "$T/hooks"
printf '#!/bin/sh\necho stopping\nkill -STOP $$\n' >"$T/hooks/stops.sh"
printf '#!/bin/sh\necho sleeping\nsleep 8901 &\nsleep 8902\n' >"$T/hooks/sleeps.sh"
printf '#!/bin/sh\ni=0\nwhile [ $i -lt 9 ]; do sleep 1; i=$((i + 1)); done\n' >"$T/hooks/busy.sh"
chmod -R a+rX "$T/hooks"
chmod 755 "$T/hooks/"*.sh

# hook_recipe NAME SCRIPT WHERE: script_timeout 5, the hook's own timeout 60.
hook_recipe() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
script_timeout = 5;
packages = { install = [ "hello:armel" ]; };
hooks = ( { name = "$1"; script = "hooks/$2"; where = "$3"; timeout = 60; } );
R
	chmod 644 "$T/r.cfg"
}

# stalls WHO NAME SCRIPT WHERE STOPPED RUN...: the hook is ended as stalled, well before its
# timeout, STOPPED processes stopped by a signal, nothing of it left.
stalls() {
	local who=$1 name=$2 script=$3 where=$4 stopped=$5 t0 t
	shift 5
	hook_recipe "$name" "$script" "$where"
	t0=$(date +%s)
	expect_fail 7 "hook '$name' \($where, [^)]*r.cfg:[0-9]+\) stalled: for [0-9]+ s no process of it used CPU time, started or ended \([0-9]+ processes, $stopped of them stopped by a signal\), past script_timeout \(5 s\), the bound on time without progress; .*raise 'script_timeout' in the recipe" \
		timeout 400 "$@" --recipe "$T/r.cfg" "$T/tree"
	t=$(( $(date +%s) - t0 ))
	[ "$t" -lt 40 ] || fail "$who: hook '$name' ended after $t s, not at the stall bound (its timeout is 60 s)"
	[ "$(grep -c 'stalled' "$T/err")" = 1 ] || fail "$who: the stall is not said exactly once"
	grep -q 'did not finish within' "$T/err" && fail "$who: '$name' was ended by its timeout"
	pgrep -f 'sleep 890[12]' && fail "$who: processes of the stalled hook '$name' are still running"
	nothing_left
	note "$who: $where hook '$name' ($script) ended as stalled after $t s"
}

run_all() {
	local who=$1
	shift
	stalls "$who" stops stops.sh inside 1 "$@"
	stalls "$who" sleeps sleeps.sh inside 0 "$@"
	stalls "$who" sleeps-outside sleeps.sh outside 0 "$@"
	stalls "$who" stops-outside stops.sh outside 1 "$@"
	# progress (processes starting and ending) for longer than the bound is no stall
	hook_recipe busy busy.sh inside
	expect_ok timeout 400 "$@" --recipe "$T/r.cfg" "$T/tree"
	hook_recipe busy-outside busy.sh outside
	expect_ok timeout 400 "$@" --recipe "$T/r.cfg" "$T/tree"
}

fixture_tree arm "$T/tree"
expect_ok "$CONFIGURE" "$T/tree"
run_all root "$CONFIGURE"

rm -rf "$T/tree"
fixture_tree arm "$T/tree"
test_user mkistall89
fixture_shift "$T/tree" mkistall89
expect_ok as_user mkistall89 "$CONFIGURE" "$T/tree"
run_all user setpriv --reuid mkistall89 --regid mkistall89 --clear-groups env HOME=/nonexistent "$CONFIGURE"
