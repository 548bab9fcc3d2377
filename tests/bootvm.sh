#!/bin/bash
# bootvm.sh IMAGE [SECONDS]: boot an image built by mkimage under qemu-system (TCG, no network,
# -snapshot so the image is never written) and watch its serial console.
#
# A whole disk (a partition table: the recipe's disk section) boots through firmware, as a board
# or a VM would, with nothing given to qemu but the disk: the root partition's Discoverable
# Partitions type says the architecture (BOOT_ARCH overrides it, for MBR), and the machine is
#   armhf  qemu-system-arm -M virt with Debian's u-boot-qemu (qemu_arm/u-boot.bin) as -bios
#   arm64  qemu-system-aarch64 -M virt with u-boot-qemu (qemu_arm64), or AAVMF with BOOT_EFI=1
#   amd64  qemu-system-x86_64 with Debian's OVMF (OVMF_CODE_4M.fd and a copy of its variables)
#   riscv64  qemu-system-riscv64 -M virt with Debian's OpenSBI (opensbi's generic fw_jump.elf) as
#          -bios and u-boot-qemu's supervisor-mode U-Boot (qemu-riscv64_smode) as -kernel
# BOOT_MACHINE=orangepi-pc boots a board's SD card as the board does: qemu-system-arm -M
# orangepi-pc with the disk as its SD card and nothing else (its boot ROM loads the SPL from
# the card: recipes/orangepi-pc.cfg); BOOT_MACHINE=raspberry-pi boots a Raspberry Pi's card under
# qemu-system-aarch64 -M raspi3b with what its firmware would load from the FAT partition
# (recipes/raspberry-pi.cfg; QEMU has no VideoCore firmware).
# An ext4 image boots with the kernel and initrd exported beside it (image.export_boot:
# NAME.vmlinuz or NAME.vmlinux, NAME.initrd.img), or else read from its /boot, given to qemu
# with -kernel (riscv64: after OpenSBI's fw_jump); its
# dpkg's primary architecture picks the machine and the root is found by the image's label.
#
# Passes (exit 0) when, within SECONDS (default BOOT_TIMEOUT or 600), the console shows a login
# prompt and the line the recipe's boot-time unit writes (recipes/overlay/boot-report):
#   boot-report: system running, 0 failed units
# Fails (exit 1) naming the last console lines when the boot hangs, the machine stops, or the
# unit reports failed units. Exit 2: bad arguments or no qemu-system or firmware for the
# architecture. BOOT_LOG=FILE keeps the whole console log; BOOT_SHOW=1 prints the command.
# BOOT_STOP_AT=REGEX (grep -E) is for boots that must fail: once the console shows REGEX, the
# machine runs 20 s more (what the system does next is in the log), then it is stopped: exit 3.
# For a machine that updates itself across reboots (test 129): BOOT_WRITE=1 boots the disk
# itself (no -snapshot) and lets the guest reboot; BOOT_DISK2=FILE adds a second virtio disk;
# BOOT_DONE=REGEX passes once the console shows REGEX and the machine has powered off, instead
# of at the first login prompt and boot report.
# BOOT_ACCEL=kvm runs the machine under KVM (the default: TCG); `bootvm.sh --kvm KERNEL` says
# whether KVM runs that x86 kernel here.
set -euo pipefail

# `bootvm.sh --kvm KERNEL`: exit 0 when KVM runs the x86 kernel KERNEL here (it prints its
# banner on the serial console within 30 s), else 1. A /dev/kvm that opens is not enough: a
# host's KVM may run a BIOS and still stall a Linux kernel.
kvm_runs() {
	local d pid i ok=1
	[ -f "$1" ] && [ "$(uname -m)" = x86_64 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	command -v qemu-system-x86_64 >/dev/null || return 1
	d=$(mktemp -d /var/tmp/mkimage-kvm.XXXXXX)
	qemu-system-x86_64 -accel kvm -M q35 -m 256 -display none -monitor none -no-reboot \
		-serial "file:$d/serial" -kernel "$1" -append "console=ttyS0 panic=-1" \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 60); do
		if grep -aq "Linux version" "$d/serial" 2>/dev/null; then ok=0; break; fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$d"
	return $ok
}
if [ "${1:-}" = --kvm ]; then kvm_runs "${2:-}"; exit; fi

usage() { echo "usage: bootvm.sh IMAGE [SECONDS]" >&2; exit 2; }
die() { echo "bootvm: $*" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
img=$1 limit=${2:-${BOOT_TIMEOUT:-600}}
[ -f "$img" ] || die "no image '$img': build it first (mkimage RECIPE)"
case $limit in '' | *[!0-9]*) die "timeout '$limit' is not a number of seconds" ;; esac

