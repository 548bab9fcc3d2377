# Helpers for the booted update cycles (129: U-Boot, 123: systemd-boot through OVMF), after
# lib-rauc.sh: the keys, the overlay whose unit drives each boot's step from the slot and version
# it booted, the steps disk with version 2's bundle and its forged, tampered and alien copies
# (and version 3's, for the fallback), and the story the console must tell. W is the work
# directory (recipes in $W/recipes).

# update_keys: rauc_keys (lib-rauc.sh) in K=$W/recipes/keys; $W/images made.
update_keys() {
	K=$W/recipes/keys
	mkdir -p "$W/images"
	rauc_keys "$K"
}

# update_unit: recipes/overlay and hooks/ copied into $W, and the overlay "update-steps" with its
# unit, which runs /usr/local/sbin/update-step (the test's own script, written after this) at
# each boot, once RAUC has marked the slot good.
update_unit() {
	local O=$W/recipes/overlay/update-steps
	cp -r "$TOP/recipes/overlay" "$W/recipes/"
	cp -r "$TOP/hooks" "$W/"
	mkdir -p "$O/etc/systemd/system/multi-user.target.wants" "$O/usr/local/sbin"
	cat >"$O/etc/systemd/system/update-step.service" <<'U'
[Unit]
Description=The update test's steps (from the disk labelled "steps")
After=mkimage-mark-good.service boot-report.service

[Service]
Type=simple
ExecStart=/usr/local/sbin/update-step
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/console
U
	ln -s ../update-step.service "$O/etc/systemd/system/multi-user.target.wants/update-step.service"
}

# update_overlay: recipes/overlay and hooks/ copied into $W, plus the overlay "update-steps" (its
# unit runs each boot's step from the disk labelled "steps") and the hook break-init (version 3's
# root, whose init exits at once).
update_overlay() {
	local O=$W/recipes/overlay/update-steps
	update_unit
	cat >"$O/usr/local/sbin/update-step" <<'S'
#!/bin/sh
# What this boot does, from the slot the boot loader booted and the version running there.
say() { echo "update-step: $*"; }
slot=
for w in $(cat /proc/cmdline); do case $w in rauc.slot=*) slot=${w#rauc.slot=} ;; esac; done
. /etc/os-release
mkdir -p /run/steps
mount -o ro /dev/disk/by-label/steps /run/steps || { say "no steps disk"; exit 0; }
# RAUC's view: the booted slot, the primary one, each slot's boot status (good or bad)
eval "$(rauc status --detailed --output-format=shell 2>/dev/null)" || say "rauc status failed"
st="booted=${RAUC_SYSTEM_BOOTED_BOOTNAME:-} primary=${RAUC_BOOT_PRIMARY:-}"
for n in ${RAUC_SLOTS:-}; do eval "st=\"\$st \${RAUC_SLOT_BOOTNAME_$n}=\${RAUC_SLOT_BOOT_STATUS_$n}\""; done
say "slot $slot version $IMAGE_VERSION: rauc: $st"
case $slot/$IMAGE_VERSION in
A/1)
	rauc install /run/steps/v2.raucb && say "installed v2"
	systemctl reboot ;;
B/2)
	if [ ! -e /var/lib/update-test/v3 ]; then
		if rauc install /run/steps/alien.raucb; then say "alien bundle INSTALLED"
		else say "alien bundle refused"; fi
		if rauc install /run/steps/forged.raucb; then say "forged bundle INSTALLED"
		else say "forged bundle refused"; fi
		if rauc install /run/steps/tampered.raucb; then say "tampered bundle INSTALLED"
		else say "tampered bundle refused"; fi
		say "after the tampered bundle: system $(systemctl is-system-running --wait)"
		if [ ! -e /run/steps/v3.raucb ]; then
			say "no version 3 on the steps disk: done"
			systemctl poweroff
			exit 0
		fi
		mkdir -p /var/lib/update-test && touch /var/lib/update-test/v3 && sync
		rauc install /run/steps/v3.raucb && say "installed v3"
		systemctl reboot
	else
		say "fell back to slot B version 2: done"
		systemctl poweroff
	fi ;;
*) say "unexpected slot '$slot' version '$IMAGE_VERSION'"; systemctl poweroff ;;
esac
S
	chmod 755 "$O/usr/local/sbin/update-step"
	printf '#!/bin/sh\n# version 3 cannot start: init exits at once\nln -sf /bin/false /usr/sbin/init\n' \
		>"$W/hooks/break-init.sh"
}

