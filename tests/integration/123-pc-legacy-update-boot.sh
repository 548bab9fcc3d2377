# test-cost: slow (a PC A/B appliance and two bundles built; with KVM one machine rebooting through them)
# An update that boots through UEFI (issue 39): pc-legacy with RAUC and an update group, on a disk
# of an ESP and root slots A and B, boots version 1 from slot A through OVMF and systemd-boot;
# RAUC installs version 2's bundle from a second disk into slot B, and mkimage's backend copies
# slot B's kernel onto the ESP with an entry carrying systemd-boot's boot counter; after the
# reboot version 2 runs from slot B and marks it good (the counter dropped); forged, tampered
# and alien bundles are refused and the device keeps running; version 3, whose root cannot
# start init, is installed into slot A, uses up its tries, and systemd-boot falls back to slot B,
# which still runs version 2. The disk is also checked from outside: the ESP (FAT, the loader,
# slot A's entry and kernel), slot A's ext4, system.conf, the keyring, the backend.
# The machine runs under KVM where KVM runs the image's kernel (tests/bootvm.sh --kvm), else
# under TCG in `make check-boots` (MKIMAGE_TEST_BOOT_SUITES) alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"
. "$(dirname "$0")/lib-rauc.sh"
. "$(dirname "$0")/lib-update.sh"

for t in openssl fsck.vfat mcopy mdir debugfs rauc; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done

e2e_serve pc-legacy-ab
export SOURCE_DATE_EPOCH=1700000000
name=$(sed -n 's/^name = "\(.*\)";$/\1/p' "$(flagship_recipe pc-legacy)")
W=$T/w
update_keys
update_overlay

# recipe VERSION [EXTRA-HOOK]: pc-legacy with RAUC, the A/B layout and the update group
recipe() {
	local f=$W/recipes/v$1.cfg
	python3 - "$(flagship_recipe pc-legacy)" "$f" "${2:-}" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
def sub(old, new):
    global s
    assert old in s, "pc-legacy.cfg changed: adapt test 123's recipe(): " + old
    s = s.replace(old, new, 1)
sub('"busybox",', '"busybox",\n    "rauc", "rauc-service",')
sub('{ source = "overlay/serial-ttyS0"; destination = "/"; }',
    '{ source = "overlay/serial-ttyS0"; destination = "/"; },\n'
    '  { source = "overlay/update-steps"; destination = "/"; }')
if sys.argv[3]:
    sub('hooks = (', 'hooks = (\n  { name = "%s"; script = "../hooks/%s.sh"; where = "inside"; timeout = 60; },'
        % (sys.argv[3], sys.argv[3]))
i = s.index("  partitions = (")
j = s.index("  );", i)
s = s[:i] + '''  partitions = (
    { name = "esp"; type = "esp"; size = "256M"; contents = "/boot/efi"; },
    { name = "root-a"; type = "root"; size = "1536M"; contents = "root"; },
    { name = "root-b"; type = "root"; size = "1536M"; }
''' + s[j:]
open(sys.argv[2], "w").write(s)
PY
	cat >>"$f" <<R
update = {
  compatible = "pc-legacy";
  version = "$1";
  boot_attempts = 2;
  cert = "keys/signer.cert.pem";
  key = "keys/signer.key.pem";
  keyring = "keys/ca.cert.pem";
};
R
	echo "$f"
}

# --- bad input: an ESP of automatic size has no room for slot B's kernel ------------------------
sed 's|{ name = "esp"; type = "esp"; size = "256M";|{ name = "esp"; type = "esp";|' "$(recipe 1)" >"$W/recipes/autoesp.cfg"
expect_fail 2 "the ESP 'esp' needs a fixed 'size'" \
	"$MKIMAGE" --source "$SRC" --output "$W/images/autoesp.img" "$W/recipes/autoesp.cfg"
[ ! -e "$W/images/autoesp.img" ] || fail "a refused build left its disk"

# --- bad input: no RAUC in the plan (exit 8 before anything is downloaded) ---------------------
sed 's|"rauc", "rauc-service",||' "$(recipe 1)" >"$W/recipes/norauc.cfg"
expect_fail 8 "bootloader = \"systemd-boot\".*add \"rauc\" and \"rauc-service\" to packages.install" \
	"$MKIMAGE" --source "$SRC" --output "$W/images/norauc.img" "$W/recipes/norauc.cfg"
[ ! -e "$W/images/norauc.img" ] || fail "a refused build left its disk"

