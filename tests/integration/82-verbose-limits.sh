# test-cost: slow (four emulated configurations of the arm-board recipe without kernel)
# -v does not change limits (issue 30, the -v finding): with native tools and -v, mkimage-exec's
# exec profile waits for each program as its parent; the watchdog used to take the real dpkg for
# "a maintainer script started by dpkg" and timed the whole 'dpkg --configure -a' against
# script_timeout. Now a script_timeout just above the slowest script passes with and without -v,
# and a script over it fails both ways, naming it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"
e2e_serve arm-board
flagship_lean arm-board "$T/r"
TIMEOUT=25
# A postinst that takes SECONDS (a sleep: no CPU, so the dpkg around it is what -v used to time).
slow_pkg() {
	local d
	d=$(deb_new mki82-slow "$1" all)
	deb_file "$d" DEBIAN/postinst "#!/bin/sh
[ \"\$1\" = configure ] || exit 0
sleep $2
" 0755
	deb_build "$d" "$T/debs-$1"
}
pass=$(slow_pkg 1.0 $((TIMEOUT - 7)))
over=$(slow_pkg 2.0 $((TIMEOUT + 15)))
cfg=$T/r/recipes/arm-board.cfg
sed -i -e "s/^script_timeout = .*/script_timeout = $TIMEOUT;/" \
	-e "s|^\( *\)install = \[|\1local = [ \"@DEB@\" ];\n\1install = [|" "$cfg"
grep -q "^script_timeout = $TIMEOUT;" "$cfg" && grep -q @DEB@ "$cfg" || fail "could not edit the recipe"

# build DEB [-v]
build() {
	sed "s|@DEB@|$1|" "$cfg" >"$T/r/recipes/t.cfg"
	timeout 900 "$MKIMAGE" ${2:+"$2"} --no-layer-cache --cache-dir "$T/cache" --source "$SRC" --until hooks \
		--output "$T/x.ext4" "$T/r/recipes/t.cfg"
}

for v in "" -v; do
	expect_ok build "$pass" "$v"
	if [ -n "$v" ]; then
		grep -Eq "exec profile: [0-9]+ programs started by the scripts" "$T/err" ||
			fail "-v printed no exec profile: the profiled path was not taken"
	fi
	c=$(sed -En 's/.*dpkg --configure -a: ([0-9.]+) s.*/\1/p' "$T/err")
	awk -v c="$c" -v l="$TIMEOUT" 'BEGIN { exit !(c > l) }' ||
		fail "dpkg --configure -a took $c s, not more than script_timeout: the test tests nothing"
	note "${v:-no -v}: a $((TIMEOUT - 7)) s postinst passes under script_timeout $TIMEOUT; dpkg --configure -a took $c s"
	expect_fail 7 "the postinst script of package 'mki82-slow' ran longer than script_timeout \($TIMEOUT s\)" \
		build "$over" "$v"
done
