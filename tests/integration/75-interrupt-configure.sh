# SIGINT and SIGTERM while a maintainer script runs under 'dpkg --configure -a', while an inside
# hook runs and while an outside hook runs. No timing: the script or hook creates a marker file and
# then sleeps; the test waits for the marker and signals mkimage (or its process group, as Ctrl-C). It must exit 130 promptly with
# "interrupted", leave no process of the sandbox (the sleeping sh, sleep, qemu), no work dir, no
# image and only verified objects in the cache; the next build from the same cache works. Native
# amd64 builds, and one armhf build configured under QEMU.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

# slow-test: its postinst marks that configuration started, then sleeps "forever".
d=$(deb_new slow-test 1.0 all)
deb_file "$d" usr/share/doc/slow-test/README "slow"
deb_file "$d" DEBIAN/postinst '#!/bin/sh
touch /var/tmp/mki75-configure-started
sleep 7501
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

mkdir -p "$T/r/hooks" "$SHM" "$T/img"
printf '#!/bin/sh\ntouch /var/tmp/mki75-inside-started\nsleep 7502\n' >"$T/r/hooks/inside.sh"
# (in the tree, so that the test finds it by its working directory)
printf '#!/bin/sh\ncd "$MKIMAGE_ROOT"\ntouch var/tmp/mki75-outside-started\nsleep 7503\n' \
	>"$T/r/hooks/outside.sh"
chmod +x "$T/r/hooks/"*.sh
native_recipe "$T/r/configure.cfg" t ', "slow-test"'
native_recipe "$T/r/inside.cfg" t "" '{ name = "sleeper"; script = "hooks/inside.sh"; where = "inside"; }'
native_recipe "$T/r/outside.cfg" t "" '{ name = "sleeper"; script = "hooks/outside.sh"; where = "outside"; }'
native_recipe "$T/r/good.cfg" t ""

# interrupt SIGNAL RECIPE MARKER WHAT: build RECIPE, signal mkimage once MARKER exists in its tree,
# and check the exit, that WHAT (grep -E) is named as stopped, and what is left. With GROUP=1,
# mkimage runs in its own process group and the whole group is signalled, as Ctrl-C on a
# terminal does.
interrupt() {
	local sig=$1 recipe=$2 marker=$3 what=$4 pid rc=0 i
	TMPDIR=$SHM ${GROUP:+setsid} "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" \
		"$T/r/$recipe.cfg" >/dev/null 2>"$T/err" & pid=$!
	_PIDS="$_PIDS $pid" # if the test fails, its exit trap stops this build
	for i in $(seq 1 1200); do
		compgen -G "$SHM/*/root/var/tmp/$marker" >/dev/null && break
		kill -0 $pid 2>/dev/null || { cat "$T/err" >&2; fail "$recipe: mkimage ended before '$marker'"; }
		sleep 0.05
	done
	compgen -G "$SHM/*/root/var/tmp/$marker" >/dev/null || fail "$recipe: no '$marker'"
	running=$(processes_under "$SHM" | tr '\n' ' ')
	[ -n "$running" ] || fail "$recipe: nothing runs in the sandbox to be interrupted"
	kill -"$sig" -- ${GROUP:+-}$pid
	# Bounded wait (the script sleeps for hours: a missed signal would hang here).
	for i in $(seq 1 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "$sig during $recipe: still running after 30 s"; }
	wait $pid || rc=$?
	[ "$rc" = 130 ] || { cat "$T/err" >&2; fail "$sig during $recipe: exit $rc, expected 130"; }
	grep -q "interrupted by signal" "$T/err" || { cat "$T/err" >&2; fail "$sig during $recipe: no message"; }
	grep -Eq "$what was stopped: interrupted" "$T/err" ||
		{ cat "$T/err" >&2; fail "$sig during $recipe: what was running is not named"; }
	no_process 'sleep 750[123]' "$sig during $recipe"
	no_process_under "$SHM" "$sig during $recipe"
	[ -z "$(ls -A "$SHM")" ] || fail "$sig during $recipe: work dir left: $(ls -A "$SHM")"
	[ -z "$(left_beside "$T/img")" ] || fail "$sig during $recipe: output left: $(left_beside "$T/img")"
	grep -q '"status": "interrupted"' "$T/img/t.report.json" ||
		fail "$sig during $recipe: the report does not say interrupted"
	no_temp_files "$T/cache"
	verify_cache "$T/cache" >/dev/null
	note "$sig during $recipe (running: $running): exit 130, nothing left"
}

