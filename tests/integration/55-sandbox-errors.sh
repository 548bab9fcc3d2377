# Sandbox failures are specific: a missing emulator names the package to install, and a tree whose
# mount points lead out of it is refused instead of being mounted over (the host stays untouched).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"

# no qemu-arm-static on PATH: the error says what to install, before anything runs
mkdir -p "$T/fake/var/lib/dpkg"
printf 'armhf\narmel\n' >"$T/fake/var/lib/dpkg/arch"
: >"$T/fake/var/lib/dpkg/status"
expect_fail 7 "cannot run armhf binaries: 'qemu-arm-static' not found; install the 'qemu-user-static' package" \
	env PATH=/nonexistent "$CONFIGURE" "$T/fake"

# an unknown architecture in the tree's list
printf 'armhf\nvax\n' >"$T/fake/var/lib/dpkg/arch"
expect_fail 7 "unknown architecture 'vax'" "$CONFIGURE" "$T/fake"

# /dev pointing out of the tree: nothing is mounted there, the build stops
[ "$(dpkg --print-architecture)" = amd64 ] || { skip_part "needs an amd64 host for the rest"; exit 0; }
fixture_debs x86 amd64 "amd64 i386" base-passwd base-files libc-bin dpkg dash coreutils sed grep \
	hello:i386 libc6:i386 debianutils diffutils findutils
fixture_tree x86 "$T/tree"
mkdir "$T/outside"
rmdir "$T/tree/dev"
ln -s "$T/outside" "$T/tree/dev"
expect_fail 7 "sandbox: cannot populate '.*/tree/dev'|cannot mount tmpfs on '.*/tree/dev'" \
	"$CONFIGURE" "$T/tree"
grep -q "running amd64 binaries .* failed" "$T/err" || fail "the failing probe is not named"
[ -z "$(ls -A "$T/outside")" ] || fail "something was created outside the tree"
grep -q "$T/outside" /proc/self/mountinfo && fail "a mount leaked to the host"
true
