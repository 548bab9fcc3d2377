#!/bin/sh
# Runs inside the target: a login on the board's serial port (ttyAMA0, 115200 baud).
set -eu
tty=ttyAMA0
# systemd images: enable the serial getty the way `systemctl enable` would.
if [ -e /lib/systemd/system/serial-getty@.service ]; then
	mkdir -p /etc/systemd/system/getty.target.wants
	ln -sf /lib/systemd/system/serial-getty@.service \
		"/etc/systemd/system/getty.target.wants/serial-getty@$tty.service"
fi
# sysvinit/busybox init images: an inittab respawn line.
if ! grep -qs "^$tty:" /etc/inittab; then
	echo "$tty::respawn:/sbin/getty -L 115200 $tty vt100" >> /etc/inittab
fi
grep -qsx "$tty" /etc/securetty || echo "$tty" >> /etc/securetty