interrupt INT configure mki75-configure-started "'dpkg --configure -a'"
interrupt TERM configure mki75-configure-started "'dpkg --configure -a'"
interrupt TERM inside mki75-inside-started "hook 'sleeper' \(inside, [^)]*\)"
interrupt INT outside mki75-outside-started "hook 'sleeper' \(outside, [^)]*\)"
GROUP=1 interrupt INT configure mki75-configure-started "'dpkg --configure -a'"

# SIGKILL cannot be handled: the work dir stays until the next build removes it (its lock is free),
# but no step outlives mkimage (each step's pid 1 dies with it, PR_SET_PDEATHSIG) and the cache is
# still consistent; nothing is left beside the image either (its log was an unnamed file).
rm -f "$T"/img/*
TMPDIR=$SHM "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/configure.cfg" \
	>/dev/null 2>"$T/err" & pid=$!
_PIDS="$_PIDS $pid"
for i in $(seq 1 1200); do
	compgen -G "$SHM/*/root/var/tmp/mki75-configure-started" >/dev/null && break
	kill -0 $pid 2>/dev/null || { cat "$T/err" >&2; fail "KILL: mkimage ended before configuring"; }
	sleep 0.05
done
[ -n "$(processes_under "$SHM")" ] || fail "KILL: nothing runs in the sandbox"
kill -KILL $pid
wait $pid 2>/dev/null || true
for i in $(seq 1 100); do [ -z "$(processes_under "$SHM")" ] && break; sleep 0.1; done
no_process_under "$SHM" "KILL during configure"
no_process 'sleep 750[123]' "KILL during configure"
verify_cache "$T/cache" >/dev/null
[ -z "$(ls -A "$T/img")" ] || fail "KILL during configure: output left: $(ls -A "$T/img")"
stale=$(ls -d "$SHM"/mkimage.*)
[ -e "$stale/.mkimage-lock" ] || fail "KILL: the killed build's work dir has no lock file"
# The next build that enters its namespace removes what the killed one left.
TMPDIR=$SHM expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/good.cfg"
grep -q "removed 1 work directory in '$SHM' left by killed builds" "$T/err" ||
	{ cat "$T/err" >&2; fail "KILL: the next build did not say it removed the stale work dir"; }
[ ! -e "$stale" ] || fail "KILL: the killed build's work dir is still there after the next build"
[ -z "$(ls -A "$SHM")" ] || fail "KILL: work dirs left after the next build: $(ls -A "$SHM")"
rm -f "$T"/img/*
note "KILL during configure: nothing left running; the next build removed the work dir"

# The same under emulation: an armhf tree, dpkg and the scripts run by qemu-arm-static.
fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
mkdir -p "$T/arm/pool/main"
cp "$T"/repo/pool/main/slow-test_* "$T/arm/pool/main/"
fixture_repo "$T/arm" arm armhf
RECIPE_ARCH=armhf native_recipe "$T/r/arm.cfg" t ', "slow-test"'
interrupt TERM arm mki75-configure-started "'dpkg --configure -a'"

TMPDIR=$SHM expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/good.cfg"
e2fsck -fn "$T/img/t.ext4" >/dev/null 2>&1 || fail "the image after the interrupted runs is not clean"
[ -z "$(ls -A "$SHM")" ] || fail "work dir left after a good build"
