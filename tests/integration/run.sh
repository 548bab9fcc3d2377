#!/bin/bash
# Run every tests/integration/NN-*.sh (or those named on the command line); the last line is the
# summary CI reads. A test passes when it exits 0 and is skipped when it exits 77 (lib.sh's skip,
# which says why); its output is shown only when it fails. Parts of a test skipped with
# skip_part are listed under its "ok" line, so a pass never hides what did not run. Before the
# summary, the ten slowest tests with their wall and CPU seconds.
#
#   run.sh [-j N] [TEST...]
#
# -j N (default $MKIMAGE_TEST_JOBS, else 1) runs N tests at once: most tests keep one core busy
# at most (a QEMU-emulated configure, a boot under TCG), so two lanes nearly halve the suite on a
# two-core machine. Tests are independent by construction (own temporary directory, own ports,
# own throwaway user names, own process patterns; the shared fixture caches are built under a
# lock), and those marked "# test-cost: slow" start first so the long ones do not end the run
# alone. A test marked "# test-cost: alone" starts before them and runs with no other test beside
# it: the boots of emulated four-core boards (130, 132 in make check-boots), whose guests stall
# in soft lockups when other work starves their vCPU threads. A test marked "# test-cost: idle"
# mostly waits (a stalled script, a timeout running out): one such test at a time runs in a lane
# of its own beside the N, and the N lanes take them too once nothing else is left. Results are printed as tests end,
# each with its wall time and its CPU time (user + system of everything it waited for: a test
# far below its wall time mostly waits); the summary is the same either way.
set -u
cd "$(dirname "$0")"
jobs=${MKIMAGE_TEST_JOBS:-1}
if [ "${1:-}" = -j ]; then
	jobs=$2
	shift 2
elif [[ "${1:-}" == -j?* ]]; then
	jobs=${1#-j}
	shift
fi
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -j needs a positive number, not '$jobs'" >&2; exit 2; }
pass=0 failed=0 skipped=0 failures=""
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=([0-9][0-9]-*.sh [0-9][0-9][0-9]-*.sh)
# cost TEST: its "# test-cost:" mark (alone, slow, idle), or nothing.
cost() { sed -n '1,3s/^# test-cost: \([a-z]*\).*/\1/p' "$1" 2>/dev/null | head -n 1; }
# The queue of the N lanes: the tests that run alone first, then the slow ones (their order
# among themselves kept), then the rest in name order; the idle ones in a queue of their own.
declare -a idle=()
mapfile -t tests < <(for t in "${tests[@]}"; do
	case $(cost "$t") in
	alone) echo "0 $t" ;;
	slow) echo "1 $t" ;;
	idle) echo "3 $t" ;;
	*) echo "2 $t" ;;
	esac
done | sort -s -k1,1 | cut -d' ' -f2-)
while [ ${#tests[@]} -gt 0 ] && [ "$(cost "${tests[-1]}")" = idle ]; do
	idle=("${tests[-1]}" "${idle[@]}")
	unset 'tests[-1]'
done
# alone TEST: whether TEST must have the machine to itself ("# test-cost: alone"): a boot of an
# emulated multi-core board, whose guest hangs when its vCPU threads are starved.
alone() { [ "$(cost "$1")" = alone ]; }
out_dir=$(mktemp -d "${TMPDIR:-/tmp}/mkimage-run.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$out_dir"' EXIT
trap 'exit 130' INT TERM

# start TEST [LANE]: run it in the background, its output, exit status, wall and CPU time into
# $out_dir. `times` runs in the subshell itself: a forked one would count nothing.
start() {
	local t=$1
	lane[${2:-work}]=$((${lane[${2:-work}]:-0} + 1))
	(
		s=$(date +%s)
		rc=0
		bash "$t" >"$out_dir/$t.out" 2>&1 </dev/null || rc=$?
		times >"$out_dir/$t.times"
		echo "$rc $(($(date +%s) - s)) $(cpu_seconds "$out_dir/$t.times")" >"$out_dir/$t.rc"
	) &
	running[$!]=$t
	in_lane[$!]=${2:-work}
}

# cpu_seconds FILE: the children's user + system time in the output of `times`, whole seconds.
cpu_seconds() {
	sed -n 2p "$1" | awk '{ for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
		printf "%d", t + 0.5 }'
}

# report TEST: print its result line (and its output's tail when it failed) and count it.
report() {
	local t=$1 rc took cpu
	read -r rc took cpu <"$out_dir/$t.rc"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   $t (${took}s, cpu ${cpu}s)"
		grep '^SKIP-PART: ' "$out_dir/$t.out" | sed 's/^SKIP-PART: [^:]*: /     part skipped: /' || true
	elif [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
		echo "skip $t: $(grep '^SKIP: ' "$out_dir/$t.out" | tail -n 1 | sed 's/^SKIP: [^:]*: //')"
	else
		failed=$((failed + 1))
		failures="$failures $t"
		echo "FAIL $t (${took}s, cpu ${cpu}s)"
		tail -n 40 "$out_dir/$t.out" | sed 's/^/     /'
	fi
}

declare -A running=() in_lane=() lane=([work]=0 [idle]=0)
next=0 nidle=0 solo=
while [ "$next" -lt ${#tests[@]} ] || [ "$nidle" -lt ${#idle[@]} ] || [ ${#running[@]} -gt 0 ]; do
	while [ "${lane[work]}" -lt "$jobs" ] && [ "$next" -lt ${#tests[@]} ] && [ -z "$solo" ]; do
		if alone "${tests[$next]}"; then
			[ ${#running[@]} = 0 ] || break
			solo=1
		fi
		start "${tests[$next]}"
		next=$((next + 1))
	done
	# the idle lane, once no test waits to run alone; the work lanes once their queue is done
	if [ -z "$solo" ] && { [ "$next" -ge ${#tests[@]} ] || ! alone "${tests[$next]}"; }; then
		if [ "${lane[idle]}" = 0 ] && [ "$nidle" -lt ${#idle[@]} ]; then
			start "${idle[$nidle]}" idle
			nidle=$((nidle + 1))
		fi
		while [ "$next" -ge ${#tests[@]} ] && [ "${lane[work]}" -lt "$jobs" ] &&
			[ "$nidle" -lt ${#idle[@]} ]; do
			start "${idle[$nidle]}"
			nidle=$((nidle + 1))
		done
	fi
	done_pid=
	wait -n -p done_pid "${!running[@]}" || true
	[ -n "$done_pid" ] || continue
	report "${running[$done_pid]}"
	lane[${in_lane[$done_pid]}]=$((${lane[${in_lane[$done_pid]}]} - 1))
	unset "running[$done_pid]" "in_lane[$done_pid]"
	solo=
done
# The ten slowest, where the suite's minutes go (tests/README.md, "End to end").
if [ ${#tests[@]} -gt 1 ]; then
	echo "slowest:"
	for t in "${tests[@]}"; do
		[ -f "$out_dir/$t.rc" ] && read -r _ took cpu <"$out_dir/$t.rc" && echo "$took $cpu $t"
	done | sort -rn | head -n 10 | awk '{ printf "  %5ss  cpu %4ss  %s\n", $1, $2, $3 }'
fi
[ -z "$failures" ] || echo "failed:$failures"
echo "integration: $pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
