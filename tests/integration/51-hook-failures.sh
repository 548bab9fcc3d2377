# A failing hook stops the build with its name, exit status and last lines of output; a hanging
# hook is killed at its timeout with everything it started; a failing maintainer script is named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"

fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
fixture_tree arm "$T/tree"
expect_ok "$CONFIGURE" "$T/tree"

recipe() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
packages = { install = [ "hello:armel" ]; };
hooks = ( $1 );
R
}
mkdir -p "$T/hooks"
printf '#!/bin/sh\necho first line\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22; do echo "line $i"; done\necho "broken: no such thing" >&2\nexit 3\n' >"$T/hooks/fail.sh"
printf '#!/bin/sh\necho started\nsleep 4242 &\nsleep 4243\n' >"$T/hooks/hang.sh"
printf '#!/bin/sh\ntouch "$MKIMAGE_ROOT/etc/ran-$1"\n' >"$T/hooks/mark.sh"
printf '#!/bin/sh\nexit 0\n' >"$T/hooks/ok.sh"
chmod +x "$T/hooks/"*.sh

recipe '{ name = "ok"; script = "hooks/ok.sh"; where = "inside"; },
  { name = "breaks"; script = "hooks/fail.sh"; where = "inside"; },
  { name = "never"; script = "hooks/ok.sh"; where = "outside"; }'
expect_fail 7 "hook 'breaks' \(inside, .*r.cfg:[0-9]+\) failed with exit status 3" \
	"$CONFIGURE" --recipe "$T/r.cfg" "$T/tree"
grep -q 'broken: no such thing' "$T/err" || fail "the hook's last output is not shown"
grep -q 'line 22' "$T/err" || fail "the hook's last lines are not shown"
grep -q 'first line' "$T/err" && fail "more than the last lines are shown"
grep -q "hook 'never'" "$T/err" && fail "a hook after the failing one ran"
ls -A "$T/tree" "$T/tree/var/tmp" | grep -q mkimage && fail "the hook's copy is left in the tree"

recipe '{ name = "hangs"; script = "hooks/hang.sh"; where = "inside"; timeout = 3; }'
expect_fail 7 "hook 'hangs' \(inside, .*\) did not finish within 3 s and was killed" \
	"$CONFIGURE" --recipe "$T/r.cfg" "$T/tree"
grep -q 'started' "$T/err" || fail "the hanging hook's output is not shown"
pgrep -f 'sleep 424[23]' && fail "processes of the killed hook are still running"

recipe '{ name = "hangs-outside"; script = "hooks/hang.sh"; where = "outside"; timeout = 2; }'
expect_fail 7 "hook 'hangs-outside' \(outside, .*\) did not finish within 2 s" \
	"$CONFIGURE" --recipe "$T/r.cfg" "$T/tree"
pgrep -f 'sleep 424[23]' && fail "processes of the killed outside hook are still running"

# a maintainer script that fails is reported with the package's name
sed -i 's/^Status: install ok installed$/Status: install ok unpacked/' "$T/tree/var/lib/dpkg/status"
printf '#!/bin/sh\necho "postinst says no" >&2\nexit 9\n' >"$T/tree/var/lib/dpkg/info/hello.postinst"
chmod 755 "$T/tree/var/lib/dpkg/info/hello.postinst"
expect_fail 7 "'dpkg --configure -a' failed with exit status 1" "$CONFIGURE" "$T/tree"
grep -q 'postinst says no' "$T/err" || fail "the script's output is not shown"
grep -q "hello" "$T/err" || fail "the failing package is not named"
[ ! -e "$T/tree/usr/sbin/policy-rc.d" ] || fail "guards left after a failure"
true
