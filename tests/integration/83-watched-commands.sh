# test-cost: slow (five native builds, two as an ordinary user)
# Every command mkimage starts in the tree is watched, not only maintainer scripts: a package whose
# postinst replaces /usr/bin/dpkg with a wrapper owns mkimage's own 'dpkg --audit' after
# configuration. A wrapper that forks for ever is held at --limit processes (RLIMIT_NPROC is the
# limit itself, so the step never holds more) and one that writes past --limit staging-size is
# stopped: the build fails with exit 7 naming 'dpkg --audit' and the bound, and nothing is left
# running, no work directory, no image. A good build is unchanged. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

command -v cc >/dev/null || skip "no C compiler (make deps)"
cc -static -O1 -o "$T/hog" "$TOP/tests/integration/hog.c" || skip "cannot link statically (make deps)"

# evil-dpkg-MODE: its postinst moves dpkg aside and installs a wrapper that runs MODE on
# 'dpkg --audit' only (dpkg's other uses during configuration go to the real one).
evil() {
	local mode=$1 action=$2 d
	d=$(deb_new "evil-dpkg-$mode" 1.0 amd64)
	mkdir -p "$d/usr/libexec/mki83"
	cp "$T/hog" "$d/usr/libexec/mki83/hog"
	deb_file "$d" usr/libexec/mki83/dpkg "#!/bin/sh
if [ \"\$1\" = --audit ]; then
	$action
	sleep 8301
fi
exec /usr/libexec/mki83/dpkg.real \"\$@\"
" 0755
	deb_file "$d" DEBIAN/postinst '#!/bin/sh
set -e
[ -e /usr/libexec/mki83/dpkg.real ] || mv /usr/bin/dpkg /usr/libexec/mki83/dpkg.real
cp /usr/libexec/mki83/dpkg /usr/bin/dpkg
' 0755
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}
evil fork "/usr/libexec/mki83/hog fork"
# files of 64 MiB each: no single one passes RLIMIT_FSIZE, together they pass the tree's bound
evil write 'for i in 1 2 3 4 5 6 7 8; do head -c 64M /dev/zero >/var/tmp/mki83-fill$i || true; done'
native_repo

mkdir -p "$T/r" "$T/tmp" "$T/img"
native_recipe "$T/r/fork.cfg" t ', "evil-dpkg-fork"'
native_recipe "$T/r/write.cfg" t ', "evil-dpkg-write"'
native_recipe "$T/r/good.cfg" t ""

# build RECIPE TMP CACHE IMG [RUNNER...] -- [MKIMAGE ARGS...]: build, then check that nothing of
# it is left running or on disk; sets RC.
build() {
	local recipe=$1 tmp=$2 cache=$3 img=$4
	shift 4
	local runner=()
	while [ "$1" != -- ]; do runner+=("$1"); shift; done
	shift
	RC=0
	TMPDIR=$tmp "${runner[@]}" timeout 600 "$MKIMAGE" --cache-dir "$cache" -o "$img/t.ext4" \
		"$@" "$T/r/$recipe.cfg" >"$T/out" 2>"$T/err" || RC=$?
	[ "$RC" != 124 ] || fail "$recipe: the build did not end within 600 s"
	no_process 'hog fork' "after $recipe"
	no_process 'sleep 8301' "after $recipe"
	no_process_under "$tmp" "after $recipe"
	[ -z "$(ls -A "$tmp")" ] || fail "$recipe: work dir left: $(ls -A "$tmp")"
}

# forks: held at exactly the limit (RLIMIT_NPROC), seen and named by the watchdog
fork_case() {
	local who=$1
	shift
	build fork "$@" -- --limit processes=100
	[ "$RC" = 7 ] || { cat "$T/err" >&2; fail "$who fork: exit $RC, expected 7"; }
	grep -Eq "'dpkg --audit' reached the process limit: 100 processes were running.*limit 'processes' is 100; raise it with --limit processes=" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who fork: the process bound of 'dpkg --audit' is not named (or more than 100 ran)"; }
	[ "$(grep -c 'process limit' "$T/err")" = 1 ] || fail "$who fork: the limit is not said once"
	note "$who fork: exit 7, $(grep -o "reached the process limit: [0-9]* processes" "$T/err")"
}

fork_case root "$T/tmp" "$T/cache" "$T/img"
[ -z "$(left_beside "$T/img")" ] || fail "fork: output left: $(left_beside "$T/img")"

# writes: the tree's bound holds for the audit as for a script
build write "$T/tmp" "$T/cache" "$T/img" -- --limit staging-size=300M
[ "$RC" = 7 ] || { cat "$T/err" >&2; fail "write: exit $RC, expected 7"; }
grep -Eq "'dpkg --audit' made the staging tree larger than its limit: [0-9.]+ MiB allocated.*limit 'staging-size' is 300M" "$T/err" ||
	{ cat "$T/err" >&2; fail "write: the staging bound of 'dpkg --audit' is not named"; }
[ -z "$(left_beside "$T/img")" ] || fail "write: output left: $(left_beside "$T/img")"
note "write: exit 7, $(grep -o "larger than its limit: [0-9.]* MiB" "$T/err")"

# a good build under the same limits is not disturbed by them
build good "$T/tmp" "$T/cache" "$T/img" -- --limit processes=100 --limit staging-size=300M
[ "$RC" = 0 ] || { cat "$T/err" >&2; fail "good: exit $RC"; }
rm -f "$T/img"/*

if [ "$(id -u)" = 0 ]; then
	test_user mkiwatch83
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mkiwatch83 "$T/u"
	fork_case user "$T/u/tmp" "$T/u/cache" "$T/u/img" as_user mkiwatch83
	[ -z "$(left_beside "$T/u/img")" ] || fail "user fork: output left"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