W=$(mktemp -d /var/tmp/mkimage-boot.XXXXXX)
qpid=
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	[ -z "$qpid" ] || wait "$qpid" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

# The architecture of a disk: its root partition's type (the Discoverable Partitions
# Specification's root GUIDs), or BOOT_ARCH.
disk_arch() {
	local types
	types=$(sfdisk --json "$img" 2>/dev/null | sed -n 's/.*"type": *"\([^"]*\)".*/\L\1/p')
	case $types in
	*4f68bce3-e8cd-4db1-96e7-fbcaf984b709*) echo amd64 ;;
	*b921b045-1df0-41c3-af44-4c6f280d3fae*) echo arm64 ;;
	*69dad710-2ce4-4e3c-b16c-21a1d49abed3*) echo armhf ;;
	*72ec70a6-cf74-40e6-bd49-4bda08e8f224*) echo riscv64 ;;
	esac
}

firmware() {
	[ -f "$1" ] || die "no firmware '$1' for $arch: install $2 (make test-deps)"
	echo "$1"
}

disk_machine() {
	arch=${BOOT_ARCH:-$(disk_arch)}
	[ -n "$arch" ] || die "'$img' has no root partition of a known architecture: set BOOT_ARCH"
	case $arch in
	armhf)
		qemu=(qemu-system-arm -M virt -cpu cortex-a15
			-bios "$(firmware /usr/lib/u-boot/qemu_arm/u-boot.bin u-boot-qemu)")
		disk=(-drive "file=$img,format=raw,if=none,id=disk" -device virtio-blk-device,drive=disk)
		# virt numbers virtio-mmio devices from the last given: the disk stays virtio 0, the
		# one U-Boot's distro boot scans
		[ -z "${BOOT_DISK2:-}" ] || disk=(-drive "file=$BOOT_DISK2,format=raw,if=none,id=disk2"
			-device virtio-blk-device,drive=disk2 "${disk[@]}")
		;;
	arm64)
		if [ "${BOOT_EFI:-0}" = 1 ]; then
			cp "$(firmware /usr/share/AAVMF/AAVMF_VARS.fd qemu-efi-aarch64)" "$W/vars.fd"
			qemu=(qemu-system-aarch64 -M virt -cpu cortex-a57
				-drive "if=pflash,format=raw,unit=0,readonly=on,file=$(firmware /usr/share/AAVMF/AAVMF_CODE.fd qemu-efi-aarch64)"
				-drive "if=pflash,format=raw,unit=1,file=$W/vars.fd")
		else
			qemu=(qemu-system-aarch64 -M virt -cpu cortex-a57
				-bios "$(firmware /usr/lib/u-boot/qemu_arm64/u-boot.bin u-boot-qemu)")
		fi
		disk=(-drive "file=$img,format=raw,if=none,id=disk" -device virtio-blk-device,drive=disk)
		;;
	amd64)
		cp "$(firmware /usr/share/OVMF/OVMF_VARS_4M.fd ovmf)" "$W/vars.fd"
		qemu=(qemu-system-x86_64 -M q35
			-drive "if=pflash,format=raw,unit=0,readonly=on,file=$(firmware /usr/share/OVMF/OVMF_CODE_4M.fd ovmf)"
			-drive "if=pflash,format=raw,unit=1,file=$W/vars.fd")
		disk=(-drive "file=$img,format=raw,if=virtio")
		[ -z "${BOOT_DISK2:-}" ] || disk+=(-drive "file=$BOOT_DISK2,format=raw,if=virtio")
		;;
	riscv64)
		# OpenSBI jumps to U-Boot (S-mode), whose distro boot finds extlinux.conf on the disk.
		qemu=(qemu-system-riscv64 -M virt
			-bios "$(firmware /usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.elf opensbi)"
			-kernel "$(firmware /usr/lib/u-boot/qemu-riscv64_smode/u-boot.bin u-boot-qemu)")
		disk=(-drive "file=$img,format=raw,if=none,id=disk" -device virtio-blk-device,drive=disk)
		;;
	*) die "no firmware known for architecture '$arch' of '$img'" ;;
	esac
	boot=()
}

