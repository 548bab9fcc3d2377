# test-cost: slow (trees of a hundred thousand entries and more, each written twice)
# Hostile trees for the image writers (issue 38, deliverable 7), as root and as an ordinary user:
# - vfat (tests/tools/fat-write, what a disk's vfat partition from a tree or `file:` goes through):
#   tens of thousands of files with long, non-ASCII and ~N names in directories of 500, every 7th
#   a hard link, a chain of 500 nested directories: fsck.vfat -n clean, mcopy gives every file
#   back (hard links as copies), root's and the user's image the same bytes; a name FAT cannot
#   hold at the bottom of the chain, and a directory of 70 000 files, refused with exit 8 naming
#   the path and what to do, quickly, nothing left.
# - squashfs (tests/tools/mkfs): a root of 100 000 entries whose names hold newlines, ESC
#   sequences, tabs, backslashes, quotes, '%' and non-UTF-8 bytes, hard links and symlinks with
#   such targets, 64 KiB xattrs (the kernel's largest value) on 200 files: unsquashfs -l
#   lists every entry, sqfs2tar's tar matches mkimage's own tar entry by entry (sqfs_compare.py),
#   root's and the user's image the same bytes; an xattr value past 64 KiB refused.
# MKIMAGE_TEST_HOSTILE_FULL=1 makes the trees full size: 300 000 FAT files, a squashfs root of
# 1 000 000 entries (a few minutes); the default sizes keep the test near a minute on 2 cores.
. "$(dirname "$0")/lib.sh"
FATW=$TOP/build/tools/fat-write
MKFS=$TOP/build/tools/mkfs
GEN=$(dirname "$0")/hostile_tree.py
SDE=1700000000
for c in fsck.vfat mcopy unsquashfs sqfs2tar; do
	command -v $c >/dev/null || skip "'$c' missing (make test-deps)"
done
[ -x "$FATW" ] && [ -x "$MKFS" ] || fail "build/tools/fat-write or mkfs missing (make tools)"
if [ -n "${MKIMAGE_TEST_HOSTILE_FULL:-}" ]; then
	FAT_FILES=300000 SQFS_ENTRIES=1000000 SCALE=6 # sqfs2tar alone takes minutes over a million
else
	FAT_FILES=40000 SQFS_ENTRIES=100000 SCALE=1
fi
# An ordinary user: nobody, as test 46 does (no subordinate ids needed by the writers).
AS_USER=()
[ "$(id -u)" != 0 ] || AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# bounded SECONDS CMD...: CMD, which must not take longer (a hang fails the test, never stalls it);
# SECONDS is for the default sizes, scaled for the full ones.
bounded() {
	local limit=$(($1 * SCALE)) rc=0
	shift
	timeout -k 5 "$limit" "$@" || rc=$?
	[ $rc != 124 ] && [ $rc != 137 ] || fail "'$*' took more than $limit s"
	return $rc
}
chmod 755 "$T" "$SHM"
mkdir -p "$T/user" && chmod 777 "$T/user"

# --- vfat -----------------------------------------------------------------------------------
ft=$SHM/fat
mkdir -p "$ft/boot/efi"
read -r files dirs < <(python3 "$GEN" fat "$ft/boot/efi" "$FAT_FILES" 500)
chmod -R a+rX "$ft"
bounded 120 "$MKFS" "$ft" "$T/fm.tar" --format tar --save-manifest "$T/fm" --sde $SDE 2>"$T/log" ||
	{ cat "$T/log"; fail "cannot make the manifest of the FAT tree"; }
rm -f "$T/fm.tar"
ESP_ARGS=(--manifest "$T/fm" --subtree boot/efi --label ESP --volume-id 2a2b2c2d --sde $SDE)
bounded 120 "$FATW" "$ft" "$T/esp.img" "${ESP_ARGS[@]}" 2>"$T/log" ||
	{ cat "$T/log"; fail "fat-write of $files files"; }
bounded 120 "${AS_USER[@]}" "$FATW" "$ft" "$T/user/esp.img" "${ESP_ARGS[@]}" 2>"$T/log" ||
	{ cat "$T/log"; fail "fat-write as an ordinary user"; }
cmp "$T/esp.img" "$T/user/esp.img" || fail "the user's ESP differs from root's"
out=$(bounded 120 fsck.vfat -n "$T/esp.img" 2>&1) || { echo "$out"; fail "fsck.vfat -n"; }
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || { echo "$out" | head; fail "fsck.vfat -n complained"; }
printf '%s\n' "$out" | grep -q " $((files + dirs + 1)) files" ||
	fail "fsck.vfat counts other than $files files and $dirs directories: $out"
mkdir "$T/back"
LC_ALL=C.UTF-8 bounded 300 mcopy -s -n -i "$T/esp.img" '::*' "$T/back/" || fail "mcopy -s"
diff -r "$ft/boot/efi" "$T/back" >"$T/diff" || { head "$T/diff"; fail "the ESP does not hold the tree's files"; }
rm -rf "$T/back" "$T/user/esp.img"

