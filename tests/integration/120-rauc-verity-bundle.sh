# test-cost: slow (native builds of a verified A/B disk and its update bundle)
# A verified root as an update bundle (issue 39): a disk whose slots are each a boot partition,
# a squashfs root and its dm-verity hash partition, booted through mkimage's A/B selection, with
# an update group, makes NAME.raucb carrying the three as RAUC child slot images. Natively, from
# the base set, real u-boot-menu and stand-ins made here (a kernel with the modules,
# cryptsetup-bin, initramfs-tools, rauc). Debian's `rauc` reads the bundle with the right CA and
# refuses it with another; a flipped payload byte is refused; the images are slot A's partitions
# (the squashfs as far as its tree covers it, the tree, the boot partition whole), veritysetup
# verifies the extracted root with the disk's root hash; the boot entry carries that hash and
# takes the slot's partitions from boot.scr, which boots the slot's boot partition; system.conf
# names the children with parent=; fstab mounts the booted slot's boot partition through the udev
# link. Two builds give the same bundle. Slots that cannot hold slot A's images: exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

export SOURCE_DATE_EPOCH=1700000000
for t in rauc openssl sfdisk e2fsck debugfs veritysetup rdsquashfs mcopy; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done

# --- keys ------------------------------------------------------------------------------------
K=$T/r/keys
mkdir -p "$K"
ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$K/$1.key" -out "$K/$1.pem" -days 3650 \
		-subj "/O=mkimage tests/CN=$1" -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null || fail "openssl: CA $1"
}
ca ca
ca other-ca
openssl req -newkey rsa:2048 -nodes -keyout "$K/signer.key" -subj "/O=mkimage tests/CN=signer" \
	-out "$K/signer.csr" 2>/dev/null || fail "openssl: signer"
printf 'keyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n' >"$K/ext"
openssl x509 -req -in "$K/signer.csr" -CA "$K/ca.pem" -CAkey "$K/ca.key" -set_serial 1 \
	-days 3650 -extfile "$K/ext" -out "$K/signer.pem" 2>/dev/null || fail "openssl: cert"

# --- packages: the base set, u-boot-menu, stand-ins --------------------------------------------
fixture_debs bootcfg amd64 amd64 u-boot-menu perl-base
mkdir -p "$T/repo/pool/main"
ln -sf "$MKI_TEST_DEBS/bootcfg/debs/"*.deb "$T/repo/pool/main/"
v=6.1.0-99-test
d=$(deb_new "linux-image-$v" 1.0 amd64)
deb_file "$d" "boot/vmlinuz-$v" "not really a kernel"
deb_file "$d" "boot/initrd.img-$v" "not really an initrd"
for m in drivers/md/dm-verity fs/squashfs/squashfs; do deb_file "$d" "usr/lib/modules/$v/kernel/$m.ko" "module"; done
deb_build "$d" "$T/repo/pool/main" >/dev/null
for p in cryptsetup-bin initramfs-tools rauc rauc-service; do
	d=$(deb_new "$p" 1.0 amd64)
	deb_file "$d" "usr/share/doc/$p/stand-in" "a stand-in for the real package"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
native_repo

R=$T/r
# recipe NAME [BOOT-B-SIZE] [ROOT-B-SIZE] [HASH-B-SIZE]: the verified A/B disk and its update group
recipe() {
	native_recipe "$R/$1.cfg" "$1" ', "perl-base", "u-boot-menu", "cryptsetup-bin", "initramfs-tools", "linux-image-'$v'", "rauc", "rauc-service"'
	cat >>"$R/$1.cfg" <<R
disk = {
  bootloader = "extlinux";
  console = "ttyS0,115200";
  partitions = (
    { name = "select"; type = "linux"; format = "vfat"; size = "16M"; contents = "/boot/select"; },
    { name = "boot-a"; type = "linux"; size = "32M"; contents = "/boot"; },
    { name = "root-a"; type = "root"; size = "96M"; contents = "root"; format = "squashfs"; },
    { name = "root-a-verity"; type = "root-verity"; size = "4M"; contents = "verity:root-a"; },
    { name = "boot-b"; type = "linux"; size = "${2:-32M}"; },
    { name = "root-b"; type = "root"; size = "${3:-96M}"; },
    { name = "root-b-verity"; type = "root-verity"; size = "${4:-4M}"; },
    { name = "data"; type = "linux"; contents = "/var"; format = "ext4"; size = "16M"; }
  );
};
update = {
  compatible = "mkimage-verity-board";
  version = "1.0";
  cert = "keys/signer.pem"; key = "keys/signer.key"; keyring = "keys/ca.pem";
};
R
}
recipe ab

# --- bad input first (the recipe alone shows it): exit 2 -------------------------------------
recipe smallboot 16M
recipe smallroot 32M 64M
recipe smallhash 32M 96M 1M
for c in "smallboot:partition 'boot-b', the boot partition of slot 'root-b', must have a fixed size of at least" \
	"smallroot:update slot 'root-b' \\([0-9]+ bytes\\) is smaller than the root partition 'root-a'" \
	"smallhash:partition 'root-b-verity', the hash partition of slot 'root-b', must have a fixed size"; do
	expect_fail 2 "${c#*:}" "$MKIMAGE" --check "$R/${c%%:*}.cfg"
