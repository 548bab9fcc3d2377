# test-cost: slow (whole native builds writing disks)
# A squashfs root partition in a disk (deliverable 1 of issue 26): a native build whose tree has
# a setuid file, a hard link, a sparse file, device nodes of the device table and an empty
# directory; its root partition (format = "squashfs", size auto, xz) extracted from the disk
# (sfdisk --verify) and root_image's NAME.squashfs the same bytes, read by rdsquashfs and unsquashfs and compared entry by entry with mkimage's
# tar of the same recipe; --verify-reproducible; image.format = "squashfs" of the same recipe
# (lz4) against the same tar; the same disk as an ordinary user, byte for
# byte; a fixed squashfs partition too small for its tree (exit 8, the partition, its size and
# what to raise, nothing left at the output path).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

for t in sfdisk rdsquashfs unsquashfs sqfs2tar; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
export SOURCE_DATE_EPOCH=1700000000

d=$(deb_new board-files 1.0 all)
deb_file "$d" etc/board "root partition file
"
deb_file "$d" usr/bin/suidtool "#!/bin/sh
" 4755
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R/hooks"
printf '#!/bin/sh\nset -e\nln /etc/board /etc/board-link\ntruncate -s 40M /var/sparse\necho x >>/var/sparse\nmkdir /srv/empty\n' \
	>"$R/hooks/tree.sh"
chmod 755 "$R/hooks/tree.sh"
HOOK='{ name = "tree"; script = "hooks/tree.sh"; where = "inside"; }'
DEVICES='devices = ( { path = "/dev/console"; type = "char"; major = 5; minor = 1; mode = "0600"; },
  { path = "/dev/wide"; type = "block"; major = 259; minor = 70000; mode = "0660"; gid = 6; } );'
# recipe FILE NAME IMAGE-KEYS [DISK-KEYS PARTITIONS]
recipe() {
	native_recipe "$1" "$2" ', "board-files"' "$HOOK"
	printf 'image = {\n%s\n%s\n};\n' "$DEVICES" "$3" >>"$1"
	[ -z "${5:-}" ] || printf 'disk = {\n%s\npartitions = (\n%s\n);\n};\n' "$4" "$5" >>"$1"
}
recipe "$R/sq.cfg" sq '' 'bmap = false; root_image = true;' \
'{ name = "root"; type = "root"; contents = "root"; format = "squashfs"; compression = "xz"; },
{ name = "data"; type = "linux"; format = "ext4"; size = "8M"; }'
recipe "$R/tar.cfg" sq 'format = "tar";'
recipe "$R/img.cfg" sq 'format = "squashfs"; compression = "lz4";'

field() { # JSON NAME FIELD: a partition's field from `sfdisk --json`
	python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["partitiontable"]
print([p for p in t["partitions"] if p.get("name") == sys.argv[2]][0][sys.argv[3]])' "$@"
}
build() { # WHO OUTDIR [as_user USER]
	local who=$1 out=$2
	shift 2
	mkdir -p "$out/tmp"
	(cd "$out" && TMPDIR=$out/tmp expect_ok "$@" "$MKIMAGE" --cache-dir "$out/cache" \
		--verify-reproducible -o "$out/sq.img" "$R/sq.cfg")
	sfdisk --verify "$out/sq.img" 2>&1 | grep -q "No errors detected" || fail "$who: sfdisk --verify"
	sfdisk --json "$out/sq.img" >"$T/pt.json"
	dd if="$out/sq.img" of="$T/$who-root.sqfs" bs=512 skip="$(field "$T/pt.json" root start)" \
		count="$(field "$T/pt.json" root size)" status=none
}
build root "$T/a"
S=$T/root-root.sqfs
cmp "$T/a/sq.squashfs" "$S" || fail "root_image (sq.squashfs beside the disk) is not the root partition"
unsquashfs -s "$S" | grep -qx 'Compression xz' || fail "root: not xz"
python3 -c 'import json,sys; p=[p for p in json.load(open(sys.argv[1]))["disk"]["partitions"] if p["name"]=="root"][0]; assert p["format"]=="squashfs" and p["label"] is None, p' \
	"$T/a/sq.report.json" || fail "the report's root partition"
