# The boundary around maintainer scripts and inside hooks (issue 13 E1, E1b, E2, E4, H2), as root
# and as an unprivileged user: the tree is the only root there is (pid 1 lives in it, the old root
# is detached, so /proc/1/root and a double chroot lead nowhere else), the kernel's knobs cannot be
# written (a root build's commands are an unprivileged range on the host), mounts made for the
# command are locked, and no descriptor of mkimage's reaches it. Every attack aims at a marker on
# the host; none may appear, and host files stay as they were.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
[ "$(id -u)" = 0 ] || skip "needs root (fixture trees keep the packages' owners)"
[ "$(dpkg --print-architecture)" = amd64 ] || skip "needs an amd64 host (native fixture tree)"
command -v cc >/dev/null || skip "needs a C compiler for the probe"

fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	hello:i386 libc6:i386 debianutils diffutils findutils
cc -static -O2 -o "$T/probe" "$(dirname "$0")/sandbox_probe.c" || fail "cannot build the probe"
chmod 755 "$T"
mkdir -p "$T/host"
chmod 777 "$T/host"
echo "host secret 56" >"$T/host/secret"
chmod 644 "$T/host/secret"
core_before=$(cat /proc/sys/kernel/core_pattern)

# attack TREE: the hostile script, as a maintainer script would run it
write_attack() {
	cat >"$1/mki57-attack.sh" <<H
#!/bin/sh
H=$T/host
echo "pid1 root: \$(ls /proc/1/root/mki57-attack.sh 2>&1)"
cat /proc/1/root\$H/secret 2>/dev/null && echo "E1 READ HOST SECRET"
{ echo x >/proc/1/root\$H/e1; } 2>/dev/null && echo "E1 WROTE HOST MARKER"
{ echo '|/bin/false' >/proc/sys/kernel/core_pattern; } 2>/dev/null && echo "E2 CORE_PATTERN WRITTEN"
echo "E2 attempted"
echo "procs: \$(ls -d /proc/[0-9]* | wc -l)"
# pid 1 lives in the tree but outside the command's user namespace: its fds and memory are closed
# (it may be listed: then it shows only its stdio and the output pipe)
echo "pid1 fds: \$(ls /proc/1/fd 2>/dev/null | wc -l)"
for f in /proc/1/fd/*; do ls "\$f/" >/dev/null 2>&1 && echo "E1 PID1 FD REACHED \$f"; done
( exec 3<>/proc/1/mem ) 2>/dev/null && echo "E1 PID1 MEM WRITTEN"
echo "pid1 fds and mem attempted"
dpkg-divert --rename --divert /proc/1/root\$H/e4 --add /usr/bin/hello >/dev/null 2>&1
echo "E4 hello: \$(ls /usr/bin/hello 2>&1)"
/mki57-probe escape \$H
/mki57-probe remount /proc/sys
/mki57-probe fds
exit 0
H
	chmod 755 "$1/mki57-attack.sh"
	cp "$T/probe" "$1/mki57-probe"
}

# check WHO: the host after the attack, and what the attack printed ($T/out)
check() {
	local who=$1
	[ -e "$T/host/e1" ] && fail "$who: E1 wrote a host marker through /proc/1/root"
	[ -e "$T/host/e4" ] && fail "$who: E4 dpkg-divert moved a file onto the host"
	[ -e "$T/host/escaped" ] && fail "$who: E1b the double chroot wrote onto the host"
	[ "$(cat "$T/host/secret")" = "host secret 56" ] || fail "$who: the host file changed"
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$core_before" ] || fail "$who: E2 core_pattern changed"
	# pid 1 (outside the command's user namespace) is not even open to it; if it were, its
	# root would be the tree
	grep -Eq "pid1 root: (/proc/1/root/mki57-attack.sh|.*Permission denied)$" "$T/out" ||
		fail "$who: pid 1's root is not the tree: $(cat "$T/out")"
	grep -q "E2 attempted" "$T/out" || fail "$who: the attack did not run: $(cat "$T/out")"
	grep -q "pid1 fds and mem attempted" "$T/out" || fail "$who: no attempt at pid 1's fds"
	grep -Eq "^pid1 fds: [0-4]$" "$T/out" || fail "$who: pid 1 holds more than stdio and its pipe: $(grep 'pid1 fds' "$T/out")"
	grep -E "READ HOST|WROTE HOST|CORE_PATTERN WRITTEN|REACHED|WRITTEN$|: DONE" "$T/out" &&
		fail "$who: an attack succeeded"
	# chroot itself is refused by the seccomp filter; were it not, the second one leads nowhere
	grep -Eq "^(chroot ok|chroot refused: Operation not permitted)" "$T/out" ||
		fail "$who: E1b: no chroot attempt: $(cat "$T/out")"
	grep -q "not reachable; marker not written" "$T/out" || fail "$who: E1b: $(cat "$T/out")"
	grep -Eq "remount rw of /proc/sys: (Operation not permitted|Permission denied)" "$T/out" ||
		fail "$who: H2 remount not refused: $(cat "$T/out")"
	grep -q "unmount of /proc/sys: " "$T/out" || fail "$who: H2 no unmount attempt"
	grep -q "^0 inherited fds" "$T/out" || fail "$who: fds of mkimage reach the command: $(grep fd "$T/out")"
	grep -q "^procs: [1-9]$" "$T/out" || fail "$who: /proc shows more than the build's processes: $(grep procs "$T/out")"
	note "$who: $(grep -E 'chroot|remount rw|inherited' "$T/out" | tr '\n' ';')"
}

# --- root: the tree is owned by the commands' unprivileged range ---
fixture_tree x86 "$T/tree"
write_attack "$T/tree"
"$CONFIGURE" --exec-only --exec /mki57-attack.sh "$T/tree" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" "$T/out" >&2; fail "root: the attack's run failed"; }
check root

# --- an unprivileged user with a subordinate range ---
test_user mkihooks56
rm -rf "$T/tree"
fixture_tree x86 "$T/tree"
write_attack "$T/tree"
fixture_shift "$T/tree" mkihooks56
as_user mkihooks56 "$CONFIGURE" --exec-only --exec /mki57-attack.sh "$T/tree" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err" "$T/out" >&2; fail "user: the attack's run failed"; }
check user
true
