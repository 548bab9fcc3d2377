# The same configuration as an ordinary user with a subordinate id range: the namespace maps the
# full range, so chown to system users works inside and the manifest records the target's ids.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
[ "$(id -u)" = 0 ] || skip "needs root to create a throwaway user"

fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
fixture_tree arm "$T/tree"
test_user mkihooks52
fixture_shift "$T/tree" mkihooks52
chmod 755 "$T"
mkdir -p "$T/hooks"
printf '#!/bin/sh\nset -e\necho x >/etc/hook-owned\nchown daemon:staff /etc/hook-owned\nchmod 4750 /etc/hook-owned\n' \
	>"$T/hooks/own.sh"
printf '#!/bin/sh\nset -e\nsetcap cap_net_raw+ep "$MKIMAGE_ROOT/usr/bin/hello"\n' >"$T/hooks/cap.sh"
chmod 755 "$T/hooks" "$T/hooks/"*.sh
cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
packages = { install = [ "hello:armel" ]; };
hooks = ( { name = "own"; script = "hooks/own.sh"; where = "inside"; },
          { name = "cap"; script = "hooks/cap.sh"; where = "outside"; } );
R
mkdir "$T/out.d" && chown mkihooks52 "$T/out.d"

expect_ok as_user mkihooks52 "$CONFIGURE" --recipe "$T/r.cfg" --manifest "$T/out.d/manifest" \
	--exec '/usr/bin/hello' --exec 'busybox echo armhf-runs' \
	--exec 'dpkg --print-foreign-architectures' --exec 'id -u' "$T/tree"
out=$(cat "$T/out")
grep -qx 'Hello, world!' <<<"$out" || fail "hello:armel did not run: $out"
grep -qx 'armhf-runs' <<<"$out" || fail "busybox (armhf) did not run: $out"
grep -qx 'armel' <<<"$out" || fail "foreign architectures are not 'armel': $out"
grep -qx '0' <<<"$out" || fail "commands do not run as root inside: $out"
[ -z "$(grep '^Status:' "$T/tree/var/lib/dpkg/status" | grep -v 'install ok installed')" ] ||
	fail "not every package is installed"

# ids as seen inside: daemon = 1, staff = 50; the file on the host belongs to the subordinate range
line=$(grep -P '^etc/hook-owned\t' "$T/out.d/manifest") || fail "manifest lacks the hook's file"
[ "$(cut -f2-5 <<<"$line")" = "$(printf 'f\t4750\t1\t50')" ] || fail "hook's file in manifest: $line"
su=$(awk -F: '$1 == "mkihooks52" { print $2; exit }' /etc/subuid)
[ "$(stat -c %u "$T/tree/etc/hook-owned")" = "$su" ] || fail "host owner is not the first subordinate id"
grep -P '^var/local\t' "$T/out.d/manifest" | grep -qP '\td\t2775\t0\t50\t' || fail "var/local root:staff 2775"
grep -P '^usr/bin/hello\t' "$T/out.d/manifest" | grep -q 'security.capability=01000002' ||
	fail "the capability (as seen inside: v2) is not in the manifest"
[ -z "$(find "$T/tree/dev" "$T/tree/proc" "$T/tree/run" "$T/tree/tmp" -mindepth 1)" ] ||
	fail "mounts or files left in dev/proc/run/tmp"
true
