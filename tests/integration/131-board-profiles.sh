# test-cost: slow (four small armhf builds: run.sh starts it first)
# Board profiles (issue 40) that QEMU cannot boot, each checked natively by reading the disk
# where that SoC's boot ROM (and the loader after it) reads it, with Debian's real U-Boot
# builds from the plan (one small set, the essential packages and the three loader packages,
# so the later builds reuse the first's configured tree): the A20s (cubieboard2,
# a20-olinuxino-lime2: the eGON.BT0 SPL at 8 KiB, its checksum), a Rockchip RK3288
# (firefly-rk3288: the ID block at sector 64 as the ROM decodes it, U-Boot's image at sector
# 16384 with its CRCs, partitions from 16 MiB) and the BeagleBone Black (MBR; MLO raw at 128 KiB
# with its CHSETTINGS table and a GP header the ROM's SRAM holds, u-boot.img at sector 768,
# partitions from 4 MiB, and both files in the root of an active FAT partition, the ROM's other
# place). Then the errors: an unknown board ("did you mean"), another architecture, a table,
# console or size the board refuses, a partition in a loader's slot, a name used twice still
# named at its line (exit 2, before any download), a plan without the loader's package (exit 8 before downloading), a loader larger than its slot and a kernel
# without the board's device tree (exit 8, right after unpacking).
FLAGSHIP_SUITE=bookworm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

command -v sfdisk >/dev/null || skip "sfdisk missing (make test-deps)"
e2e_serve boards
export SOURCE_DATE_EPOCH=1700000000
LOADERS='"u-boot-sunxi", "u-boot-rockchip", "u-boot-omap"'
ROOT='{ name = "root"; type = "root"; contents = "root"; }'

# board_recipe FILE BOARD [DISK-KEYS] [INSTALL] [PARTITIONS]
board_recipe() {
	cat >"$1" <<EOR
name = "$2";
board = "$2";
architecture = "armhf";
packages = { base = "essential"; install = [ ${4:-$LOADERS} ]; };
disk = {
  ${3:-}
  partitions = ( ${5:-$ROOT} );
};
EOR
}

# build BOARD [PARTITIONS]: its disk as $T/BOARD.img, the table in $T/BOARD.json, the root (the
# table's last partition) in $T/BOARD.root.
build() {
	local start size
	board_recipe "$T/$1.cfg" "$1" "" "" "${2:-$ROOT}"
	expect_ok "$MKIMAGE" --source "$SRC" --output "$T/$1.img" "$T/$1.cfg"
	sfdisk --verify "$T/$1.img" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "$1: sfdisk --verify"; }
	sfdisk --json "$T/$1.img" >"$T/$1.json"
	# (an MBR's partitions have no names)
	read -r start size < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["partitiontable"]["partitions"]
print(p[-1]["start"], p[-1]["size"])' "$T/$1.json")
	dd if="$T/$1.img" of="$T/$1.root" bs=512 skip="$start" count="$size" conv=sparse status=none
	e2fsck -fn "$T/$1.root" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "$1: e2fsck -fn of the root"; }
}

