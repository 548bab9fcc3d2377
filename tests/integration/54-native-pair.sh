# An amd64 + i386 tree is configured with no emulation at all when the kernel executes i386: both
# archs run natively and no binfmt entry is registered. A kernel without IA32 emulation (some
# hypervisors, ia32_emulation=0) must get i386 through qemu instead, said at info level.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
[ "$(dpkg --print-architecture)" = amd64 ] || skip "needs an amd64 host"

fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	hello:i386 libc6:i386 debianutils diffutils findutils
fixture_tree x86 "$T/tree"

expect_ok "$CONFIGURE" -v --exec '/usr/bin/hello' --exec 'dpkg --print-foreign-architectures' \
	--exec 'dpkg --audit' "$T/tree"
grep -qx 'Hello, world!' "$T/out" || fail "hello:i386 did not run: $(cat "$T/out")"
grep -qx 'i386' "$T/out" || fail "foreign architectures are not 'i386'"
file -L "$T/tree/usr/bin/hello" | grep -q '32-bit.*Intel' || fail "hello is not the i386 binary"
# What the kernel itself does with the tree's i386 loader decides which way is right.
if "$T/tree/usr/lib/i386-linux-gnu/ld-linux.so.2" --version >/dev/null 2>&1; then
	grep -q 'running i386 binaries (/usr/lib/i386-linux-gnu/libc.so.6, natively)' "$T/err" ||
		fail "i386 was not probed as native"
	grep -q 'binfmt:' "$T/err" && fail "a binfmt entry was registered for a native pair"
else
	note "this kernel does not execute i386: checking the qemu fallback"
	grep -q 'does not execute 32-bit x86 programs' "$T/err" || fail "the fallback was not said"
	grep -q 'running i386 binaries (/usr/lib/i386-linux-gnu/libc.so.6 through qemu)' "$T/err" ||
		fail "i386 was not run through qemu"
	grep -q 'binfmt:.*qemu-i386' "$T/err" || fail "no qemu-i386 registration"
	grep -q 'binfmt:.*qemu-x86_64' "$T/err" && fail "amd64 was registered for emulation"
fi
grep -q 'running amd64 binaries (/usr/lib/x86_64-linux-gnu/libc.so.6, natively)' "$T/err" ||
	fail "amd64 was not probed as native"
[ -z "$(grep '^Status:' "$T/tree/var/lib/dpkg/status" | grep -v 'install ok installed')" ] ||
	fail "not every package is installed"
true
