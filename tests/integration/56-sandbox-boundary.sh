# A hostile maintainer script (or inside hook) against the sandbox (issue 13: E1, E1b, E2, E3,
# E4, H2): /proc/1/root, a double chroot, core_pattern, binfmt_misc, a dpkg-divert --rename onto
# /proc/1/root, remounting read-only mounts, sysrq, new user namespaces, mount, pivot_root,
# keyctl, ptrace. Each attempt is a real syscall from a static program in the tree; every one is
# refused, nothing appears or changes outside the tree, the host's later exec of an outside hook
# is not hijacked, and the build itself succeeds. As root and as an ordinary user.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"
command -v cc >/dev/null || skip "needs a C compiler to build the attack program"
cc -static -O1 -o "$T/sandbox_attack" "$TOP/tests/integration/sandbox_attack.c" ||
	skip "cannot link a static program here (libc6-dev)"

HOST=$T/host
mkdir -p "$HOST"
echo "host secret" >"$HOST/secret"
chmod 600 "$HOST/secret"
core_before=$(cat /proc/sys/kernel/core_pattern)
host_before=$(hostname)

# A postinst that reads through /proc/1/root, as the issue's E1 did.
d=$(deb_new e1-pkg 1.0 all)
printf '#!/bin/sh\ncat /proc/1/root%s/secret >/e1-postinst 2>&1 || echo refused >/e1-postinst\nexit 0\n' \
	"$HOST" >"$d/DEBIAN/postinst"
chmod 755 "$d/DEBIAN/postinst"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo
mkdir -p "$T/r/hooks"
cp "$T/sandbox_attack" "$T/r/hooks/"
cat >"$T/r/hooks/plant.sh" <<'H'
#!/bin/sh
set -e
install -m 0755 "$(dirname "$0")/sandbox_attack" "$MKIMAGE_ROOT/usr/local/bin/sandbox_attack"
H
cat >"$T/r/hooks/attack.sh" <<H
#!/bin/sh
/usr/local/bin/sandbox_attack $HOST >/attack-report 2>&1
# E4: dpkg's own tool moving a file of the tree "out" through /proc/1/root
touch /usr/bin/mki56-victim
dpkg-divert --rename --divert /proc/1/root$HOST/pwned-e4 /usr/bin/mki56-victim >/e4-report 2>&1 || true
rm -f /usr/local/bin/sandbox_attack
exit 0
H
cat >"$T/r/hooks/after.sh" <<'H'
#!/bin/sh
echo "outside hook ran as itself" >"$MKIMAGE_ROOT/outside-after"
H
chmod -R a+rX "$T/r" && chmod 755 "$T/r/hooks/"*.sh
native_recipe "$T/r/t.cfg" t ', "e1-pkg"' \
	'{ name = "plant"; script = "hooks/plant.sh"; where = "outside"; },
	 { name = "attack"; script = "hooks/attack.sh"; where = "inside"; },
	 { name = "after"; script = "hooks/after.sh"; where = "outside"; }'

# check WHO IMAGE
check() {
	local img=$2 report
	report=$(debugfs -R "cat /attack-report" "$img" 2>/dev/null)
	[ "$(grep -c ': refused' <<<"$report")" -ge 14 ] || { echo "$report" >&2; fail "$1: the attack program did not run every attempt"; }
	grep ESCAPED <<<"$report" && fail "$1: the sandbox let something through"
	[ "$(debugfs -R "cat /e1-postinst" "$img" 2>/dev/null)" != "host secret" ] ||
		fail "$1: the postinst read the host's secret"
	[ "$(debugfs -R "cat /outside-after" "$img" 2>/dev/null)" = "outside hook ran as itself" ] ||
		fail "$1: the outside hook after the attack did not run as itself (hijacked?)"
	[ -z "$(ls -A "$HOST" | grep -v '^secret$')" ] || fail "$1: files appeared on the host: $(ls -A "$HOST")"
	[ "$(cat "$HOST/secret")" = "host secret" ] || fail "$1: the host's secret changed"
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$core_before" ] || fail "$1: core_pattern changed"
	[ "$(hostname)" = "$host_before" ] || fail "$1: the host name changed"
	note "$1: $(grep -c ': refused' <<<"$report") attempts refused: $(cut -d' ' -f1 <<<"$report" | tr -d : | tr '\n' ' ')"
}

mkdir -p "$T/img" "$T/tmp"
TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/t.cfg"
check root "$T/img/t.ext4"

if [ "$(id -u)" = 0 ]; then
	test_user mki56user
	chmod 755 "$T" "$HOST"
	chown mki56user "$HOST/secret"
	chmod -R a+rX "$T/r" "$T/keys"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mki56user "$T/u"
	TMPDIR=$T/u/tmp expect_ok as_user mki56user "$MKIMAGE" --cache-dir "$T/u/cache" \
		-o "$T/u/img/t.ext4" "$T/r/t.cfg"
	check user "$T/u/img/t.ext4"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
