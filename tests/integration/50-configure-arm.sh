# An armhf + armel tree of real bookworm packages is configured under qemu in the sandbox: both
# archs run, dpkg is clean, the hooks run in order and the manifest follows what they did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"

fixture_debs arm armhf "armhf armel" base-passwd base-files libc-bin dpkg dash bash coreutils sed \
	grep busybox hello:armel libc6:armel debianutils findutils diffutils
fixture_tree arm "$T/tree"

mkdir -p "$T/hooks"
cat >"$T/hooks/daemon-file.sh" <<'H'
#!/bin/sh
set -e
# inside the target, emulated: a file handed to a system user, and what this shell is
echo "made by a hook" >/etc/hook-owned
chown daemon:daemon /etc/hook-owned
chmod 0640 /etc/hook-owned
rm /etc/debian_version
echo "$(uname -m) $HOME $LC_ALL $DEBIAN_FRONTEND" >/etc/hook-env
sed -n '3,$p' /proc/net/dev | cut -d: -f1 | tr -d ' ' >/etc/hook-net
H
cat >"$T/hooks/outside.sh" <<'H'
#!/bin/sh
set -e
echo "$MKIMAGE_ARCH|$MKIMAGE_ARCHS" >"$MKIMAGE_ROOT/etc/outside-saw"
test -s "$MKIMAGE_ROOT/etc/hook-owned"
setcap cap_net_raw+ep "$MKIMAGE_ROOT/usr/bin/hello"
H
chmod +x "$T/hooks/"*.sh
cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
packages = { install = [ "hello:armel" ]; };
hooks = (
  { name = "daemon-file"; script = "hooks/daemon-file.sh"; where = "inside"; },
  { name = "outside"; script = "hooks/outside.sh"; where = "outside"; }
);
R

expect_ok "$CONFIGURE" --recipe "$T/r.cfg" --manifest "$T/manifest" \
	--exec '/usr/bin/hello' --exec 'busybox echo armhf-runs' \
	--exec 'dpkg --print-foreign-architectures' --exec 'dpkg --audit' \
	--exec 'dpkg-query -W -f=${db:Status-Abbrev}${Package}:${Architecture}\n' "$T/tree"
out=$(cat "$T/out")
grep -qx 'Hello, world!' <<<"$out" || fail "hello:armel did not run: $out"
grep -qx 'armhf-runs' <<<"$out" || fail "busybox (armhf) did not run: $out"
grep -qx 'armel' <<<"$out" || fail "foreign architectures are not 'armel': $out"
n=$(grep -c '^Package:' "$T/tree/var/lib/dpkg/status")
[ "$(grep -c '^ii ' <<<"$out")" = "$n" ] || fail "not all $n packages are 'ii': $out"
grep -q 'hello:armel' <<<"$out" || fail "hello is not the armel package"
file -L "$T/tree/usr/bin/hello" | grep -q 'ARM' || fail "hello is not an ARM binary"

# the hooks ran, in order, with the documented environment
[ "$(cat "$T/tree/etc/hook-env")" = "armv7l /root C.UTF-8 noninteractive" ] ||
	fail "inside hook environment: $(cat "$T/tree/etc/hook-env")"
[ "$(cat "$T/tree/etc/hook-net")" = "lo" ] ||
	fail "inside hooks have network interfaces: $(cat "$T/tree/etc/hook-net")"
[ "$(cat "$T/tree/etc/outside-saw")" = "armhf|armhf armel" ] ||
	fail "outside hook environment: $(cat "$T/tree/etc/outside-saw")"

# the manifest says exactly what the tree holds
line=$(grep -P '^etc/hook-owned\t' "$T/manifest") || fail "manifest lacks the hook's file"
[ "$(cut -f2-5 <<<"$line")" = "$(printf 'f\t0640\t1\t1')" ] || fail "hook's file in manifest: $line"
grep -qP '^etc/debian_version\t' "$T/manifest" && fail "a deleted file stays in the manifest"
grep -P '^usr/bin/hello\t' "$T/manifest" | grep -q 'security.capability=01000002' ||
	fail "the capability set by a hook is not in the manifest"
grep -P '^etc/passwd\t' "$T/manifest" | grep -qP '\tf\t0644\t0\t0\t' || fail "etc/passwd entry"
grep -P '^etc/shadow\t' "$T/manifest" && fail "no shadow expected without passwd"
grep -P '^var/local\t' "$T/manifest" | grep -qP '\td\t2775\t0\t50\t' || fail "var/local root:staff 2775"

# nothing of the build machinery is left in the tree
[ -z "$(find "$T/tree/dev" "$T/tree/proc" "$T/tree/run" "$T/tree/tmp" -mindepth 1)" ] ||
	fail "mounts or files left in dev/proc/run/tmp"
[ ! -e "$T/tree/usr/sbin/policy-rc.d" ] || fail "policy-rc.d left behind"
file "$T/tree/usr/sbin/start-stop-daemon" | grep -q ELF || fail "start-stop-daemon not restored"
ls -A "$T/tree" "$T/tree/usr/sbin" "$T/tree/var/tmp" | grep -q mkimage && fail "temporary files left in the tree"
true