# update_steps_disk COMPATIBLE: $T/steps.img (rauc_steps_disk), holding v2's bundle from $W/images
# (and v3's when there is one: without it, B powers off after the refusals), a forged copy of v2 (one byte of its signature), a tampered one (one byte of the
# payload, found by dm-verity while the slot is written) and an alien one (v2 re-signed with a
# manifest for another board: a valid signature, the wrong compatible).
update_steps_disk() {
	local S=$T/steps size sig
	mkdir -p "$S"
	cp "$W/images/v2.raucb" "$S/"
	[ ! -e "$W/images/v3.raucb" ] || cp "$W/images/v3.raucb" "$S/"
	rauc_flip "$S/v2.raucb" "$S/tampered.raucb" 70000
	rauc_flip "$S/v2.raucb" "$S/forged.raucb" -200 # in the CMS signature, 8 bytes before the end
	size=$(stat -c %s "$S/v2.raucb") sig=$(tail -c 8 "$S/v2.raucb" | od -An -tu8 --endian=big | tr -d ' ')
	head -c $((size - 8)) "$S/v2.raucb" | tail -c "$sig" >"$T/v2.sig"
	openssl cms -verify -binary -inform der -noverify -in "$T/v2.sig" -out "$T/v2.raucm" 2>/dev/null ||
		fail "openssl cms cannot read v2's signature"
	sed "s/^compatible=$1\$/compatible=other-board/" "$T/v2.raucm" >"$T/alien.raucm"
	openssl cms -sign -binary -nodetach -noattr -outform DER -in "$T/alien.raucm" \
		-signer "$K/signer.cert.pem" -inkey "$K/signer.key.pem" -out "$T/alien.sig" || fail "openssl cms -sign"
	{ head -c $((size - 8 - sig)) "$S/v2.raucb"; cat "$T/alien.sig"
	  perl -e 'print pack("Q>", -s $ARGV[0])' "$T/alien.sig"; } >"$S/alien.raucb"
	rauc info --keyring="$K/ca.cert.pem" "$S/alien.raucb" >"$T/o" 2>&1 &&
		grep -q "other-board" "$T/o" || { cat "$T/o" >&2; fail "the alien bundle is not signed with another compatible"; }
	rauc info --keyring="$K/ca.cert.pem" "$S/v2.raucb" >/dev/null 2>&1 || fail "rauc info refuses v2.raucb"
	rauc info --keyring="$K/ca.cert.pem" "$S/forged.raucb" >/dev/null 2>&1 &&
		fail "rauc info accepts the forged bundle on the host"
	rauc_steps_disk "$S" "$T/steps.img"
}

# update_done: the line the last boot prints, with version 3 on the steps disk or without it.
update_done() {
	if [ -e "$T/steps/v3.raucb" ]; then echo 'update-step: fell back to slot B version 2: done'
	else echo 'update-step: no version 3 on the steps disk: done'; fi
}

# update_story STORY NAME BOOTS: the update steps and RAUC's view in STORY (the console's lines)
# are those of A (v1) -> B (v2) -> refusals [-> v3 into A, which fails -> B (v2), when the steps
# disk has version 3]; BOOTS are the slots booted, in order, as the boot loader's lines in STORY
# show them.
update_story() {
	local fallback=0
	[ ! -e "$T/steps/v3.raucb" ] || fallback=1
	python3 - "$@" $fallback <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
n, boots, fallback = sys.argv[2], sys.argv[3].split(), sys.argv[4] == "1"
# A (v1), B (v2), then A and A again (v3 fails twice), B (the fallback)
assert boots == ["A", "B"] + (["A", "A", "B"] if fallback else []), boots
reports = [l for l in lines if l.startswith("boot-report: slot")]
want = ["boot-report: slot A, image %s version 1" % n, "boot-report: slot B, image %s version 2" % n]
assert reports == want + want[1:] * fallback, reports
text = "\n".join(lines)
want = ["update-step: installed v2", "update-step: alien bundle refused",
        "update-step: forged bundle refused", "update-step: tampered bundle refused",
        "update-step: after the tampered bundle: system running"]
want += ["update-step: installed v3", "update-step: fell back to slot B version 2: done"] \
    if fallback else ["update-step: no version 3 on the steps disk: done"]
for w in want:
    assert w in text, w
assert "INSTALLED" not in text
assert not fallback or text.count("Attempted to kill init") >= 2, "version 3 did not fail twice"
# RAUC on the device: version 1 runs A; version 2 runs B, which the booted system marked good;
# after the fallback B is primary and good, A (version 3) bad
rauc = [l.split(": rauc: ")[1].split() for l in lines if ": rauc: " in l]
assert len(rauc) == (3 if fallback else 2), rauc
assert rauc[0][:2] == ["booted=A", "primary=rootfs.0"] and "A=good" in rauc[0] and "B=bad" in rauc[0], rauc[0]
assert rauc[1][:2] == ["booted=B", "primary=rootfs.1"] and "B=good" in rauc[1], rauc[1]
assert not fallback or (rauc[2][:2] == ["booted=B", "primary=rootfs.1"] and "B=good" in rauc[2]
                        and "A=bad" in rauc[2]), rauc[2:]
PY
}
