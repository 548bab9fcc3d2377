# The ext4 writer, run as an unprivileged user, on a tree with every file type and the awkward
# cases: odd names, deep paths, 10 000 entries in one directory, a 1 GiB sparse file, a 4095-byte
# symlink target, hard-link groups, setuid/setgid/sticky, xattrs, owners and device nodes that
# exist only in the manifest. Read back with debugfs field by field; e2fsck -fn must be clean.
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}
CHECK=$(dirname "$0")/40-image-check.py
SDE=1700000000
# Unprivileged when we can switch users; as an ordinary user we already are one.
as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }

chmod 755 "$T"
tree=$T/tree
mkdir -p "$tree/etc" "$tree/big" "$tree/dev" "$tree/tmp" "$tree/usr/bin" "$tree/run"
echo "root:x:0:0" >"$tree/etc/passwd"
echo spaces >"$tree/etc/a file with spaces"
echo unicode >"$tree/etc/ünïcødé-文件"
name255=$(printf 'n%.0s' $(seq 255))
echo long >"$tree/etc/$name255"
deep=$tree
for i in $(seq 60); do deep=$deep/level$i; done
mkdir -p "$deep" && echo deep >"$deep/bottom"
python3 -c "
import os
for i in range(10000):
    open('$tree/big/entry-%05d' % i, 'w').write('x' * (i % 7))
os.symlink('t' * 4095, '$tree/usr/bin/longlink')
os.setxattr('$tree/etc/passwd', 'user.comment', b'the password file')
"
ln -s passwd "$tree/etc/shortlink"
head -c 3000000 /dev/urandom >"$tree/usr/bin/tool"
cp "$tree/usr/bin/tool" "$tree/usr/bin/suid" && chmod 4755 "$tree/usr/bin/suid"
cp "$tree/usr/bin/tool" "$tree/usr/bin/sgid" && chmod 2755 "$tree/usr/bin/sgid"
chmod 1777 "$tree/tmp"
echo hard >"$tree/usr/bin/h1" && ln "$tree/usr/bin/h1" "$tree/etc/h2" && ln "$tree/usr/bin/h1" "$tree/big/h3"
echo pair >"$tree/etc/p1" && ln "$tree/etc/p1" "$tree/usr/p2"
truncate -s 1G "$tree/sparse"
echo start | dd of="$tree/sparse" conv=notrunc status=none
echo middle | dd of="$tree/sparse" bs=1M seek=512 conv=notrunc status=none
echo end | dd of="$tree/sparse" bs=1 seek=$((1024 * 1024 * 1024 - 4)) conv=notrunc status=none
mkfifo "$tree/run/fifo"
touch -d @2000000000 "$tree/etc/future"
chmod -R a+rX "$tree"

# The manifest: from lstat(), then what packages would say - owners, caps, device nodes.
expect_ok "$MKFS" "$tree" "$T/unused.img" --save-manifest "$T/m0" --sde $SDE
python3 - "$T/m0" "$T/manifest" <<'EOF'
import sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')
out = []
for l in lines:
    if not l:
        continue
    f = l.split(b'\t')
    if f[0] == b'usr/bin/tool':
        f[3], f[4], f[2] = b'1000', b'100', b'0750'
    if f[0] == b'usr/bin/suid':
        f[11] = b'security.capability=0100000200200000000000000000000000000000'
    if f[0] == b'etc/p1':
        f[11] = (b'system.posix_acl_access=02000000010006' + b'00ffffffff' + b'0200040' + b'0e8030000'
                 + b'04000400ffffffff' + b'10000400ffffffff' + b'20000400ffffffff')
    if f[0] == b'etc':
        f[3], f[4] = b'4294967294', b'70000'
    out.append(b'\t'.join(f))
dev = lambda p, t, ma, mi: b'\t'.join([p, t, b'0620', b'0', b'5', b'1600000000', ma, mi,
                                      b'0', b'-', b'-', b'-'])
