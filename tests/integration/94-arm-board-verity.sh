# test-cost: slow (builds a whole recipe: run.sh starts it first)
# End to end: recipes/arm-board-verity.cfg, the read-only verified appliance - A/B squashfs root
# slots, each with a dm-verity hash partition, /var on a data partition - built from the local
# signed mirror, checked from the outside (the table, veritysetup verify with the root hash the
# build printed, the boot entry carrying it), built again with the initramfs built twice, as
# dpkg does (--no-initramfs-once), into the same bytes, booted through U-Boot to the login with
# 0 failed units, then booted again with one byte of a library systemd loads flipped in the root
# partition: the kernel refuses the block and the system never reaches the login.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

for tool in veritysetup:cryptsetup-bin rdsquashfs:squashfs-tools-ng unsquashfs:squashfs-tools; do
	command -v "${tool%%:*}" >/dev/null || skip "no ${tool%%:*} (${tool#*:}: make test-deps installs it)"
done
e2e_serve arm-board-verity
export SOURCE_DATE_EPOCH=1700000000
out=$T/images BASE=$T/images/arm-board-verity
DISK=$BASE.img
mkdir -p "$out"
expect_ok "$MKIMAGE" --source "$SRC" --output "$DISK" "$(flagship_recipe arm-board-verity)"
grep -q "initramfs: built once for .*-armmp, by initramfs-tools' trigger" "$T/err" ||
	fail "the kernel's initramfs was not built once"
for f in img img.bmap roothash lock spdx.json report.json; do
	[ -s "$BASE.$f" ] || fail "missing output arm-board-verity.$f"
done
sbom_validate "$BASE.spdx.json"
sfdisk --verify "$DISK" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify"; }

# The layout: boot, two root slots of one size each followed by its hash partition (the
# Discoverable Partitions types of armhf), data.
sfdisk --json "$DISK" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]["partitions"]
names = [p.get("name") for p in t]
assert names == ["boot", "root-a", "root-a-verity", "root-b", "root-b-verity", "data"], names
root, verity = "69dad710-2ce4-4e3c-b16c-21a1d49abed3", "7386cdf2-203c-47a9-a498-f2ecce45a2d6"
assert [p["type"].lower() for p in t[1:5]] == [root, verity, root, verity], t
assert t[1]["size"] == t[3]["size"] and t[2]["size"] == t[4]["size"], t
' || fail "the disk is not boot, root-a, root-a-verity, root-b, root-b-verity, data (types, sizes)"

# The root hash: beside the image, in the report, and what veritysetup finds for the partitions.
roothash=$(cat "$BASE.roothash")
[[ $roothash =~ ^[0-9a-f]{64}$ ]] || fail "NAME.roothash is not a sha256 root hash: '$roothash'"
grep -q "\"roothash\": *\"$roothash\"" "$BASE.report.json" ||
	fail "the report does not carry the root hash $roothash"
e2e_partition root-a-verity "$T/root-a.verity"
hash_uuid=$PART_UUID
e2e_partition root-a "$T/root-a.sqfs"
root_uuid=$PART_UUID
veritysetup verify "$T/root-a.sqfs" "$T/root-a.verity" "$roothash" >"$T/vs" 2>&1 ||
	{ cat "$T/vs" >&2; fail "veritysetup verify refuses slot A with the printed root hash"; }
for p in root-b root-b-verity; do
	e2e_partition "$p" "$T/$p"
	[ -z "$(tr -d '\0' <"$T/$p" | head -c 1)" ] || fail "partition $p is not empty"
	rm -f "$T/$p"
done

# The root is squashfs with the tree; /var lives on the data partition; fstab mounts them.
rdsquashfs -c /etc/fstab "$T/root-a.sqfs" >"$T/fstab" 2>/dev/null || fail "rdsquashfs cannot read slot A"
grep -Eq '^/dev/mapper/root[[:space:]]+/[[:space:]]+squashfs[[:space:]]+ro' "$T/fstab" ||
	{ cat "$T/fstab" >&2; fail "/etc/fstab does not mount /dev/mapper/root read-only at /"; }
e2e_partition data "$T/data.ext4"
data_uuid=$PART_UUID
grep -Eiq "^PARTUUID=$data_uuid[[:space:]]+/var[[:space:]]+ext4" "$T/fstab" ||
	{ cat "$T/fstab" >&2; fail "/etc/fstab does not mount the data partition at /var"; }
grep -Eq '^tmpfs[[:space:]]+/tmp[[:space:]]+tmpfs' "$T/fstab" || fail "no tmpfs at /tmp"
e2fsck -fn "$T/data.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck: the data partition"; }
debugfs -R "stat /lib/dpkg/status" "$T/data.ext4" 2>/dev/null | grep -q "Type: regular" ||
	fail "the dpkg database is not on the data partition (/var)"
rdsquashfs -l /var "$T/root-a.sqfs" 2>/dev/null | grep -q . &&
	fail "slot A holds /var's contents, which belong on the data partition"
