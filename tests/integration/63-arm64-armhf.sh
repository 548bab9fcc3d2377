# test-cost: slow (builds a whole recipe: run.sh starts it first)
# End to end: recipes/arm64-armhf.cfg (arm64 + armhf) from real bookworm packages, configured
# under QEMU (aarch64 and arm entries in the private binfmt_misc).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

e2e_build arm64-armhf
e2e_audit
e2e_appliance arm64-armhf ttyAMA0
e2e_kernel arm64
dbg "stat /usr/lib/aarch64-linux-gnu/libc.so.6" | grep -q "Type: regular" || fail "no arm64 libc"
dbg "stat /usr/lib/arm-linux-gnueabihf/libc.so.6" | grep -q "Type: regular" || fail "no armhf libc"
[ "$(dbg "cat /var/lib/dpkg/arch")" = "$(printf 'arm64\narmhf')" ] || fail "dpkg arch file is wrong"
dbg "stat /dev/console" | grep -q "Type: character special" || fail "no /dev/console"
mkdir -p "$T/sys" && debugfs -R "rdump /usr $T/sys" "$IMG" >/dev/null 2>&1
ln -s usr/lib "$T/sys/lib"
qemu-aarch64-static -L "$T/sys" "$T/sys/usr/bin/busybox" true || fail "arm64 busybox does not run"
[ "$(qemu-arm-static -L "$T/sys" "$T/sys/usr/bin/hello")" = "Hello, world!" ] ||
	fail "the armhf hello does not run"

# It boots: serial login, the armhf hello run by the boot-time unit, no failed unit.
e2e_boot qemu-system-aarch64 armhf
