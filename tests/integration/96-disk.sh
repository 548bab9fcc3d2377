# test-cost: slow (whole native builds writing disks)
# The disk writer (issue 25): a GPT disk with a raw SPL at 8 KiB outside the table, an ESP
# holding /boot/efi (vfat), the root (ext4, /boot/efi left as an empty mount point), an empty
# slot and a data partition that grows; an MBR disk; every partition read back at its offset
# with the real tools (sfdisk, e2fsck, debugfs, fsck.vfat, mtools); two builds byte-identical,
# as root and as an ordinary user; the bmap, compression and root_image; each error with its
# exit status and message and nothing left at the output path.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

for t in sfdisk debugfs e2fsck fsck.vfat mdir bmaptool zstd; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
export SOURCE_DATE_EPOCH=1700000000

d=$(deb_new board-files 1.0 all)
deb_file "$d" boot/efi/EFI/BOOT/BOOTX64.EFI "an efi loader
"
deb_file "$d" boot/efi/loader/loader.conf "timeout 0
"
deb_file "$d" usr/lib/u-boot/board/spl.bin "$(head -c 20000 /dev/zero | tr '\0' 'S')"
deb_file "$d" etc/board "root partition file
"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

R=$T/r
mkdir -p "$R"
# recipe FILE NAME DISK-KEYS PARTITIONS
recipe() {
	native_recipe "$1" "$2" ', "board-files"'
	printf 'disk = {\n%s\npartitions = (\n%s\n);\n};\n' "$3" "$4" >>"$1"
}
GPT_PARTS='{ name = "spl"; type = "raw"; contents = "file:/usr/lib/u-boot/board/spl.bin"; in_table = false; offset = "8K"; },
{ name = "esp"; type = "esp"; contents = "/boot/efi"; label = "EFI"; },
{ name = "root"; type = "root"; contents = "root"; legacy_boot = true; },
{ name = "slot"; type = "linux"; size = "4M"; read_only = true; },
{ name = "data"; type = "linux"; size = "grow"; format = "ext4"; }'
recipe "$R/gpt.cfg" gpt 'size = "128M"; compress = "zstd"; root_image = true;' "$GPT_PARTS"

# part JSON NAME FIELD: a field of partition NAME from `sfdisk --json`
sf() {
	python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["partitiontable"]
if sys.argv[2] == "-":
    print(t.get(sys.argv[3], "")); sys.exit()
p = [p for p in t["partitions"] if p.get("name", p["node"]) == sys.argv[2] or p["node"].endswith(sys.argv[2])][0]
print(p.get(sys.argv[3], ""))' "$@"
}

# extract DISK START_SECTORS SIZE_SECTORS OUT
extract() { dd if="$1" of="$4" bs=512 skip="$2" count="$3" status=none conv=sparse; }