for f in /etc/initramfs-tools/hooks/mkimage-verity /etc/initramfs-tools/scripts/local-top/mkimage-verity; do
	rdsquashfs -s "$f" "$T/root-a.sqfs" 2>/dev/null | grep -q "Access: 0755" || fail "no executable $f"
done

# The boot entry carries the root hash and both partitions.
e2e_partition boot "$T/boot.ext4"
e2fsck -fn "$T/boot.ext4" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck: the boot partition"; }
debugfs -R "cat /extlinux/extlinux.conf" "$T/boot.ext4" 2>/dev/null >"$T/extlinux.conf"
for want in "root=/dev/mapper/root" "mkimage.verity_data=PARTUUID=$root_uuid" \
	"mkimage.verity_hash=PARTUUID=$hash_uuid" "mkimage.roothash=$roothash"; do
	grep -q "append.*$want" "$T/extlinux.conf" ||
		{ cat "$T/extlinux.conf" >&2; fail "the boot entry lacks '$want'"; }
done

# Reproducible, and the same as dpkg's way: configured again with the initramfs built twice
# (--no-initramfs-once: the kernel's postinst, then initramfs-tools' trigger; a layer key of its
# own) and every realpath and readlink run by coreutils (MKIMAGE_EXEC_BUILTINS=0, not answered by
# the native tools' dispatcher), in another directory, the same disk and root hash.
# On bookworm only: a second configure costs minutes, and what it proves does not depend on the
# release (the trixie run, 113, boots instead).
if [ "$FLAGSHIP_SUITE" = bookworm ]; then
	mkdir -p "$T/again"
	MKIMAGE_EXEC_BUILTINS=0 expect_ok "$MKIMAGE" --no-initramfs-once --source "$SRC" \
		--output "$T/again/arm-board-verity.img" "$(flagship_recipe arm-board-verity)"
	grep -q "initramfs: built once" "$T/err" && fail "--no-initramfs-once built the initramfs once"
	cmp -s "$BASE.roothash" "$T/again/arm-board-verity.roothash" || fail "the root hash differs"
	cmp -s "$DISK" "$T/again/arm-board-verity.img" || fail "the second disk is not byte-identical"
	rm -rf "$T/again"
fi

# It boots through U-Boot: the initramfs opens the verified root, the system comes up.
PART_UUID=$root_uuid
e2e_boot qemu-system-arm armel
if [ -s "$T/console.log" ]; then
	grep -aq "mkimage-verity: root PARTUUID=$root_uuid verified" "$T/console.log" ||
		fail "the console does not show the initramfs opening the verified root"
fi

# Tampered: one byte of a data block of systemd's shared library (found through the squashfs'
# own map: the file's first block) flipped in the disk. veritysetup refuses the partition, and
# the boot stops with the kernel's verity error before any login.
lib=$(unsquashfs -lls "$T/root-a.sqfs" 2>/dev/null | grep -o '/usr/lib/.*libsystemd-shared-[0-9]*\.so' | head -n 1)
[ -n "$lib" ] || fail "no libsystemd-shared in slot A"
read -r blocks size0 < <(rdsquashfs -s "$lib" "$T/root-a.sqfs" | awk '
	/^Blocks start:/ {s = $3} /Block #0 size:/ {z = $4} END {print s, z}')
[ -n "$size0" ] && [ "$size0" -gt 0 ] || fail "rdsquashfs gives no first block for $lib"
start=$(sfdisk --json "$DISK" | python3 -c '
import json, sys
print(next(p["start"] for p in json.load(sys.stdin)["partitiontable"]["partitions"] if p.get("name") == "root-a"))')
at=$((start * 512 + blocks + size0 / 2))
cp --sparse=always "$DISK" "$T/tampered.img"
python3 - "$T/tampered.img" "$at" <<'PY' || fail "cannot flip the byte"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xff]))
PY
(DISK=$T/tampered.img; e2e_partition root-a "$T/tampered-a.sqfs")
! veritysetup verify "$T/tampered-a.sqfs" "$T/root-a.verity" "$roothash" >/dev/null 2>&1 ||
	fail "veritysetup accepts slot A with a byte flipped"
rm -f "$T/tampered-a.sqfs" "$T/root-a.sqfs"
if e2e_boots_here qemu-system-arm "booting the tampered disk"; then
	rc=0
	BOOT_LOG=$T/tampered.log BOOT_STOP_AT='device-mapper: verity: .*is corrupted' \
		"$TOP/tests/bootvm.sh" "$T/tampered.img" "${BOOT_TIMEOUT:-1200}" 2>"$T/boot.err" || rc=$?
	[ "$rc" = 3 ] || { cat "$T/boot.err" >&2; fail "the tampered disk did not stop at a verity error (bootvm exit $rc)"; }
	grep -aq 'login: ' "$T/tampered.log" && fail "the tampered disk reached the login prompt"
	grep -aq 'boot-report: system' "$T/tampered.log" && fail "the tampered disk ran the boot report"
	note "the tampered disk stopped: $(grep -aEo 'device-mapper: verity: .*is corrupted' "$T/tampered.log" | head -n 1)"
fi
rm -f "$T/tampered.img"
