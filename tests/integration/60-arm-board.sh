# test-cost: slow (builds a whole recipe: run.sh starts it first)
# End to end: the flagship recipe, built from a local signed mirror of real bookworm armhf + armel
# packages on 127.0.0.1, configured under QEMU, overlays and hooks applied, written as a whole
# disk, checked from the outside, then booted under qemu-system-arm through U-Boot (Debian's
# u-boot-qemu as the machine's firmware, nothing but the disk given) to a serial login
# (tests/bootvm.sh). arm-board-ab, its A/B sibling with RAUC, is test 129's (116 on trixie).
# MKIMAGE_TEST_LEAN=1 builds the recipe without kernel, systemd and disk (tests/flagship.sh) and
# checks all but the kernel and the boot: CI's run with the packaged mkimage, whose job is the
# package.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-e2e.sh"

e2e_serve arm-board

recipe=$(flagship_recipe arm-board) outputs="img img.bmap vmlinuz initrd.img dtbs" ext=img
if [ "${MKIMAGE_TEST_LEAN:-0}" = 1 ]; then
	flagship_lean arm-board "$T/lean"
	recipe=$T/lean/recipes/arm-board.cfg outputs=ext4 ext=ext4
fi
out=$T/out-images
mkdir -p "$out"
export SOURCE_DATE_EPOCH=1700000000
expect_ok "$MKIMAGE" --source "$SRC" \
	--output "$out/arm-board.$ext" "$recipe"
# Native tools (the mirror carries the host's builds of the same versions, as Debian's archive
# does): on trixie too, whose shell is /usr/bin/dash.
grep -Eq "native tools: [0-9]+ target programs run as their host-architecture build" "$T/err" ||
	{ grep "native tools" "$T/err" >&2; fail "the build ran no native tools"; }
for f in lock spdx.json report.json $outputs; do
	f=arm-board.$f
	[ -s "$out/$f" ] || fail "missing output $f"
done
ls "$out" | grep -q tmp && fail "temporary files left beside the image"
BASE=$out/arm-board img=$out/arm-board.ext4 IMG=$out/arm-board.ext4 DISK=
if [ "$ext" = img ]; then
	# The whole disk: a clean table, the root in partition "root", legacy-bootable for U-Boot.
	DISK=$out/arm-board.img img=$T/root.ext4 IMG=$T/root.ext4
	sfdisk --verify "$DISK" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify"; }
	e2e_partition root "$img"
	sfdisk --json "$DISK" | grep -q '"attrs": *"LegacyBIOSBootable"' ||
		fail "the root partition is not legacy-bootable: U-Boot's distro boot would not look there"
	# Flashed by its map onto a used card: only the mapped blocks are written, the rest keeps
	# the card's old bytes (here 0xa5), and the table and the root filesystem are still sound.
	python3 - "$DISK" "$DISK.bmap" "$T/flashed.img" <<'PY' || fail "cannot apply the bmap"
import sys, xml.etree.ElementTree as ET
img, bmap, out = sys.argv[1:]
m = ET.parse(bmap).getroot()
bs, size = int(m.find("BlockSize").text), int(m.find("ImageSize").text)
with open(out, "wb") as g:
    for _ in range(size >> 20):
        g.write(b"\xa5" * (1 << 20))
    g.truncate(size)
with open(img, "rb") as f, open(out, "r+b") as g:
    for r in m.find("BlockMap"):
        a, _, b = r.text.strip().partition("-")
        a, b = int(a), int(b or a)
        f.seek(a * bs), g.seek(a * bs)
        g.write(f.read((b - a + 1) * bs))
PY
	sfdisk --verify "$T/flashed.img" >"$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "sfdisk --verify after flashing by the bmap"; }
	(DISK=$T/flashed.img; e2e_partition root "$T/flashed-root.ext4")
	e2fsck -fn "$T/flashed-root.ext4" >"$T/fsck" 2>&1 ||
		{ cat "$T/fsck" >&2; fail "e2fsck: the root flashed by the bmap over old bytes"; }
	rm -f "$T/flashed.img" "$T/flashed-root.ext4"
fi

e2fsck -fn "$img" >"$T/fsck" 2>&1 || { cat "$T/fsck" >&2; fail "e2fsck -fn reports problems"; }

dbg() { debugfs -R "$1" "$img" 2>/dev/null; }
dbg "stat /usr/lib/arm-linux-gnueabihf/libc.so.6" | grep -q "Type: regular" || fail "no armhf libc"
dbg "stat /usr/lib/arm-linux-gnueabi/libc.so.6" | grep -q "Type: regular" || fail "no armel libc"
[ "$(dbg "cat /var/lib/dpkg/arch")" = "$(printf 'armhf\narmel')" ] || fail "dpkg arch file is wrong"
dbg "stat /dev/console" | grep -q "Type: character special" || fail "no /dev/console device node"