# --- version 1: the factory disk; 2 and 3: bundles ---------------------------------------------
# build VERSION [EXTRA-HOOK]: each release built on its own day
build() {
	SOURCE_DATE_EPOCH=$((1700000000 + $1 * 86400)) \
		expect_ok "$MKIMAGE" --source "$SRC" --output "$W/images/v$1.img" "$(recipe "$@")"
	[ -s "$W/images/v$1.raucb" ] || fail "no bundle v$1.raucb beside the disk"
}
build 1
# The machine: KVM where it runs the image's kernel here, else TCG in `make check-boots` alone.
boot=1 accel=tcg why=
if "$TOP/tests/bootvm.sh" --kvm "$W/images/v1.vmlinuz"; then
	accel=kvm
else
	case " ${MKIMAGE_TEST_BOOT_SUITES:-} " in *" $FLAGSHIP_SUITE "*) ;; *) boot=0 why="KVM does not run the kernel here; under TCG it runs in 'make check-boots' (MKIMAGE_TEST_BOOT_SUITES)" ;; esac
fi
command -v qemu-system-x86_64 >/dev/null && [ -f /usr/share/OVMF/OVMF_CODE_4M.fd ] ||
	boot=0 why="no qemu-system-x86_64 or OVMF (make test-deps)"
[ "${MKIMAGE_TEST_BOOT:-1}" != 0 ] || boot=0 why="MKIMAGE_TEST_BOOT=0"
if [ $boot = 1 ]; then
	build 2
	build 3 break-init
fi
DISK=$W/images/v1.img
sfdisk --verify "$DISK" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify"; }
sfdisk --json "$DISK" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]["partitions"]
assert [p.get("name") for p in t] == ["esp", "root-a", "root-b"], t
assert t[1]["size"] == t[2]["size"], t
' || fail "the layout is not esp, root-a, root-b (of one size)"

# Slot A: ext4, RAUC configured, the backend, the keyring, the version in os-release.
e2e_partition root-a "$T/root-a.ext4"
a_uuid=$PART_UUID
e2e_partition root-b "$T/root-b.raw"
b_uuid=$PART_UUID
IMG=$T/root-a.ext4
e2fsck -fn "$IMG" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck: slot A"; }
dbg "cat /etc/rauc/system.conf" >"$T/system.conf"
grep -qx "compatible=pc-legacy" "$T/system.conf" && grep -qx "bootloader=custom" "$T/system.conf" &&
	grep -qx "bootloader-custom-backend=/usr/lib/mkimage/rauc-ab-boot" "$T/system.conf" &&
	grep -qix "device=/dev/disk/by-partuuid/$a_uuid" "$T/system.conf" &&
	grep -qix "device=/dev/disk/by-partuuid/$b_uuid" "$T/system.conf" &&
	[ "$(grep -c '^bootname=[AB]$' "$T/system.conf")" = 2 ] ||
	{ cat "$T/system.conf" >&2; fail "system.conf does not name slots A and B by PARTUUID"; }
dbg "cat /etc/rauc/keyring.pem" | cmp -s - "$K/ca.cert.pem" || fail "the keyring is not the recipe's CA"
dbg "cat /usr/lib/mkimage/rauc-ab-boot" >"$T/backend"
grep -qx "options_B='root=PARTUUID=$b_uuid console=ttyS0 ro rootwait rauc.slot=B panic=10'" "$T/backend" &&
	grep -qx "esp=/boot/efi" "$T/backend" && grep -qx "attempts=2" "$T/backend" ||
	{ head -n 12 "$T/backend" >&2; fail "the backend does not boot slot B from its PARTUUID"; }
sh -n "$T/backend" || fail "the backend is not a valid sh script"
dbg "stat /usr/lib/mkimage/rauc-ab-boot" | grep -q "Mode:  0755" || fail "the backend is not 0755"
dbg "cat /etc/systemd/system/mkimage-mark-good.service.d/systemd-boot.conf" |
	grep -qx "RequiresMountsFor=/boot/efi" || fail "mark-good does not wait for the ESP"
dbg "cat /usr/lib/os-release" | grep -qx 'IMAGE_VERSION="1"' || fail "os-release: no IMAGE_VERSION 1"
[ -z "$(dbg "cat /etc/kernel/cmdline")" ] || fail "/etc/kernel/cmdline names one slot's root for all"
rauc info --keyring="$K/ca.cert.pem" "$W/images/v1.raucb" >/dev/null 2>&1 || fail "rauc info refuses v1.raucb"

