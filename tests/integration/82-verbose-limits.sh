# test-cost: idle (six emulated configurations of arm-board without kernel; sleeping scripts)
# -v does not change limits (issue 30, the -v finding): with native tools and -v, mkimage-exec's
# exec profile waits for each program as its parent; the watchdog used to take the real dpkg for
# "a maintainer script started by dpkg" and timed the whole 'dpkg --configure -a' against
# script_timeout. Now a script_timeout just above the slowest script passes with and without -v,
# and a script over it fails both ways, naming it. As root and as an ordinary user with a
# subordinate range (the exec profile and the watchdog run in its user namespace).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
. "$(dirname "$0")/lib-e2e.sh"
e2e_serve arm-board
flagship_lean arm-board "$T/r"
TIMEOUT=14
# slow_pkg NAME VERSION SECONDS: a postinst that takes SECONDS (a sleep: no CPU, so the dpkg
# around it is what -v used to time); prints the .deb quoted for the recipe's local list.
slow_pkg() {
	local d
	d=$(deb_new "$1" "$2" all)
	deb_file "$d" DEBIAN/postinst "#!/bin/sh
[ \"\$1\" = configure ] || exit 0
sleep $3
" 0755
	printf '"%s"' "$(deb_build "$d" "$T/debs-$1-$2")"
}
# Two scripts just under the bound: the configuration takes longer than script_timeout whatever
# the machine's speed, while each script stays under it.
pass="$(slow_pkg mki82-slow 1.0 $((TIMEOUT - 7))), $(slow_pkg mki82-slower 1.0 $((TIMEOUT - 7)))"
over=$(slow_pkg mki82-slow 2.0 $((TIMEOUT + 15)))
cfg=$T/r/recipes/arm-board.cfg
sed -i -e "s/^script_timeout = .*/script_timeout = $TIMEOUT;/" \
	-e "s|^\( *\)install = \[|\1local = [ @DEB@ ];\n\1install = [|" "$cfg"
grep -q "^script_timeout = $TIMEOUT;" "$cfg" && grep -q @DEB@ "$cfg" || fail "could not edit the recipe"

# build DEB [-v]: as root, or as $USER82 with its own TMPDIR, cache and output under $U.
build() {
	local dir=$T
	[ -z "${USER82:-}" ] || dir=$U
	sed "s|@DEB@|$1|" "$cfg" >"$T/r/recipes/t.cfg"
	${USER82:+as_user "$USER82"} env TMPDIR="$dir/tmp" timeout 900 "$MKIMAGE" ${2:+"$2"} \
		--no-layer-cache --cache-dir "$dir/cache" --source "$SRC" --until configure \
		--output "$dir/x.ext4" "$T/r/recipes/t.cfg"
	local rc=$?
	[ -z "$(ls -A "$dir/tmp")" ] || fail "a build left its work directory: $(ls -A "$dir/tmp")"
	return $rc
}

# run_all WHO FLAGS...: the passing and the overdue script, with each of FLAGS ("" for none).
run_all() {
	local who=$1 v c
	shift
	for v in "$@"; do
		expect_ok build "$pass" "$v"
		if [ -n "$v" ]; then
			grep -Eq "exec profile: [0-9]+ programs started by the scripts" "$T/err" ||
				fail "$who: -v printed no exec profile: the profiled path was not taken"
		fi
		c=$(sed -En 's/.*dpkg --configure -a: ([0-9.]+) s.*/\1/p' "$T/err")
		awk -v c="$c" -v l="$TIMEOUT" 'BEGIN { exit !(c > l) }' ||
			fail "$who: dpkg --configure -a took $c s, not more than script_timeout: the test tests nothing"
		note "$who, ${v:-no -v}: a $((TIMEOUT - 7)) s postinst passes under script_timeout $TIMEOUT; dpkg --configure -a took $c s"
		expect_fail 7 "the postinst script of package 'mki82-slow' ran longer than script_timeout \($TIMEOUT s\)" \
			build "$over" "$v"
	done
}

mkdir -p "$T/tmp"
run_all root "" -v
if [ "$(id -u)" = 0 ]; then
	test_user mki82user
	U=$T/u
	mkdir -p "$U/tmp" "$U/cache"
	chown -R mki82user "$U"
	chmod -R a+rX "$T/r" "$T"/debs-*
	chmod 755 "$T"
	USER82=mki82user
	# -v is what differs in the user namespace (the exec profile, the watchdog); the plain
	# build's limits are the same code as root's.
	run_all user -v
else
	skip_part "not root: the ordinary user's builds need a throwaway user"
fi