done
note "slots smaller than slot A's images: exit 2"

build() { # DIR: build ab.cfg into DIR/ab.img
	mkdir -p "$1/tmp"
	TMPDIR=$1/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$1/ab.img" "$R/ab.cfg"
	[ -z "$(ls -A "$1/tmp")" ] || fail "work files left: $(ls -A "$1/tmp")"
}
build "$T/a"
B=$T/a/ab.raucb
hash=$(cat "$T/a/ab.roothash")
[[ $hash =~ ^[0-9a-f]{64}$ ]] || fail "ab.roothash holds '$hash'"

# --- RAUC reads it ---------------------------------------------------------------------------
rauc info --keyring="$K/ca.pem" --output-format=shell "$B" >"$T/info" 2>"$T/info.err" ||
	{ cat "$T/info.err" >&2; fail "rauc info refused the bundle"; }
for want in "RAUC_MF_COMPATIBLE='mkimage-verity-board'" "RAUC_MF_IMAGES=3" \
	"RAUC_IMAGE_CLASS_0='rootfs'" "RAUC_IMAGE_NAME_0='rootfs.squashfs'" \
	"RAUC_IMAGE_CLASS_1='verity'" "RAUC_IMAGE_NAME_1='rootfs.verity.img'" \
	"RAUC_IMAGE_CLASS_2='boot'" "RAUC_IMAGE_NAME_2='boot.ext4'"; do
	grep -qx "$want" "$T/info" || { cat "$T/info" >&2; fail "rauc info: no $want"; }
done
rauc info --keyring="$K/other-ca.pem" "$B" >"$T/o" 2>&1 && fail "rauc info accepted the bundle with another CA"
grep -q "signature verification failed" "$T/o" || fail "wrong CA: $(cat "$T/o")"
note "rauc info: three images (rootfs, verity, boot), refused with another CA"

# the images: slot A's partitions
part() { # NAME FILE: the partition's bytes; PART_UUID its PARTUUID
	local start size
	read -r start size PART_UUID < <(sfdisk --json "$T/a/ab.img" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["partitiontable"]["partitions"]:
    if p.get("name") == sys.argv[1]:
        print(p["start"], p["size"], p.get("uuid", "").lower())' "$1")
	[ -n "$size" ] || fail "the disk has no partition '$1'"
	dd if="$T/a/ab.img" of="$2" bs=512 skip="$start" count="$size" status=none
}
sfdisk --verify "$T/a/ab.img" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify"; }
part root-a "$T/root-a"; uuid_root=$PART_UUID
part root-a-verity "$T/root-a-verity"; uuid_hash=$PART_UUID
part boot-a "$T/boot-a"
part select "$T/select"
part boot-b "$T/boot-b"; uuid_boot_b=$PART_UUID
rauc extract --trust-environment --keyring="$K/ca.pem" "$B" "$T/x" >"$T/o" 2>&1 ||
	{ cat "$T/o" >&2; fail "rauc extract refused the bundle"; }
sq=$(stat -c %s "$T/x/rootfs.squashfs") tree=$(stat -c %s "$T/x/rootfs.verity.img")
[ $((sq % 4096)) = 0 ] && [ "$sq" -lt $((96 << 20)) ] || fail "the squashfs image is $sq bytes"
cmp -s "$T/x/rootfs.squashfs" <(head -c "$sq" "$T/root-a") || fail "rootfs.squashfs is not root-a's squashfs"
[ "$tree" -lt $((4 << 20)) ] || fail "the tree image is the whole hash partition ($tree bytes)"
cmp -s "$T/x/rootfs.verity.img" <(head -c "$tree" "$T/root-a-verity") || fail "rootfs.verity.img is not root-a-verity's tree"
cmp -s "$T/x/boot.ext4" "$T/boot-a" || fail "boot.ext4 is not the boot partition boot-a"
veritysetup verify "$T/x/rootfs.squashfs" "$T/x/rootfs.verity.img" "$hash" >"$T/vs" 2>&1 ||
	{ cat "$T/vs" >&2; fail "veritysetup refuses the bundle's root and tree with ab.roothash"; }
e2fsck -fn "$T/x/boot.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck of boot.ext4"; }
python3 - "$T/x" <<'PY' || fail "the inner manifest's sizes and digests"
import configparser, hashlib, os, sys
m = configparser.ConfigParser(); m.read(os.path.join(sys.argv[1], "manifest.raucm"))
for c in ("rootfs", "verity", "boot"):
    s = m["image." + c]; f = os.path.join(sys.argv[1], s["filename"])
    assert int(s["size"]) == os.path.getsize(f), c
    assert s["sha256"] == hashlib.sha256(open(f, "rb").read()).hexdigest(), c
PY
note "the images are slot A's squashfs, its tree and its boot partition; veritysetup verifies them"

