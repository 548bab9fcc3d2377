# test-cost: slow (whole native builds writing disks)
# The disk writer's other layouts (issue 25): /boot as its own ext4 partition holding the ESP
# (/boot/efi, vfat) inside it - each view leaves the next one's subtree as an empty mount point -,
# a root with min_size (the filesystem fills it), an empty ESP (an empty FAT), xz compression and
# --verify-reproducible on a disk; then SIGINT and SIGTERM while the disk is written: exit 130,
# nothing at the output path, no temporary.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

for t in sfdisk debugfs e2fsck dumpe2fs fsck.vfat mdir xz; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
export SOURCE_DATE_EPOCH=1700000000

d=$(deb_new board-files 1.0 all)
deb_file "$d" boot/vmlinuz-test "a kernel
"
deb_file "$d" boot/efi/EFI/BOOT/BOOTX64.EFI "an efi loader
"
deb_file "$d" etc/board "root partition file
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R/hooks"
# recipe FILE NAME DISK-KEYS PARTITIONS [HOOKS]
recipe() {
	native_recipe "$1" "$2" ', "board-files"' "${5:-}"
	printf 'disk = {\n%s\npartitions = (\n%s\n);\n};\n' "$3" "$4" >>"$1"
}
recipe "$R/nested.cfg" nested 'compress = "xz"; bmap = false;' \
'{ name = "esp"; type = "esp"; contents = "/boot/efi"; },
{ name = "boot"; type = "xbootldr"; contents = "/boot"; format = "ext4"; },
{ name = "root"; type = "root"; contents = "root"; min_size = "200M"; },
{ name = "spare"; type = "esp"; }'

# field JSON NAME FIELD: a partition's field from `sfdisk --json`
field() {
	python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["partitiontable"]
print([p for p in t["partitions"] if p.get("name") == sys.argv[2]][0][sys.argv[3]])' "$@"
}
part() { # DISK NAME OUT: partition NAME extracted
	dd if="$1" of="$3" bs=512 skip="$(field "$T/pt.json" "$2" start)" \
		count="$(field "$T/pt.json" "$2" size)" status=none conv=sparse
}
entries() { # IMAGE DIR: names in DIR of an ext4 image, one a line, without . and ..
	debugfs -R "ls -p $2" "$1" 2>/dev/null | awk -F/ 'NF > 5 && $6 != "." && $6 != ".." { print $6 }'
}

mkdir -p "$T/n/tmp"
(cd "$T/n" && TMPDIR=$T/n/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" --verify-reproducible \
	-o "$T/n/nested.img" "$R/nested.cfg")
[ -s "$T/n/nested.img.xz" ] && [ ! -e "$T/n/nested.img" ] && [ ! -e "$T/n/nested.img.bmap" ] ||
	fail "outputs: $(ls "$T/n")"
xz -dc "$T/n/nested.img.xz" >"$T/disk.img"
sfdisk --verify "$T/disk.img" 2>&1 | grep -q "No errors detected" || fail "sfdisk --verify"
sfdisk --json "$T/disk.img" >"$T/pt.json"
[ "$(field "$T/pt.json" boot type)" = BC13C2FF-59E6-4262-A352-B275FD6F7172 ] || fail "xbootldr type"
# /boot: its own files, /boot/efi an empty mount point
part "$T/disk.img" boot "$T/boot.img"
e2fsck -fn "$T/boot.img" >/dev/null 2>&1 || fail "e2fsck /boot"
[ "$(debugfs -R "cat /vmlinuz-test" "$T/boot.img" 2>/dev/null)" = "a kernel" ] ||
	fail "/boot's files are not at its partition's root"
[ "$(entries "$T/boot.img" /efi)" = "" ] || fail "/boot/efi not empty in /boot: $(entries "$T/boot.img" /efi)"
entries "$T/boot.img" / | grep -qx efi || fail "no efi mount point in /boot"
# the ESP below it
part "$T/disk.img" esp "$T/esp.img"
fsck.vfat -n "$T/esp.img" >/dev/null 2>&1 || fail "fsck.vfat esp"
MTOOLS_SKIP_CHECK=1 mtype -i "$T/esp.img" ::/EFI/BOOT/BOOTX64.EFI | grep -q "an efi loader" ||
	fail "the ESP lacks its file"
# the root: /boot empty, min_size filled by the filesystem
part "$T/disk.img" root "$T/root.img"
e2fsck -fn "$T/root.img" >/dev/null 2>&1 || fail "e2fsck root"
[ "$(entries "$T/root.img" /boot)" = "" ] || fail "/boot not empty in the root: $(entries "$T/root.img" /boot)"
[ "$(field "$T/pt.json" root size)" = $((200 * 2048)) ] || fail "root is not min_size"
blocks=$(dumpe2fs -h "$T/root.img" 2>/dev/null | awk -F: '/^Block count/ { print $2 + 0 }')
[ "$blocks" = $((200 * 256)) ] || fail "the root filesystem does not fill its min_size ($blocks blocks)"
# the empty ESP: an empty FAT
part "$T/disk.img" spare "$T/spare.img"
fsck.vfat -n "$T/spare.img" >/dev/null 2>&1 || fail "fsck.vfat spare"
[ -z "$(MTOOLS_SKIP_CHECK=1 mdir -b -i "$T/spare.img" :: 2>/dev/null)" ] || fail "the empty ESP is not empty"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["disk"]; assert r["compressed"].endswith(".img.xz") and r["bmap"] is None, r' \
	"$T/n/nested.report.json" || fail "report's outputs"

# SIGINT and SIGTERM while the disk is written: a hook makes the root big enough to be caught.
printf '#!/bin/sh\nset -e\ndd if=/dev/urandom of=/var/blob bs=1M count=96 2>/dev/null\n' >"$R/hooks/blob.sh"
chmod 755 "$R/hooks/blob.sh"
recipe "$R/big.cfg" big '' '{ name = "root"; type = "root"; contents = "root"; }' \
	'{ name = "blob"; script = "hooks/blob.sh"; where = "inside"; }'
mkdir -p "$T/i/tmp" "$T/i/out"
for sig in INT TERM; do
	TMPDIR=$T/i/tmp "$MKIMAGE" --cache-dir "$T/cache" -o "$T/i/out/big.img" "$R/big.cfg" \
		>/dev/null 2>"$T/err" & pid=$!
	for i in $(seq 1 2400); do
		compgen -G "$T/i/out/big.img.tmp-*" >/dev/null && break
		kill -0 $pid 2>/dev/null || { cat "$T/err" >&2; fail "$sig: ended before the disk was begun"; }
		sleep 0.05
	done
	kill -STOP $pid
	compgen -G "$T/i/out/big.img.tmp-*" >/dev/null || fail "$sig: the disk's temporary never appeared"
	kill -$sig $pid
	kill -CONT $pid
	rc=0
	wait $pid || rc=$?
	[ $rc = 130 ] || { cat "$T/err" >&2; fail "$sig during the disk: exit $rc, expected 130"; }
	grep -q "interrupted" "$T/err" || fail "$sig: no message"
	[ -z "$(left_beside "$T/i/out")" ] || fail "$sig during the disk: left $(left_beside "$T/i/out")"
	[ -z "$(ls -A "$T/i/tmp")" ] || fail "$sig during the disk: work dir left"
done
