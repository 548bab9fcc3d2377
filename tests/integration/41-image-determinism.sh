# Reproducibility: the same tree gives sha256-identical ext4 and tar output whatever the time,
# cwd, umask, TMPDIR, the order the tree was created in or what fills fresh heap memory
# (MALLOC_PERTURB_: no uninitialised byte reaches the output); the UUID and hash seed follow the
# seed (or the recipe), timestamps follow SOURCE_DATE_EPOCH.
. "$(dirname "$0")/lib.sh"
MKFS=${MKFS:-$TOP/build/tools/mkfs}
SDE=1600000000
export TZ=UTC

# make_tree DIR ORDER: the same content, files created forwards or backwards.
make_tree() {
	local d=$1 order=$2 i list
	list=$(seq 1 300)
	[ "$order" = backward ] && list=$(seq 300 -1 1)
	mkdir -p "$d/usr/share/doc" "$d/etc" "$d/var/log"
	for i in $list; do echo "file $i" >"$d/usr/share/doc/f$i"; done
	head -c 200000 /dev/zero | tr '\0' 'a' >"$d/usr/share/blob"
	ln -s ../usr/share/blob "$d/etc/blob"
	ln "$d/usr/share/doc/f7" "$d/etc/f7-again"
	truncate -s 50M "$d/var/log/sparse"
	echo tail >>"$d/var/log/sparse"
	mkfifo "$d/var/log/fifo"
	python3 -c "import os; os.setxattr('$d/usr/share/blob', 'user.x', b'1')"
	find "$d" -exec touch -h -d @1500000000 {} +
}
make_tree "$T/a" forward
make_tree "$T/b" backward

build() { # build OUT FORMAT TREE [ARGS]
	local out=$1 fmt=$2 tree=$3
	shift 3
	"$MKFS" "$tree" "$out" --format "$fmt" --sde $SDE --seed 0123abcd "$@" 2>>"$T/log" ||
		{ cat "$T/log"; fail "writing $out failed"; }
}
mkdir -p "$T/o1" "$T/o2" "$T/tmp2"
for fmt in ext4 tar; do
	MALLOC_PERTURB_=85 build "$T/o1/img.$fmt" $fmt "$T/a"
	sleep 1
	(cd "$T/tmp2" && umask 077 && TMPDIR=$T/tmp2 MALLOC_PERTURB_=170 build "$T/o2/img.$fmt" $fmt "$T/b")
	a=$(sha256sum <"$T/o1/img.$fmt") b=$(sha256sum <"$T/o2/img.$fmt")
	[ "$a" = "$b" ] || fail "$fmt: two builds of the same tree differ"
done
# Who runs the writer does not matter either.
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$T" && mkdir -m 777 "$T/o3"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MKFS" "$T/a" "$T/o3/img.ext4" --sde $SDE \
		--seed 0123abcd 2>>"$T/log" || { cat "$T/log"; fail "as nobody: failed"; }
	cmp -s "$T/o1/img.ext4" "$T/o3/img.ext4" || fail "root and nobody write different images"
fi
e2fsck -fn "$T/o1/img.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck"; }
# umask applies to the output file's mode, never to its contents.
[ "$(stat -c %a "$T/o2/img.ext4")" = 600 ] || fail "umask 077 not applied to the output mode"

# The tar reads back with GNU tar: sorted names, numeric owners, clamped mtimes, sparse file.
TZ=UTC tar --numeric-owner -tvf "$T/o1/img.tar" >"$T/list" 2>/dev/null
awk '{print $6}' "$T/list" | sed 's|/$||' >"$T/names"
LC_ALL=C sort -c "$T/names" || fail "tar: entries are not in sorted path order"
[ "$(head -n 1 "$T/names")" = . ] || fail "tar: the root entry is not first"
grep -aq -e 'atime=' -e 'ctime=' -e 'uname=' "$T/o1/img.tar" && fail "tar: atime, ctime or owner names stored"
grep -Eq "^-rw-r--r-- $(id -u)/$(id -g) +52428805 2017-07-14 02:40 ./var/log/sparse$" "$T/list" ||
	{ cat "$T/list"; fail "tar: sparse file entry"; }
[ "$(stat -c %s "$T/o1/img.tar")" -lt 2000000 ] || fail "tar: sparse file stored with its holes"
mkdir "$T/x" && tar -xf "$T/o1/img.tar" -C "$T/x" 2>/dev/null
cmp "$T/x/var/log/sparse" "$T/a/var/log/sparse" || fail "tar: sparse file content"
cmp "$T/x/usr/share/blob" "$T/a/usr/share/blob" || fail "tar: blob content"
[ "$(stat -c %i "$T/x/etc/f7-again")" = "$(stat -c %i "$T/x/usr/share/doc/f7")" ] ||
	fail "tar: hard link lost"

# Another seed: another UUID and hash seed, nothing else.
build "$T/o1/seed2.ext4" ext4 "$T/a" --seed 4567ef
uuid() { dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p"; }
[ "$(uuid "$T/o1/img.ext4" 'Filesystem UUID')" != "$(uuid "$T/o1/seed2.ext4" 'Filesystem UUID')" ] ||
	fail "the UUID does not follow the seed"
[ "$(uuid "$T/o1/img.ext4" 'Directory Hash Seed')" != "$(uuid "$T/o1/seed2.ext4" 'Directory Hash Seed')" ] ||
	fail "the hash seed does not follow the seed"
# The recipe's UUID and hash seed win.
build "$T/o1/fixed.ext4" ext4 "$T/a" --uuid 11111111-2222-4333-8444-555555555555 \
	--hash-seed 66666666-7777-4888-8999-aaaaaaaaaaaa
[ "$(uuid "$T/o1/fixed.ext4" 'Filesystem UUID')" = 11111111-2222-4333-8444-555555555555 ] ||
	fail "recipe UUID not used"
[ "$(uuid "$T/o1/fixed.ext4" 'Directory Hash Seed')" = 66666666-7777-4888-8999-aaaaaaaaaaaa ] ||
	fail "recipe hash seed not used"
# Another epoch: another image; without one, the newest mtime in the manifest is the epoch.
build "$T/o1/sde2.ext4" ext4 "$T/a" --sde 1600000001
cmp -s "$T/o1/img.ext4" "$T/o1/sde2.ext4" && fail "SOURCE_DATE_EPOCH does not reach the image"
# SOURCE_DATE_EPOCH=0 is an epoch like any other (libext2fs reads 0 as "now" - not here).
build "$T/o1/zero1.ext4" ext4 "$T/a" --sde 0
sleep 1
build "$T/o1/zero2.ext4" ext4 "$T/a" --sde 0
cmp -s "$T/o1/zero1.ext4" "$T/o1/zero2.ext4" || fail "SOURCE_DATE_EPOCH=0: two builds differ"
debugfs -R "stat /usr/share/blob" "$T/o1/zero1.ext4" 2>/dev/null | grep -q '^ ctime: 0x00000000:00000000' ||
	fail "SOURCE_DATE_EPOCH=0: ctime is not 0"
"$MKFS" "$T/a" "$T/o1/nosde.ext4" --seed 0123abcd 2>>"$T/log" || fail "no SDE: failed"
dumpe2fs -h "$T/o1/nosde.ext4" 2>/dev/null | grep -q '^Filesystem created:.*Jul 14 02:40:00 2017' ||
	fail "without SDE the epoch is not the newest manifest mtime"
true