out.append(dev(b'dev/null', b'c', b'1', b'3'))
out.append(dev(b'dev/sda', b'b', b'8', b'0'))
out.append(dev(b'dev/wide', b'c', b'300', b'70000'))
out.append(dev(b'run/sock', b's', b'0', b'0'))
open(sys.argv[2], 'wb').write(b'\n'.join(out) + b'\n')
EOF

mkdir -m 777 "$T/img"
for perturb in 85 170; do # what fills fresh heap memory must never reach the image
	MALLOC_PERTURB_=$perturb as_user "$MKFS" "$tree" "$T/img/root-$perturb.ext4" \
		--manifest "$T/manifest" --sde $SDE --seed feed --label testroot \
		--device /dev/console:char:5:1:600:0:5 2>"$T/err" ||
		{ cat "$T/err"; fail "the unprivileged writer failed"; }
done
cmp "$T/img/root-85.ext4" "$T/img/root-170.ext4" || fail "uninitialised bytes reach the image"
mv "$T/img/root-85.ext4" "$T/img/root.ext4" && rm "$T/img/root-170.ext4"
[ "$(stat -c %U "$T/img/root.ext4")" = nobody ] || [ "$(id -u)" != 0 ] || fail "not written as nobody"
ls "$T/img" | grep -v '^root.ext4$' && fail "temporary files left beside the image"
e2fsck -fn "$T/img/root.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn is not clean"; }

dumpe2fs -h "$T/img/root.ext4" 2>/dev/null >"$T/sb"
for f in has_journal ext_attr resize_inode dir_index filetype extent 64bit flex_bg sparse_super \
	large_file huge_file dir_nlink extra_isize metadata_csum; do
	grep -q "^Filesystem features:.* $f\b" "$T/sb" || fail "feature $f missing"
done
grep -q '^Inode size:.*256' "$T/sb" || fail "inodes are not 256 bytes"
grep -q '^Filesystem volume name:.*testroot' "$T/sb" || fail "label not set"
grep -q "^Filesystem created:.*Nov 14 22:13:20 2023" "$T/sb" || fail "mkfs time is not SDE"
grep -q "^Last write time:.*Nov 14 22:13:20 2023" "$T/sb" || fail "write time is not SDE"
grep -q "^Last checked:.*Nov 14 22:13:20 2023" "$T/sb" || fail "last check time is not SDE"

python3 "$CHECK" "$T/img/root.ext4" "$T/manifest" "$tree" $SDE big/entry- >"$T/bad" ||
	{ cat "$T/bad"; fail "image differs from the manifest"; }

# The big directory: all entries, indexed.
debugfs -R "ls -p /big" "$T/img/root.ext4" 2>/dev/null | grep -c '/entry-' >"$T/count"
[ "$(cat "$T/count")" = 10000 ] || fail "big/ holds $(cat "$T/count") entries, not 10000"
debugfs -R "stat /big" "$T/img/root.ext4" 2>/dev/null | grep -q 'Flags: 0x81000' ||
	fail "big/ is not an htree directory"
debugfs -R "cat /big/entry-09999" "$T/img/root.ext4" 2>/dev/null | grep -qx 'xxx' ||
	fail "big/entry-09999 has the wrong content"

