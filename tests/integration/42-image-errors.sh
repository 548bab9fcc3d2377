# Every failure of the image writer: a specific message, exit status 8, nothing left behind and
# an existing output untouched.
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}

tree=$T/tree
mkdir -p "$tree/data" "$T/o"
for i in 1 2 3 4 5; do head -c 4000000 /dev/urandom >"$tree/data/f$i"; done
echo hi >"$tree/small"
expect_ok "$MKFS" "$tree" "$T/o/unused" --save-manifest "$T/m"
rm -f "$T/o/unused"
echo "previous image" >"$T/o/img"

# left_clean: the output is the previous one and no temporary file remains.
left_clean() {
	[ "$(cat "$T/o/img")" = "previous image" ] || fail "$1: the existing output was touched"
	[ "$(ls "$T/o")" = img ] || fail "$1: left behind: $(ls "$T/o" | tr '\n' ' ')"
}

# Too small: the message names the size the tree needs, and that size works.
expect_fail 8 "image size 9 MiB is too small: the tree needs about [0-9]+ MiB" \
	"$MKFS" "$tree" "$T/o/img" --size 9M
left_clean "too small"
need=$(sed -n 's/.*needs about \([0-9]*\) MiB.*/\1/p' "$T/err")
[ "$need" -gt 20 ] && [ "$need" -lt 64 ] || fail "implausible needed size '$need' MiB"
expect_ok "$MKFS" "$tree" "$T/o/fits" --size "${need}M"
e2fsck -fn "$T/o/fits" >/dev/null 2>&1 || fail "the image at the suggested size is not clean"
rm -f "$T/o/fits"
expect_fail 8 "too small for ext4 with a journal; use at least 8 MiB" \
	"$MKFS" "$tree" "$T/o/img" --size 4M
left_clean "under 8 MiB"

# bad_manifest NAME PATTERN LINE: the manifest plus one line fails with PATTERN.
bad_manifest() {
	{ cat "$T/m"; printf '%s\n' "$3"; } >"$T/bad"
	expect_fail 8 "$2" "$MKFS" "$tree" "$T/o/img" --manifest "$T/bad"
	left_clean "$1"
}
tab() { local IFS=$'\t'; echo "$*"; }
bad_manifest "missing parent" "the parent of 'nodir/x' is missing" \
	"$(tab nodir/x p 0644 0 0 0 0 0 0 - - -)"
bad_manifest "parent not a dir" "the parent of 'small/x' is not a directory" \
	"$(tab small/x p 0644 0 0 0 0 0 0 - - -)"
bad_manifest "file not in tree" "cannot read 'gone' from the staging tree: No such file" \
	"$(tab gone f 0644 0 0 0 0 0 5 - - -)"
bad_manifest "dangling hard link" "hard link 'data/h' names 'nowhere', which is not a file" \
	"$(tab data/h h 0644 0 0 0 0 0 0 nowhere - -)"
bad_manifest "hard link to a dir" "hard link 'data/h' names 'data', which is not a file" \
	"$(tab data/h h 0644 0 0 0 0 0 0 data - -)"
bad_manifest "name too long" "a name of 256 bytes is longer than ext4's 255" \
	"$(tab "data/$(printf 'x%.0s' $(seq 256))" p 0644 0 0 0 0 0 0 - - -)"
bad_manifest "target too long" "a symlink target of 4096 bytes is longer than ext4's 4095" \
	"$(tab data/l l 0777 0 0 0 0 0 0 "$(printf 't%.0s' $(seq 4096))" - -)"
bad_manifest "dot-dot name" "manifest: 'data/..' is not a usable path" "$(tab data/.. p 0644 0 0 0 0 0 0 - - -)"
bad_manifest "empty name" "manifest: 'data/' is not a usable path" "$(tab data/ p 0644 0 0 0 0 0 0 - - -)"
bad_manifest "lost+found not a dir" "'lost\+found' must be a directory" "$(tab lost+found p 0644 0 0 0 0 0 0 - - -)"
bad_manifest "unknown type" "'data/q' has an unknown type" "$(tab data/q q 0644 0 0 0 0 0 0 - - -)"

# More names for one inode than ext4's link count holds.
{ cat "$T/m"; for i in $(seq 65000); do tab "data/l$i" h 0644 0 0 0 0 0 0 small - -; done; } >"$T/bad"
expect_fail 8 "'small' has 65001 names; an ext4 inode holds at most 65000 links" \
	"$MKFS" "$tree" "$T/o/img" --manifest "$T/bad"
left_clean "too many links"
expect_fail 8 "image.uuid 'not-a-uuid' is not a UUID" "$MKFS" "$tree" "$T/o/img" --uuid not-a-uuid
left_clean "bad uuid"
expect_fail 8 "image.hash_seed '1234' is not a UUID" "$MKFS" "$tree" "$T/o/img" --hash-seed 1234
left_clean "bad hash seed"

# The tree is data, never a path to follow: a regular file in the manifest that is a symlink or
# a directory in the tree is refused.
ln -s /etc/passwd "$tree/escape"
bad_manifest "symlink in tree" "cannot read 'escape' from the staging tree" \
	"$(tab escape f 0644 0 0 0 0 0 5 - - -)"
mkdir "$tree/adir"
bad_manifest "dir in tree" "'adir' is a regular file in the manifest but not in the staging tree" \
	"$(tab adir f 0644 0 0 0 0 0 0 - - -)"
rm -r "$tree/escape" "$tree/adir"

# Interrupted: exit 130 and nothing left. No timing: the writer blocks reading its manifest from
# a FIFO (its signal handler is installed by then), gets SIGINT, then the manifest, and stops at
# the first entry it would write.
for fmt in ext4 tar; do
	mkfifo "$T/fifo"
	"$MKFS" "$tree" "$T/o/img" --manifest "$T/fifo" --format $fmt 2>"$T/err" &
	pid=$!
	exec 3>"$T/fifo"
	kill -INT $pid
	cat "$T/m" >&3
	exec 3>&-
	rc=0 && wait $pid || rc=$?
	rm "$T/fifo"
	[ "$rc" = 130 ] || { cat "$T/err"; fail "$fmt: interrupted writer exited $rc, not 130"; }
	grep -q "interrupted: the unfinished .* is removed" "$T/err" || { cat "$T/err"; fail "$fmt: no message"; }
	left_clean "interrupted $fmt"
done

# An unwritable place for the output.
if [ "$(id -u)" != 0 ]; then
	chmod 555 "$T/o"
	expect_fail 8 "cannot create '$T/o/img.tmp-" "$MKFS" "$tree" "$T/o/img"
	chmod 755 "$T/o"
	left_clean "read-only directory"
fi
expect_fail 8 "cannot create '$T/nodir/img.tmp-[0-9]+': No such file or directory" \
	"$MKFS" "$tree" "$T/nodir/img"
expect_fail 8 "cannot create" "$MKFS" "$tree" "$T/nodir/img" --format tar
left_clean "tar in a missing directory"
true