check_gpt() { # WHO DISK REPORT
	local who=$1 disk=$2 rep=$3 s n
	sfdisk --verify "$disk" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "$who: sfdisk --verify"; }
	grep -q "No errors detected" "$T/verify" && ! grep -qi "warn" "$T/verify" ||
		{ cat "$T/verify" >&2; fail "$who: sfdisk --verify warns"; }
	sfdisk --json "$disk" >"$T/pt.json"
	[ "$(sf "$T/pt.json" - label)" = gpt ] || fail "$who: not a GPT"
	[ "$(sf "$T/pt.json" esp start)" = 2048 ] || fail "$who: the ESP does not start at 1 MiB"
	[ "$(sf "$T/pt.json" esp type)" = C12A7328-F81F-11D2-BA4B-00A0C93EC93B ] || fail "$who: ESP type"
	[ "$(sf "$T/pt.json" root type)" = 4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709 ] || fail "$who: root type"
	[ "$(sf "$T/pt.json" root attrs)" = LegacyBIOSBootable ] || fail "$who: root attributes"
	[ "$(sf "$T/pt.json" slot attrs)" = GUID:60 ] || fail "$who: slot attributes"
	[ "$(sf "$T/pt.json" slot size)" = 8192 ] || fail "$who: slot size"
	# grow: the data partition ends 1 MiB before the disk's end (the backup GPT's MiB)
	s=$(sf "$T/pt.json" data start); n=$(sf "$T/pt.json" data size)
	[ $((s + n)) = $((128 * 2048 - 2048)) ] || fail "$who: data does not grow to the disk's end"
	[ "$(stat -c %s "$disk")" = $((128 << 20)) ] || fail "$who: disk size"
	# the GPT's entries end before the SPL at 8 KiB; the SPL reads back
	[ "$(sf "$T/pt.json" - firstlba)" -le 16 ] || fail "$who: the entry array was not shortened"
	cmp <(dd if="$disk" bs=1024 skip=8 count=20000 iflag=count_bytes status=none) \
		<(head -c 20000 /dev/zero | tr '\0' 'S') || fail "$who: the SPL at 8 KiB differs"
	# the ESP: fsck.vfat clean, its files at the root of the filesystem
	extract "$disk" "$(sf "$T/pt.json" esp start)" "$(sf "$T/pt.json" esp size)" "$T/x-esp.img"
	fsck.vfat -n "$T/x-esp.img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: fsck.vfat"; }
	MTOOLS_SKIP_CHECK=1 mtype -i "$disk@@$(( $(sf "$T/pt.json" esp start) * 512 ))" \
		::/EFI/BOOT/BOOTX64.EFI | grep -q "an efi loader" || fail "$who: ESP file (mtools at the offset)"
	# the root: e2fsck clean, /boot/efi an empty mount point, the ESP's files not in it
	extract "$disk" "$(sf "$T/pt.json" root start)" "$(sf "$T/pt.json" root size)" "$T/x-root.img"
	e2fsck -fn "$T/x-root.img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$who: e2fsck root"; }
	[ "$(debugfs -R "cat /etc/board" "$T/x-root.img" 2>/dev/null)" = "root partition file" ] ||
		fail "$who: root file"
	debugfs -R "stat /boot/efi" "$T/x-root.img" 2>/dev/null | grep -q "Type: directory" ||
		fail "$who: no /boot/efi mount point in the root"
	[ -z "$(debugfs -R "ls /boot/efi" "$T/x-root.img" 2>/dev/null | tr -s ' ' '\n' | grep -vE '^(\.|\.\.|[0-9()]*)$' | grep -v '^$')" ] ||
		fail "$who: /boot/efi is not empty in the root"
	# the empty slot is all zero; the data partition an empty ext4
	extract "$disk" "$(sf "$T/pt.json" slot start)" 8192 "$T/x-slot.img"
	cmp -s "$T/x-slot.img" <(head -c $((4 << 20)) /dev/zero) || fail "$who: the empty slot is not zero"
	extract "$disk" "$s" "$n" "$T/x-data.img"
	e2fsck -fn "$T/x-data.img" >/dev/null 2>&1 || fail "$who: e2fsck data"
	# the report: its sha256 of each region is that of the bytes read back
	for n in esp root slot data; do
		python3 -c 'import json,sys; print([p["sha256"] for p in json.load(open(sys.argv[1]))["disk"]["partitions"] if p["name"] == sys.argv[2]][0])' \
			"$rep" $n >"$T/sha"
		[ "$(cat "$T/sha")" = "$(sha256sum <"$T/x-$n.img" | cut -d' ' -f1)" ] ||
			fail "$who: the report's sha256 of '$n' is not its bytes'"
	done
	# each file system's UUID in the report as the tools read it (blkid's forms)
	for n in root data; do
		u=$(debugfs -R stats "$T/x-$n.img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
		python3 -c 'import json,sys; p=[p for p in json.load(open(sys.argv[1]))["disk"]["partitions"] if p["name"] == sys.argv[2]][0]; assert p["fs_uuid"] == sys.argv[3], p' \
			"$rep" $n "$u" || fail "$who: the report's fs_uuid of '$n' is not '$u'"
	done
	u=$(MTOOLS_SKIP_CHECK=1 minfo -i "$T/x-esp.img" :: | sed -n 's/.*serial number: \(....\)\(....\)$/\1-\2/p')
	python3 -c 'import json,sys; p={p["name"]: p for p in json.load(open(sys.argv[1]))["disk"]["partitions"]}; assert p["esp"]["fs_uuid"] == sys.argv[2] and p["slot"]["fs_uuid"] is None, p' \
		"$rep" "$u" || fail "$who: the report's fs_uuid of the ESP is not '$u'"
	python3 - "$rep" "$T/pt.json" <<'PY' || fail "$who: report"
import json, sys
r = json.load(open(sys.argv[1]))["disk"]
t = json.load(open(sys.argv[2]))["partitiontable"]
assert r["table"] == "gpt" and r["id"].upper() == t["id"], (r["id"], t["id"])
names = [p["name"] for p in r["partitions"]]
assert names == ["spl", "esp", "root", "slot", "data"], names
parts = {p["name"]: p for p in t["partitions"]}
for p in r["partitions"]:
    if p["name"] == "spl":
        assert p["partuuid"] is None and p["offset"] == 8192 and p["size"] == 20000, p
        continue
    q = parts[p["name"]]
    assert p["partuuid"].upper() == q["uuid"], (p, q)
    assert p["offset"] == q["start"] * 512 and p["size"] == q["size"] * 512, (p, q)
    assert p["type_guid"].upper() == q["type"], (p, q)
    assert len(p["sha256"]) == 64
assert r["compressed"].endswith(".img.zst") and r["bmap"].endswith(".img.bmap"), r
PY
}

