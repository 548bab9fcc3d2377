# An amd64 + i386 tree is configured with no emulation at all: both archs run natively and no
# binfmt entry is registered.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
[ "$(dpkg --print-architecture)" = amd64 ] || { note "needs an amd64 host; skipped"; exit 0; }

fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	hello:i386 libc6:i386 debianutils diffutils findutils
fixture_tree x86 "$T/tree"

expect_ok "$CONFIGURE" -v --exec '/usr/bin/hello' --exec 'dpkg --print-foreign-architectures' \
	--exec 'dpkg --audit' "$T/tree"
grep -qx 'Hello, world!' "$T/out" || fail "hello:i386 did not run: $(cat "$T/out")"
grep -qx 'i386' "$T/out" || fail "foreign architectures are not 'i386'"
file -L "$T/tree/usr/bin/hello" | grep -q '32-bit.*Intel' || fail "hello is not the i386 binary"
grep -q 'running i386 binaries (/usr/lib/i386-linux-gnu/libc.so.6, natively)' "$T/err" ||
	fail "i386 was not probed as native"
grep -q 'running amd64 binaries (/usr/lib/x86_64-linux-gnu/libc.so.6, natively)' "$T/err" ||
	fail "amd64 was not probed as native"
grep -q 'binfmt:' "$T/err" && fail "a binfmt entry was registered for a native pair"
[ -z "$(grep '^Status:' "$T/tree/var/lib/dpkg/status" | grep -v 'install ok installed')" ] ||
	fail "not every package is installed"
true
