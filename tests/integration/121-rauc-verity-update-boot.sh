# test-cost: slow (a verified A/B appliance built twice, one machine rebooting into the update; make check-boots)
# An update of a verified root that boots (issue 39): arm-board-verity laid out as verified A/B
# slots (each a boot partition, the squashfs root, its hash partition; mkimage(7), Updates) with
# an update group boots version 1 from slot A through Debian's U-Boot and the A/B selection, the
# root opened by dm-verity; RAUC installs version 2's bundle (squashfs, tree, boot partition)
# from a second disk into slot B; after the reboot version 2 runs from slot B, its root
# /dev/mapper/root verified against the root hash of B's own boot entry, and RAUC marks B good;
# a bundle with a flipped payload byte is refused and the device keeps running. One
# qemu-system-arm machine, its disk written by the guest. The bundle and layout are checked
# natively by test 120; this boot is `make check-boots`' (MKIMAGE_TEST_BOOT_SUITES with bookworm).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"
. "$(dirname "$0")/lib-rauc.sh"
. "$(dirname "$0")/lib-update.sh"

case " ${MKIMAGE_TEST_BOOT_SUITES:-} " in
*" bookworm "*) ;;
*) skip "the verified update boot is make check-boots' (MKIMAGE_TEST_BOOT_SUITES with bookworm)" ;;
esac
for t in qemu-system-arm openssl debugfs mkfs.ext4; do
	command -v $t >/dev/null || skip "$t missing (make test-deps)"
done
[ -f /usr/lib/u-boot/qemu_arm/u-boot.bin ] || skip "u-boot-qemu missing (make test-deps)"

FLAGSHIP_SUITE=bookworm
e2e_serve arm-board-verity
W=$T/w
update_keys

# --- this test's driver unit (lib-update.sh): what each boot does, from its slot and version ---
O=$W/recipes/overlay/update-steps
update_unit
cat >"$O/usr/local/sbin/update-step" <<'S'
#!/bin/sh
say() { echo "update-step: $*"; }
slot=
for w in $(cat /proc/cmdline); do case $w in rauc.slot=*) slot=${w#rauc.slot=} ;; esac; done
. /etc/os-release
mkdir -p /run/steps
mount -o ro /dev/disk/by-label/steps /run/steps || { say "no steps disk"; exit 0; }
systemctl is-system-running --wait >/dev/null 2>&1
eval "$(rauc status --detailed --output-format=shell 2>/dev/null)" || say "rauc status failed"
st="booted=${RAUC_SYSTEM_BOOTED_BOOTNAME:-} primary=${RAUC_BOOT_PRIMARY:-}"
for n in ${RAUC_SLOTS:-}; do eval "st=\"\$st \${RAUC_SLOT_CLASS_$n}.\${RAUC_SLOT_BOOTNAME_$n:-}=\${RAUC_SLOT_BOOT_STATUS_$n:-}\""; done
say "slot $slot version $IMAGE_VERSION: rauc: $st"
say "slot $slot: root $(findmnt -n -o SOURCE /) $(findmnt -n -o FSTYPE /), boot $(findmnt -n -o SOURCE /boot), verity $(veritysetup status root 2>/dev/null | sed -n 's/^ *status: *//p')"
case $slot/$IMAGE_VERSION in
A/1)
	rauc install /run/steps/v2.raucb && say "installed v2"
	systemctl reboot ;;
B/2)
	if rauc install /run/steps/tampered.raucb; then say "tampered bundle INSTALLED"
	else say "tampered bundle refused"; fi
	say "after the tampered bundle: system $(systemctl is-system-running --wait)"
	say "done"
	systemctl poweroff ;;
*) say "unexpected slot '$slot' version '$IMAGE_VERSION'"; systemctl poweroff ;;
esac
S
chmod 755 "$O/usr/local/sbin/update-step"