# The sparse file keeps its holes: three data blocks, not 1 GiB.
debugfs -R "stat /sparse" "$T/img/root.ext4" 2>/dev/null >"$T/sparse"
grep -q 'Blockcount: 24$' "$T/sparse" || { cat "$T/sparse"; fail "sparse file lost its holes"; }
for at in 0:start 131072:middle 262143:end; do
	blk=$(debugfs -R "bmap /sparse ${at%%:*}" "$T/img/root.ext4" 2>/dev/null)
	off=$([ "${at%%:*}" = 262143 ] && echo 4092 || echo 0)
	dd if="$T/img/root.ext4" bs=4096 skip="$blk" count=1 status=none | tail -c +$((off + 1)) |
		head -c ${#at} | grep -q "${at#*:}" || fail "sparse file: '${at#*:}' not at block ${at%%:*}"
done
# The device table adds /dev/console; the manifest's clamped future mtime is SDE.
debugfs -R "stat /dev/console" "$T/img/root.ext4" 2>/dev/null >"$T/console"
grep -q 'Type: character special' "$T/console" && grep -q 'Device major/minor number: 05:01' "$T/console" &&
	grep -q 'Group:     5' "$T/console" || { cat "$T/console"; fail "/dev/console from the device table"; }
# Hard links share one inode.
i1=$(debugfs -R "stat /usr/bin/h1" "$T/img/root.ext4" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
i3=$(debugfs -R "stat /big/h3" "$T/img/root.ext4" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
[ -n "$i1" ] && [ "$i1" = "$i3" ] || fail "hard links do not share an inode ($i1, $i3)"
# The capability xattr's value survives byte for byte.
debugfs -R "ea_get -f $T/cap /usr/bin/suid security.capability" "$T/img/root.ext4" >/dev/null 2>&1
[ "$(od -An -tx1 "$T/cap" | tr -d ' \n')" = 0100000200200000000000000000000000000000 ] ||
	fail "security.capability value differs"
# A POSIX ACL is stored in ext4's on-disk ACL form (version 1, short entries without ids).
debugfs -R "stat /etc/p1" "$T/img/root.ext4" 2>/dev/null | grep -q 'system.posix_acl_access (28) = 01 00 00 00 01 00 06 00 02 00 04 00 e8 03 00 00 04 00 04 00 10 00 04 00 20 00 04 00 $' ||
	fail "POSIX ACL not in ext4's on-disk form"
# An image with an explicit size is exactly that size, and sparse on disk.
as_user "$MKFS" "$tree" "$T/img/fixed.ext4" --manifest "$T/manifest" --sde $SDE --size 1500M 2>"$T/err" ||
	{ cat "$T/err"; fail "fixed-size image failed"; }
[ "$(stat -c %s "$T/img/fixed.ext4")" = $((1500 * 1024 * 1024)) ] || fail "fixed size not honoured"
[ "$(stat -c %b "$T/img/fixed.ext4")" -lt $((200 * 1024 * 2)) ] || fail "image file is not sparse"
e2fsck -fn "$T/img/fixed.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fixed image: e2fsck"; }

# 65 001 subdirectories: past ext4's 16-bit link count, so dir_nlink's "1" (e2fsck agrees).
python3 - "$T/many" <<'PY'
import sys
with open(sys.argv[1], 'w') as out:
    out.write('%\td\t0755\t0\t0\t0\t0\t0\t0\t-\t-\t-\nmany\td\t0755\t0\t0\t0\t0\t0\t0\t-\t-\t-\n')
    for i in range(65001):
        out.write('many/d%05d\td\t0755\t0\t0\t0\t0\t0\t0\t-\t-\t-\n' % i)
PY
mkdir "$T/empty"
as_user "$MKFS" "$T/empty" "$T/img/many.ext4" --manifest "$T/many" --sde $SDE 2>"$T/err" ||
	{ cat "$T/err"; fail "65 001 subdirectories"; }
e2fsck -fn "$T/img/many.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "many subdirs: e2fsck"; }
debugfs -R "stat /many" "$T/img/many.ext4" 2>/dev/null | grep -q '^Links: 1 ' || fail "many/ link count is not 1"
true

# A manifest that lists lost+found (a tree copied from an ext4 root) describes mke2fs's one.
mkdir -p "$T/lf/lost+found" && echo x >"$T/lf/lost+found/#12" && chmod -R a+rX "$T/lf"
as_user "$MKFS" "$T/lf" "$T/img/lf.ext4" --sde $SDE 2>"$T/err" || { cat "$T/err"; fail "lost+found tree"; }
e2fsck -fn "$T/img/lf.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "lost+found: e2fsck"; }
[ "$(debugfs -R "ls /" "$T/img/lf.ext4" 2>/dev/null | grep -o 'lost+found' | wc -l)" = 1 ] ||
	fail "lost+found listed twice"
debugfs -R "cat /lost+found/#12" "$T/img/lf.ext4" 2>/dev/null | grep -qx x || fail "lost+found content"