# The ESP: FAT, the loader, slot A's entry (no counter: the factory slot is good) and kernel,
# nothing for the empty slot B.
e2e_partition esp "$T/esp.vfat"
export MTOOLS_SKIP_CHECK=1
fsck.vfat -n "$T/esp.vfat" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "fsck.vfat: the ESP"; }
[ "$(mdir -b -i "$T/esp.vfat" ::/loader/entries | sed 's|.*/||')" = "debian-A.conf" ] ||
	{ mdir -i "$T/esp.vfat" ::/loader/entries >&2; fail "the ESP's entries are not slot A's alone"; }
mcopy -n -i "$T/esp.vfat" ::/loader/entries/debian-A.conf "$T/entry-A" || fail "no slot A entry"
mcopy -n -i "$T/esp.vfat" ::/loader/loader.conf "$T/loader.conf" || fail "no loader.conf"
grep -qx "options    root=PARTUUID=$a_uuid console=ttyS0 ro rootwait rauc.slot=A panic=10" "$T/entry-A" &&
	grep -qx "sort-key   debian-ab-1" "$T/entry-A" && grep -qx "linux      /debian/A/linux" "$T/entry-A" &&
	grep -q "^initrd     /debian/A/initrd.img-" "$T/entry-A" && grep -q "^title .*(slot A)$" "$T/entry-A" ||
	{ cat "$T/entry-A" >&2; fail "slot A's entry does not boot slot A first"; }
grep -qx "default debian-\*" "$T/loader.conf" || { cat "$T/loader.conf" >&2; fail "loader.conf's default"; }
mcopy -n -i "$T/esp.vfat" ::/debian/A/linux "$T/linux" && cmp -s "$T/linux" \
	<(debugfs -R "cat /boot/$(dbg "ls -p /boot" | awk -F/ '$6 ~ /^vmlinuz-/ {print $6}' | sort -V | tail -n 1)" "$IMG" 2>/dev/null) ||
	fail "the ESP's slot A kernel is not slot A's /boot/vmlinuz"
mcopy -n -i "$T/esp.vfat" ::/EFI/BOOT/BOOTX64.EFI "$T/boot.efi" || fail "no systemd-boot at the fallback path"
if [ $boot = 0 ]; then
	skip_part "the update boot: $why"
	exit 0
fi

# --- the machine: A (v1) -> B (v2) -> refusals -> A (v3) twice -> B (v2) ------------------------
update_steps_disk pc-legacy
cp --sparse=always "$DISK" "$T/device.img"
t0=$SECONDS
BOOT_ACCEL=$accel BOOT_WRITE=1 BOOT_DISK2=$T/steps.img BOOT_DONE=$(update_done) \
	BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "$T/device.img" "${BOOT_TIMEOUT:-2400}" 2>"$T/boot.err" ||
	{ cat "$T/boot.err" >&2
	  grep -a -E 'Kernel command line|boot-report:|update-step:|rauc-ab-boot|Kernel panic' "$T/console.log" | tr -d '\r' >&2 || true
	  fail "the update did not go A -> B -> fallback to B"; }
note "the whole update cycle under $accel in $((SECONDS - t0)) s"
grep -a -E 'Kernel command line:|boot-report: slot|update-step:|Kernel panic|Attempted to kill init' \
	"$T/console.log" | tr -d '\r' | sed 's/^.*\(Kernel command line:\|boot-report:\|update-step:\|Kernel panic\|Attempted\)/\1/' >"$T/story"
sed 's/^/  | /' "$T/story" >&2
boots=$(sed -n 's/^Kernel command line:.* rauc\.slot=\([AB]\).*/\1/p' "$T/story" | tr '\n' ' ')
update_story "$T/story" "$name" "$boots" || fail "the update's story is not what it must be (above)"
# After the fallback: slot B's entry blessed (no counter), slot A's out of tries.
DISK=$T/device.img e2e_partition esp "$T/esp2.vfat"
mdir -b -i "$T/esp2.vfat" ::/loader/entries | sed 's|.*/||' | sort >"$T/entries"
[ "$(cat "$T/entries")" = "$(printf 'debian-A+0-2.conf\ndebian-B.conf')" ] ||
	{ cat "$T/entries" >&2; fail "the entries are not slot A out of tries, slot B good"; }
fsck.vfat -n "$T/esp2.vfat" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "fsck.vfat: the ESP after the updates"; }