# recipe VERSION: arm-board-verity as verified A/B slots, RAUC, the steps overlay, an update group
recipe() {
	local f=$W/recipes/v$1.cfg
	python3 - "$(flagship_recipe arm-board-verity)" "$f" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
t = t.replace('"cryptsetup-bin",', '"cryptsetup-bin", "rauc", "rauc-service",', 1)
t = t.replace('{ source = "overlay/serial-ttyAMA0"; destination = "/"; }',
              '{ source = "overlay/serial-ttyAMA0"; destination = "/"; },\n'
              '  { source = "overlay/update-steps"; destination = "/"; }', 1)
parts = '''  partitions = (
    { name = "select"; type = "linux"; format = "vfat"; size = "16M"; contents = "/boot/select"; },
    { name = "boot-a"; type = "linux"; size = "128M"; contents = "/boot"; },
    { name = "root-a"; type = "root"; size = "1G"; contents = "root"; format = "squashfs"; },
    { name = "root-a-verity"; type = "root-verity"; size = "16M"; contents = "verity:root-a"; },
    { name = "boot-b"; type = "linux"; size = "128M"; },
    { name = "root-b"; type = "root"; size = "1G"; },
    { name = "root-b-verity"; type = "root-verity"; size = "16M"; },
    { name = "data"; type = "linux"; size = "grow"; contents = "/var"; format = "ext4"; }
  );'''
t, n = re.subn(r'  partitions = \(\n.*?\n  \);', parts, t, flags=re.S)
assert n == 1 and "update-steps" in t and '"rauc"' in t, "arm-board-verity.cfg changed: adapt recipe()"
open(sys.argv[2], "w").write(t)
PY
	[ -s "$f" ] || fail "arm-board-verity.cfg changed: adapt recipe() of test 121"
	cat >>"$f" <<R
update = {
  compatible = "arm-board-verity";
  version = "$1";
  cert = "keys/signer.cert.pem";
  key = "keys/signer.key.pem";
  keyring = "keys/ca.cert.pem";
};
R
	echo "$f"
}

for v in 1 2; do
	SOURCE_DATE_EPOCH=$((1700000000 + v * 86400)) \
		expect_ok "$MKIMAGE" --source "$SRC" --output "$W/images/v$v.img" "$(recipe $v)"
	[ -s "$W/images/v$v.raucb" ] || fail "no bundle v$v.raucb beside the disk"
done
DISK=$W/images/v1.img
sfdisk --verify "$DISK" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify"; }
rauc info --keyring="$K/ca.cert.pem" "$W/images/v2.raucb" >"$T/info" 2>&1 ||
	{ cat "$T/info" >&2; fail "rauc info refuses v2.raucb"; }

S=$T/steps
mkdir -p "$S"
cp "$W/images/v2.raucb" "$S/"
rauc_flip "$W/images/v2.raucb" "$S/tampered.raucb" 70000
rauc_steps_disk "$S" "$T/steps.img"

# --- the machine: A (v1) -> B (v2), a tampered bundle refused --------------------------------
cp --sparse=always "$DISK" "$T/device.img"
BOOT_WRITE=1 BOOT_DISK2=$T/steps.img BOOT_DONE='update-step: done' \
	BOOT_LOG=$T/console.log "$TOP/tests/bootvm.sh" "$T/device.img" "${BOOT_TIMEOUT:-2400}" ||
	{ grep -a -E 'mkimage-ab:|mkimage-verity:|boot-report:|update-step:|Kernel panic' "$T/console.log" | tr -d '\r' >&2 || true
	  fail "the update did not go A -> B"; }
grep -a -E 'mkimage-ab: booting|mkimage-verity:|boot-report: slot|update-step:|Kernel panic' \
	"$T/console.log" | tr -d '\r' | sed 's/^.*\(mkimage-ab:\|mkimage-verity:\|boot-report:\|update-step:\|Kernel panic\)/\1/' >"$T/story"
sed 's/^/  | /' "$T/story" >&2
python3 - "$T/story" <<'PY' || fail "the update's story is not what it must be (above)"
import sys
lines = open(sys.argv[1]).read().splitlines()
text = "\n".join(lines)
boots = [l.split()[3] for l in lines if l.startswith("mkimage-ab: booting slot")]
assert boots == ["A", "B"], boots
reports = [l for l in lines if l.startswith("boot-report: slot")]
assert reports == ["boot-report: slot A, image arm-board-verity version 1",
                   "boot-report: slot B, image arm-board-verity version 2"], reports
assert len([l for l in lines if l.startswith("mkimage-verity: root PARTUUID=")]) == 2, "verity opened"
roots = [l for l in lines if ": root " in l and l.startswith("update-step: slot")]
assert len(roots) == 2 and all("root /dev/mapper/root squashfs" in l and "verity verified" in l
                               and "boot /dev/" in l for l in roots), roots
rauc = [l.split(": rauc: ")[1].split() for l in lines if ": rauc: " in l]
assert len(rauc) == 2, rauc
assert rauc[0][:2] == ["booted=A", "primary=rootfs.0"] and "rootfs.A=good" in rauc[0], rauc[0]
assert rauc[1][:2] == ["booted=B", "primary=rootfs.1"] and "rootfs.B=good" in rauc[1], rauc[1]
for want in ["update-step: installed v2", "update-step: tampered bundle refused",
             "update-step: after the tampered bundle: system running", "update-step: done"]:
    assert want in text, want
assert "INSTALLED" not in text and "Kernel panic" not in text
PY