build_gpt() { # WHO OUTDIR [as_user USER]
	local who=$1 out=$2
	shift 2
	TMPDIR=$out/tmp expect_ok "$@" "$MKIMAGE" --cache-dir "$out/cache" -o "$out/gpt.img" \
		--limit disk-size=1G "$R/gpt.cfg"
	[ -e "$out/gpt.img" ] && fail "$who: the uncompressed disk stayed beside the .zst"
	[ -s "$out/gpt.img.zst" ] && [ -s "$out/gpt.img.bmap" ] || fail "$who: .zst or .bmap missing"
	zstd -dq "$out/gpt.img.zst" -o "$T/$who.img"
	check_gpt "$who" "$T/$who.img" "$out/gpt.report.json"
	bmaptool copy --bmap "$out/gpt.img.bmap" "$out/gpt.img.zst" "$T/$who.copy" >/dev/null 2>&1 ||
		fail "$who: bmaptool copy"
	cmp -s "$T/$who.img" "$T/$who.copy" || fail "$who: bmaptool's copy differs from the disk"
	[ -s "$out/gpt.ext4" ] || fail "$who: root_image wrote no gpt.ext4 beside the disk"
}

mkdir -p "$T/a/tmp" "$T/b/tmp"
(cd "$T/a" && build_gpt root "$T/a")
cmp -s "$T/a/gpt.ext4" "$T/x-root.img" || fail "root_image differs from the root partition"
(cd "$T/b" && build_gpt root2 "$T/b")
cmp "$T/root.img" "$T/root2.img" || fail "two builds of the disk differ"
ls "$T/a" | grep -q tmp- && fail "a temporary was left beside the disk"

# MBR: the id, system ids, the active flag
recipe "$R/mbr.cfg" mbr 'table = "mbr"; bmap = false;' '{ name = "boot"; type = "0x0c"; contents = "/boot/efi"; format = "vfat"; legacy_boot = true; },
{ name = "root"; type = "linux"; contents = "root"; }'
mkdir -p "$T/m/tmp"
TMPDIR=$T/m/tmp expect_ok "$MKIMAGE" --cache-dir "$T/a/cache" -o "$T/m/mbr.img" "$R/mbr.cfg"
sfdisk --verify "$T/m/mbr.img" >/dev/null 2>&1 || fail "mbr: sfdisk --verify"
sfdisk --json "$T/m/mbr.img" >"$T/mbr.json"
[ "$(sf "$T/mbr.json" - label)" = dos ] || fail "mbr: not an MBR"
[ "$(sf "$T/mbr.json" 1 type)" = c ] && [ "$(sf "$T/mbr.json" 1 bootable)" = True ] ||
	fail "mbr: partition 1 type or active flag"
