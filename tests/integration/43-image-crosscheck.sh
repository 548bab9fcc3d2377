# Cross-check with e2fsprogs: the same root-owned tree written by `mke2fs -t ext4 -d` and by
# mkimage lists the same names, types, modes, owners, sizes, device numbers, link counts and
# link targets under debugfs. Runs only as root (the tree needs device nodes and owners).
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}
if [ "$(id -u)" != 0 ]; then
	skip "needs root to make a tree with owners and device nodes"
fi
tree=$T/tree
mkdir -p "$tree/dev" "$tree/etc/ssl" "$tree/usr/bin" "$tree/usr/lib/x" "$tree/tmp" "$tree/home/u"
for i in $(seq 1 400); do echo "lib $i" >"$tree/usr/lib/x/lib$i.so"; done
head -c 2000000 /dev/urandom >"$tree/usr/bin/prog"
cp "$tree/usr/bin/prog" "$tree/usr/bin/su" && chmod 4755 "$tree/usr/bin/su"
chmod 1777 "$tree/tmp"
chown -R 1000:1000 "$tree/home/u" && echo me >"$tree/home/u/.profile" && chown 1000:1000 "$tree/home/u/.profile"
chmod 700 "$tree/home/u"
mknod "$tree/dev/null" c 1 3 && mknod "$tree/dev/sda1" b 8 1 && mknod "$tree/dev/wide" c 300 70000
mkfifo "$tree/dev/initctl"
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$tree/dev/log')"
ln -s ../usr/bin/prog "$tree/etc/prog"
python3 -c "import os; os.symlink('/' + 'L' * 200, '$tree/etc/long')"
ln "$tree/usr/bin/prog" "$tree/etc/prog-hard"
echo "with space" >"$tree/etc/ssl/a b"
echo "utf8" >"$tree/etc/ssl/çà-😀"
python3 -c "import os; os.setxattr('$tree/usr/bin/prog', 'user.mime', b'binary')"
chmod 755 "$tree"

expect_ok "$MKFS" "$tree" "$T/mki.ext4" --sde 1700000000
size=$(stat -c %s "$T/mki.ext4")
E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -d "$tree" "$T/e2fs.ext4" "$((size / 1024))k" ||
	fail "mke2fs -d failed"
e2fsck -fn "$T/mki.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck on mkimage's image"; }
(cd "$tree" && find . -mindepth 1 | sed 's|^\./||' | LC_ALL=C sort) >"$T/paths"
echo lost+found >>"$T/paths"
python3 "$(dirname "$0")/40-image-check.py" --list "$T/e2fs.ext4" "$T/paths" >"$T/e2fs.list"
python3 "$(dirname "$0")/40-image-check.py" --list "$T/mki.ext4" "$T/paths" >"$T/mki.list"
[ "$(wc -l <"$T/mki.list")" -gt 400 ] || fail "listing is too short"
grep -q '^dev/wide character special 0644 0 0 0 300:70000 1 -$' "$T/mki.list" ||
	fail "listing lacks the wide device"
diff -u "$T/e2fs.list" "$T/mki.list" >"$T/diff" || { head -50 "$T/diff"; fail "listings differ"; }
