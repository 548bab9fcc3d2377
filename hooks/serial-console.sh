#!/bin/sh
# Runs inside the target: a login on the board's serial port at 115200 baud (ttyAMA0 on Arm
# boards and qemu's virt machine, ttyS0 on PCs).
set -eu
case "${MKIMAGE_ARCH:-}" in
amd64 | i386) tty=ttyS0 ;;
*) tty=ttyAMA0 ;;
esac
if [ -e /lib/systemd/system/serial-getty@.service ]; then
	# systemd images: enable the serial getty the way `systemctl enable` would.
	mkdir -p /etc/systemd/system/getty.target.wants
	ln -sf /lib/systemd/system/serial-getty@.service \
		"/etc/systemd/system/getty.target.wants/serial-getty@$tty.service"
elif ! grep -qs "^$tty:" /etc/inittab; then
	# sysvinit/busybox init images: an inittab respawn line.
	echo "$tty::respawn:/sbin/getty -L 115200 $tty vt100" >> /etc/inittab
fi
grep -qsx "$tty" /etc/securetty || echo "$tty" >> /etc/securetty