# the partition is the image's size, 1 MiB aligned; the data partition starts after it
used=$(unsquashfs -s "$S" | sed -n 's/^Filesystem size \([0-9]*\) bytes.*/\1/p')
size=$(($(field "$T/pt.json" root size) * 512))
[ "$size" -ge "$used" ] && [ "$size" -lt $((used + 2 * 1048576)) ] ||
	fail "root partition of $size bytes for a squashfs of $used"
rdsquashfs -s /etc/board-link "$S" | grep -qx 'Hard link count: 2' || fail "board-link: nlink"
rdsquashfs -s /dev/wide "$S" | grep -q '^Device number: 259:70000 ' || fail "/dev/wide"
rdsquashfs -l /srv/empty "$S" >"$T/empty" && [ ! -s "$T/empty" ] || fail "/srv/empty"
rm -rf "$T/x" && unsquashfs -d "$T/x" "$S" >/dev/null 2>&1 || fail "unsquashfs cannot extract the root"
[ "$(tail -c 2 "$T/x/var/sparse")" = x ] && [ "$(stat -c %s "$T/x/var/sparse")" = 41943042 ] ||
	fail "/var/sparse"

# entry by entry against mkimage's tar of the same recipe
mkdir -p "$T/t/tmp"
(cd "$T/t" && TMPDIR=$T/t/tmp expect_ok "$MKIMAGE" --cache-dir "$T/a/cache" -o "$T/t/sq.tar" "$R/tar.cfg")
sqfs2tar "$S" >"$T/sq-root.tar" 2>"$T/err" || { cat "$T/err"; fail "sqfs2tar"; }
# /etc/fstab: the disk's boot configuration writes one (bootcfg), the tar has none
python3 "$(dirname "$0")/sqfs_compare.py" "$T/t/sq.tar" "$T/sq-root.tar" etc/fstab >"$T/cmp" ||
	{ cat "$T/cmp"; fail "the squashfs root differs from the tar of the same recipe"; }
grep -qE '^[0-9]{3,} entries compared' "$T/cmp" || { cat "$T/cmp"; fail "too few entries compared"; }

# image.format = "squashfs": the standalone image of the same recipe, reproducible, the same tree
mkdir -p "$T/i/tmp"
(cd "$T/i" && TMPDIR=$T/i/tmp expect_ok "$MKIMAGE" --cache-dir "$T/a/cache" --verify-reproducible \
	-o "$T/i/sq.squashfs" "$R/img.cfg")
unsquashfs -s "$T/i/sq.squashfs" | grep -qx 'Compression lz4' || fail "image: not lz4"
[ $(($(stat -c %s "$T/i/sq.squashfs") % 4096)) = 0 ] || fail "image: not padded to 4096 bytes"
sqfs2tar "$T/i/sq.squashfs" >"$T/sq-image.tar" 2>"$T/err" || { cat "$T/err"; fail "sqfs2tar image"; }
python3 "$(dirname "$0")/sqfs_compare.py" "$T/t/sq.tar" "$T/sq-image.tar" >"$T/cmp" ||
	{ cat "$T/cmp"; fail "the squashfs image differs from the tar of the same recipe"; }

# As an ordinary user: the same bytes.
if test_user mki47user 2>/dev/null; then
	mkdir -p "$T/u/tmp"; chmod -R a+rwX "$T/u"; chmod a+rx "$T" "$R"; chmod a+r "$R"/*.cfg
	build user "$T/u" as_user mki47user
	cmp "$T/a/sq.img" "$T/u/sq.img" || fail "the user's disk differs from root's"
else
	skip_part "no throwaway user (not root)"
fi

# A fixed squashfs partition too small for its tree
recipe "$R/bad.cfg" bad '' '' \
'{ name = "root"; type = "root"; contents = "root"; format = "squashfs"; size = "1M"; compression = "none"; }'
rm -rf "$T/e"; mkdir -p "$T/e/tmp"
TMPDIR=$T/e/tmp expect_fail 8 "partition 'root' \(1 MiB\) cannot hold its squashfs: raise its size" \
	"$MKIMAGE" --cache-dir "$T/a/cache" -o "$T/e/bad.img" "$R/bad.cfg"
[ -z "$(left_beside "$T/e" | grep -v '^tmp$')" ] || fail "too small: left $(ls "$T/e")"
