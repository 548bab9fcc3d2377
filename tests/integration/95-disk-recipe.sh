# The disk section: each layout that cannot be written is a recipe error (exit 2) naming
# FILE:LINE and what to do, found by --check before anything is fetched; good layouts print
# back in normalized form (the digest's), with their defaults resolved.
. "$(dirname "$0")/lib.sh"

# disk_case 'PARTITIONS' 'KEYS' 'expected message (ERE)': the partitions start on line 6.
disk_case() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "${ARCH:-armhf}";
packages = { install = [ "hello" ]; };
disk = {
  $2
  partitions = (
    $1
  );
};
R
	expect_fail 2 "$3" "$MKIMAGE" --check "$T/r.cfg"
}
ROOT='{ name = "root"; type = "root"; contents = "root"; }'

disk_case '' '' "r.cfg:4: 'disk' needs 'partitions'"
disk_case '{ name = "a"; type = "linux"; }' '' \
	"r.cfg:4: a disk needs exactly one partition with contents = \"root\", not 0"
disk_case "$ROOT, { name = \"root\"; type = \"linux\"; }" '' \
	"r.cfg:7: partition name 'root' is used twice \(line 7\)"
disk_case '{ type = "root"; contents = "root"; }' '' "r.cfg:7: a partition needs a 'name'"
disk_case '{ name = "r"; contents = "root"; }' '' "r.cfg:7: a partition needs a 'type'"
disk_case '{ name = "r"; type = "rot"; contents = "root"; }' '' \
	"r.cfg:7: partition type 'rot' is not known: use \"esp\""
disk_case '{ name = "r"; type = "root"; contents = "root"; format = "vfat"; }' '' \
	"r.cfg:7: the root partition 'r' must be ext4"
disk_case '{ name = "r"; type = "root"; contents = "root"; format = "xfs"; }' '' \
	"r.cfg:7: partition 'format' must be \"ext4\", \"vfat\", \"squashfs\" or \"none\", not 'xfs'"
disk_case "{ name = \"b\"; type = \"esp\"; contents = \"/boot/../etc\"; }, $ROOT" '' \
	"r.cfg:7: partition contents must be \"root\", a directory of the tree"
disk_case "{ name = \"b\"; type = \"linux\"; contents = \"file:/x\"; format = \"ext4\"; }, $ROOT" '' \
	"r.cfg:7: partition 'b' holds a file written raw: it has no filesystem"
disk_case "{ name = \"b\"; type = \"esp\"; size = \"1000K\"; }, $ROOT" '' \
	"r.cfg:7: size of partition 'b' is not a multiple of 1 MiB"
disk_case "{ name = \"b\"; type = \"esp\"; offset = \"1536K\"; }, $ROOT" '' \
	"r.cfg:7: offset of partition 'b' is not aligned to 1 MiB"
disk_case "{ name = \"spl\"; type = \"raw\"; contents = \"file:/spl.bin\"; in_table = false; }, $ROOT" '' \
	"r.cfg:7: partition 'spl' is outside the table \(in_table = false\): it needs a fixed 'offset'"
disk_case "{ name = \"a\"; type = \"esp\"; offset = \"1M\"; size = \"8M\"; }, { name = \"b\"; type = \"linux\"; offset = \"4M\"; size = \"8M\"; }, $ROOT" '' \
	"r.cfg:7: partition 'b' overlaps 'a' \(line 7\)"
disk_case "{ name = \"d\"; type = \"linux\"; size = \"grow\"; }, $ROOT" 'size = "1G";' \
	"r.cfg:7: only the last partition can have size = \"grow\", not 'd'"
disk_case "$ROOT, { name = \"d\"; type = \"linux\"; size = \"grow\"; }" '' \
	"r.cfg:7: partition 'd' grows to the disk's size: give the disk a fixed 'size'"
disk_case "$ROOT" 'size = "1000K";' "r.cfg:5: the disk's 'size' must be a multiple of 1 MiB"
disk_case "$ROOT" 'table = "dos";' "r.cfg:5: 'table' must be \"gpt\" or \"mbr\", not 'dos'"
disk_case "{ name = \"r\"; type = \"root\"; contents = \"root\"; read_only = true; }" 'table = "mbr";' \
	"r.cfg:7: partition 'r': an MBR table has no read-only attribute"
