#!/bin/sh
# Runs inside the target: systemd's postinst gave the build its own machine id; every board must
# get its own at boot instead. An empty file (machine-id(5)) makes systemd generate one and commit
# it once the root is writable; "uninitialized" would also start the interactive first-boot
# wizard on the console of a board nobody is watching.
set -eu
: > /etc/machine-id
rm -f /var/lib/dbus/machine-id
