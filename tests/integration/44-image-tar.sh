# The tar output: pax, sorted, numeric owners, clamped mtimes, xattrs, manifest-only device
# nodes, and a hard-link group whose first name in sorted order is a link in the manifest.
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}
export TZ=UTC
tree=$T/tree
mkdir -p "$tree/a" "$tree/z" "$tree/dev"
echo data >"$tree/z/file"
truncate -s 10M "$tree/holes"
echo new >"$tree/newer"
touch -d @1800000000 "$tree/newer"
python3 -c "import os; os.setxattr('$tree/z/file', 'user.note', b'hello')"
expect_ok "$MKFS" "$tree" "$T/unused" --save-manifest "$T/m0" --format tar
tab() { local IFS=$'\t'; echo "$*"; }
{
	cat "$T/m0"
	tab a/link h 0644 0 0 0 0 0 0 z/file - -
	tab dev/tty c 0620 0 5 1500000000 5 0 0 - - -
	tab dev/sock s 0755 0 0 1500000000 0 0 0 - - -
	sed -En 's/^newer\tf\t0644\t[0-9]+\t[0-9]+/newer\tf\t0600\t123\t456/p' "$T/m0"
} >"$T/m"
expect_ok "$MKFS" "$tree" "$T/out.tar" --manifest "$T/m" --format tar --sde 1700000000
tar --numeric-owner -tvf "$T/out.tar" >"$T/list" 2>/dev/null
grep -Eq '^-rw-r--r-- [0-9]+/[0-9]+ +5 .* \./a/link$' "$T/list" || { cat "$T/list"; fail "a/link should carry the data"; }
grep -Eq '^hrw-r--r-- [0-9]+/[0-9]+ +0 .* \./z/file link to \./a/link$' "$T/list" ||
	{ cat "$T/list"; fail "z/file should link to a/link"; }
grep -q '^crw--w---- 0/5 *5,0 2017-07-14 02:40 \./dev/tty$' "$T/list" || { cat "$T/list"; fail "dev/tty"; }
grep -q 'dev/sock' "$T/list" && fail "a socket was written to the tar"
grep -q '^-rw------- 123/456 *4 2023-11-14 22:13 \./newer$' "$T/list" ||
	{ cat "$T/list"; fail "newer: manifest owner/mode or clamped mtime"; }
grep -aq 'SCHILY.xattr.user.note=hello' "$T/out.tar" || fail "xattr not stored as SCHILY.xattr"
mkdir "$T/x"
tar --xattrs --xattrs-include="*" --exclude=./dev -xpf "$T/out.tar" -C "$T/x" 2>/dev/null
[ "$(cat "$T/x/z/file")" = data ] || fail "extracted content"
[ "$(stat -c %h "$T/x/a/link")" = 2 ] || fail "extracted hard link count"
[ "$(python3 -c "import os; print(os.getxattr('$T/x/a/link', 'user.note').decode())")" = hello ] ||
	fail "extracted xattr"
cmp "$T/x/holes" "$tree/holes" || fail "an all-hole file extracts differently"
[ "$(stat -c %s "$T/out.tar")" -lt 1000000 ] || fail "an all-hole file was stored with its zeros"