# rom_check BOARD: the disk as the board's ROM and loaders read it; the files come from the
# root partition (the plan's packages), read with debugfs.
rom_check() {
	local b=$1 f
	for f in Cubieboard2/u-boot-sunxi-with-spl.bin A20-OLinuXino-Lime2/u-boot-sunxi-with-spl.bin \
		firefly-rk3288/idbloader.img \
		firefly-rk3288/u-boot.img am335x_evm/MLO am335x_evm/u-boot.img; do
		mkdir -p "$T/files/${f%/*}"
		debugfs -R "dump /usr/lib/u-boot/$f $T/files/$f" "$T/$b.root" 2>/dev/null
	done
	python3 - "$b" "$T/$b.img" "$T/$b.json" "$T/files" <<'PY' || fail "$b: the boot ROM would not start this disk"
import json, struct, sys, zlib
board, disk, pt, files = sys.argv[1:]
t = json.load(open(pt))["partitiontable"]
f = open(disk, "rb")
def at(off, n):
    f.seek(off)
    return f.read(n)
def same(off, name):
    want = open(f"{files}/{name}", "rb").read()
    assert at(off, len(want)) == want, f"the bytes at {off} are not the package's {name}"
    return want
def uimage(off, name):  # U-Boot's legacy image: header and data CRCs (u-boot.img, rk3288)
    img = same(off, name)
    magic, hcrc, _, size = struct.unpack_from(">IIII", img)
    dcrc = struct.unpack_from(">I", img, 24)[0]
    assert magic == 0x27051956, hex(magic)
    assert zlib.crc32(img[:4] + b"\0" * 4 + img[8:64]) == hcrc, "header CRC"
    assert zlib.crc32(img[64:64 + size]) == dcrc, "data CRC"
def rc4(data):  # the Rockchip ROM's fixed key for the ID block's header
    key = [124, 78, 3, 4, 85, 5, 9, 7, 45, 44, 123, 56, 23, 13, 23, 17]
    s, j = list(range(256)), 0
    for i in range(256):
        j = (j + s[i] + key[i % 16]) & 255
        s[i], s[j] = s[j], s[i]
    i = j = 0
    out = bytearray()
    for c in data:
        i = (i + 1) & 255
        j = (j + s[i]) & 255
        s[i], s[j] = s[j], s[i]
        out.append(c ^ s[(s[i] + s[j]) & 255])
    return bytes(out)
first = min(p["start"] for p in t["partitions"]) * 512
sunxi = {"cubieboard2": "Cubieboard2", "a20-olinuxino-lime2": "A20-OLinuXino-Lime2"}
if board in sunxi:
    spl = same(8192, sunxi[board] + "/u-boot-sunxi-with-spl.bin")
    assert spl[4:12] == b"eGON.BT0", spl[4:12]
    csum, length = struct.unpack_from("<II", spl, 12)
    words = struct.unpack_from("<%dI" % (length // 4), spl[:12] + struct.pack("<I", 0x5F0A6C39) + spl[16:length])
    assert sum(words) & 0xFFFFFFFF == csum, "eGON checksum"
    assert t["label"] == "gpt" and t["firstlba"] <= 16, t  # the entries end before 8 KiB
    assert first == 1 << 20, first
elif board == "firefly-rk3288":
    idb = same(64 * 512, "firefly-rk3288/idbloader.img")
    assert struct.unpack_from("<I", rc4(idb[:512]))[0] == 0x0FF0AA55, "the ID block's header"
    assert idb[2048:2052] == b"RK32", idb[2048:2052]  # the SPL's boot tag for the RK3288
    uimage(16384 * 512, "firefly-rk3288/u-boot.img")
    assert t["label"] == "gpt" and first == 16 << 20, (t["label"], first)
elif board == "beaglebone-black":
    mlo = same(128 * 1024, "am335x_evm/MLO")
    assert mlo[20:30] == b"CHSETTINGS", mlo[:32]  # the raw mode's table of contents
    size, load = struct.unpack_from("<II", mlo, 512)  # the GP header
    assert load == 0x402F0400 and size <= 0x4030B800 - load, (hex(load), size)
    uboot = same(768 * 512, "am335x_evm/u-boot.img")
    assert struct.unpack_from(">I", uboot)[0] == 0xD00DFEED, "u-boot.img is no FIT"
    assert t["label"] == "dos" and first == 4 << 20, (t["label"], first)
else:
    raise SystemExit(f"no check for {board}")
PY
}

for b in cubieboard2 a20-olinuxino-lime2; do
	build "$b"
	rom_check "$b"
done
build firefly-rk3288
rom_check firefly-rk3288
# The BeagleBone Black also as TI's guides lay out its card: MLO and u-boot.img in the root of
# the active FAT partition, where the ROM looks when raw mode finds nothing (here: the loaders'
# directory as the partition, so that an upgrade of u-boot-omap updates them).
build beaglebone-black '{ name = "boot"; type = "0x0c"; contents = "/usr/lib/u-boot/am335x_evm"; format = "vfat"; legacy_boot = true; }, '"$ROOT"
rom_check beaglebone-black
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["partitiontable"]["partitions"]
assert p[0]["type"] == "c" and p[0].get("bootable") and p[0]["start"] == 8192, p[0]
' "$T/beaglebone-black.json" || fail "beaglebone-black: the first partition is not an active FAT32 (LBA) one at 4 MiB"
read -r start size < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["partitiontable"]["partitions"][0]
print(p["start"], p["size"])' "$T/beaglebone-black.json")
dd if="$T/beaglebone-black.img" of="$T/bbb-boot.img" bs=512 skip="$start" count="$size" status=none
fsck.vfat -n "$T/bbb-boot.img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "beaglebone-black: fsck.vfat"; }
for f in MLO u-boot.img; do
	MTOOLS_SKIP_CHECK=1 mcopy -n -i "$T/bbb-boot.img" "::/$f" "$T/bbb-$f" ||
		fail "beaglebone-black: no $f in the root of the FAT partition"
	cmp -s "$T/bbb-$f" "$T/files/am335x_evm/$f" || fail "beaglebone-black: the FAT partition's $f is not the package's"
done
grep -q "layer cache: .*restored\|from the layer cache" "$T/err" ||
	{ grep -i layer "$T/err" >&2; fail "the last board did not reuse the first's configured tree"; }

# Errors the recipe alone shows: exit 2, nothing fetched (a --check is all it takes).
bad() { # NAME PATTERN BOARD DISK-KEYS [PARTITIONS] [ARCH]
	board_recipe "$T/bad-$1.cfg" "$3" "$4" "" "${5:-$ROOT}"
	[ -z "${6:-}" ] || sed -i "s/\"armhf\"/\"$6\"/" "$T/bad-$1.cfg"
	expect_fail 2 "$2" "$MKIMAGE" --source "$SRC" --check "$T/bad-$1.cfg"
}
bad unknown "unknown board 'orangepi' \(did you mean 'orangepi-pc'\?\)" orangepi ""
bad none "unknown board 'pdp11': the boards are \"orangepi-pc\", .* or \"raspberry-pi\"" pdp11 ""
bad arch "board 'cubieboard2' \(Allwinner A20\) runs armhf.*set architecture = \"armhf\", not 'arm64'" cubieboard2 "" "" arm64
bad table "board 'beaglebone-black' needs table = \"mbr\", not \"gpt\": the AM335x boot ROM" beaglebone-black 'table = "gpt";'
bad console "board 'orangepi-pc' \(Allwinner H3\) has its serial console on ttyS0, not 'ttyAMA0'" orangepi-pc 'console = "ttyAMA0";'
bad size "board 'orangepi-pc': the disk's size must be a power of two, such as \"1024M\"" orangepi-pc 'size = "768M";'
bad slot "partition 'data' at byte 9437184 lies in the slot of u-boot on board 'firefly-rk3288' \(bytes 8388608 to 16777216\): .*sector 16384" \
	firefly-rk3288 "" "$ROOT, { name = \"data\"; type = \"linux\"; offset = \"9M\"; size = \"1M\"; }"
bad own "partition 'spl' is the boot loader slot of board 'cubieboard2': file:/usr/lib/u-boot/Cubieboard2/u-boot-sunxi-with-spl.bin at byte 8192" \
	cubieboard2 "" "{ name = \"spl\"; type = \"raw\"; contents = \"file:/boot/x\"; in_table = false; offset = \"8K\"; }, $ROOT"
# the disk's own checks still name the recipe's lines, the board's loaders put first
bad dupname "bad-dupname.cfg:8: partition name 'root' is used twice \(line 7\)" firefly-rk3288 "" \
	"$ROOT,
    { name = \"root\"; type = \"linux\"; }"
board_recipe "$T/nodisk.cfg" orangepi-pc
sed -i '/^disk = {/,$d' "$T/nodisk.cfg"
expect_fail 2 "board 'orangepi-pc' describes the disk its boot ROM reads: add a disk section" \
	"$MKIMAGE" --check "$T/nodisk.cfg"

# The plan without the loader's package: exit 8 before any .deb is downloaded.
board_recipe "$T/nopkg.cfg" firefly-rk3288 "" '"u-boot-sunxi"'
expect_fail 8 "board 'firefly-rk3288' boots usr/lib/u-boot/firefly-rk3288/idbloader.img from package 'u-boot-rockchip', which the plan does not hold: add \"u-boot-rockchip\"" \
	"$MKIMAGE" --source "$SRC" --output "$T/nopkg.img" "$T/nopkg.cfg"
! grep -q "^mkimage: info: packages: " "$T/err" || fail "nopkg: refused only after fetching packages"
[ ! -e "$T/nopkg.img" ] || fail "nopkg: a disk was written"

# unpacked_fail NAME DEB DISK-KEYS INSTALL PATTERN: an orangepi-pc recipe installing INSTALL
# and the local package DEB fails with exit 8 and PATTERN right after unpacking: nothing
# configured, no disk written.
unpacked_fail() {
	board_recipe "$T/$1.cfg" orangepi-pc "$3" "$4"
	sed -i "s|install = \[ $4 \];|install = [ $4 ]; local = [ \"$2\" ];|" "$T/$1.cfg"
	expect_fail 8 "$5" "$MKIMAGE" --source "$SRC" --no-layer-cache --output "$T/$1.img" "$T/$1.cfg"
	! grep -q "dpkg --configure" "$T/err" || fail "$1: refused only after configuring"
	[ ! -e "$T/$1.img" ] || fail "$1: a disk was written"
}

# A loader larger than its slot (a vendor's u-boot-sunxi whose SPL image outgrew the first MiB).
d=$(deb_new u-boot-sunxi 9:1.0 armhf)
deb_file "$d" usr/lib/u-boot/orangepi_plus/u-boot-sunxi-with-spl.bin "$(head -c 1100000 /dev/zero | tr '\0' 'S')"
unpacked_fail big "$(deb_build "$d" "$T/local")" "" '"u-boot-sunxi"' \
	"partition 'spl' holds '/usr/lib/u-boot/orangepi_plus/u-boot-sunxi-with-spl.bin', 1100000 bytes, larger than its 1040384-byte slot at byte 8192 \(board 'orangepi-pc': the Allwinner boot ROM"

# A kernel without the board's device tree (u-boot-update would fall back to the directory and
# U-Boot hand the kernel another board's tree).
d=$(deb_new linux-image-6.1.0-99-armmp 1.0 armhf)
deb_file "$d" boot/vmlinuz-6.1.0-99-armmp "not a kernel"
deb_file "$d" usr/lib/linux-image-6.1.0-99-armmp/sun8i-h3-orangepi-plus.dtb "another board's tree"
unpacked_fail nodtb "$(deb_build "$d" "$T/local")" 'bootloader = "extlinux";' '"u-boot-sunxi", "u-boot-menu"' \
	"board 'orangepi-pc' boots with the device tree sun8i-h3-orangepi-pc.dtb, which kernel '6.1.0-99-armmp' does not ship as a file \(/usr/lib/linux-image-6.1.0-99-armmp/sun8i-h3-orangepi-pc.dtb\)"