# The dpkg database is complete and configured.
mkdir -p "$T/root" && debugfs -R "rdump /var $T/root" "$img" >/dev/null 2>&1
audit=$(dpkg --admindir="$T/root/var/lib/dpkg" --audit 2>&1) || true
[ -z "$audit" ] || { echo "$audit" >&2; fail "dpkg --audit is not clean"; }
grep -c '^Status: install ok installed' "$T/root/var/lib/dpkg/status" >"$T/n"
[ "$(cat "$T/n")" -ge 90 ] || fail "only $(cat "$T/n") packages installed"

# The identity keys and overlays; the hook's service user owns its home.
e2e_appliance arm-board ttyAMA0
uid=$(dbg "cat /etc/passwd" | awk -F: '$1=="appsvc"{print $3}')
[ -n "$uid" ] || fail "service user appsvc missing"
dbg "stat /var/lib/appsvc" | grep -Eq "User: +$uid +Group: +[0-9]+ " || fail "appsvc home not owned by appsvc"
dbg "stat /etc/shadow" | grep -Eq "User: +0 +Group: +42 " || fail "/etc/shadow is not root:shadow"

# Binaries of both architectures run from the image's own tree (armhf busybox, armel hello).
mkdir -p "$T/sys" && debugfs -R "rdump /usr $T/sys" "$img" >/dev/null 2>&1
ln -s usr/lib "$T/sys/lib"
qemu-arm-static -L "$T/sys" "$T/sys/usr/bin/busybox" true || fail "armhf busybox does not run"
[ "$(qemu-arm-static -L "$T/sys" "$T/sys/usr/bin/hello")" = "Hello, world!" ] || fail "armel hello does not run"

# SBOM and lock name every package with its architecture; the SBOM is valid SPDX 2.3, with the
# resolver's dependency graph and the DEP-5 licences.
sbom_validate "$BASE.spdx.json"
python3 - "$BASE.spdx.json" "$BASE.lock" "$FLAGSHIP_SUITE" <<'PY' || fail "SBOM check failed"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["spdxVersion"] == "SPDX-2.3"
pk = [p for p in doc["packages"] if p["SPDXID"] != "SPDXRef-Image"]
assert len(pk) >= 90, len(pk)
assert any(p["name"] == "hello" and "arch=armel" in p["externalRefs"][0]["referenceLocator"] for p in pk)
assert all(len(p["checksums"][0]["checksumValue"]) == 64 for p in pk)
assert all("&distro=" + sys.argv[3] in p["externalRefs"][0]["referenceLocator"] for p in pk)
ids = {p["name"] + ":" + p["externalRefs"][0]["referenceLocator"].split("arch=")[1].split("&")[0]: p["SPDXID"] for p in pk}
dep = {(r["spdxElementId"], r["relatedSpdxElement"]) for r in doc["relationships"] if r["relationshipType"] == "DEPENDS_ON"}
assert (ids["hello:armel"], ids["libc6:armel"]) in dep, "hello:armel does not depend on libc6:armel"
assert (ids["libc6:armel"], ids["hello:armel"]) not in dep
# licenseDeclared: DEP-5 copyright files give their expression, free-form ones (bookworm's glibc)
# nothing; trixie's glibc has a DEP-5 file.
lic = {k: p["licenseDeclared"] for p in pk for k in ids if ids[k] == p["SPDXID"]}
assert lic["zlib1g:armhf"] == lic["zlib1g:armel"] == "Zlib", lic["zlib1g:armhf"]
assert lic["libzstd1:armhf"] == "(BSD-3-Clause OR GPL-2.0-only) AND Zlib AND MIT", lic["libzstd1:armhf"]
if sys.argv[3] == "bookworm":
    assert lic["libc6:armhf"] == lic["libc6:armel"] == "NOASSERTION", lic["libc6:armhf"]
else:
    assert lic["libc6:armhf"].startswith("LGPL-2.1-or-later AND "), lic["libc6:armhf"]
    assert lic["libc6:armel"] == lic["libc6:armhf"], lic["libc6:armel"]
assert lic["tzdata:all"] == "LicenseRef-public-domain", lic["tzdata:all"]
refs = {r["licenseId"]: r for r in doc["hasExtractedLicensingInfos"]}
assert "REGCOMP" in refs["LicenseRef-REGCOMP"]["name"]  # perl's own licence, with its text
assert "Permission is granted to anyone" in refs["LicenseRef-REGCOMP"]["extractedText"]
assert sum(p["licenseDeclared"] != "NOASSERTION" for p in pk) >= 70
PY

# It boots through U-Boot: its kernel, a serial login, the armel hello run by the boot-time unit,
# no failed unit.
if [ "$ext" = ext4 ]; then
	skip_part "kernel and boot: the lean set (MKIMAGE_TEST_LEAN=1) has neither"
	exit 0
fi
e2e_kernel armmp
e2e_boot qemu-system-arm armel
[ ! -s "$T/console.log" ] || grep -aq "U-Boot" "$T/console.log" ||
	fail "the console shows no U-Boot: the disk did not boot through firmware"
