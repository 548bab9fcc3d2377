# End to end: recipes/pc-legacy.cfg (amd64 + i386) from real bookworm packages. i386 runs natively
# where the kernel executes it (else through qemu-i386), and the 32-bit program runs from the
# image's own tree.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

e2e_build pc-legacy
e2e_audit
e2e_appliance pc-legacy amd64 ttyS0
dbg "stat /usr/lib/x86_64-linux-gnu/libc.so.6" | grep -q "Type: regular" || fail "no amd64 libc"
dbg "stat /usr/lib/i386-linux-gnu/libc.so.6" | grep -q "Type: regular" || fail "no i386 libc"
[ "$(dbg "cat /var/lib/dpkg/arch")" = "$(printf 'amd64\ni386')" ] || fail "dpkg arch file is wrong"
[ "$(dbg "cat /etc/hostname")" = "pc-legacy" ] || fail "hostname hook did not use the recipe name"
dbg "cat /etc/passwd" | grep -q '^appsvc:' || fail "service user missing"
mkdir -p "$T/sys" && debugfs -R "rdump /usr $T/sys" "$IMG" >/dev/null 2>&1
# The i386 program with the image's own i386 loader and libraries.
run32=
"$T/sys/usr/lib/i386-linux-gnu/ld-linux.so.2" --version >/dev/null 2>&1 || run32=qemu-i386-static
[ "$($run32 "$T/sys/usr/lib/i386-linux-gnu/ld-linux.so.2" --library-path "$T/sys/usr/lib/i386-linux-gnu" \
	"$T/sys/usr/bin/hello")" = "Hello, world!" ] || fail "the i386 hello does not run"

# It boots: serial login, the i386 hello run by the boot-time unit, no failed unit.
e2e_boot qemu-system-x86_64 i386