disk_case "{ name = \"r\"; type = \"0fc63daf-8483-4772-8e79-3d69d8477de4\"; contents = \"root\"; }" 'table = "mbr";' \
	"r.cfg:7: partition 'r': an MBR table needs a type name or a system id"
disk_case "{ name = \"r\"; type = \"0x83\"; contents = \"root\"; }" '' \
	"r.cfg:7: partition 'r': a GPT needs a type name or a type GUID"
disk_case "$ROOT, { name = \"a\"; type = \"linux\"; }, { name = \"b\"; type = \"linux\"; }, { name = \"c\"; type = \"linux\"; }, { name = \"d\"; type = \"linux\"; }" 'table = "mbr";' \
	"r.cfg:4: an MBR table holds 4 partitions, not 5"
disk_case "$ROOT" 'bootloader = "systemd-boot";' \
	"r.cfg:5: bootloader = \"systemd-boot\" needs a partition of type \"esp\""
disk_case "{ name = \"b\"; type = \"esp\"; contents = \"/boot/efi\"; label = \"much-too-long\"; }, $ROOT" '' \
	"r.cfg:7: label 'much-too-long' of partition 'b' is 13 bytes; vfat labels hold at most 11"
disk_case "{ name = \"a-very-long-partition-name-beyond-gpt\"; type = \"linux\"; }, $ROOT" '' \
	"r.cfg:7: partition name 'a-very-long-partition-name-beyond-gpt' is longer than GPT's 36"
ARCH=alpha disk_case "$ROOT" '' "r.cfg:2: architecture 'alpha'|r.cfg:7: partition type \"root\" has no"
disk_case "{ name = \"b\"; type = \"esp\"; contents = \"/boot\"; }, { name = \"c\"; type = \"esp\"; contents = \"/boot/\"; }, $ROOT" '' \
	"r.cfg:7: partitions 'b' and 'c' both hold '/boot'"
disk_case "{ name = \"s\"; type = \"swap\"; contents = \"/var\"; }, $ROOT" '' \
	"r.cfg:7: partition 's' holds a tree: it needs a filesystem|r.cfg:7: swap partition 's' cannot hold contents"
disk_case "$ROOT" 'sze = "1G";' "r.cfg:5: unknown key 'sze' in 'disk' \(did you mean 'size'\?\)"

# A good layout prints back with its defaults resolved; a recipe without a disk keeps its digest.
cat >"$T/r.cfg" <<'R'
name = "t";
architecture = "arm64";
packages = { install = [ "hello" ]; };
disk = {
  bootloader = "systemd-boot";
  partitions = (
    { name = "esp"; type = "esp"; size = "64M"; contents = "/boot/efi"; },
    { name = "root"; type = "root"; contents = "root"; },
    { name = "data"; type = "linux"; format = "ext4"; }
  );
};
R
expect_ok "$MKIMAGE" --check "$T/r.cfg"
grep -q '{ name = "esp"; type = "esp"; size = "67108864"; contents = "/boot/efi"; format = "vfat"; label = "esp"; in_table = true; }' "$T/out" ||
	fail "the ESP's defaults are not resolved"
grep -q '{ name = "root"; type = "root"; size = "auto"; contents = "root"; format = "ext4"; in_table = true; }' "$T/out" ||
	fail "the root partition's defaults are not resolved"
grep -q '{ name = "data"; type = "linux"; size = "auto"; format = "ext4"; label = "data"; in_table = true; }' "$T/out" ||
	fail "an empty data partition is not formatted as asked"
# what --check prints is a recipe that reads back the same
cp "$T/out" "$T/again.cfg"
expect_ok "$MKIMAGE" --check "$T/again.cfg"
cmp -s "$T/out" "$T/again.cfg" || fail "the normalized disk does not read back the same"
sed -i '/^disk = {/,$d' "$T/r.cfg"
expect_ok "$MKIMAGE" --check "$T/r.cfg"
! grep -q '^disk' "$T/out" || fail "a recipe without a disk shows one"