# --- the boot: the entry on the boot partition, boot.scr, the root's configuration ------------
debugfs -R "cat /extlinux/extlinux.conf" "$T/boot-a" 2>/dev/null >"$T/extlinux.conf"
grep -qx "	append root=/dev/mapper/root rootfstype=squashfs mkimage.verity_data=PARTUUID=\${mkimage_slot_partuuid} mkimage.verity_hash=PARTUUID=\${mkimage_slot_hash_partuuid} mkimage.roothash=$hash console=ttyS0,115200 ro rootwait rauc.slot=\${mkimage_slot} panic=10" \
	"$T/extlinux.conf" || { cat "$T/extlinux.conf" >&2; fail "the entry does not carry the root hash and boot.scr's partitions"; }
grep -q "^	linux /vmlinuz-$v$" "$T/extlinux.conf" || fail "the entry's kernel is not on its boot partition"
debugfs -R "stat /select" "$T/boot-a" 2>/dev/null | grep -q "Type: directory" || fail "boot-a has no /select mount point"
MTOOLS_SKIP_CHECK=1 mcopy -i "$T/select" ::boot.scr "$T/boot.scr" || fail "no boot.scr"
tail -c +73 "$T/boot.scr" >"$T/boot.txt"
grep -q "setenv mkimage_slot_partuuid $uuid_root" "$T/boot.txt" &&
	grep -q "setenv mkimage_slot_hash_partuuid $uuid_hash" "$T/boot.txt" &&
	grep -q 'sysboot ${devtype} ${devnum}:${mkimage_slot_part} any ${pxefile_addr_r} /extlinux/extlinux.conf' "$T/boot.txt" &&
	grep -q "setenv mkimage_slot_part 2$" "$T/boot.txt" && grep -q "setenv mkimage_slot_part 5$" "$T/boot.txt" ||
	{ cat "$T/boot.txt" >&2; fail "boot.scr does not boot each slot's boot partition"; }
rdsquashfs -c /etc/rauc/system.conf "$T/x/rootfs.squashfs" >"$T/system.conf" 2>/dev/null
python3 - "$T/system.conf" "$uuid_root" "$uuid_hash" <<'PY' || { cat "$T/system.conf" >&2; fail "system.conf"; }
import configparser, sys
c = configparser.ConfigParser(); c.read(sys.argv[1])
assert c["system"]["bootloader"] == "custom" and c["system"]["compatible"] == "mkimage-verity-board"
assert c["slot.rootfs.0"]["device"] == "/dev/disk/by-partuuid/" + sys.argv[2]
assert c["slot.rootfs.0"]["type"] == "raw" and c["slot.rootfs.0"]["bootname"] == "A"
assert c["slot.verity.0"]["device"] == "/dev/disk/by-partuuid/" + sys.argv[3]
for i in "01":
    assert c["slot.verity." + i]["parent"] == "rootfs." + i and c["slot.verity." + i]["type"] == "raw"
    assert c["slot.boot." + i]["parent"] == "rootfs." + i and c["slot.boot." + i]["type"] == "ext4"
assert c["slot.rootfs.1"]["bootname"] == "B"
PY
rdsquashfs -c /etc/fstab "$T/x/rootfs.squashfs" >"$T/fstab" 2>/dev/null
grep -q "^/dev/mapper/root	/	squashfs	" "$T/fstab" && grep -q "^/dev/mkimage/boot	/boot	ext4	" "$T/fstab" &&
	grep -q "	/boot/select	vfat	" "$T/fstab" || { cat "$T/fstab" >&2; fail "fstab"; }
rdsquashfs -c /etc/udev/rules.d/61-mkimage-slot-boot.rules "$T/x/rootfs.squashfs" >"$T/rules" 2>/dev/null
grep -q "ENV{ID_PART_ENTRY_UUID}==\"$uuid_boot_b\", PROGRAM==\"/bin/grep -qw rauc.slot=B /proc/cmdline\", SYMLINK+=\"mkimage/boot\"" \
	"$T/rules" || { cat "$T/rules" >&2; fail "the udev rule does not link slot B's boot partition"; }
[ -z "$(tr -d '\0' <"$T/boot-b")" ] || fail "slot B's boot partition is not empty"
note "the entry carries the root hash, boot.scr boots each slot's boot partition, system.conf has the children"

# --- tampering, reproducibility --------------------------------------------------------------
cp "$B" "$T/flip.raucb"
python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(8192); b = f.read(1); f.seek(8192); f.write(bytes([b[0] ^ 0xff]))' "$T/flip.raucb"
rauc extract --trust-environment --keyring="$K/ca.pem" "$T/flip.raucb" "$T/x2" >"$T/o" 2>&1 &&
	fail "rauc extract accepted a flipped payload byte"
grep -q "payload is corrupted" "$T/o" || fail "flipped payload: $(cat "$T/o")"
build "$T/b"
cmp -s "$B" "$T/b/ab.raucb" || fail "two builds gave different bundles"
cmp -s "$T/a/ab.img" "$T/b/ab.img" || fail "two builds gave different disks"
note "a flipped byte refused; two builds, the same bundle and disk"