# What FAT cannot hold, deep in the same tree: refused at once, naming the path.
deep=$(find "$ft/boot/efi" -name bottom.txt)
printf x >"$(dirname "$deep")/a:b"
bounded 120 "$MKFS" "$ft" "$T/fm.tar" --format tar --save-manifest "$T/fm2" --sde $SDE 2>/dev/null ||
	fail "cannot make the manifest with 'a:b'"
rm -f "$T/fm.tar"
expect_fail 8 "the name of 'boot/efi/.*/n9/a:b' holds a character FAT cannot hold" \
	bounded 60 "$FATW" "$ft" "$T/bad.img" --manifest "$T/fm2" --subtree boot/efi
[ ! -e "$T/bad.img" ] && [ -z "$(ls "$T" | grep 'bad\.img')" ] || fail "a refused ESP left $(ls "$T")"
rm -f "$(dirname "$deep")/a:b"
mkdir "$ft/boot/efi/wide"
python3 -c 'import os, sys
for i in range(70000):
    os.close(os.open(os.path.join(sys.argv[1], "F%06d.TXT" % i), os.O_CREAT | os.O_WRONLY, 0o644))' \
	"$ft/boot/efi/wide"
bounded 120 "$MKFS" "$ft" "$T/fm.tar" --format tar --save-manifest "$T/fm3" --sde $SDE 2>/dev/null ||
	fail "cannot make the manifest with a directory of 70 000 files"
rm -f "$T/fm.tar"
expect_fail 8 "directory 'boot/efi/wide' needs 70002 entries .*FAT allows 65536; move some of its files into subdirectories" \
	bounded 60 "${AS_USER[@]}" "$FATW" "$ft" "$T/user/bad.img" --manifest "$T/fm3" --subtree boot/efi
[ -z "$(ls "$T/user")" ] || fail "a refused ESP left $(ls "$T/user")"
rm -rf "$ft"

# --- squashfs ---------------------------------------------------------------------------------
st=$SHM/sqfs
mkdir -p "$st"
entries=$(python3 "$GEN" sqfs "$st" "$SQFS_ENTRIES")
chmod -R a+rX "$st"
bounded 300 "$MKFS" "$st" "$T/sq-ref.tar" --format tar --save-manifest "$T/sm" --sde $SDE 2>"$T/log" ||
	{ cat "$T/log"; fail "cannot make the manifest of the squashfs tree"; }
[ "$(python3 "$GEN" bigxattr "$T/sm" 200 65536)" = 200 ] || fail "no xattrs set"
bounded 300 "$MKFS" "$st" "$T/sq-ref.tar" --manifest "$T/sm" --format tar --sde $SDE 2>"$T/log" ||
	{ cat "$T/log"; fail "mkimage's tar of the squashfs tree"; }
bounded 300 "$MKFS" "$st" "$T/sq.img" --manifest "$T/sm" --format squashfs --sde $SDE 2>"$T/log" ||
	{ cat "$T/log"; fail "squashfs of $entries entries"; }
bounded 300 "${AS_USER[@]}" "$MKFS" "$st" "$T/user/sq.img" --manifest "$T/sm" --format squashfs --sde $SDE \
	2>"$T/log" || { cat "$T/log"; fail "squashfs as an ordinary user"; }
cmp "$T/sq.img" "$T/user/sq.img" || fail "the user's squashfs differs from root's"
rm -f "$T/user/sq.img"
# unsquashfs -l prints each entry's whole path, newlines and all: one line starts each entry
listed=$(bounded 300 unsquashfs -l "$T/sq.img" | grep -c '^squashfs-root')
[ "$listed" = $((entries + 1)) ] || fail "unsquashfs -l lists $listed entries, not $entries and the root"
bounded 300 sqfs2tar "$T/sq.img" >"$T/sq.tar" 2>"$T/log" || { cat "$T/log"; fail "sqfs2tar"; }
python3 "$(dirname "$0")/sqfs_compare.py" "$T/sq-ref.tar" "$T/sq.tar" >"$T/cmp" ||
	{ head -20 "$T/cmp" | cut -c1-300; fail "the squashfs differs from mkimage's tar of the same tree"; }
rm -f "$T/sq.tar" "$T/sq-ref.tar"

# An xattr value the kernel could never have given (past 64 KiB): refused, nothing written.
cp "$T/sm" "$T/sm-big"
python3 "$GEN" bigxattr "$T/sm-big" 1 65537 >/dev/null
expect_fail 8 "has the extended attribute .user\.big. of 65537 bytes, more than the 65536 Linux can read back: remove it in a hook" bounded 120 "$MKFS" "$st" "$T/bad.img" --manifest "$T/sm-big" \
	--format squashfs --sde $SDE
[ ! -e "$T/bad.img" ] || fail "a refused squashfs left its output"
