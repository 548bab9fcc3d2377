#!/bin/bash
# bootvm.sh IMAGE [SECONDS]: boot an ext4 image built by mkimage under qemu-system (TCG, no
# network, -snapshot so the image is never written) and watch its serial console.
#
# The kernel and initrd are the ones exported beside the image (image.export_boot: NAME.vmlinuz,
# NAME.initrd.img); without them they are read from the image's /boot. The image's primary
# architecture (its dpkg) picks the machine; the root is found by the image's label.
#
# Passes (exit 0) when, within SECONDS (default BOOT_TIMEOUT or 600), the console shows a login
# prompt and the line the recipe's boot-time unit writes (recipes/overlay/boot-report):
#   boot-report: system running, 0 failed units
# Fails (exit 1) naming the last console lines when the boot hangs, the machine stops, or the
# unit reports failed units. Exit 2: bad arguments or no qemu-system for the architecture.
# BOOT_LOG=FILE keeps the whole console log; BOOT_SHOW=1 prints the command before running it.
set -euo pipefail
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

label=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Filesystem volume name: *//p')
[ -n "$label" ] && [ "$label" != "<none>" ] || die "'$img' has no ext4 label: the root is found by label"
arch=$(debugfs -R "cat /var/lib/dpkg/arch" "$img" 2>/dev/null | head -n 1)
[ -n "$arch" ] || arch=$(debugfs -R "cat /var/lib/dpkg/status" "$img" 2>/dev/null |
	sed -n 's/^Architecture: //p' | grep -vx all | head -n 1)

base=${img%.ext4}
kernel=$base.vmlinuz initrd=$base.initrd.img
if [ ! -f "$kernel" ] || [ ! -f "$initrd" ]; then
	# Newest kernel in the image's /boot (a version sort, as linux-update-symlinks chooses).
	ver=$(debugfs -R "ls -p /boot" "$img" 2>/dev/null | awk -F/ '$6 ~ /^vmlinuz-/ {print substr($6, 9)}' |
		sort -V | tail -n 1)
	[ -n "$ver" ] || die "'$img' has no /boot/vmlinuz-* and no '$kernel' beside it: install a kernel"
	kernel=$W/vmlinuz initrd=$W/initrd.img
	debugfs -R "dump /boot/vmlinuz-$ver $kernel" "$img" 2>/dev/null
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
*) die "no qemu machine known for architecture '${arch:-unknown}' of '$img'" ;;
esac
command -v "${qemu[0]}" >/dev/null || die "'${qemu[0]}' is not installed (make deps)"

log=${BOOT_LOG:-$W/console.log}
: >"$log"
cmd=("${qemu[@]}" -accel tcg -m 1024 -smp 1 -nic none -snapshot -no-reboot -display none
	-monitor none -serial "file:$log" -kernel "$kernel" -initrd "$initrd" -append "$append" "${disk[@]}")
[ -z "${BOOT_SHOW:-}" ] || echo "bootvm: ${cmd[*]}" >&2
"${cmd[@]}" </dev/null >"$W/qemu.err" 2>&1 &
qpid=$!

tail_log() { tr -d '\r' <"$log" | grep -v '^[[:space:]]*$' | tail -n "${1:-25}" | sed 's/^/  | /' >&2; }
start=$SECONDS verdict=
while :; do
	# Not anchored: getty's prompt and the unit's line may share a console line.
	if grep -aq 'boot-report: system .*failed units' "$log" && grep -aq 'login: ' "$log"; then
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