image_machine() {
	local label base kernel initrd ver stem append
	label=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Filesystem volume name: *//p')
	[ -n "$label" ] && [ "$label" != "<none>" ] || die "'$img' has no ext4 label: the root is found by label"
	arch=$(debugfs -R "cat /var/lib/dpkg/arch" "$img" 2>/dev/null | head -n 1)
	[ -n "$arch" ] || arch=$(debugfs -R "cat /var/lib/dpkg/status" "$img" 2>/dev/null |
		sed -n 's/^Architecture: //p' | grep -vx all | head -n 1)

	base=${img%.ext4}
	kernel=$base.vmlinuz initrd=$base.initrd.img
	[ -f "$kernel" ] || kernel=$base.vmlinux # uncompressed (riscv64)
	if [ ! -f "$kernel" ] || [ ! -f "$initrd" ]; then
		# Newest kernel in the image's /boot (a version sort, as linux-update-symlinks chooses);
		# vmlinux: uncompressed, as riscv64's.
		ver=$(debugfs -R "ls -p /boot" "$img" 2>/dev/null |
			awk -F/ '$6 ~ /^vmlinu[xz]-/ && $6 !~ /\.sig$/ {print substr($6, 9) "/" substr($6, 1, 7)}' |
			sort -t/ -k1,1V | tail -n 1)
		[ -n "$ver" ] || die "'$img' has no /boot/vmlinu[xz]-* and no '$kernel' beside it: install a kernel"
		stem=${ver#*/} ver=${ver%/*}
		kernel=$W/$stem initrd=$W/initrd.img
		debugfs -R "dump /boot/$stem-$ver $kernel" "$img" 2>/dev/null
		debugfs -R "dump /boot/initrd.img-$ver $initrd" "$img" 2>/dev/null
		[ -s "$kernel" ] && [ -s "$initrd" ] || die "could not read the kernel or initrd '$ver' from '$img'"
	fi

	# The machine per architecture: what mkimage(7) (BOOTING) documents.
	append="root=LABEL=$label rootwait panic=-1"
	case $arch in
	armhf)
		qemu=(qemu-system-arm -M virt -cpu cortex-a15)
		append="$append console=ttyAMA0"
		disk=(-drive "file=$img,format=raw,if=none,id=root" -device virtio-blk-device,drive=root)
		;;
	arm64)
		qemu=(qemu-system-aarch64 -M virt -cpu cortex-a57)
		append="$append console=ttyAMA0"
		disk=(-drive "file=$img,format=raw,if=none,id=root" -device virtio-blk-device,drive=root)
		;;
	amd64)
		qemu=(qemu-system-x86_64 -M pc)
		append="$append console=ttyS0"
		disk=(-drive "file=$img,format=raw,if=virtio")
		;;
	riscv64)
		qemu=(qemu-system-riscv64 -M virt
			-bios "$(firmware /usr/lib/riscv64-linux-gnu/opensbi/generic/fw_jump.elf opensbi)")
		append="$append console=ttyS0"
		disk=(-drive "file=$img,format=raw,if=none,id=root" -device virtio-blk-device,drive=root)
		;;
	*) die "no qemu machine known for architecture '${arch:-unknown}' of '$img'" ;;
	esac
	boot=(-kernel "$kernel" -initrd "$initrd" -append "$append")
}

# A Raspberry Pi 3's card as its firmware would start it: QEMU's raspi3b has no VideoCore
# firmware, so what config.txt and cmdline.txt name is read from the first, FAT partition
# (mtools) and given to qemu: the kernel, its initrd, bcm2837-rpi-3-b.dtb, the command line.
# The card is a copy grown to a power of two (QEMU's SD card model); the kernel's ttyS1 (the
# mini UART) is the machine's second serial port.
raspi_boot() {
	local start size kernel initrd f
	read -r start size < <(sfdisk --json "$img" | python3 -c '
import json, sys
p = json.load(sys.stdin)["partitiontable"]["partitions"][0]
print(p["start"], p["size"])')
	dd if="$img" of="$W/fat.img" bs=512 skip="$start" count="$size" status=none
	for f in config.txt cmdline.txt bcm2837-rpi-3-b.dtb; do
		MTOOLS_SKIP_CHECK=1 mcopy -n -i "$W/fat.img" "::/$f" "$W/$f" ||
			die "'$img' has no $f in its first, FAT partition"
	done
	kernel=$(sed -n 's/^kernel=//p' "$W/config.txt")
	initrd=$(sed -n 's/^initramfs \([^ ]*\).*/\1/p' "$W/config.txt")
	for f in "$kernel" "$initrd"; do
		MTOOLS_SKIP_CHECK=1 mcopy -n -i "$W/fat.img" "::/$f" "$W/$f" ||
			die "'$img': config.txt loads '$f', which its FAT partition lacks"
	done
	cp --sparse=always "$img" "$W/card.img"
	size=$(stat -c %s "$img")
	f=1048576
	while [ "$f" -lt "$size" ]; do f=$((f * 2)); done
	truncate -s "$f" "$W/card.img"
	img=$W/card.img
	boot=(-kernel "$W/$kernel" -initrd "$W/$initrd" -dtb "$W/bcm2837-rpi-3-b.dtb"
		-append "$(cat "$W/cmdline.txt")")
	serial=(-serial null)
}

# A board's card: the machine's own boot ROM, 1 GiB and four cores as the board has. Each core
# is a host thread (MTTCG): four threads on a two-core host, where the guest's stop_machine (ARM
# patches kernel text with it) can stall for minutes in soft lockups, the more so with other work
# beside it, so such a boot wants the machine to itself (run.sh's "alone") and a generous limit.
# One thread for all four (-accel tcg,thread=single) stalled for minutes in the kernel's start.
board_machine() {
	boot=() size=()
	case $BOOT_MACHINE in
	orangepi-pc) arch=armhf qemu=(qemu-system-arm -M orangepi-pc) ;;
	raspberry-pi) arch=arm64 qemu=(qemu-system-aarch64 -M raspi3b) && raspi_boot ;;
	*) die "BOOT_MACHINE '$BOOT_MACHINE' is not a board this script boots (orangepi-pc, raspberry-pi)" ;;
	esac
	disk=(-drive "file=$img,format=raw,if=sd")
}

