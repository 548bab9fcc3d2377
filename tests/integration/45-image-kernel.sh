# The kernel reads what we write: mount the image read-only through a loop device (root only,
# skipped where loop devices are unavailable) and compare every name, type, mode, owner, size,
# mtime, link target, device number, hard-link count, xattr and byte with the source tree.
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}
if [ "$(id -u)" != 0 ]; then
	skip "mounting a loop device needs root"
fi
tree=$T/tree
mkdir -p "$tree/big" "$tree/dev" "$tree/usr/bin" "$tree/tmp" "$tree/home/u"
python3 - "$tree" <<'EOF'
import os, sys
t = sys.argv[1]
for i in range(3000):
    open(f'{t}/big/n{i:05d}-{"x" * (i % 50)}', 'w').write(str(i) * (i % 5))
os.symlink('/' + 'L' * 3000, f'{t}/usr/bin/slow')
os.symlink('fast', f'{t}/usr/bin/fast')
open(f'{t}/usr/bin/prog', 'wb').write(os.urandom(3 << 20))
os.setxattr(f'{t}/usr/bin/prog', 'user.kind', b'binary')
os.setxattr(f'{t}/usr/bin/prog', 'security.capability', bytes.fromhex('0100000200200000000000000000000000000000'))
EOF
truncate -s 300M "$tree/usr/sparse" && echo tail >>"$tree/usr/sparse"
ln "$tree/usr/bin/prog" "$tree/usr/bin/prog2" && ln "$tree/usr/bin/prog" "$tree/home/prog3"
chmod 4755 "$tree/usr/bin/prog" && chmod 1777 "$tree/tmp"
chown -R 1000:1000 "$tree/home/u" && chmod 700 "$tree/home/u"
mknod "$tree/dev/null" c 1 3 && mknod "$tree/dev/wide" c 300 70000 && mknod "$tree/dev/sda" b 8 0
mkfifo "$tree/dev/fifo"
find "$tree" -exec touch -h -d @1600000000 {} +

expect_ok "$MKFS" "$tree" "$T/img.ext4" --sde 1700000000
mkdir "$T/mnt"
if ! mount -o loop,ro,noload "$T/img.ext4" "$T/mnt" 2>"$T/mount.err"; then
	skip "cannot mount a loop device here: $(cat "$T/mount.err")"
fi
# Directory sizes and link counts differ between filesystems (and lost+found is extra).
listing() {
	(cd "$1" && find . -path ./lost+found -prune -o \( -type d -printf '%P d %m %U %G - %T@ - -\n' \) \
		-o -printf '%P %y %m %U %G %s %T@ %n %l\n' | LC_ALL=C sort)
	(cd "$1" && find . \( -type c -o -type b \) -exec stat -c '%n %t:%T' {} + | LC_ALL=C sort)
}
rc=0
(
	set -e
	listing "$tree" >"$T/tree.list"
	listing "$T/mnt" >"$T/mnt.list"
	diff -u "$T/tree.list" "$T/mnt.list" >"$T/diff"
	diff -r --no-dereference "$tree/big" "$T/mnt/big"
	cmp "$tree/usr/bin/prog" "$T/mnt/usr/bin/prog"
	cmp "$tree/usr/sparse" "$T/mnt/usr/sparse"
	python3 -c "import os, sys; sys.exit(os.getxattr('$T/mnt/usr/bin/prog', 'user.kind') != b'binary')"
	python3 -c "import os, sys; sys.exit(os.getxattr('$T/mnt/usr/bin/prog', 'security.capability').hex() != '0100000200200000000000000000000000000000')"
) >"$T/check.out" 2>&1 || rc=$?
umount "$T/mnt"
[ "$rc" = 0 ] || { cat "$T/check.out"; head -40 "$T/diff" 2>/dev/null; fail "the mounted image differs from the tree"; }
[ "$(wc -l <"$T/mnt.list")" -gt 3000 ] || fail "listing too short"