[ "$(sf "$T/mbr.json" 2 type)" = 83 ] || fail "mbr: partition 2 type"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["disk"]; t=json.load(open(sys.argv[2]))["partitiontable"]; assert "0x"+r["id"] == t["id"], (r["id"], t["id"])' \
	"$T/m/mbr.report.json" "$T/mbr.json" || fail "mbr: the report's id is not the table's"
[ -e "$T/m/mbr.img.bmap" ] && fail "mbr: bmap = false wrote a bmap"

# Errors: exit status, message, nothing at the output path, no temporary left.
bad() { # NAME STATUS PATTERN DISK-KEYS PARTITIONS [MKIMAGE-ARGS]
	recipe "$R/bad.cfg" bad "$4" "$5"
	rm -rf "$T/e"; mkdir -p "$T/e/tmp"
	TMPDIR=$T/e/tmp expect_fail "$2" "$3" "$MKIMAGE" --cache-dir "$T/a/cache" -o "$T/e/bad.img" \
		${6:-} "$R/bad.cfg"
	[ -z "$(left_beside "$T/e" | grep -v '^tmp$')" ] || fail "$1: left $(ls "$T/e")"
}
ROOT='{ name = "root"; type = "root"; contents = "root"; }'
bad small-root 8 "partition 'root' is 8\.0 MiB, but its contents need|partition 'root' \(8 MiB\) cannot hold its tree" '' \
	'{ name = "root"; type = "root"; contents = "root"; size = "8M"; }'
bad beyond-disk 8 "partition 'big' .* ends past the disk's 160\.0 MiB" 'size = "160M";' \
	"$ROOT, { name = \"big\"; type = \"linux\"; size = \"200M\"; }"
bad missing-file 8 "partition 'spl' holds '/usr/lib/u-boot/none.bin', which is not in the tree" '' \
	"{ name = \"spl\"; type = \"raw\"; contents = \"file:/usr/lib/u-boot/none.bin\"; in_table = false; offset = \"8K\"; }, $ROOT" --no-layer-cache
# found right after unpacking: nothing was configured
grep -q "dpkg --configure" "$T/err" && fail "missing-file: refused only after configuring"
bad spl-overlap 8 "partition 'spl' .* overlaps 'esp'" '' \
	"{ name = \"esp\"; type = \"esp\"; contents = \"/boot/efi\"; }, { name = \"spl\"; type = \"raw\"; contents = \"file:/usr/lib/u-boot/board/spl.bin\"; in_table = false; offset = \"1M\"; }, $ROOT"
bad spl-table 8 "partition 'spl' .* overlaps the partition table|leaves no room for the GPT" '' \
	"{ name = \"spl\"; type = \"raw\"; contents = \"file:/usr/lib/u-boot/board/spl.bin\"; in_table = false; offset = \"512\"; }, $ROOT"
bad root-beyond-disk 8 "partition 'root' needs more than the 62 MiB from its start at 1 MiB to the disk's end" \
	'size = "64M";' "$ROOT"
bad limit 7 "past the 32M disk-size limit \(limit 'disk-size' is 32M; raise it" '' "$ROOT" "--limit disk-size=32M"

# An existing disk stays as it was when a build fails.
echo old >"$T/e/bad.img"
TMPDIR=$T/e/tmp expect_fail 7 "32M disk-size limit" "$MKIMAGE" --cache-dir "$T/a/cache" -o "$T/e/bad.img" \
	--limit disk-size=32M "$R/bad.cfg"
[ "$(cat "$T/e/bad.img")" = old ] || fail "a failed build changed the existing disk"

# As an ordinary user: the same bytes.
if test_user mki96user 2>/dev/null; then
	mkdir -p "$T/u/tmp"; chmod -R a+rwX "$T/u"; chmod a+rx "$T" "$R"; chmod a+r "$R"/*.cfg
	(cd "$T/u" && build_gpt user "$T/u" as_user mki96user)
	cmp "$T/root.img" "$T/user.img" || fail "the user's disk differs from root's"
else
	skip_part "no throwaway user (not root)"
fi