size=(-m 1024 -smp 1) serial=()
if [ -n "${BOOT_MACHINE:-}" ]; then
	board_machine
elif sfdisk --dump "$img" >/dev/null 2>&1; then
	disk_machine
else
	image_machine
fi
command -v "${qemu[0]}" >/dev/null || die "'${qemu[0]}' is not installed (make test-deps)"

log=${BOOT_LOG:-$W/console.log}
: >"$log"
once=(-snapshot -no-reboot)
[ "${BOOT_WRITE:-0}" != 1 ] || once=()
accel=${BOOT_ACCEL:-tcg}
case $accel in tcg) ;; kvm) echo "bootvm: accelerator kvm" >&2 ;; *) die "BOOT_ACCEL '$accel': tcg or kvm" ;; esac
cmd=("${qemu[@]}" -accel $accel "${size[@]}" -nic none "${once[@]}" -display none
	-monitor none "${serial[@]}" -serial "file:$log" "${boot[@]}" "${disk[@]}")
[ -z "${BOOT_SHOW:-}" ] || echo "bootvm: ${cmd[*]}" >&2
"${cmd[@]}" </dev/null >"$W/qemu.err" 2>&1 &
qpid=$!

tail_log() { tr -d '\r' <"$log" | grep -v '^[[:space:]]*$' | tail -n "${1:-25}" | sed 's/^/  | /' >&2; }
start=$SECONDS verdict= stop_at=
while :; do
	if [ -n "${BOOT_STOP_AT:-}" ] && [ -z "$stop_at" ] && grep -aEq "$BOOT_STOP_AT" "$log"; then
		stop_at=$SECONDS
	fi
	if [ -n "$stop_at" ] && [ $((SECONDS - stop_at)) -ge 20 ]; then
		echo "bootvm: the console showed '$BOOT_STOP_AT' after $((stop_at - start)) s:" >&2
		grep -aE "$BOOT_STOP_AT" "$log" | tr -d '\r' | head -n 5 | sed 's/^/  | /' >&2
		exit 3
	fi
	if [ -n "${BOOT_DONE:-}" ]; then
		if grep -aEq "$BOOT_DONE" "$log" && ! kill -0 "$qpid" 2>/dev/null; then
			echo "bootvm: '$img' showed '$BOOT_DONE' and powered off after $((SECONDS - start)) s" >&2
			exit 0
		fi
	# Not anchored: getty's prompt and the unit's line may share a console line.
	elif grep -aq 'boot-report: system .*failed units' "$log" && grep -aq 'login: ' "$log"; then
		verdict=$(grep -a -o 'boot-report: system .*failed units' "$log" | tail -n 1)
		break
	fi
	if ! kill -0 "$qpid" 2>/dev/null; then
		echo "bootvm: the machine stopped after $((SECONDS - start)) s (kernel panic or qemu error):" >&2
		cat "$W/qemu.err" >&2
		tail_log
		exit 1
	fi
	if [ $((SECONDS - start)) -ge "$limit" ]; then
		echo "bootvm: no login prompt and boot report within $limit s; last console lines:" >&2
		tail_log
		exit 1
	fi
	sleep 2
done
elapsed=$((SECONDS - start))
grep -a '^boot-report: hello' "$log" | tr -d '\r' >&2 || true
case $verdict in
"boot-report: system running, 0 failed units")
	echo "bootvm: '$img' ($arch) booted to a login prompt in $elapsed s: $verdict" >&2
	;;
*)
	echo "bootvm: '$img' ($arch) booted in $elapsed s but: $verdict" >&2
	grep -a '^boot-report: failed:' "$log" | tr -d '\r' >&2 || true
	tail_log
	exit 1
	;;
esac
