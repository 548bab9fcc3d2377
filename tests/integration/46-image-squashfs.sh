# The squashfs format: a tree with every file type, owners, setuid, a capability, hard links,
# devices, a sparse file; written as squashfs with every compression (as an ordinary user) and
# compared entry by entry with mkimage's own tar of the same view (sqfs2tar against it: owner,
# mode, size, mtime, link target, device numbers, xattrs), hard links one inode (rdsquashfs),
# unsquashfs extracts it, two builds sha256-identical, padded to 4096. Recipe errors: the
# compression key on another format (exit 2).
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}
SDE=1700000000
command -v sqfs2tar >/dev/null && command -v unsquashfs >/dev/null && command -v rdsquashfs >/dev/null ||
	skip "squashfs-tools and squashfs-tools-ng are needed"
as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }

chmod 755 "$T"
tree=$T/tree
mkdir -p "$tree/etc" "$tree/usr/bin" "$tree/tmp" "$tree/run" "$tree/empty-dir"
echo "root:x:0:0" >"$tree/etc/passwd"
head -c 3000000 /dev/urandom >"$tree/usr/bin/tool"
cp "$tree/usr/bin/tool" "$tree/usr/bin/suid" && chmod 4755 "$tree/usr/bin/suid"
echo hard >"$tree/usr/bin/h1" && ln "$tree/usr/bin/h1" "$tree/etc/h2"
ln -s passwd "$tree/etc/shortlink"
: >"$tree/etc/empty"
chmod 1777 "$tree/tmp"
truncate -s 64M "$tree/sparse"
echo middle | dd of="$tree/sparse" bs=1M seek=32 conv=notrunc status=none
mkfifo "$tree/run/fifo"
python3 -c "import os; os.setxattr('$tree/etc/passwd', 'user.comment', b'the password file')"
chmod -R a+rX "$tree"

expect_ok "$MKFS" "$tree" "$T/unused.img" --save-manifest "$T/m0" --sde $SDE
python3 - "$T/m0" "$T/manifest" <<'EOF'
import sys
out = []
for l in open(sys.argv[1], 'rb').read().split(b'\n'):
    if not l:
        continue
    f = l.split(b'\t')
    if f[0] == b'usr/bin/tool':
        f[3], f[4], f[2] = b'1000', b'100', b'0750'
    if f[0] == b'usr/bin/suid':
        f[11] = b'security.capability=0100000200200000000000000000000000000000'
    if f[0] == b'etc':
        f[3], f[4] = b'4294967294', b'70000'
    out.append(b'\t'.join(f))
dev = lambda p, t, ma, mi: b'\t'.join([p, t, b'0620', b'0', b'5', b'1600000000', ma, mi,
                                      b'0', b'-', b'-', b'-'])
out.append(dev(b'dev/null', b'c', b'1', b'3'))
out.append(dev(b'dev/wide', b'b', b'300', b'70000'))
out.append(b'\t'.join([b'dev', b'd', b'0755', b'0', b'0', b'1600000000', b'0', b'0', b'0', b'-', b'-', b'-']))
open(sys.argv[2], 'wb').write(b'\n'.join(sorted(out)) + b'\n')
EOF

mkdir -m 777 "$T/img"
expect_ok "$MKFS" "$tree" "$T/img/ref.tar" --manifest "$T/manifest" --sde $SDE --format tar
for c in zstd xz lz4 gzip none; do
	as_user "$MKFS" "$tree" "$T/img/$c.sqfs" --manifest "$T/manifest" --sde $SDE \
		--format squashfs --compression $c 2>"$T/err" || { cat "$T/err"; fail "squashfs $c"; }
	[ $(($(stat -c %s "$T/img/$c.sqfs") % 4096)) = 0 ] || fail "$c: not padded to 4096 bytes"
	sqfs2tar "$T/img/$c.sqfs" >"$T/img/$c.tar" 2>"$T/err" || { cat "$T/err"; fail "sqfs2tar $c"; }
	python3 "$(dirname "$0")/sqfs_compare.py" "$T/img/ref.tar" "$T/img/$c.tar" >"$T/cmp" ||
		{ cat "$T/cmp"; fail "$c: the squashfs differs from the tar"; }
	rm -rf "$T/x"
	unsquashfs -d "$T/x" "$T/img/$c.sqfs" >/dev/null 2>&1 || fail "unsquashfs cannot extract the $c image"
	cmp "$T/x/usr/bin/tool" "$tree/usr/bin/tool" || fail "$c: tool extracts differently"
	cmp "$T/x/sparse" "$tree/sparse" || fail "$c: sparse extracts differently"
