# test-cost: slow (builds a whole recipe: run.sh starts it first)
# End to end: recipes/pc-legacy.cfg (amd64 + i386) from real bookworm packages. i386 runs natively
# where the kernel executes it (else through qemu-i386), and the 32-bit program runs from the
# image's own tree.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

e2e_build pc-legacy
e2e_audit
e2e_appliance pc-legacy ttyS0
e2e_kernel amd64
dbg "stat /usr/lib/x86_64-linux-gnu/libc.so.6" | grep -q "Type: regular" || fail "no amd64 libc"
dbg "stat /usr/lib/i386-linux-gnu/libc.so.6" | grep -q "Type: regular" || fail "no i386 libc"
[ "$(dbg "cat /var/lib/dpkg/arch")" = "$(printf 'amd64\ni386')" ] || fail "dpkg arch file is wrong"
dbg "cat /etc/passwd" | grep -q '^appsvc:' || fail "service user missing"
mkdir -p "$T/sys" && debugfs -R "rdump /usr $T/sys" "$IMG" >/dev/null 2>&1
# The i386 program with the image's own i386 loader and libraries.
run32=
"$T/sys/usr/lib/i386-linux-gnu/ld-linux.so.2" --version >/dev/null 2>&1 || run32=qemu-i386-static
[ "$($run32 "$T/sys/usr/lib/i386-linux-gnu/ld-linux.so.2" --library-path "$T/sys/usr/lib/i386-linux-gnu" \
	"$T/sys/usr/bin/hello")" = "Hello, world!" ] || fail "the i386 hello does not run"

# It boots through OVMF and systemd-boot: serial login, the i386 hello run by the boot-time unit,
# no failed unit.
e2e_boot qemu-system-x86_64 i386

# A boot that goes wrong fails, naming what: a unit that fails (in a copy of the disk, its root
# partition edited in place by debugfs at the partition's offset)...
e2e_boots_here qemu-system-x86_64 "booting broken disks" || exit 0
cp --sparse=always "$DISK" "$T/broken.img"
start=$(sfdisk --json "$DISK" | python3 -c '
import json, sys
print([p for p in json.load(sys.stdin)["partitiontable"]["partitions"] if p.get("name") == "root"][0]["start"])')
root="$T/broken.img?offset=$((start * 512))"
printf '[Service]\nType=oneshot\nExecStart=/bin/false\n[Install]\nWantedBy=multi-user.target\n' \
	>"$T/broken.service"
debugfs -w -f - "$root" >/dev/null 2>&1 <<EOF
cd /etc/systemd/system
write $T/broken.service broken.service
symlink /etc/systemd/system/multi-user.target.wants/broken.service /etc/systemd/system/broken.service
EOF
debugfs -R "stat /etc/systemd/system/multi-user.target.wants/broken.service" "$root" 2>/dev/null |
	grep -q symlink || fail "could not add the failing unit to the copy"
"$TOP/tests/bootvm.sh" "$T/broken.img" 900 2>"$T/broken.err" && fail "a boot with a failed unit passed"
grep -q "but: boot-report: system degraded, 1 failed units" "$T/broken.err" &&
	grep -q "boot-report: failed: broken.service" "$T/broken.err" ||
	{ cat "$T/broken.err" >&2; fail "the failed unit is not named"; }
# ... and a boot that does not reach the login prompt in time, with the last console lines.
"$TOP/tests/bootvm.sh" "$DISK" 3 2>"$T/slow.err" && fail "a boot bounded by 3 s passed"
grep -q "no login prompt and boot report within 3 s; last console lines:" "$T/slow.err" ||
	{ cat "$T/slow.err" >&2; fail "a hung boot is not reported"; }