done
# what the tar comparison cannot see: one inode for the hard links, the sparse blocks
rdsquashfs -s /etc/h2 "$T/img/zstd.sqfs" | grep -qx 'Hard link count: 2' || fail "h2: nlink"
[ "$(rdsquashfs -s /etc/h2 "$T/img/zstd.sqfs" | grep '^Inode number')" = \
  "$(rdsquashfs -s /usr/bin/h1 "$T/img/zstd.sqfs" | grep '^Inode number')" ] || fail "h1, h2: two inodes"
[ "$(stat -c %s "$T/img/zstd.sqfs")" -lt 3500000 ] || fail "the sparse file was stored with its zeros"
unsquashfs -s "$T/img/none.sqfs" | grep -qx 'Data is uncompressed' || fail "none: data compressed"
unsquashfs -s "$T/img/zstd.sqfs" | grep -qx 'Compression zstd' || fail "zstd: compression"

# byte-reproducible: again, and as root when we are
"$MKFS" "$tree" "$T/img/again.sqfs" --manifest "$T/manifest" --sde $SDE --format squashfs 2>"$T/err" ||
	{ cat "$T/err"; fail "second build"; }
[ "$(sha256sum <"$T/img/again.sqfs")" = "$(sha256sum <"$T/img/zstd.sqfs")" ] ||
	fail "two builds of the same tree differ"

# an extended attribute squashfs cannot hold (only user., trusted., security.): exit 8, named
sed 's|^\(etc/empty\t.*\t\)-$|\1system.posix_acl_access=0200000001000600ffffffff|' "$T/manifest" >"$T/acl"
grep -q posix_acl "$T/acl" || fail "the ACL fixture was not made"
expect_fail 8 "'/etc/empty' has the extended attribute 'system.posix_acl_access', which squashfs cannot hold" \
	"$MKFS" "$tree" "$T/img/acl.sqfs" --manifest "$T/acl" --sde $SDE --format squashfs
[ -e "$T/img/acl.sqfs" ] && fail "a refused image was left at its output path"

# recipe keys: compression on another format, a bad value, a label on a squashfs partition
recipe() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
$1
R
}
recipe 'image = { format = "ext4"; compression = "xz"; };'
expect_fail 2 "r.cfg:4: image 'compression' applies to format = \"squashfs\" only" "$MKIMAGE" --check "$T/r.cfg"
recipe 'image = { format = "squashfs"; compression = "brotli"; };'
expect_fail 2 "r.cfg:4: .*compression.*\"zstd\", \"xz\", \"lz4\", \"gzip\" or \"none\"" "$MKIMAGE" --check "$T/r.cfg"
recipe 'image = { format = "squashfs"; compression = "xz"; };'
expect_ok "$MKIMAGE" --check "$T/r.cfg"
"$MKIMAGE" --check "$T/r.cfg" 2>/dev/null | grep -q 'compression = "xz"' ||
	fail "--check does not print the compression"
recipe 'disk = { partitions = ( { name = "root"; type = "root"; contents = "root"; compression = "lz4"; } ); };'
expect_fail 2 "r.cfg:4: partition 'root' has 'compression' but format \"ext4\"" "$MKIMAGE" --check "$T/r.cfg"
recipe 'disk = { partitions = ( { name = "root"; type = "root"; contents = "root"; format = "squashfs"; compression = "none"; } ); };'
expect_ok "$MKIMAGE" --check "$T/r.cfg"
recipe 'disk = { partitions = ( { name = "root"; type = "root"; contents = "root"; format = "squashfs"; label = "x"; } ); };'
expect_fail 2 "r.cfg:4: partition 'root' is squashfs, which has no label" "$MKIMAGE" --check "$T/r.cfg"
